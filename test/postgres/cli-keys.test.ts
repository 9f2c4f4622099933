import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../cli/keys.test.js'));
