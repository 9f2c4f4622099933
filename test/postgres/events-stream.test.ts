import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../events/stream.test.js'));
