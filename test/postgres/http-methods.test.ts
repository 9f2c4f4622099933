import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/methods.test.js'));
