/**
 * Builds the web console into dist/console (run by `npm run build`, hence by `npm ci`): the page's code
 * bundled and minified with its styles and the chart library's, the region outline, and index.html naming
 * them. Every file but the page carries a hash of its content in its name (cached for good), and gets a
 * .br and a .gz beside it, which the server sends as they are. A manifest lists what ships and its size.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { regionOutline } from './regionOutline.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = join(root, 'dist/console');

export interface ShippedFile {
  readonly name: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

const hashOf = (body: Uint8Array): string => createHash('sha256').update(body).digest('hex').slice(0, 10);

function write(name: string, body: Uint8Array, shipped: ShippedFile[]): void {
  writeFileSync(join(out, name), body);
  const gz = gzipSync(body, { level: 9 });
  writeFileSync(join(out, name + '.gz'), gz);
  writeFileSync(join(out, name + '.br'), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  shipped.push({ name, bytes: body.length, gzipBytes: gz.length });
}

/** Writes `stem-<hash>.ext` and returns its name. */
function writeHashed(stem: string, ext: string, body: Uint8Array, shipped: ShippedFile[]): string {
  const name = `${stem}-${hashOf(body)}.${ext}`;
  write(name, body, shipped);
  return name;
}

async function main(): Promise<void> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const bundle = await build({
    entryPoints: [join(root, 'web/src/main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    write: false,
    outdir: out,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const shipped: ShippedFile[] = [];
  const names: Record<string, string> = {};
  for (const file of bundle.outputFiles) {
    const ext = file.path.endsWith('.css') ? 'css' : 'js';
    names[ext] = writeHashed('app', ext, file.contents, shipped);
  }
  names.region = writeHashed('region', 'json', Buffer.from(JSON.stringify(regionOutline())), shipped);
  const icon = readFileSync(join(root, 'web/icon.svg'));
  names.icon = writeHashed('icon', 'svg', icon, shipped);
  const page = readFileSync(join(root, 'web/index.html'), 'utf8').replace(/%(\w+)%/g, (whole, key: string) => {
    const name = names[key.toLowerCase()];
    if (name === undefined) throw new Error(`web/index.html names ${whole}, which the build does not make`);
    return '/console/' + name;
  });
  write('index.html', Buffer.from(page), shipped);
  writeFileSync(join(out, 'manifest.json'), JSON.stringify({ files: shipped }, null, 1) + '\n');
}

if (basename(process.argv[1] ?? '') === 'buildConsole.js') {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
