/**
 * The forecast response body, written directly as JSON bytes: the envelope head,
 * then the records in the shared record writer's JSON style. Values are spelled
 * so that each parses to the stored double.
 */
import { keepRecent } from '../cache/keepRecent.js';
import { asciiBytes, ByteSink } from '../domain/byteSink.js';
import { ELEMENT_NAMES } from '../domain/elements.js';
import { numberText } from '../domain/numberText.js';
import { writeRecords, type RecordStyle } from '../domain/recordWriter.js';
import { STEP_MINUTES } from '../domain/run.js';
import { BEIJING_OFFSET, formatUtc } from '../domain/time.js';
import { pageSlice } from '../domain/window.js';
import type { ForecastPlan } from '../query/forecastQuery.js';
import type { Farm } from '../store/store.js';

const JSON_STYLE: RecordStyle = {
  open: asciiBytes('{"date_time":"'),
  afterDate: asciiBytes('"'),
  field: ELEMENT_NAMES.map((n) => asciiBytes(`,"${n}":`)),
  missing: asciiBytes('null'),
  close: asciiBytes('}'),
  separator: asciiBytes(','),
};

/** The envelope's opening up to the site's coordinates, per farm record (a replaced farm is a new record). */
const farmHeads = new WeakMap<Farm, Uint8Array>();

function farmHead(farm: Farm): Uint8Array {
  let h = farmHeads.get(farm);
  if (h === undefined) {
    h = new TextEncoder().encode(
      `{"code":0,"message":"success","data":{"farm_id":${JSON.stringify(farm.farmId)},` +
        `"lat":${numberText(farm.lat)},"lon":${numberText(farm.lon)},`,
    );
    farmHeads.set(farm, h);
  }
  return h;
}

/** The envelope's run fields, per issue time (runs of a few recent issues are what is asked). */
const issueHead = keepRecent(64, (issueMs: number) =>
  asciiBytes(`"issue_time_utc":"${formatUtc(issueMs)}","timezone":"${BEIJING_OFFSET}","resolution_minutes":${STEP_MINUTES},`),
);

export function writeForecastJson(sink: ByteSink, plan: ForecastPlan, page: number, size: number): void {
  const { farm, run, issueMs, elements } = plan;
  const total = plan.to - plan.from;
  const slice = pageSlice(total, page, size);
  sink.bytes(farmHead(farm));
  sink.bytes(issueHead(issueMs));
  sink.ascii(`"total":${total},"page":${page},"size":${size},"items":[`);
  writeRecords(sink, JSON_STYLE, run.view, issueMs, elements, plan.from + slice.from, plan.from + slice.to);
  sink.ascii(']}}');
}
