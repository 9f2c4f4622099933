/** GET /api/v1/forecast/issues */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ISSUES_PAGE } from '../../domain/limits.js';
import { formatUtc, parseIssue } from '../../domain/time.js';
import { pageOffset } from '../../domain/window.js';
import { scopeOfRequest } from '../../access/principal.js';
import { listIssues } from '../../query/lists.js';
import type { AppContext } from '../context.js';
import { ok } from '../envelope.js';
import { IssuesQuery, responses } from '../schemas.js';

export function issuesRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: Static<typeof IssuesQuery> }>(
    '/api/v1/forecast/issues',
    {
      schema: {
        operationId: 'listIssues',
        summary: 'Available model runs',
        description:
          'Issue times newest first, each with the number of sites holding data in that run; ' +
          'with farm_id only the runs holding data for that site.',
        tags: ['forecast'],
        querystring: IssuesQuery,
        response: responses.issues,
      },
    },
    async (req) => {
      const { farm_id: farmId } = req.query;
      const page = req.query.page ?? 1;
      const size = req.query.size ?? ISSUES_PAGE.defaultSize;
      const { total, items } = await listIssues(ctx.store, scopeOfRequest(req.raw), farmId, pageOffset(page, size), size);
      return ok({
        total,
        page,
        size,
        items: items.map((i) => ({ issue: i.issue, issue_time_utc: formatUtc(parseIssue(i.issue)!), farms: i.farms })),
      });
    },
  );
}
