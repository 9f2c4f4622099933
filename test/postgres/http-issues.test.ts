import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/issues.test.js'));
