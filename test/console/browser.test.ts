/**
 * The console in a real headless Chromium against the real server (`forecastd demo`, then `forecastd serve`),
 * in a browser time zone far from Beijing: what it shows is what the API serves.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { runCsv } from '../helpers/fixtures.js';
import { artifactsDir, browserTestOptions, launch, watchedContext, type Watched } from '../helpers/browser.js';
import { runCli, serve, type Served } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const MANIFEST = fileURLToPath(new URL('../../console/manifest.json', import.meta.url));

interface Envelope<T> {
  code: number;
  data: T;
}
interface Farm {
  farm_id: string;
  kind?: string;
}
interface Run {
  issue: string;
  status: string;
}

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

describe('the console in Chromium', browserTestOptions(), () => {
  const tmp = tempDir('forecastd-console-');
  const db = join(tmp.dir, 'console.db');
  let server: Served;
  let keyed: Served;
  let key = '';
  let browser: Browser;
  const everything: Watched[] = [];
  const shots = artifactsDir();

  const api = async <T>(path: string, base = server.base, headers: Record<string, string> = {}): Promise<T> => {
    const res = await fetch(base + path, { headers });
    const body = (await res.json()) as Envelope<T>;
    assert.equal(body.code, 0, `${path}: ${JSON.stringify(body)}`);
    return body.data;
  };

  async function open(size: { width: number; height: number }, path = '/', base = server.base): Promise<{ page: Page; context: BrowserContext; watched: Watched }> {
    const { context, watched } = await watchedContext(browser, size.width, size.height);
    everything.push(watched);
    const page = await context.newPage();
    await page.goto(base + path);
    return { page, context, watched };
  }

  const drawn = (page: Page): Promise<unknown> => page.waitForSelector('#main[data-ready="true"]');

  before(async () => {
    const demo = await runCli(['demo', '--db', db]);
    assert.equal(demo.code, 0, demo.stderr);
    server = await serve(['--db', db, '--auth', 'off']);
    const created = await runCli(['keys', 'create', '--name', 'console', '--db', db]);
    assert.equal(created.code, 0, created.stderr);
    key = created.stdout.trim();
    keyed = await serve(['--db', db, '--auth', 'required']);
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await keyed?.stop();
    tmp.cleanup();
  });

  test('the map and the list show every site, wind and solar apart', async () => {
    const farms = (await api<{ items: Farm[] }>('/api/v1/farms')).items;
    const { page, context } = await open(DESKTOP);
    await page.waitForSelector('[data-farm-id]');
    assert.equal(await page.locator('[data-farm-id]').count(), farms.length);
    for (const f of farms) assert.equal(await page.locator(`[data-farm-id="${f.farm_id}"]`).count(), 1, f.farm_id);
    // Wind sites are circles and solar sites squares on the map: shape as well as colour.
    const wind = farms.filter((f) => f.kind === 'wind').length;
    assert.ok(wind > 0 && wind < farms.length);
    assert.equal(await page.locator('svg.map circle[data-map-farm-id]').count(), wind);
    assert.equal(await page.locator('svg.map rect[data-map-farm-id]').count(), farms.length - wind);
    // The outline shipped with the package is drawn.
    await page.waitForSelector('svg.map .land path');
    // Searching narrows the list; the search is kept in the URL.
    await page.fill('#site-search', 'solar gansu');
    assert.deepEqual(await page.locator('[data-farm-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-farm-id'))), ['PV_GS01', 'PV_GS02']);
    assert.match(page.url(), /q=solar(\+|%20)gansu/);
    await page.fill('#site-search', '');
    await page.screenshot({ path: join(shots, 'sites-1280.png') });
    await context.close();
  });

  test('selecting a site draws its charts with the right number of points, labelled in Beijing time', async () => {
    const { page, context } = await open(DESKTOP);
    const elements = (await api<{ items: { name: string }[] }>('/api/v1/elements')).items.map((e) => e.name);
    // Once to warm the server's caches, then the figure that is reported.
    await page.click('[data-farm-id="PV_GS01"]');
    await drawn(page);
    await page.click('[data-farm-id="WF_GS01"]');
    await drawn(page);
    const ms = await page.evaluate(() => {
      const marks = performance.getEntriesByType('mark');
      const last = (name: string): number => marks.filter((m) => m.name === name).at(-1)!.startTime;
      return last('forecastd:drawn') - last('forecastd:select');
    });
    console.log(`# console: select to charts drawn ${ms.toFixed(0)} ms (target <= 300 ms)`);
    const latest = await api<{ total: number; issue_time_utc: string }>('/api/v1/forecast?farm_id=WF_GS01&size=1');
    for (const f of elements) {
      assert.equal(await page.locator(`[data-chart="${f}"]`).getAttribute('data-points'), String(latest.total), f);
    }
    // Seven panels and the change of 100 m wind from the previous run, each one canvas.
    assert.equal(await page.locator('.chart canvas').count(), 8);
    assert.equal(await page.locator('[data-chart="spd100-change"]').getAttribute('data-points'), String(latest.total));
    // A run starting 00 UTC starts at 08:00 Beijing time, whatever the browser's zone (here Los Angeles).
    const start = Date.parse(latest.issue_time_utc);
    const beijing = new Date(start + 8 * 3600_000).toISOString().slice(0, 16).replace('T', ' ');
    assert.match(await page.locator('.chart-note').textContent() ?? '', new RegExp(`from ${beijing} to .* Beijing time`));
    assert.match(page.url(), /view=site&farm=WF_GS01/);
    await page.screenshot({ path: join(shots, 'site-1280.png'), fullPage: true });
    await context.close();
  });

  test('the run selector changes the charts, and the previous run is overlaid with the right values', async () => {
    const runs = (await api<{ items: Run[] }>('/api/v1/forecast/issues?farm_id=WF_GS01')).items;
    assert.ok(runs.length >= 3);
    const chosen = runs[1]!.issue;
    const before = runs[2]!.issue;
    const { page, context } = await open(DESKTOP, '/?view=site&farm=WF_GS01');
    await drawn(page);
    await page.evaluate("document.getElementById('main').dataset.ready = 'false'");
    await page.selectOption('[data-run-select]', chosen);
    await drawn(page);
    assert.match(page.url(), new RegExp(`issue=${chosen}`));
    assert.match(await page.locator('.chart-note').textContent() ?? '', new RegExp(`Run ${chosen} .*previous run, ${before}`));
    const total = (await api<{ total: number }>(`/api/v1/forecast?farm_id=WF_GS01&issue=${chosen}&size=1`)).total;
    assert.equal(await page.locator('[data-chart="t2m"]').getAttribute('data-points'), String(total));
    // The temperature table: the chosen run and the previous one at the same valid time, in °C.
    await page.locator('#panel-temperature').locator('xpath=ancestor::figure').locator('summary').click();
    // The table is filled when it opens: wait for the row before reading it (allTextContents does not wait).
    const fifth = page.locator('#panel-temperature').locator('xpath=ancestor::figure').locator('tbody tr').nth(4);
    await fifth.locator('th').first().waitFor();
    const row = await fifth.locator('th, td').allTextContents();
    const validTime = `${row[0]!.replace(' ', 'T')}:00+08:00`;
    const at = async (issue: string): Promise<number> => {
      const d = await api<{ items: { t2m: number }[] }>(`/api/v1/forecast?farm_id=WF_GS01&issue=${issue}&start=${encodeURIComponent(validTime)}&end=${encodeURIComponent(validTime)}&elements=t2m`);
      return d.items[0]!.t2m;
    };
    assert.equal(Number(row[2]), +((await at(chosen)) - 273.15).toFixed(3));
    assert.equal(Number(row[3]), +((await at(before)) - 273.15).toFixed(3));
    await context.close();
  });

  test('the CSV download is exactly the API CSV of what is shown', async () => {
    const issue = (await api<{ items: Run[] }>('/api/v1/forecast/issues?farm_id=PV_QH01')).items[0]!.issue;
    // Twelve hours (48 steps) from 4 h into the run, in Beijing wall-clock time: inside the newest run whether it
    // started at 00 or 12 UTC (a fixed time of day was not, after 12 UTC).
    const from = Date.UTC(+issue.slice(0, 4), +issue.slice(4, 6) - 1, +issue.slice(6, 8), +issue.slice(8, 10)) + (8 + 4) * 3600_000;
    const wall = (ms: number): string => new Date(ms).toISOString().slice(0, 16);
    const [start, end] = [wall(from), wall(from + 47 * 900_000)];
    const view = `/?view=site&farm=PV_QH01&issue=${issue}&start=${start}&end=${end}&fields=tr,t2m,spd100`;
    const { page, context } = await open(DESKTOP, view);
    await drawn(page);
    assert.equal(await page.locator('[data-chart="tr"]').getAttribute('data-points'), '48');
    // A site's link in the list is its own view, not this window and these fields.
    assert.equal(await page.locator('[data-farm-id="WF_GS01"]').getAttribute('href'), '?view=site&farm=WF_GS01');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-download="csv"]')]);
    const got = readFileSync((await download.path())!, 'utf8');
    const expected = await (await fetch(`${server.base}/api/v1/forecast?farm_id=PV_QH01&issue=${issue}&start=${start}%2B08:00&end=${end}%2B08:00&elements=t2m,spd100,tr&format=csv`)).text();
    assert.equal(got, expected);
    assert.equal(got.split('\n')[0], 'date_time,t2m,spd100,tr');
    assert.equal(got.trimEnd().split('\n').length, 49);
    // The URL shown is the one the CSV came from, as JSON.
    const shown = (await page.locator('[data-api-url]').textContent()) ?? '';
    const json = (await (await fetch(shown)).json()) as Envelope<{ total: number }>;
    assert.equal(json.data.total, 48);
    await context.close();
  });

  test('when keys are required, the page asks for one, keeps it for the session and sends it in a header', async () => {
    const { page, context } = await open(DESKTOP, '/', keyed.base);
    const sent: (string | undefined)[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/v1/farms')) sent.push(r.headers()['authorization']);
    });
    const field = page.locator('[data-api-key]');
    await field.waitFor();
    assert.equal(await page.locator('[data-farm-id]').count(), 0);
    await field.fill(key);
    await field.press('Enter');
    await page.waitForSelector('[data-farm-id="WF_GS01"]');
    assert.deepEqual(sent, [`Bearer ${key}`]);
    // The key lives in the tab's session storage, never in the URL.
    assert.equal(await page.evaluate("sessionStorage.getItem('forecastd.apiKey')"), key);
    assert.ok(!page.url().includes(key));
    // A site's CSV comes with the key too.
    await page.click('[data-farm-id="WF_GS01"]');
    await drawn(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-download="csv"]')]);
    const href = (await page.locator('[data-download="csv"]').getAttribute('href'))!;
    const expected = await (await fetch(keyed.base + href, { headers: { authorization: `Bearer ${key}` } })).text();
    assert.equal(readFileSync((await download.path())!, 'utf8'), expected);
    assert.match(expected, /^date_time,t2m,/);
    // A reload in the same tab needs no second prompt.
    await page.reload();
    await page.waitForSelector('[data-farm-id="WF_GS01"]');
    assert.equal(await page.locator('[data-api-key]').count(), 0);
    await context.close();
  });

  test('a wrong key is refused and asked for again', async () => {
    const { page, context, watched } = await open(PHONE, '/', keyed.base);
    await page.locator('[data-api-key]').fill('fcd_' + 'x'.repeat(38));
    await page.locator('[data-api-key]').press('Enter');
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /not accepted/);
    await page.locator('[data-api-key]').fill(key);
    await page.locator('[data-api-key]').press('Enter');
    await page.waitForSelector('[data-farm-id="WF_GS01"]');
    // The refusal itself is the one error this page may log.
    watched.errors.splice(0, watched.errors.length, ...watched.errors.filter((e) => !/status of 401/.test(e)));
    await context.close();
  });

  test('the runs view lists every run with its state, and a new run appears without a reload', async () => {
    const runs = (await api<{ items: Run[] }>('/api/v1/forecast/issues')).items;
    // The site's view first, so that the page has already read the site's runs once.
    const { page, context } = await open(DESKTOP, '/?view=site&farm=WF_GS01');
    await drawn(page);
    await page.click('[data-nav="runs"]');
    await page.waitForSelector('[data-issue]');
    assert.equal(await page.locator('[data-issue]').count(), runs.length);
    for (const r of runs) assert.equal(await page.locator(`[data-issue="${r.issue}"]`).getAttribute('data-status'), r.status);
    await page.waitForSelector('.live[data-live="true"]');
    await page.screenshot({ path: join(shots, 'runs-1280.png') });
    // A later run lands for one site: the page shows it, receiving 1 of 24, from the events stream.
    const next = new Date(Date.UTC(+runs[0]!.issue.slice(0, 4), +runs[0]!.issue.slice(4, 6) - 1, +runs[0]!.issue.slice(6, 8), +runs[0]!.issue.slice(8)) + 12 * 3600_000);
    const issue = next.toISOString().slice(0, 13).replace(/[-T]/g, '');
    const file = join(tmp.dir, `WF_GS01_${issue}.csv`);
    writeFileSync(file, runCsv(issue));
    const ingested = await runCli(['ingest', file, '--db', db]);
    assert.equal(ingested.code, 0, ingested.stderr);
    const row = page.locator(`[data-issue="${issue}"]`);
    await row.waitFor({ timeout: 10_000 });
    assert.equal(await row.getAttribute('data-status'), 'receiving');
    assert.match((await row.textContent()) ?? '', /1 \/ 24/);
    // Back on the site, its latest run is the new one: what the page read before is not served again.
    await page.click('[data-farm-id="WF_GS01"]');
    await drawn(page);
    assert.equal(await page.locator('[data-run-select]').inputValue(), issue);
    assert.match((await page.locator('.latest').textContent()) ?? '', new RegExp(`Latest run ${issue} .*Receiving`));
    await context.close();
  });

  test('at 390 px wide: every view fits the width and works', async () => {
    const { page, context } = await open(PHONE);
    await page.waitForSelector('[data-farm-id]');
    const fits = (): Promise<boolean> => page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');
    assert.ok(await fits(), 'sites view wider than the screen');
    await page.screenshot({ path: join(shots, 'sites-390.png') });
    await page.click('[data-farm-id="PV_XZ01"]');
    await drawn(page);
    assert.ok(await fits(), 'site view wider than the screen');
    assert.ok(((await page.locator('.chart canvas').first().boundingBox())?.width ?? 0) <= PHONE.width);
    await page.screenshot({ path: join(shots, 'site-390.png'), fullPage: true });
    await page.click('[data-nav="runs"]');
    await page.waitForSelector('[data-issue]');
    assert.ok(await fits(), 'runs view wider than the screen');
    await page.screenshot({ path: join(shots, 'runs-390.png') });
    await context.close();
  });

  test('axe finds no serious or critical violation in any view, at either width', async () => {
    for (const size of [DESKTOP, PHONE]) {
      for (const view of ['/?view=sites', '/?view=site&farm=WF_NM01', '/?view=runs']) {
        const { page, context } = await open(size, view);
        if (view.includes('farm=')) {
          await drawn(page);
          // A data table open, so that it is checked too: a small one (one day, one field), since axe takes seconds
          // per thousand cells.
          await page.evaluate("document.getElementById('main').dataset.ready = 'false'");
          await page.getByRole('button', { name: '1 day' }).click();
          await drawn(page);
          await page.locator('#panel-temperature').locator('xpath=ancestor::figure').locator('.data-table summary').click();
          await page.waitForSelector('.data-table table');
        } else await page.waitForSelector(view.includes('runs') ? '[data-issue]' : 'svg.map .land path');
        const result = await new AxeBuilder({ page }).analyze();
        const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        assert.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `${view} at ${size.width}px`);
        await context.close();
      }
    }
  });

  test('no request left 127.0.0.1 and no page logged an error', () => {
    const requests = everything.flatMap((w) => w.requests);
    assert.ok(requests.length > 50);
    const foreign = requests.filter((u) => !u.startsWith('blob:') && !u.startsWith('data:') && new URL(u).hostname !== '127.0.0.1');
    assert.deepEqual(foreign, []);
    assert.deepEqual(everything.flatMap((w) => w.errors), []);
    const shipped = (JSON.parse(readFileSync(MANIFEST, 'utf8')) as { files: { gzipBytes: number }[] }).files.reduce((n, f) => n + f.gzipBytes, 0);
    console.log(`# console: ships ${(shipped / 1024).toFixed(1)} KB gzip in all (target <= 250 KB)`);
  });
});
