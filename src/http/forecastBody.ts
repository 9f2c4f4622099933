/**
 * The forecast response body, written directly as JSON bytes: the envelope
 * head once, then each record from the date table and the decoded columns.
 * Values are spelled so that each parses to the stored double.
 */
import { asciiBytes, ByteSink } from '../domain/byteSink.js';
import { DATE_TEXT_BYTES, gridDateBytes } from '../domain/dateTexts.js';
import { ELEMENT_NAMES } from '../domain/elements.js';
import { numberText } from '../domain/numberText.js';
import { readColumns, writeValue } from '../domain/recordWriter.js';
import { STEP_MINUTES } from '../domain/run.js';
import { BEIJING_OFFSET, formatUtc } from '../domain/time.js';
import { pageSlice } from '../domain/window.js';
import type { ForecastPlan } from '../query/forecastQuery.js';

const KEYS = ELEMENT_NAMES.map((n) => asciiBytes(`,"${n}":`));
const ITEM_OPEN = asciiBytes('{"date_time":"');
const NULL = asciiBytes('null');

export function writeForecastJson(sink: ByteSink, plan: ForecastPlan, page: number, size: number): void {
  const { farm, run, issueMs, elements } = plan;
  const view = run.view;
  const total = plan.to - plan.from;
  const slice = pageSlice(total, page, size);
  const from = plan.from + slice.from;
  const to = plan.from + slice.to;
  sink.ascii('{"code":0,"message":"success","data":{"farm_id":');
  sink.text(JSON.stringify(farm.farmId));
  sink.ascii(
    `,"lat":${numberText(farm.lat)},"lon":${numberText(farm.lon)},` +
      `"issue_time_utc":"${formatUtc(issueMs)}","timezone":"${BEIJING_OFFSET}",` +
      `"resolution_minutes":${STEP_MINUTES},"total":${total},"page":${page},"size":${size},"items":[`,
  );
  const { values, decimals } = readColumns(view, elements, from, to);
  const keys = elements.map((e) => KEYS[e]!);
  const dates = gridDateBytes(issueMs);
  const steps = view.steps;
  for (let i = from; i < to; i++) {
    if (i > from) sink.ascii(',');
    sink.bytes(ITEM_OPEN);
    const at = steps[i]! * DATE_TEXT_BYTES;
    sink.bytes(dates.subarray(at, at + DATE_TEXT_BYTES));
    sink.ascii('"');
    for (let j = 0; j < keys.length; j++) {
      sink.bytes(keys[j]!);
      const v = values[j]![i - from]!;
      if (v === v) writeValue(sink, v, decimals[j]!);
      else sink.bytes(NULL);
    }
    sink.ascii('}');
  }
  sink.ascii(']}}');
}
