import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/openapi.test.js'));
