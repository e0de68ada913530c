/**
 * The web page's genome browser (igv.js) in a real browser: Debian's Chromium, headless, driven by
 * playwright-core, over a real server. For a region, what igv.js loaded is read through its own API
 * (the tracks' feature sources, the alignment container, the genome's sequence) and counted against
 * the files: bcftools for the variants, samtools for the alignments, the GFF3 text for the features,
 * the wiggle text the bigWig was made from for the signal, the FASTA text for the bases. A page of
 * another origin does the same through CORS, and a page of an origin not listed is refused.
 * Screenshots go to test-output/screenshots/. Skipped, with the reason, when Chromium is absent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { loadContinuousSet } from '../src/areas/continuous/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadFeatureSet } from '../src/areas/features/loader.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadDictionaryReferenceSet, loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { readGffLines, wiggleValues } from './annotation-fixture.js';
import { chromiumMissing, launchChromium, screenshotOf } from './chromium.js';
import { atEnd, bgzippedVcf, copyFixture, idOf, newRegistry, ROOT, startTestServer, tempDir, tool, type TestServer } from './helpers.js';

const skip = chromiumMissing;

const dir = tempDir();
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
const vcf = bgzippedVcf(dir, 'brca1.vcf.gz', fs.readFileSync(path.join(ROOT, 'testdata/compliance/brca1_1kgPhase3_variants.vcf'), 'utf8'));
const bam = copyFixture('compliance/brca1_HG00096.bam', dir);
copyFixture('compliance/brca1_HG00096.bam.bai', dir);
const cram = copyFixture('compliance/brca1_HG00096.cram', dir);
copyFixture('compliance/brca1_HG00096.cram.crai', dir);
const gff = copyFixture('compliance/brca1_gencodev19.gff3', dir);
const bigWig = copyFixture('ga4gh-server/datasets/dataset1/continuous/bigwig_1.bw', dir);
const CONTINUOUS = path.join(ROOT, 'testdata/ga4gh-server/datasets/dataset1/continuous');
// The bigWig's sequences with their lengths, as a set without bases (a SAM-header dictionary).
const dictionary = path.join(dir, 'contigs.dict');
const chromSizes = fs.readFileSync(path.join(CONTINUOUS, 'chromSizes.txt'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/));
fs.writeFileSync(dictionary, ['@HD\tVN:1.6', ...chromSizes.map(([name, length]) => `@SQ\tSN:${name}\tLN:${length}`)].join('\n') + '\n');

/** A region as igv.js and the tools take it: 1-based, inclusive; `start0`/`end` the same 0-based, half-open. */
interface Region {
  chr: string;
  start0: number;
  end: number;
  text: string;
}
const region = (chr: string, first: number, last: number): Region => ({ chr, start0: first - 1, end: last, text: `${chr}:${first}-${last}` });
const BRCA1 = region('ref_brca1', 30001, 36000);
const WIGGLE = region('chr19', 49304001, 49310000);

/** The bases of the one-record FASTA, read here. */
const referenceBases = fs.readFileSync(fasta, 'utf8').split('\n').slice(1).join('').trim();
const gffLines = readGffLines(gff);
const wiggle = wiggleValues(path.join(CONTINUOUS, 'wiggle.txt'));

/** What the files hold in a region, read by the tools of the field and by reading the text files here. */
function expectedIn(r: Region) {
  // A feature of several lines (one ID) spans them all.
  const spans = new Map<string, { start: number; end: number }>();
  for (const line of gffLines.filter((l) => l.seqid === r.chr)) {
    const id = line.attrs.ID?.[0] ?? `${line.type}:${line.start}-${line.end}`;
    const span = spans.get(id);
    spans.set(id, span ? { start: Math.min(span.start, line.start), end: Math.max(span.end, line.end) } : { start: line.start, end: line.end });
  }
  return {
    variants: tool('bcftools', 'view', '-H', '-r', r.text, vcf).toString().split('\n').filter(Boolean).length,
    // igv.js leaves out unmapped, vendor-failed and duplicate reads by default (0x4, 0x200, 0x400).
    alignments: Number(tool('samtools', 'view', '-c', '-F', '0x604', bam, r.text).toString().trim()),
    features: [...spans.values()].filter((s) => s.start < r.end && s.end > r.start0).length,
    bases: referenceBases.slice(r.start0, r.end),
  };
}

/** Base -> value over a region, from igv.js's signal features (each a run of bases with one value). */
type Runs = Array<{ start: number; end: number; value: number }>;
function valuesOf(runs: Runs, r: Region): Map<number, number> {
  const values = new Map<number, number>();
  for (const run of runs) for (let b = Math.max(run.start, r.start0); b < Math.min(run.end, r.end); b++) values.set(b, run.value);
  return values;
}

/**
 * What igv.js holds for a region, by track name, read through its API in the page: the features of
 * feature and variant tracks, the alignments of alignment tracks (their container), the runs of
 * signal tracks, and the genome's bases.
 */
async function igvHolds(page: Page, r: Region) {
  return page.evaluate(
    async (r) => {
      const browser = (document.querySelector('div.igv') as any).igvBrowser;
      const tracks: Record<string, { type: string; count: number; runs?: Array<{ start: number; end: number; value: number }>; downsampled?: number }> = {};
      for (const view of browser.trackViews) {
        const track = view.track;
        if (!track.name || !['variant', 'alignment', 'annotation', 'wig'].includes(track.type)) continue;
        if (track.type === 'alignment') {
          const container = await track.featureSource.getAlignments(r.chr, r.start0, r.end);
          // Mates shown as a pair are one item of the container: each is counted.
          const reads = container.allAlignments().flatMap((a: any) => (a.paired ? [a.firstAlignment, a.secondAlignment].filter(Boolean) : [a]));
          const alignments = reads.filter((a: any) => a.chr === r.chr && a.start < r.end && a.start + a.lengthOnRef > r.start0);
          tracks[track.name] = { type: track.type, count: alignments.length, downsampled: container.downsampledIntervals.length };
        } else {
          const features = await track.featureSource.getFeatures({ chr: r.chr, start: r.start0, end: r.end, bpPerPixel: 1, visibilityWindow: track.visibilityWindow, windowFunction: 'none' });
          tracks[track.name] = { type: track.type, count: features.length };
          if (track.type === 'wig') tracks[track.name].runs = features.map((f: any) => ({ start: f.start, end: f.end, value: f.value }));
        }
      }
      const bases = await browser.genome.getSequence(r.chr, r.start0, r.end);
      return { tracks, bases, locus: browser.currentLoci() };
    },
    r,
  );
}

/** A server of one page on a loopback port of its own: an origin other than the data server's. */
async function startPageServer(html: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  atEnd(close);
  return { port: (server.address() as AddressInfo).port, close };
}

let server: TestServer;
let registryLocation: string;
let browser: Browser;
let page: Page;
const problems: string[] = [];
const foreignRequests: string[] = [];

const screenshot = (name: string) => screenshotOf(page, name);

/** Waits until the view has built its browser and loaded every track of the chosen reference set. */
const browserReady = () => page.waitForSelector('div.igv[data-state="ready"]', { timeout: 30_000 });

// A skipped test (not a skipped suite), so that the run's summary counts it as skipped.
if (skip) it('the genome browser in Chromium', { skip }, () => {});
else describe('the genome browser in Chromium', () => {
  before(async () => {
    const { location, registry } = await newRegistry(dir);
    registryLocation = location;
    await addDataset(registry, 'demo', 'genome browser test data');
    await loadReferenceSet(registry, fasta, { name: 'hg37', assemblyId: 'hg37' });
    await loadVariantSet(registry, 'demo', [vcf], { referenceset: 'hg37', name: 'brca1-variants' });
    await loadReadGroupSet(registry, 'demo', bam, { referenceset: 'hg37', name: 'HG00096-bam' });
    await loadReadGroupSet(registry, 'demo', cram, { referenceset: 'hg37', name: 'HG00096-cram' });
    await loadFeatureSet(registry, 'demo', gff, { referenceSet: 'hg37', name: 'gencode-brca1' });
    await loadDictionaryReferenceSet(registry, dictionary, { name: 'contigs' });
    await loadContinuousSet(registry, 'demo', bigWig, { referenceSet: 'contigs', name: 'wiggle' });
    server = await startTestServer(location);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} from ${response.url()}`);
    });
    // Nothing leaves the machine: requests elsewhere are refused and recorded.
    await page.route((url) => !url.href.startsWith(server.url) && !/^(data|blob):/.test(url.href), (route) => {
      foreignRequests.push(route.request().url());
      return route.abort();
    });
  });

  after(async () => {
    await browser?.close();
  });

  it('serves igv.js from node_modules, cached for a day', async () => {
    const res = await fetch(server.url + '/ui/igv.esm.min.js');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=86400');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), fs.readFileSync(path.join(ROOT, 'node_modules/igv/dist/igv.esm.min.js')));
  });

  it('lists the tracks of the reference set, each named after its set; the CRAM-only set is not viewable', async () => {
    await page.goto(`${server.url}/#/browser`);
    await browserReady();
    await page.selectOption('select[name=referenceSet]', { label: 'hg37' });
    await page.waitForSelector('caption:has-text("Tracks of hg37")');
    await browserReady();
    const rows = await page.$$eval('table:has(caption:has-text("Tracks of hg37")) tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => (td.textContent ?? '').trim())));
    assert.deepEqual(rows.map((r) => r.slice(0, 3)), [
      ['brca1-variants', 'variants (VCF by htsget)', 'demo'],
      ['HG00096-bam', 'alignments (BAM by htsget)', 'demo'],
      ['HG00096-cram', 'alignments (BAM by htsget)', 'demo'],
      ['gencode-brca1', 'features', 'demo'],
    ]);
    assert.match(rows[2][3], /not viewable: served as CRAM only/);
    const names = await page.evaluate(() => (document.querySelector('div.igv') as any).igvBrowser.trackViews.map((v: any) => v.track.name).filter(Boolean));
    assert.deepEqual(names.filter((n: string) => n !== 'ref_brca1' && n !== 'Sequence'), ['brca1-variants', 'HG00096-bam', 'gencode-brca1']);
  });

  it('shows a region: the variants, alignments, features and bases igv.js holds are those of the files', async () => {
    await page.fill('input[name=region]', BRCA1.text);
    await page.click('button:text-is("Go")');
    await page.waitForFunction((text) => (document.querySelector('input[name=region]') as HTMLInputElement).value.replaceAll(',', '') === text, BRCA1.text);
    const held = await igvHolds(page, BRCA1);
    const expected = expectedIn(BRCA1);
    assert.ok(expected.variants > 50 && expected.alignments > 100 && expected.features > 5, JSON.stringify(expected));
    assert.deepEqual(held.tracks['brca1-variants'], { type: 'variant', count: expected.variants });
    assert.deepEqual(held.tracks['HG00096-bam'], { type: 'alignment', count: expected.alignments, downsampled: 0 });
    assert.deepEqual(held.tracks['gencode-brca1'], { type: 'annotation', count: expected.features });
    assert.equal(held.bases.toUpperCase(), expected.bases.toUpperCase());
    await page.waitForTimeout(500); // the canvases are drawn after the data arrives
    await screenshot('genome-browser');
  });

  it('shows the signal of a set without bases: the bigWig\'s values as the wiggle text gives them', async () => {
    await page.selectOption('select[name=referenceSet]', { label: 'contigs' });
    await page.waitForSelector('caption:has-text("Tracks of contigs")');
    await browserReady();
    await page.fill('input[name=region]', WIGGLE.text);
    await page.click('button:text-is("Go")');
    await page.waitForFunction((text) => (document.querySelector('input[name=region]') as HTMLInputElement).value.replaceAll(',', '') === text, WIGGLE.text);
    const held = await igvHolds(page, WIGGLE);
    const expected = new Map([...wiggle].filter(([base]) => base >= WIGGLE.start0 && base < WIGGLE.end));
    assert.ok(expected.size > 20);
    assert.deepEqual([...valuesOf(held.tracks.wiggle.runs!, WIGGLE)].sort((a, b) => a[0] - b[0]), [...expected].sort((a, b) => a[0] - b[0]));
    assert.equal(held.bases, null, 'no bases: the set was registered from a dictionary');
    await screenshot('genome-browser-signal');
  });

  it('logged no error but the answers that tell what a set holds, and asked nothing of another origin', () => {
    // The view learns that a set has no FASTA from its 404, and that a set is CRAM only from the 400
    // its BAM header ticket gets; Chromium logs each such answer to the console as well.
    const told = [`404 from ${server.url}/files/referencesets/${idOf('contigs')}/fasta`, `400 from ${server.url}/htsget/reads/${idOf('demo', 'rgs', 'HG00096-cram')}?class=header&format=BAM`];
    const answers = problems.filter((p) => /^\d{3} from /.test(p));
    const logged = problems.filter((p) => !answers.includes(p));
    assert.deepEqual(answers.filter((a) => !told.includes(a)), []);
    assert.deepEqual(logged.filter((l) => !/^Failed to load resource: the server responded with a status of 40[04] /.test(l)), []);
    assert.equal(logged.length, answers.length);
    assert.deepEqual(foreignRequests, []);
  });

  describe('igv.js on a page of another origin', () => {
    /** igv.js as another site embeds it: its bundle, the reference and the tracks, all from the data server. */
    const embed = (target: Page, dataServer: string, r: Region) =>
      target.evaluate(
        async ({ server, r, ids }) => {
          const igv = (await import(`${server}/ui/igv.esm.min.js`)).default;
          const files = `${server}/files/referencesets/${ids.referenceSet}`;
          const box = document.createElement('div');
          box.className = 'igv';
          document.body.append(box);
          const browser = await igv.createBrowser(box, {
            reference: { id: 'hg37', name: 'hg37', fastaURL: `${files}/fasta`, indexURL: `${files}/fai` },
            locus: r.text,
            loadDefaultGenomes: false,
            tracks: [
              { type: 'variant', format: 'vcf', sourceType: 'htsget', url: `${server}/htsget/variants/${ids.variantSet}`, name: 'brca1-variants' },
              { type: 'alignment', format: 'bam', sourceType: 'htsget', url: `${server}/htsget/reads/${ids.readGroupSet}`, name: 'HG00096-bam' },
              {
                type: 'annotation',
                name: 'gencode-brca1',
                // Features through the API: POST /features/search, page by page (a preflighted request).
                // (Methods, not named functions: the test's compiler would wrap those in a helper the page lacks.)
                reader: {
                  async readFeatures(chr: string, start: number, end: number) {
                    const found: any[] = [];
                    let pageToken: string | undefined;
                    do {
                      const res = await fetch(`${server}/features/search`, {
                        method: 'POST',
                        headers: { 'content-type': 'application/json' },
                        body: JSON.stringify({ featureSetId: ids.featureSet, referenceName: chr, start: Math.floor(start), end: Math.ceil(end), pageSize: 1000, pageToken }),
                      });
                      const page = await res.json();
                      found.push(...page.features);
                      pageToken = page.nextPageToken;
                    } while (pageToken);
                    return found.map((f) => ({ chr: f.referenceName, start: f.start, end: f.end, name: f.name }));
                  },
                },
              },
            ],
          });
          Object.assign(box, { igvBrowser: browser });
        },
        { server: dataServer, r, ids: { referenceSet: idOf('hg37'), variantSet: idOf('demo', 'vs', 'brca1-variants'), readGroupSet: idOf('demo', 'rgs', 'HG00096-bam'), featureSet: idOf('demo', 'fs', 'gencode-brca1') } },
      );

    let listedOrigin: string;
    let otherOrigin: string;
    let restricted: TestServer;

    before(async () => {
      const blank = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Another site</title><link rel="icon" href="data:,"></head><body></body></html>';
      listedOrigin = `http://127.0.0.1:${(await startPageServer(blank)).port}`;
      otherOrigin = `http://127.0.0.1:${(await startPageServer(blank)).port}`;
      restricted = await startTestServer(registryLocation, { cors: { origins: [listedOrigin] } });
    });

    it('loads the reference and the tracks from a server that lists its origin: the same data', async () => {
      const other = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      other.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      other.on('pageerror', (e) => errors.push(e.message));
      await other.goto(`${listedOrigin}/`);
      await embed(other, restricted.url, BRCA1);
      const held = await igvHolds(other, BRCA1);
      const expected = expectedIn(BRCA1);
      assert.equal(held.tracks['brca1-variants'].count, expected.variants);
      assert.equal(held.tracks['HG00096-bam'].count, expected.alignments);
      assert.equal(held.tracks['gencode-brca1'].count, expected.features);
      assert.equal(held.bases.toUpperCase(), expected.bases.toUpperCase());
      assert.deepEqual(errors, []);
      await other.close();
    });

    it('is refused by the browser on a page of an origin the server does not list', async () => {
      const other = await browser.newPage();
      await other.goto(`${otherOrigin}/`);
      const outcome = await other.evaluate(async ({ server, id }) => {
        const outcomes: Record<string, string> = {};
        const attempts: Record<string, () => Promise<unknown>> = {
          bundle() {
            return import(`${server}/ui/igv.esm.min.js`);
          },
          ticket() {
            return fetch(`${server}/htsget/variants/${id}?class=header`);
          },
          search() {
            return fetch(`${server}/features/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
          },
        };
        for (const what of Object.keys(attempts)) {
          try {
            await attempts[what]();
            outcomes[what] = 'read';
          } catch (e) {
            outcomes[what] = (e as Error).name;
          }
        }
        return outcomes;
      }, { server: restricted.url, id: idOf('demo', 'vs', 'brca1-variants') });
      assert.deepEqual(outcome, { bundle: 'TypeError', ticket: 'TypeError', search: 'TypeError' });
      // The server is there, and answers the same requests when no browser stands between.
      assert.equal((await fetch(`${restricted.url}/ui/igv.esm.min.js`)).status, 200);
      assert.equal((await fetch(`${restricted.url}/htsget/variants/${idOf('demo', 'vs', 'brca1-variants')}?class=header`)).status, 200);
      await other.close();
    });
  });
});
