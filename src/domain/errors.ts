/**
 * The public error codes of the interface (INTERFACE.md section 6), each with
 * its one HTTP status. Every error a client can see is an ApiError carrying
 * one of these.
 */
export const CODES = Object.freeze({
  BAD_PARAMETER: { code: 40001, status: 400, summary: 'parameter missing or malformed' },
  UNAUTHORIZED: { code: 40101, status: 401, summary: 'missing or invalid API key' },
  NO_ENDPOINT: { code: 40400, status: 404, summary: 'no such endpoint' },
  NOT_FOUND: { code: 40401, status: 404, summary: 'farm, issue or data not found' },
  METHOD_NOT_ALLOWED: { code: 40500, status: 405, summary: 'method not allowed' },
  OUT_OF_RANGE: { code: 42201, status: 422, summary: 'coordinates outside the service range' },
  RATE_LIMITED: { code: 42901, status: 429, summary: 'rate limited' },
  INTERNAL: { code: 50000, status: 500, summary: 'internal error' },
  UNAVAILABLE: { code: 50300, status: 503, summary: 'not ready or overloaded' },
} as const);

export type CodeName = keyof typeof CODES;
export type CodeDef = (typeof CODES)[CodeName];

export class ApiError extends Error {
  readonly code: number;
  readonly status: number;

  constructor(def: CodeDef, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = def.code;
    this.status = def.status;
  }
}

/** A client's text quoted in a message: at most `max` characters, a cut marked with an ellipsis. */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

export const badParameter = (message: string): ApiError => new ApiError(CODES.BAD_PARAMETER, message);
export const notFound = (message: string): ApiError => new ApiError(CODES.NOT_FOUND, message);
export const outOfRange = (message: string): ApiError => new ApiError(CODES.OUT_OF_RANGE, message);
