import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/elements.test.js'));
