import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../ingest/watchCrash.test.js'));
