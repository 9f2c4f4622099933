/** GET /api/v1/elements: the element catalogue. */
import type { FastifyInstance } from 'fastify';
import { ELEMENTS } from '../../domain/elements.js';
import { ok } from '../envelope.js';
import { responses } from '../schemas.js';

export function elementsRoute(app: FastifyInstance): void {
  const body = ok({ total: ELEMENTS.length, items: ELEMENTS });
  app.get(
    '/api/v1/elements',
    {
      schema: {
        operationId: 'listElements',
        summary: 'Element catalogue',
        description: 'The fifteen data fields in canonical order, with description, unit and kind (instant or accumulated).',
        tags: ['catalogue'],
        // Open: a client reads the catalogue before it has a key.
        security: [],
        response: responses.elements,
      },
    },
    async () => body,
  );
}
