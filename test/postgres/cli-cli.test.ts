import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../cli/cli.test.js'));
