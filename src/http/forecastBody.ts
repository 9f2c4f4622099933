/** The forecast response body, written directly as JSON text (values exactly as stored). */
import { ELEMENT_NAMES } from '../domain/elements.js';
import { numberText } from '../domain/numberText.js';
import { STEP_MINUTES, stepTime } from '../domain/run.js';
import { BEIJING_OFFSET, formatBeijing, formatUtc } from '../domain/time.js';
import { pageSlice } from '../domain/window.js';
import type { ForecastPlan } from '../query/forecastQuery.js';

export function forecastJson(plan: ForecastPlan, page: number, size: number): string {
  const { farm, run, issueMs, elements } = plan;
  const total = plan.to - plan.from;
  const slice = pageSlice(total, page, size);
  const keys = elements.map((e) => `,"${ELEMENT_NAMES[e]}":`);
  const items: string[] = [];
  for (let i = plan.from + slice.from; i < plan.from + slice.to; i++) {
    let item = `{"date_time":"${formatBeijing(stepTime(issueMs, run.series.steps[i]!))}"`;
    for (let j = 0; j < elements.length; j++) {
      const v = run.series.columns[elements[j]!]![i]!;
      item += keys[j] + (Number.isNaN(v) ? 'null' : numberText(v));
    }
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
