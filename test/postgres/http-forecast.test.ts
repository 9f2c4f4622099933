import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/forecast.test.js'));
