import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../ingest/ingestFiles.test.js'));
