import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../access/door.test.js'));
