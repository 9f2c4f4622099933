import { runOnPostgres } from './onPostgres.js';

await runOnPostgres(() => import('../http/directForecast.test.js'));
