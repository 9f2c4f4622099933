/** GET /api/v1/forecast/issues: the runs, newest first, with their states as the caller sees them. */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { scopeOfRequest } from '../../access/principal.js';
import { ISSUES_PAGE } from '../../domain/limits.js';
import { formatBeijing, formatUtc, parseIssue } from '../../domain/time.js';
import { pageOffset } from '../../domain/window.js';
import { listRuns } from '../../query/runList.js';
import { defaultOf, SETTINGS } from '../../settings/definitions.js';
import type { AppContext } from '../context.js';
import { ok } from '../envelope.js';
import { IssuesQuery, responses } from '../schemas.js';

export function issuesRoute(app: FastifyInstance, ctx: AppContext): void {
  const deadlineMs = ctx.runDeadlineMs ?? defaultOf(SETTINGS['run-deadline'])!;
  app.get<{ Querystring: Static<typeof IssuesQuery> }>(
    '/api/v1/forecast/issues',
    {
      schema: {
        operationId: 'listIssues',
        summary: 'Available model runs',
        description:
          'Runs newest first, each with its state (receiving, complete, partial, superseded), the sites holding data ' +
          'and the sites expected (both counted over the sites the key may see), and when its data arrived. ' +
          'With farm_id only the runs holding data for that site; with status only runs in those states.',
        tags: ['forecast'],
        querystring: IssuesQuery,
        response: responses.issues,
      },
    },
    async (req) => {
      const { farm_id: farmId, status } = req.query;
      const page = req.query.page ?? 1;
      const size = req.query.size ?? ISSUES_PAGE.defaultSize;
      const { total, items } = await listRuns(
        ctx.store,
        scopeOfRequest(req.raw),
        { farmId, status, offset: pageOffset(page, size), limit: size },
        deadlineMs,
        Date.now(),
      );
      return ok({
        total,
        page,
        size,
        items: items.map((r) => ({
          issue: r.issue,
          issue_time_utc: formatUtc(parseIssue(r.issue)!),
          status: r.status,
          farms: r.farms,
          farms_expected: r.farmsExpected,
          available_at: formatBeijing(r.availableAt),
          completed_at: r.completedAt === null ? null : formatBeijing(r.completedAt),
          updated_at: formatBeijing(r.updatedAt),
        })),
      });
    },
  );
}
