/** The error of a wrong command line or setting: exit status 2, one line on stderr. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A setting that cannot be taken, from whichever source:
 * `setting port from env FORECASTD_PORT: must be a whole number from 0 to 65535, got "abc"`.
 * The message is the whole report; no hint follows it.
 */
export class SettingError extends UsageError {
  constructor(
    readonly setting: string,
    readonly from: string,
    problem: string,
  ) {
    super(`setting ${setting} from ${from}: ${problem}`);
    this.name = 'SettingError';
  }
}
