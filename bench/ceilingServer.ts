/**
 * The ceiling of the HTTP benchmarks: node:http replying to every request with the precomputed bytes of one
 * real answer (a forecast page, or a whole archive), with no framework in between.
 * Usage: node dist/bench/ceilingServer.js BODY_FILE [CONTENT_TYPE]
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.argv[2]!);
const type = process.argv[3] ?? 'application/json; charset=utf-8';
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': type, 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${addr.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
