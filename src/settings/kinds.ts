/**
 * The kinds of value a setting takes: how each is read from text (a flag or an
 * environment variable) and from JSON (a config file), and how it is written
 * back in both forms. A reader returns undefined for a value it refuses; the
 * caller words the error from `expects`.
 */
import { parseRange, type RangeBox } from '../domain/geo.js';
import { FARM_ID_PATTERN } from '../domain/limits.js';
import { parseStoreUrl } from '../store/openStore.js';
import { formatDuration, parseDuration } from './duration.js';

export interface Kind<T> {
  /** What a value must be, completing "must be …": `a whole number from 0 to 65535`. */
  readonly expects: string;
  /** A switch: given on the command line without a value. */
  readonly isSwitch?: boolean;
  fromText(text: string): T | undefined;
  fromJson(value: unknown): T | undefined;
  /** The text a flag or environment variable would take. */
  text(value: T): string;
  /** The value a config file would take. */
  json(value: T): unknown;
}

const viaText =
  <T>(fromText: (text: string) => T | undefined) =>
  (value: unknown): T | undefined =>
    typeof value === 'string' ? fromText(value) : undefined;

export function integer(min: number, max: number): Kind<number> {
  const inBounds = (n: number): number | undefined => (Number.isInteger(n) && n >= min && n <= max ? n : undefined);
  const fromText = (text: string): number | undefined => (/^\d+$/.test(text) ? inBounds(Number(text)) : undefined);
  return {
    expects: `a whole number from ${min} to ${max}`,
    fromText,
    fromJson: (v) => (typeof v === 'number' ? inBounds(v) : viaText(fromText)(v)),
    text: String,
    json: (n) => n,
  };
}

/** A decimal number above (or from) a bound. */
export function number(o: { min: number; exclusive?: boolean; max?: number }): Kind<number> {
  const max = o.max ?? Number.MAX_VALUE;
  const ok = (n: number): number | undefined =>
    Number.isFinite(n) && (o.exclusive ? n > o.min : n >= o.min) && n <= max ? n : undefined;
  const fromText = (text: string): number | undefined => (text.trim() === '' ? undefined : ok(Number(text)));
  return {
    expects: `a number ${o.exclusive ? '>' : '>='} ${o.min}${o.max === undefined ? '' : ` and <= ${o.max}`}`,
    fromText,
    fromJson: (v) => (typeof v === 'number' ? ok(v) : viaText(fromText)(v)),
    text: String,
    json: (n) => n,
  };
}

/** Any non-empty text (a host name, a folder). */
export function text(expects = 'a non-empty text'): Kind<string> {
  const fromText = (t: string): string | undefined => (t === '' ? undefined : t);
  return { expects, fromText, fromJson: viaText(fromText), text: (t) => t, json: (t) => t };
}

export function choice<const V extends string>(values: readonly V[]): Kind<V> {
  const fromText = (t: string): V | undefined => (values as readonly string[]).includes(t) ? (t as V) : undefined;
  return { expects: `one of ${values.join(', ')}`, fromText, fromJson: viaText(fromText), text: (t) => t, json: (t) => t };
}

/** On or off. On the command line the flag alone means on; elsewhere true/false (or 1/0). */
export const onOff: Kind<boolean> = {
  expects: 'true or false',
  isSwitch: true,
  fromText: (t) => (t === 'true' || t === '1' ? true : t === 'false' || t === '0' ? false : undefined),
  fromJson: (v) => (typeof v === 'boolean' ? v : undefined),
  text: String,
  json: (b) => b,
};

/** Milliseconds, written as a number with a unit (see duration.ts). */
export function duration(minMs: number, maxMs: number): Kind<number> {
  const fromText = (t: string): number | undefined => {
    const ms = parseDuration(t);
    return ms !== undefined && ms >= minMs && ms <= maxMs ? ms : undefined;
  };
  return {
    expects: `a duration (a number and a unit ms, s, m, h or d, e.g. 90s) from ${formatDuration(minMs)} to ${formatDuration(maxMs)}`,
    fromText,
    fromJson: viaText(fromText),
    text: formatDuration,
    json: formatDuration,
  };
}

/**
 * Whole seconds (a max-age), written as a duration with a unit like every other span of time (`90s`, `5m`),
 * or as a bare number of seconds.
 */
export function wholeSeconds(minS: number, maxS: number): Kind<number> {
  const inBounds = (s: number): number | undefined => (Number.isInteger(s) && s >= minS && s <= maxS ? s : undefined);
  const fromText = (t: string): number | undefined => {
    if (/^\d+$/.test(t)) return inBounds(Number(t));
    const ms = parseDuration(t);
    return ms !== undefined && ms % 1000 === 0 ? inBounds(ms / 1000) : undefined;
  };
  return {
    expects: `whole seconds (a number of seconds, or a number and a unit s, m, h or d, e.g. 90s) from ${formatDuration(minS * 1000)} to ${formatDuration(maxS * 1000)}`,
    fromText,
    fromJson: (v) => (typeof v === 'number' ? inBounds(v) : viaText(fromText)(v)),
    text: String,
    json: (s) => s,
  };
}

/** A store URL: sqlite:PATH, a bare file path, or postgres://… (postgresql://…). */
export const storeUrl: Kind<string> = (() => {
  const fromText = (t: string): string | undefined => {
    try {
      parseStoreUrl(t);
      return t;
    } catch {
      return undefined;
    }
  };
  return { expects: 'a store URL: sqlite:PATH, a file path or postgres://…', fromText, fromJson: viaText(fromText), text: (t) => t, json: (t) => t };
})();

export const redisUrl: Kind<string> = (() => {
  const fromText = (t: string): string | undefined => {
    try {
      const u = new URL(t);
      return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '' ? t : undefined;
    } catch {
      return undefined;
    }
  };
  return { expects: 'a redis:// or rediss:// URL', fromText, fromJson: viaText(fromText), text: (t) => t, json: (t) => t };
})();

/** Web origins (`https://console.example.com`, `http://localhost:3000`), comma-separated; empty for none. */
export const origins: Kind<readonly string[]> = (() => {
  const isOrigin = (o: string): boolean => {
    try {
      const u = new URL(o);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
    } catch {
      return false;
    }
  };
  const ofList = (list: readonly string[]): readonly string[] | undefined => (list.every(isOrigin) ? Object.freeze([...new Set(list)]) : undefined);
  const fromText = (t: string): readonly string[] | undefined =>
    t.trim() === '' ? Object.freeze([]) : ofList(t.split(',').map((o) => o.trim()));
  return {
    expects: 'web origins scheme://host[:port] (no path, no trailing slash), comma-separated',
    fromText,
    fromJson: (v) =>
      Array.isArray(v) ? (v.every((o) => typeof o === 'string') ? ofList(v as string[]) : undefined) : viaText(fromText)(v),
    text: (list) => list.join(','),
    json: (list) => [...list],
  };
})();

/** Site ids (farm_id form), comma-separated; in a file also an array. */
export const farmIds: Kind<readonly string[]> = (() => {
  const ofList = (list: readonly string[]): readonly string[] | undefined =>
    list.length > 0 && list.every((id) => FARM_ID_PATTERN.test(id)) ? Object.freeze([...new Set(list)]) : undefined;
  const fromText = (t: string): readonly string[] | undefined => ofList(t.split(',').map((id) => id.trim()));
  return {
    expects: 'site ids (1-64 of A-Z a-z 0-9 _ - .), comma-separated',
    fromText,
    fromJson: (v) => (Array.isArray(v) ? (v.every((id) => typeof id === 'string') ? ofList(v as string[]) : undefined) : viaText(fromText)(v)),
    text: (list) => list.join(','),
    json: (list) => [...list],
  };
})();

const boxText = (b: RangeBox): string => `${b.lonMin},${b.latMin},${b.lonMax},${b.latMax}`;

/** lonMin,latMin,lonMax,latMax; in a file also an array of the four numbers. */
export const rangeBox: Kind<RangeBox> = (() => {
  const fromText = (t: string): RangeBox | undefined => {
    try {
      return parseRange(t);
    } catch {
      return undefined;
    }
  };
  return {
    expects: 'four numbers lonMin,latMin,lonMax,latMax: a box within lon -180..180 and lat -90..90 with min <= max',
    fromText,
    fromJson: (v) =>
      Array.isArray(v) ? (v.length === 4 && v.every((n) => typeof n === 'number') ? fromText(v.join(',')) : undefined) : viaText(fromText)(v),
    text: boxText,
    json: boxText,
  };
})();
