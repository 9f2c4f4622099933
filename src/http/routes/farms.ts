/** GET /api/v1/farms */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { FARMS_PAGE } from '../../domain/limits.js';
import { pageOffset } from '../../domain/window.js';
import { scopeOfRequest } from '../../access/principal.js';
import { listFarms } from '../../query/lists.js';
import type { AppContext } from '../context.js';
import { ok } from '../envelope.js';
import { FarmsQuery, responses } from '../schemas.js';

export function farmsRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: Static<typeof FarmsQuery> }>(
    '/api/v1/farms',
    {
      schema: {
        operationId: 'listFarms',
        summary: 'Site list',
        description: 'Registered sites sorted by farm_id, with coordinates, name and any further registry columns.',
        tags: ['farms'],
        querystring: FarmsQuery,
        response: responses.farms,
      },
    },
    async (req) => {
      const page = req.query.page ?? 1;
      const size = req.query.size ?? FARMS_PAGE.defaultSize;
      const { total, items } = await listFarms(ctx.store, scopeOfRequest(req.raw), pageOffset(page, size), size);
      return ok({
        total,
        page,
        size,
        items: items.map((f) => ({
          farm_id: f.farmId,
          lat: f.lat,
          lon: f.lon,
          name: f.name,
          ...Object.fromEntries(f.extra),
        })),
      });
    },
  );
}
