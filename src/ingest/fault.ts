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

/** One report line: `FILE: line L, column C: message`. */
export const formatFault = (file: string, f: Fault): string =>
  `${file}: line ${f.line}, column ${f.column}: ${f.message}`;

/** A plain decimal number as the CSV format allows: -3, 281.35, 0.5 (no exponent, no sign '+'). */
export const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)$/;

export const quote = (s: string): string => JSON.stringify(s.length > 40 ? s.slice(0, 40) + '…' : s);
