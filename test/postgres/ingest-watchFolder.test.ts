import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../ingest/watchFolder.test.js'));
