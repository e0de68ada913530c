/**
 * The web page (`GET /`) and the API docs (`GET /docs`) in a real browser: Debian's Chromium, headless,
 * driven by playwright-core. Each view opens, shows the values the API answers for the same query
 * (and the data files hold), logs no console error and requests nothing from another origin.
 * Screenshots go to test-output/screenshots/. Skipped, with the reason, when Chromium is absent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { addDataset } from '../src/areas/datasets/store.js';
import { upsertPeer } from '../src/areas/peers/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet } from '../src/areas/rna/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { copyFixture, newRegistry, ROOT, startTestServer, tempDir, type TestServer } from './helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = fs.existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');
// Flags for a closed network: without the background-networking ones Chromium keeps trying to reach Google.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const dir = tempDir();
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
const vcf = copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir);
const cufflinks = copyFixture('ga4gh-server/cufflinks.txt', dir); // 49 features: more than the chart's 20 bars
const PEER = 'https://peer.example.org';

/** The sequence of the one-record FASTA, read here. */
const referenceBases = fs.readFileSync(fasta, 'utf8').split('\n').slice(1).join('').trim().toUpperCase();
/** The VCF read the simple way: sample names and data lines. */
const vcfLines = fs.readFileSync(vcf, 'utf8').split('\n').filter((l) => l && !l.startsWith('##'));
const vcfSamples = vcfLines[0].split('\t').slice(9);
const vcfRecords = vcfLines.slice(1).map((l) => l.split('\t'));

let server: TestServer;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const foreignRequests: string[] = [];

const api = async (p: string, body?: unknown) => (body === undefined ? await server.get(p) : await server.post(p, body)).json;

async function screenshot(name: string) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function openView(id: string) {
  await page.goto(`${server.url}/#/${id}`);
  await page.waitForFunction((v) => document.getElementById('status')?.textContent?.includes('loaded') && location.hash === `#/${v}`, id);
}

const cellTexts = (selector: string) => page.$$eval(selector, (cells) => cells.map((c) => (c.textContent ?? '').trim()));

// A skipped test (not a skipped suite), so that the run's summary counts it as skipped.
if (skip) it('the web page and the API docs in Chromium', { skip }, () => {});
else describe('the web page in Chromium', () => {
  before(async () => {
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'demo', 'browser test data');
    await loadReferenceSet(registry, fasta, { name: 'hg37', assemblyId: 'hg37' });
    await loadVariantSet(registry, 'demo', [vcf], { referenceset: 'hg37', name: 'brca1' });
    await addQuantificationSet(registry, 'demo', 'rnaseq');
    await loadQuantification(registry, 'demo', 'rnaseq', cufflinks, { name: 'cufflinks-sample', format: 'cufflinks' });
    await upsertPeer(registry, PEER, undefined, 'operator');
    server = await startTestServer(location);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    page.on('requestfailed', (request) => consoleErrors.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      if (response.status() >= 400) consoleErrors.push(`${response.status()} from ${response.url()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:') && !request.url().startsWith('blob:')) {
        foreignRequests.push(request.url());
      }
    });
  });

  after(async () => {
    await browser?.close();
  });

  it('serves a small page: the HTML and its one script', async () => {
    const html = await server.get('/');
    const script = await fetch(server.url + '/ui/app.js');
    const size = html.text.length + Number(script.headers.get('content-length'));
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    assert.doesNotMatch(html.text, /https?:\/\//, 'the page names no other origin');
    assert.ok(size < 40_000, `page and script are ${size} bytes`);
  });

  it('shows the server view: protocol version, service-info and the menu of the served areas', async () => {
    await openView('server');
    const info = await api('/info');
    const text = await page.textContent('main');
    assert.ok(text?.includes(info.protocolVersion));
    assert.ok(text?.includes((await api('/service-info')).id));
    assert.deepEqual(await cellTexts('nav a'), ['Server', 'Datasets', 'References', 'Variants', 'RNA', 'Peers']);
    await screenshot('server');
  });

  it('lists the datasets with links to their JSON', async () => {
    await openView('datasets');
    const { datasets } = await api('/datasets/search', {});
    await page.waitForSelector('main tbody tr');
    assert.deepEqual(await cellTexts('main tbody tr td:first-child'), datasets.map((d: any) => d.name));
    const href = await page.getAttribute('main tbody a', 'href');
    const record = await page.evaluate(async (h) => (await fetch(h!)).json(), href);
    assert.deepEqual(record, datasets[0]);
    await screenshot('datasets');
  });

  it('shows reference sets, references and the bases of a range, window by window', async () => {
    await openView('references');
    await page.click('text=References of hg37');
    await page.waitForSelector('text=View bases of ref_brca1');
    const row = await cellTexts('main tbody tr:has-text("ref_brca1") td');
    assert.equal(Number(row[1]), referenceBases.length);
    await page.click('text=View bases of ref_brca1');
    await page.fill('input[name=start]', '100');
    await page.fill('input[name=end]', '220');
    await page.click('button:has-text("Show bases")');
    await page.waitForSelector('pre.bases[data-start="100"]');
    const shown = async () => (await page.textContent('pre.bases'))!.split('\n').map((l) => l.trim().split(/\s+/)[1]).join('');
    const referenceId = (await api('/references/search', { referenceSetId: (await api('/referencesets/search', {})).referenceSets[0].id })).references[0].id;
    assert.equal(await shown(), (await api(`/references/${referenceId}/bases?start=100&end=220`)).sequence);
    assert.equal(await shown(), referenceBases.slice(100, 220));
    await page.click('button:has-text("Next window")');
    await page.waitForSelector('pre.bases[data-start="220"]');
    assert.equal(await shown(), referenceBases.slice(220, 340));
    await screenshot('references');
  });

  it('shows variant sets, call sets, and a region as variants with a genotype grid, page by page', async () => {
    await openView('variants');
    await page.click('text=Open brca1');
    await page.waitForSelector('form[aria-label="Region query in brca1"]');
    await page.waitForSelector('text=HG00096');
    assert.deepEqual(await cellTexts('table:has(caption:has-text("Call sets")) tbody td:first-child'), vcfSamples);
    assert.equal(await page.inputValue('input[name=referenceName]'), 'ref_brca1');
    await page.fill('input[name=pageSize]', '20');
    await page.click('button:has-text("Search variants")');
    await page.waitForSelector('table.grid');
    const starts = await cellTexts('table:has(caption:has-text("Variants in")) tbody td:nth-child(2)');
    assert.deepEqual(starts.map(Number), vcfRecords.slice(0, 20).map((r) => Number(r[1]) - 1));
    // Grid rows are samples, columns the variants; each cell the GT of the file.
    assert.deepEqual(await cellTexts('table.grid tbody th'), vcfSamples);
    for (let s = 0; s < vcfSamples.length; s++) {
      const cells = await cellTexts(`table.grid tbody tr:nth-child(${s + 1}) td`);
      assert.deepEqual(cells, vcfRecords.slice(0, 20).map((r) => r[9 + s].split(':')[0]));
    }
    const classes = await page.$$eval('table.grid tbody tr:nth-child(2) td', (cells) => cells.map((c) => c.className));
    assert.equal(classes[0], 'gt-homref'); // HG00099 at the first site: 0|0
    const { variants } = await api('/variants/search', { variantSetId: (await api('/variantsets/search', { datasetId: (await api('/datasets/search', {})).datasets[0].id })).variantSets[0].id, referenceName: 'ref_brca1', pageSize: 20 });
    assert.deepEqual(starts.map(Number), variants.map((v: any) => v.start));
    await screenshot('variants');
    await page.click('button:has-text("Next page")');
    await page.waitForSelector('caption:has-text("page 2")');
    const next = await cellTexts('table:has(caption:has-text("Variants in")) tbody td:nth-child(2)');
    assert.deepEqual(next.map(Number), vcfRecords.slice(20, 40).map((r) => Number(r[1]) - 1));
  });

  it('shows expression levels with threshold and names filters, and a chart of the most expressed', async () => {
    await openView('rna');
    await page.click('text=Quantifications of rnaseq');
    await page.click('text=Open cufflinks-sample');
    await page.waitForSelector('svg[role=img] rect');
    const quantificationId = (await api('/rnaquantifications/search', { rnaQuantificationSetId: (await api('/rnaquantificationsets/search', {})).rnaQuantificationSets[0].id })).rnaQuantifications[0].id;
    const first = await api('/expressionlevels/search', { rnaQuantificationId: quantificationId, threshold: 0, pageSize: 25 });
    const tableSelector = 'table:has(caption:has-text("Expression levels")) tbody tr';
    await page.waitForSelector(tableSelector);
    assert.deepEqual(await cellTexts(`${tableSelector} td:first-child`), first.expressionLevels.map((l: any) => l.name));
    assert.deepEqual((await cellTexts(`${tableSelector} td:nth-child(2)`)).map(Number), first.expressionLevels.map((l: any) => l.expression));
    // The chart: the 20 highest expressions of every level above the threshold, highest first.
    const all: any[] = [];
    let token: string | undefined;
    do {
      const res = await api('/expressionlevels/search', { rnaQuantificationId: quantificationId, threshold: 0, pageSize: 1000, ...(token ? { pageToken: token } : {}) });
      all.push(...res.expressionLevels);
      token = res.nextPageToken;
    } while (token);
    const top = all.sort((a, b) => b.expression - a.expression).slice(0, 20);
    const bars = await page.$$eval('svg[role=img] rect', (rects) => rects.map((r) => Number(r.getAttribute('data-expression'))));
    assert.deepEqual(bars, top.map((l) => l.expression));
    await screenshot('rna');
    // Names filter and threshold, as the API answers them.
    const names = [all[0].name, all[3].name];
    await page.fill('input[name=names]', names.join(', '));
    await page.fill('input[name=threshold]', '-1');
    await page.click('button:has-text("Show expression")');
    await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length >= 1 && [...document.querySelectorAll('caption')].some((c) => c.textContent?.includes(`${n} shown`)), names.length);
    const filtered = await api('/expressionlevels/search', { rnaQuantificationId: quantificationId, threshold: -1, names });
    assert.deepEqual((await cellTexts(`${tableSelector} td:first-child`)).sort(), filtered.expressionLevels.map((l: any) => l.name).sort());
  });

  it('lists the peers', async () => {
    await openView('peers');
    await page.waitForSelector('main tbody tr');
    const { peers } = await api('/peers/list', {});
    assert.deepEqual(await cellTexts('main tbody td:first-child'), peers.map((p: any) => p.url));
    assert.ok(peers.some((p: any) => p.url === PEER));
    await screenshot('peers');
  });

  it('is usable from the keyboard, with every control labelled', async () => {
    await page.goto(`${server.url}/#/server`);
    await page.waitForSelector('nav a[aria-current=page]');
    // Tab from the top of the page to the "Datasets" link and follow it with Enter.
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'Datasets'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
    }
    assert.equal(focused, 'Datasets');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash === '#/datasets');
    for (const view of ['references', 'variants', 'rna']) {
      await openView(view);
      await page.click('main button'); // open the first set, so its forms are shown
      await page.waitForTimeout(300);
      const unlabelled = await page.$$eval('input, select', (controls) =>
        controls.filter((c) => !(c as HTMLInputElement).labels?.length && !c.getAttribute('aria-label')).map((c) => c.outerHTML),
      );
      assert.deepEqual(unlabelled, [], view);
    }
  });

  it('shows the API documentation from the server alone', async () => {
    await page.goto(`${server.url}/docs`);
    await page.waitForSelector('h2:has-text("Search variants")', { timeout: 20_000 });
    await screenshot('docs');
  });

  it('logged no console error and requested nothing from another origin', () => {
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(foreignRequests, []);
  });
});
