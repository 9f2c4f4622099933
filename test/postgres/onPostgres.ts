/**
 * Runs a store-backed test file again against PostgreSQL: each file in this
 * folder names one suite of test/http, test/cli, test/ingest or test/query and
 * runs it (in its own process, as node --test runs every file) with
 * FORECASTD_TEST_STORE=postgres, so that the one suite covers both stores.
 */
import { test } from 'node:test';
import { pgTestOptions } from '../helpers/pg.js';

export async function runOnPostgres(load: () => Promise<unknown>): Promise<void> {
  const options = await pgTestOptions();
  if (options.skip !== undefined) {
    test('PostgreSQL suite', options, () => undefined);
    return;
  }
  process.env.FORECASTD_TEST_STORE = 'postgres';
  await load();
}
