/** Request paths for the HTTP benchmarks, drawn with a seeded generator. */
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { parseIssue } from '../../src/domain/time.js';

/** mulberry32: small, fast, deterministic. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const enc = encodeURIComponent;

/** Default page of the latest run of a random site. */
export function hotPaths(farmIds: readonly string[]): string[] {
  return farmIds.map((f) => `/api/v1/forecast?farm_id=${enc(f)}`);
}

/** The whole run as CSV, random site and run. */
export function csvPaths(farmIds: readonly string[], issues: readonly string[], count: number, seed = 11): string[] {
  const r = rng(seed);
  return Array.from({ length: count }, () => `/api/v1/forecast?farm_id=${enc(pick(r, farmIds))}&issue=${pick(r, issues)}&format=csv`);
}

/**
 * The mixed load as a wrk Lua script that draws every request afresh (site, run,
 * window, fields, size, page), so that practically no query repeats.
 */
export function mixedLua(farmIds: readonly string[], issues: readonly string[]): string {
  const issueSeconds = issues.map((i) => parseIssue(i)! / 1000);
  return `
local farms = {${farmIds.map((f) => JSON.stringify(f)).join(',')}}
local issues = {${issues.map((i) => JSON.stringify(i)).join(',')}}
local issueT = {${issueSeconds.join(',')}}
local names = {${ELEMENT_NAMES.map((n) => JSON.stringify(n)).join(',')}}
local sizes = {24, 48, 96}
math.randomseed(tonumber(os.getenv("WRK_SEED") or "1"))
local function beijing(t) return os.date("!%Y-%m-%dT%H:%M:%S", t + 8 * 3600) .. "%2B08:00" end
request = function()
  local r = math.random(#issues)
  local start = issueT[r] + (math.random(1200) - 1) * 900
  local stop = math.min(issueT[r] + 1296000, start + (24 + math.random(168) - 1) * 3600)
  local fields = {}
  for _, n in ipairs(names) do if math.random() < 0.5 then fields[#fields + 1] = n end end
  if #fields == 0 then fields[1] = names[math.random(#names)] end
  local size = sizes[math.random(3)]
  local records = math.floor((stop - start) / 900) + 1
  local page = math.random(math.ceil(records / size))
  return wrk.format("GET", "/api/v1/forecast?farm_id=" .. farms[math.random(#farms)] .. "&issue=" .. issues[r] ..
    "&start=" .. beijing(start) .. "&end=" .. beijing(stop) .. "&elements=" .. table.concat(fields, ",") ..
    "&size=" .. size .. "&page=" .. page)
end
`;
}
