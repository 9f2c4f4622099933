import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/errors.test.js'));
