import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/runStates.test.js'));
