import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../events/serve.test.js'));
