import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/caching.test.js'));
