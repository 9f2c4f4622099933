/**
 * The OpenAPI 3.1 document, generated from the route schemas, served at
 * /api/v1/openapi.json, and a docs page at /docs from the installed swagger-ui
 * assets (no CDN).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ELEMENTS } from '../domain/elements.js';
import { CODES } from '../domain/errors.js';
import { ErrorEnvelope } from './schemas.js';

const DESCRIPTION = `
Forecast delivery interface v1.0: time-series forecasts (model runs, 15-minute steps, +0h to +360h) for wind and solar sites.

- Every response under /api/ is \`{ code, message, data }\` (CSV downloads excepted); \`code\` 0 is success.
- Valid times are Beijing time (UTC+8); issue (run) times are UTC \`yyyyMMddHH\`.
- Values are delivered exactly as ingested; a missing value is \`null\`.

Error codes: ${Object.values(CODES)
  .map((c) => `\`${c.code}\` (HTTP ${c.status}) ${c.summary}`)
  .join('; ')}.

Access: every operation but the element catalogue (and this document) needs an API key, sent as
\`Authorization: Bearer KEY\` or \`X-API-Key: KEY\` (an operator may run the server without keys). A key may be scoped
to some sites: any other site is answered exactly as one that does not exist. Each key has a token bucket; answers to
a limited caller carry \`RateLimit-Policy\` and \`RateLimit\`, and a refused request gets 429 with \`Retry-After\`.

Versioning: this is interface version 1.0, served under \`/api/v1\`; \`info.version\` is the server's version.
Within v1 changes are only additive (new endpoints, parameters, response members, headers, codes): clients must
ignore members and headers they do not know. A change that would break a v1 client goes to \`/api/v2\`, served
beside v1 for at least 12 months. Anything scheduled to go away is marked before it goes: this document flags it
\`deprecated\`, and its answers carry \`Deprecation\` (RFC 9745) and \`Sunset\` (RFC 8594) headers with a \`Link\`
(rel="deprecation") to the notice.

Element catalogue (canonical order):

| # | name | meaning | unit | kind |
|---|---|---|---|---|
${ELEMENTS.map((e, i) => `| ${i + 1} | ${e.name} | ${e.description} | ${e.unit} | ${e.kind} |`).join('\n')}
`;

export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  app.addSchema(ErrorEnvelope);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'forecastd forecast delivery API',
        version,
        description: DESCRIPTION,
        // A LicenseRef- identifier is SPDX's form for a licence of one's own: data goes under each customer's contract.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      // Relative: the document is served by the API it describes, wherever that is mounted.
      servers: [{ url: '/', description: 'This server' }],
      // Keys are asked for on every operation but the open ones, which say so themselves (security: []).
      security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key (fcd_ + 38 characters) as `Authorization: Bearer KEY`.',
          },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The same API key as `X-API-Key: KEY`.' },
        },
      },
      tags: [
        { name: 'forecast', description: 'Forecast data and model runs' },
        { name: 'farms', description: 'Sites' },
        { name: 'catalogue', description: 'Data fields' },
      ],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // validatorUrl null: the page must not call out to the internet.
    uiConfig: { docExpansion: 'list', deepLinking: false, validatorUrl: null },
    // Everything from this server; no upgrade-insecure-requests, since the API is often served over plain http.
    staticCSP:
      "default-src 'self'; base-uri 'self'; img-src 'self' data:; object-src 'none'; " +
      "script-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'self'",
  });
  // The page links its assets relatively, so it must be read as /docs/ (trailing slashes are otherwise ignored).
  app.addHook('onRequest', (req, reply, done) => {
    const url = req.url;
    if (url.length >= 5 && url.charCodeAt(1) === 100 && (url === '/docs' || url.startsWith('/docs?'))) {
      reply.redirect('/docs/' + url.slice(5), 302);
      return;
    }
    done();
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
