/**
 * PostgreSQL for tests: each caller gets a fresh database, dropped afterwards.
 * The server is 127.0.0.1:5432 (user postgres, trust auth) unless
 * FORECASTD_TEST_PG names another admin URL. When it cannot be reached, the
 * PostgreSQL tests are skipped on a developer machine and fail under CI=true.
 */
import pg from 'pg';

export const PG_ADMIN_URL = process.env.FORECASTD_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<boolean> | undefined;

export function pgReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** node:test options: skip when PostgreSQL is unreachable, unless CI=true (then the tests run and fail). */
export async function pgTestOptions(): Promise<{ skip?: string }> {
  if (await pgReachable()) return {};
  if (process.env.CI === 'true') return {};
  return { skip: `PostgreSQL not reachable at ${PG_ADMIN_URL}` };
}

export function dbUrlFor(name: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** A fresh, empty database and how to drop it. */
export async function freshPgDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `forecastd_t_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: dbUrlFor(name),
    name,
    drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

/** Runs SQL as the admin user (for fault tests: terminate backends, block connections). */
export function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  return admin((c) => c.query(sql, params));
}
