/** The forecast response body, written directly as JSON text (values exactly as stored). */
import { ELEMENT_NAMES } from '../domain/elements.js';
import { numberText } from '../domain/numberText.js';
import { gridTexts } from '../domain/dateTexts.js';
import { STEP_MINUTES } from '../domain/run.js';
import { BEIJING_OFFSET, formatUtc } from '../domain/time.js';
import { pageSlice } from '../domain/window.js';
import type { ForecastPlan } from '../query/forecastQuery.js';

export function forecastJson(plan: ForecastPlan, page: number, size: number): string {
  const { farm, run, issueMs, elements } = plan;
  const view = run.view;
  const total = plan.to - plan.from;
  const slice = pageSlice(total, page, size);
  const from = plan.from + slice.from;
  const to = plan.from + slice.to;
  const keys = elements.map((e) => `,"${ELEMENT_NAMES[e]}":`);
  const columns = elements.map((e) => {
    const out: string[] = new Array<string>(to - from);
    view.texts(e, from, to, out, 'null');
    return out;
  });
  const dates = gridTexts(issueMs);
  const items: string[] = [];
  for (let i = from; i < to; i++) {
    let item = '{"date_time":"' + dates[view.steps[i]!] + '"';
    for (let j = 0; j < columns.length; j++) item += keys[j] + columns[j]![i - from];
    items.push(item + '}');
  }
  return (
    `{"code":0,"message":"success","data":{"farm_id":${JSON.stringify(farm.farmId)},` +
    `"lat":${numberText(farm.lat)},"lon":${numberText(farm.lon)},` +
    `"issue_time_utc":"${formatUtc(issueMs)}","timezone":"${BEIJING_OFFSET}",` +
    `"resolution_minutes":${STEP_MINUTES},"total":${total},"page":${page},"size":${size},` +
    `"items":[${items.join(',')}]}}`
  );
}
