/** Why an input file was rejected: where (1-based line and column; 0 = the file as a whole) and what. */
export interface Fault {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export class FaultError extends Error {
  constructor(readonly fault: Fault) {
    super(fault.message);
    this.name = 'FaultError';
  }
}

export const fault = (line: number, column: number, message: string): FaultError =>
  new FaultError({ line, column, message });

/** The fault of a file that could not be read (the file as a whole: line 0, column 0). */
export const unreadable = (err: unknown): Fault => ({
  line: 0,
  column: 0,
  message: `cannot read file (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
});

/**
 * A file's name as a report shows it: a control character or a line separator (which a file name may hold)
 * written as an escape, so that a report is always one line.
 */
export const printableName = (name: string): string =>
  name.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** One report line: `FILE: line L, column C: message`. */
export const formatFault = (file: string, f: Fault): string =>
  `${printableName(file)}: line ${f.line}, column ${f.column}: ${f.message}`;

/** A plain decimal number as the CSV format allows: -3, 281.35, 0.5 (no exponent, no sign '+'). */
export const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)$/;

export const quote = (s: string): string => JSON.stringify(s.length > 40 ? s.slice(0, 40) + '…' : s);
