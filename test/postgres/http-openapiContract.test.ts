import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/openapiContract.test.js'));
