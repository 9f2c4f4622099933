/**
 * The ceiling of the HTTP benchmarks: a bare Fastify server replying to every
 * request with the precomputed bytes of one real forecast page.
 * Usage: node dist/bench/ceilingServer.js BODY_FILE
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.argv[2]!);
const app = Fastify({ logger: false });
app.get('/*', (_req, reply) => {
  reply.type('application/json; charset=utf-8').send(body);
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on ${address}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
