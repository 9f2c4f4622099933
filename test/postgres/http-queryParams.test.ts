import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/queryParams.test.js'));
