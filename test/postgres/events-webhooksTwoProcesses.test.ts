import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../events/webhooksTwoProcesses.test.js'));
