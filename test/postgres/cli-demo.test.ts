import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../cli/demo.test.js'));
