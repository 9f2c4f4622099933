import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../query/readModel.test.js'));
