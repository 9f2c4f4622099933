import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../ops/retention.test.js'));
