/**
 * How an error appears in a log line: its type, its message and its code, nothing else. pino's own
 * serializer writes the stack (file paths of the server and its libraries) and every property the error
 * carries; a database driver's errors carry the statement, its position and the server's source file.
 * No log line may carry a stack trace, SQL or a file path (INTERFACE.md section 10).
 */
export interface LoggedErr {
  readonly type: string;
  readonly message: string;
  readonly code?: string;
}

/** The fields of `err` a log line shows (a non-error as its text). */
export function logErr(err: unknown): LoggedErr {
  if (!(err instanceof Error)) return { type: typeof err, message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}
