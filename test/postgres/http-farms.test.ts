import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/farms.test.js'));
