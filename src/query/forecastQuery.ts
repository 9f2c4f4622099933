/**
 * Planning a forecast query: validated parameters -> the site, the run, the
 * fields and the records of the window. Knows nothing of HTTP.
 */
import { parseElements } from '../domain/elementsParam.js';
import { badParameter, clip, notFound } from '../domain/errors.js';
import { parseDateTime, parseIssue } from '../domain/time.js';
import { resolveWindow, windowRecords } from '../domain/window.js';
import type { Farm, StoredRun } from '../store/store.js';
import { then, type Maybe } from './maybe.js';
import type { ReadSource } from './readModel.js';
import type { Scope } from './scope.js';
import { farmById, farmNear, type SiteRules } from './siteLookup.js';

export interface ForecastParams {
  readonly farmId?: string;
  readonly lat?: number;
  readonly lon?: number;
  readonly issue?: string;
  readonly start?: string;
  readonly end?: string;
  readonly elements?: readonly string[];
}

export interface ForecastPlan {
  readonly farm: Farm;
  readonly run: StoredRun;
  readonly issueMs: number;
  /** Catalogue indexes of the chosen fields, in catalogue order. */
  readonly elements: readonly number[];
  /** Records [from, to) of the run inside the window. */
  readonly from: number;
  readonly to: number;
}

function timeParam(name: 'start' | 'end', text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDateTime(text);
  if (ms === null) {
    throw badParameter(
      `Query parameter ${name} "${clip(text, 40)}" is not an ISO 8601 date-time such as 2026-11-20T08:00:00+08:00.`,
    );
  }
  return ms;
}

/** Checks that need no store, in the order a client would fix them. */
function checkShape(p: ForecastParams): { issueMs?: number; startMs?: number; endMs?: number; elements: readonly number[] } {
  const hasLat = p.lat !== undefined;
  const hasLon = p.lon !== undefined;
  if (p.farmId !== undefined && (hasLat || hasLon)) {
    throw badParameter('Give either farm_id or the pair lon and lat, not both.');
  }
  if (hasLat !== hasLon) {
    throw badParameter(`Query parameter ${hasLat ? 'lon' : 'lat'} is missing; lon and lat must be given together.`);
  }
  if (p.farmId === undefined && !hasLat) {
    throw badParameter('Query parameter farm_id is missing; name the site by farm_id or by lon and lat.');
  }
  return runParams(p);
}

/**
 * The checks of the run, window and fields a query names, shared by a single forecast and the bulk download
 * (whose entries are single downloads): the same faults get the same messages.
 */
export function runParams(p: Pick<ForecastParams, 'issue' | 'start' | 'end' | 'elements'>): {
  issueMs?: number;
  startMs?: number;
  endMs?: number;
  elements: readonly number[];
} {
  let issueMs: number | undefined;
  if (p.issue !== undefined) {
    const ms = parseIssue(p.issue);
    if (ms === null) throw badParameter(`Query parameter issue "${clip(p.issue, 40)}" is not a real UTC date and hour yyyyMMddHH.`);
    issueMs = ms;
  }
  const startMs = timeParam('start', p.start);
  const endMs = timeParam('end', p.end);
  if (startMs !== undefined && endMs !== undefined && startMs > endMs) {
    throw badParameter('Query parameter start must not be later than end.');
  }
  return { issueMs, startMs, endMs, elements: parseElements(p.elements) };
}

/**
 * The plan of a query: at once when the source has everything in memory (the
 * read model, nearly always), else a promise. Errors are thrown or rejected the
 * same way.
 */
export function planForecast(store: ReadSource, rules: SiteRules, p: ForecastParams, scope: Scope): Maybe<ForecastPlan> {
  const shape = checkShape(p);
  const farm = p.farmId !== undefined ? farmById(store, p.farmId, scope) : farmNear(store, rules, p.lat!, p.lon!, scope);
  return then(farm, (farm) =>
    then(p.issue ?? latestIssueOf(store, farm), (issue) =>
      then(store.getRun(farm.farmId, issue), (run) => {
        if (!run) throw notFound(`Issue ${issue} does not exist for site ${farm.farmId}.`);
        const issueMs = shape.issueMs ?? parseIssue(issue)!;
        const window = resolveWindow(issueMs, shape.startMs, shape.endMs);
        const { from, to } = windowRecords(run.view.steps, issueMs, window);
        return { farm, run, issueMs, elements: shape.elements, from, to };
      }),
    ),
  );
}

function latestIssueOf(store: ReadSource, farm: Farm): Maybe<string> {
  return then(store.latestIssue(farm.farmId), (issue) => {
    if (issue === undefined) throw notFound(`Site ${farm.farmId} has no forecast data yet.`);
    return issue;
  });
}
