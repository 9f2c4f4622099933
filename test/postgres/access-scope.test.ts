import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../access/scope.test.js'));
