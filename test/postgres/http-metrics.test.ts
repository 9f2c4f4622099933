import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/metrics.test.js'));
