import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../cli/status.test.js'));
