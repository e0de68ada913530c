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
import zlib from 'node:zlib';
import { Parser } from 'n3';
import type { Browser, Page } from 'playwright-core';
import { addBiosampleFromFile, addIndividualFromFile } from '../src/areas/biometadata/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { readOboTerms } from '../src/areas/ontologies/obo.js';
import { addOntology } from '../src/areas/ontologies/store.js';
import { loadContinuousSet } from '../src/areas/continuous/loader.js';
import { loadFeatureSet } from '../src/areas/features/loader.js';
import { loadPhenotypeSet } from '../src/areas/phenotypes/loader.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { upsertPeer } from '../src/areas/peers/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet } from '../src/areas/rna/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { readGffLines, wiggleValues, writeContigFasta } from './annotation-fixture.js';
import { chromiumMissing, launchChromium, screenshotOf } from './chromium.js';
import { copyFixture, newRegistry, ROOT, startTestServer, tempDir, type TestServer } from './helpers.js';

const skip = chromiumMissing;

const dir = tempDir();
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
const vcf = copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir);
const cufflinks = copyFixture('ga4gh-server/cufflinks.txt', dir); // 49 features: more than the chart's 20 bars
const PEER = 'https://peer.example.org';
const obo = copyFixture('compliance/so-xp-simple.obo', dir);
const vep = copyFixture('ga4gh-server/datasets/dataset1/variants/1kg.3.annotations', dir); // VEP CSQ with SIFT and PolyPhen
const snpEff = copyFixture('compliance/brca1_WASH7P_annotation.vcf', dir); // SnpEff ANN with HGVS
const cgd = copyFixture('compliance/cgd', dir);
const bam = copyFixture('compliance/brca1_HG00096.bam', dir);
copyFixture('compliance/brca1_HG00096.bam.bai', dir);
const gff = copyFixture('compliance/brca1_gencodev19.gff3', dir);
const bigWig = copyFixture('ga4gh-server/datasets/dataset1/continuous/bigwig_1.bw', dir);
const CONTINUOUS = path.join(ROOT, 'testdata', 'ga4gh-server', 'datasets', 'dataset1', 'continuous');
// The bigWig's sequences as a reference set (the loader checks names only).
const contigs = writeContigFasta(path.join(dir, 'contigs', 'contigs.fa'), fs.readFileSync(path.join(CONTINUOUS, 'chromSizes.txt'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/)[0]));
const SAMPLES = ['HG00096', 'HG00099', 'HG00101'];
const metadataFile = (kind: string, sample: string) => path.join(ROOT, 'testdata', 'compliance', `${kind}_${sample}.json`);
const fileJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** The sequence of the one-record FASTA, read here. */
const referenceBases = fs.readFileSync(fasta, 'utf8').split('\n').slice(1).join('').trim().toUpperCase();
/** The VCF read the simple way: sample names and data lines. */
const vcfLines = fs.readFileSync(vcf, 'utf8').split('\n').filter((l) => l && !l.startsWith('##'));
const vcfSamples = vcfLines[0].split('\t').slice(9);
const vcfRecords = vcfLines.slice(1).map((l) => l.split('\t'));

/** An annotated VCF read the simple way: records and the entries of the annotation field, by the header's column names. */
function annotatedRecords(text: string, field: string) {
  const description = new RegExp(`^##INFO=<ID=${field},.*Description="([^"]*)"`, 'm').exec(text)![1];
  const format = /Format: (.*)/.exec(description)?.[1] ?? /'([^']*)'/.exec(description)![1]; // VEP, SnpEff
  const columns = format.split('|').map((c) => c.trim());
  return text.split('\n').filter((l) => l && !l.startsWith('#')).map((line) => {
    const [chrom, pos, , ref, , , , info] = line.split('\t');
    const infoValue = (key: string) => info.split(';').find((kv) => kv.startsWith(`${key}=`))?.slice(key.length + 1);
    const entries = (infoValue(field) ?? '').split(',').filter(Boolean).map((e) => Object.fromEntries(e.split('|').map((v, i) => [columns[i], v])));
    return { chrom, start: Number(pos) - 1, end: Number(pos) - 1 + ref.length, entries, hgvsG: infoValue('HGVS.g') };
  });
}
const vepRecords = annotatedRecords(zlib.gunzipSync(fs.readFileSync(path.join(vep, 'chr1.edit.vcf.gz'))).toString('utf8'), 'CSQ');
const snpEffRecords = annotatedRecords(fs.readFileSync(snpEff, 'utf8'), 'ANN');

/** The CGD Turtle read with n3 directly: phenotypes (by label) and the associations naming each. */
const RDFS_LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';
const quads = new Parser().parse(fs.readFileSync(path.join(cgd, 'cgd-test.ttl'), 'utf8'));
const objectsOf = (subject: string, predicate: string) => quads.filter((q) => q.subject.value === subject && q.predicate.value === predicate).map((q) => q.object.value);
const associationIris = quads.filter((q) => q.object.value === 'http://purl.org/oban/association').map((q) => q.subject.value);
const phenotypeOf = (association: string) => objectsOf(association, 'http://purl.org/oban/association_has_object')[0];
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const phenotypeIris = [...new Set(associationIris.map(phenotypeOf))].sort(byteOrder);
const labelOf = (iri: string) => objectsOf(iri, RDFS_LABEL)[0];
/** The BAM's SAM text: header read groups and the records, in file (coordinate) order. */
const samText = fs.readFileSync(path.join(ROOT, 'testdata', 'compliance', 'brca1_HG00096.sam'), 'utf8').split('\n').filter(Boolean);
const samReadGroups = samText.filter((l) => l.startsWith('@RG')).map((l) => /\tID:(\S+)/.exec(l)![1]);
const samRecords = samText.filter((l) => !l.startsWith('@')).map((l) => l.split('\t'));
/** The reference bases a SAM CIGAR covers. */
const cigarSpan = (cigar: string) => [...cigar.matchAll(/(\d+)([MDN=X])/g)].reduce((n, m) => n + Number(m[1]), 0);
const gffLines = readGffLines(gff);
const gffId = (l: { attrs: Record<string, string[]> }) => l.attrs.ID?.[0] ?? '';
const uniqueIds = (lines: typeof gffLines) => [...new Set(lines.map(gffId))];
const wiggle = wiggleValues(path.join(CONTINUOUS, 'wiggle.txt'));
const cgdVersion = quads.find((q) => q.predicate.value === 'http://www.w3.org/2002/07/owl#versionInfo')!.object.value;

let server: TestServer;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const foreignRequests: string[] = [];

const api = async (p: string, body?: unknown) => (body === undefined ? await server.get(p) : await server.post(p, body)).json;

const screenshot = (name: string) => screenshotOf(page, name);

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
    await addDataset(registry, 'vep', 'annotated variants');
    await loadReferenceSet(registry, fasta, { name: 'hg37', assemblyId: 'hg37' });
    // Individuals and biosamples of the compliance set; the first two biosamples name their individual.
    for (const sample of SAMPLES) await addIndividualFromFile(registry, 'demo', metadataFile('individual', sample));
    for (const [i, sample] of SAMPLES.entries()) {
      const file = path.join(dir, `biosample_${sample}.json`);
      fs.writeFileSync(file, JSON.stringify({ ...fileJson(metadataFile('biosample', sample)), individualId: i < 2 ? sample : '' }));
      await addBiosampleFromFile(registry, 'demo', file);
    }
    await loadVariantSet(registry, 'demo', [vcf], { referenceset: 'hg37', name: 'brca1' });
    await addQuantificationSet(registry, 'demo', 'rnaseq');
    await loadQuantification(registry, 'demo', 'rnaseq', cufflinks, { name: 'cufflinks-sample', format: 'cufflinks', biosampleId: SAMPLES[0] });
    const header: Record<string, string> = {};
    await addOntology(registry, 'so', obo, readOboTerms(obo, header), header);
    await loadVariantSet(registry, 'vep', [vep], { referenceset: 'hg37', name: 'vep', allowMissingContigs: true });
    await loadVariantSet(registry, 'vep', [snpEff], { referenceset: 'hg37', name: 'snpeff', allowMissingContigs: true });
    await loadPhenotypeSet(registry, 'demo', cgd, {});
    await loadReadGroupSet(registry, 'demo', bam, { referenceset: 'hg37', name: 'HG00096', biosampleId: SAMPLES[0] });
    await loadFeatureSet(registry, 'demo', gff, { referenceSet: 'hg37', ontology: 'so', name: 'gencode-brca1' });
    await loadReferenceSet(registry, contigs, { name: 'contigs' });
    await loadContinuousSet(registry, 'demo', bigWig, { referenceSet: 'contigs', name: 'wiggle' });
    await upsertPeer(registry, PEER, undefined, 'operator');
    server = await startTestServer(location);
    browser = await launchChromium();
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
    assert.ok(size < 45_000, `page and script are ${size} bytes`);
  });

  it('shows the server view: protocol version, service-info and the menu of the served areas', async () => {
    await openView('server');
    const info = await api('/info');
    const text = await page.textContent('main');
    assert.ok(text?.includes(info.protocolVersion));
    assert.ok(text?.includes((await api('/service-info')).id));
    assert.deepEqual(await cellTexts('nav a'), ['Server', 'Datasets', 'References', 'Genome browser', 'Variants', 'Annotations', 'Reads', 'Features', 'Continuous', 'RNA', 'Biosamples', 'Phenotypes', 'Peers']);
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
    const hg37 = (await api('/referencesets/search', {})).referenceSets.find((r: any) => r.name === 'hg37');
    const referenceId = (await api('/references/search', { referenceSetId: hg37.id })).references[0].id;
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
    await page.click('button:text-is("Open rnaseq")');
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
    await captionShows('Expression levels of', names.length);
    const filtered = await api('/expressionlevels/search', { rnaQuantificationId: quantificationId, threshold: -1, names });
    assert.deepEqual((await cellTexts(`${tableSelector} td:first-child`)).sort(), filtered.expressionLevels.map((l: any) => l.name).sort());
  });

  /** The cells of a table's rows, by its caption; `columns` of each row only (the record column holds a JSON text). */
  const rowsOf = (caption: string, columns: number) =>
    page.$$eval(`table:has(caption:has-text("${caption}")) tbody tr`, (trs, n) => trs.map((tr) => [...tr.children].slice(0, n).map((td) => (td.textContent ?? '').trim())), columns);
  /** Waits for the table whose caption begins with `caption` to show a page of `count` rows; any other table's count (the sets' table, the page before) does not count. */
  const captionShows = (caption: string, count: number) =>
    page.waitForFunction(([prefix, n]) => [...document.querySelectorAll('caption')].some((c) => c.textContent?.startsWith(prefix) && c.textContent.includes(`, ${n} shown)`)), [caption, count] as const);
  const datasetId = async (name: string) => (await api('/datasets/search', {})).datasets.find((d: any) => d.name === name).id;
  const recordOfLink = async (selector: string) => page.evaluate(async (href) => (await fetch(href!)).json(), await page.getAttribute(selector, 'href'));

  it('shows variant annotation sets, a region of annotations with effects, HGVS, SIFT and PolyPhen, and an effects filter', async () => {
    await openView('annotations');
    await page.selectOption('select[name=dataset]', { label: 'vep' });
    await page.waitForSelector('button:text-is("Open vep")');
    const sets: any[] = [];
    for (const vs of (await api('/variantsets/search', { datasetId: await datasetId('vep') })).variantSets) {
      sets.push(...(await api('/variantannotationsets/search', { variantSetId: vs.id })).variantAnnotationSets);
    }
    assert.deepEqual(await rowsOf('Variant annotation sets', 3), sets.map((s) => [s.name, s.name, s.analysis.software.join(', ')]));
    assert.deepEqual((await rowsOf('Variant annotation sets', 3)).map((r) => r[2].split(' ')[0]), ['SnpEff', 'VEP']);
    assert.deepEqual(await recordOfLink('table:has(caption:has-text("Variant annotation sets")) tbody a'), sets[0]);

    // VEP: from the first record with a SIFT prediction on; one row per CSQ entry, as the file writes them.
    const vepSet = sets.find((s) => s.name === 'vep');
    await page.click('button:text-is("Open vep")');
    await page.waitForSelector('form[aria-label="Annotations in vep"]');
    const from = vepRecords.find((r) => r.entries.some((e) => e.SIFT))!.start;
    await page.fill('input[name=referenceName]', '1');
    await page.fill('input[name=start]', String(from));
    await page.fill('input[name=pageSize]', '10');
    await page.click('button:has-text("Search annotations")');
    await page.waitForSelector('caption:has-text("Annotations in 1:")');
    const rows = await rowsOf('Annotations in', 14);
    const records = vepRecords.filter((r) => r.end > from).slice(0, 10);
    const expected = records.flatMap((r) => r.entries.map((e, i) => [i ? '' : r.chrom, i ? '' : String(r.start), e.Allele, e.Feature, e.SIFT, e.PolyPhen]));
    assert.deepEqual(rows.map((r) => [r[0], r[1], r[3], r[4], r[12], r[13]]), expected);
    assert.ok(rows.some((r) => r[12] === 'deleterious(0)') && rows.some((r) => r[13].startsWith('possibly_damaging(')));
    // Effects as the API answers them for the same query; the variant link resolves to the variant at that place.
    const { variantAnnotations } = await api('/variantannotations/search', { variantAnnotationSetId: vepSet.id, referenceName: '1', start: from, pageSize: 10 });
    const termsOf = (a: any) => a.transcriptEffects.map((t: any) => t.effects.map((e: any) => e.term).join(', '));
    assert.deepEqual(rows.map((r) => r[5]), variantAnnotations.flatMap(termsOf));
    const variant = await recordOfLink('table:has(caption:has-text("Annotations in")) tbody a');
    assert.equal(variant.id, variantAnnotations[0].variantId);
    assert.equal(variant.start, records[0].start);
    await screenshot('annotations');

    // The effects filter: the annotations with a missense entry, and only those entries.
    await page.fill('input[name=start]', '0');
    await page.fill('input[name=pageSize]', '20');
    await page.fill('input[name=effects]', 'missense_variant');
    await page.click('button:has-text("Search annotations")');
    await page.waitForSelector('caption:has-text("Annotations in 1:0-end")');
    const missense = vepRecords.filter((r) => r.entries.some((e) => e.Consequence.split('&').includes('missense_variant')));
    assert.ok(missense.length > 1 && missense.length <= 20, `${missense.length} missense records`);
    const filtered = await rowsOf('Annotations in', 14);
    assert.deepEqual(filtered.filter((r) => r[1]).map((r) => Number(r[1])), missense.map((r) => r.start));
    const answer = await api('/variantannotations/search', { variantAnnotationSetId: vepSet.id, referenceName: '1', effects: [{ term: 'missense_variant' }], pageSize: 20 });
    assert.deepEqual(filtered.map((r) => r[5]), answer.variantAnnotations.flatMap(termsOf));

    // SnpEff: HGVS genomic (INFO HGVS.g), transcript and protein (the entry's columns).
    await page.click('button:text-is("Open snpeff")');
    await page.waitForSelector('form[aria-label="Annotations in snpeff"]');
    await page.fill('input[name=referenceName]', '1');
    await page.fill('input[name=pageSize]', '5');
    await page.click('button:has-text("Search annotations")');
    await page.waitForSelector('caption:has-text("Annotations in 1:")');
    const hgvs = (await rowsOf('Annotations in', 14)).map((r) => [r[3], r[4], r[6], r[7], r[8]]);
    assert.deepEqual(hgvs, snpEffRecords.slice(0, 5).flatMap((r) => r.entries.map((e) => [e.Allele, e.Feature_ID, r.hgvsG, e['HGVS.c'], e['HGVS.p']])));
    assert.ok(hgvs.some((r) => r[3]));
  });

  it('lists individuals and biosamples; a biosample shows its individual, call sets and RNA quantifications', async () => {
    await openView('biosamples');
    await page.waitForSelector('table:has(caption:has-text("Biosamples")) tbody tr');
    const ds = await datasetId('demo');
    const { individuals } = await api('/individuals/search', { datasetId: ds });
    const { biosamples } = await api('/biosamples/search', { datasetId: ds });
    const fileNames = (kind: string) => SAMPLES.map((s) => fileJson(metadataFile(kind, s)).name).sort();
    assert.deepEqual((await rowsOf('Individuals', 4)).map((r) => r.slice(0, 4)), individuals.map((i: any) => [i.name, i.description, i.species.term, i.sex.term]));
    assert.deepEqual(individuals.map((i: any) => i.name), fileNames('individual'));
    assert.deepEqual((await rowsOf('Biosamples', 4)).map((r) => [r[0], r[1], r[3]]), biosamples.map((b: any) => [b.name, b.description, b.individualId ? individuals.find((i: any) => i.id === b.individualId).name : '']));
    assert.deepEqual(biosamples.map((b: any) => b.name), fileNames('biosample'));
    assert.deepEqual(await recordOfLink('table:has(caption:has-text("Biosamples")) tbody td:nth-child(6) a'), biosamples[0]);
    assert.deepEqual(await recordOfLink('table:has(caption:has-text("Biosamples")) tbody td:nth-child(4) a'), individuals[0]);

    // HG00096: its individual, the call set of its VCF sample, the quantification that names it.
    const sample = biosamples.find((b: any) => b.name === SAMPLES[0]);
    await page.click(`button:text-is("Open ${SAMPLES[0]}")`);
    await page.waitForSelector(`caption:has-text("Call sets of ${SAMPLES[0]}")`);
    assert.deepEqual((await rowsOf(`Individual of ${SAMPLES[0]}`, 1)).flat(), [(await api(`/individuals/${sample.individualId}`)).name]);
    const variantSetId = (await api('/variantsets/search', { datasetId: ds })).variantSets[0].id;
    const { callSets } = await api('/callsets/search', { variantSetId, biosampleId: sample.id });
    assert.deepEqual((await rowsOf(`Call sets of ${SAMPLES[0]}`, 2)), callSets.map((c: any) => [c.name, 'brca1']));
    assert.deepEqual(callSets.map((c: any) => c.name), [SAMPLES[0]]);
    const rnaQuantificationSetId = (await api('/rnaquantificationsets/search', { datasetId: ds })).rnaQuantificationSets[0].id;
    const { rnaQuantifications } = await api('/rnaquantifications/search', { rnaQuantificationSetId, biosampleId: sample.id });
    assert.deepEqual((await rowsOf(`RNA quantifications of ${SAMPLES[0]}`, 2)), rnaQuantifications.map((q: any) => [q.name, 'rnaseq']));
    assert.deepEqual(rnaQuantifications.map((q: any) => q.name), ['cufflinks-sample']);
    assert.deepEqual(await recordOfLink(`table:has(caption:has-text("Call sets of ${SAMPLES[0]}")) tbody a`), callSets[0]);
    const { readGroupSets } = await api('/readgroupsets/search', { datasetId: ds, biosampleId: sample.id });
    assert.deepEqual((await rowsOf(`Read group sets of ${SAMPLES[0]}`, 2)), readGroupSets.map((r: any) => [r.name, samReadGroups.join(', ')]));
    assert.equal(readGroupSets.length, 1);
    await screenshot('biosamples');

    // The biosamples of one individual.
    await page.click(`button:text-is("Biosamples of ${SAMPLES[1]}")`);
    await page.waitForSelector(`caption:has-text("Biosamples of ${SAMPLES[1]}")`);
    const individualId = individuals.find((i: any) => i.name === SAMPLES[1]).id;
    const own = (await api('/biosamples/search', { datasetId: ds, individualId })).biosamples;
    assert.deepEqual((await rowsOf(`Biosamples of ${SAMPLES[1]}`, 1)).flat(), own.map((b: any) => b.name));
    assert.equal(own.length, 1);
  });

  it('shows phenotype association sets, a phenotype search and the associations of a phenotype', async () => {
    await openView('phenotypes');
    await page.waitForSelector('button:text-is("Open cgd")');
    assert.deepEqual(await rowsOf('Phenotype association sets', 2), [['cgd', cgdVersion]]);
    await page.click('button:text-is("Open cgd")');
    await page.waitForSelector('table:has(caption:has-text("Phenotypes")) tbody tr');
    const setId = (await api('/phenotypeassociationsets/search', { datasetId: await datasetId('demo') })).phenotypeAssociationSets[0].id;
    // Every phenotype, in id order, as the Turtle names them.
    const first = await api('/phenotypes/search', { phenotypeAssociationSetId: setId, pageSize: 20 });
    const shown = await rowsOf('Phenotypes', 5);
    assert.deepEqual(shown.map((r) => [r[0], r[1], r[4]]), first.phenotypes.map((p: any) => [p.description, p.type?.term ?? p.type?.termId ?? '', p.id]));
    assert.deepEqual(shown.map((r) => r[4]), phenotypeIris.slice(0, 20));
    assert.deepEqual(shown.map((r) => r[0]), phenotypeIris.slice(0, 20).map(labelOf));
    // A description pattern.
    await page.fill('input[name=description]', 'carcinoma');
    await page.click('button:has-text("Search phenotypes")');
    await page.waitForSelector('caption:has-text("Phenotypes (page 1, ")');
    await page.waitForFunction((n) => document.querySelectorAll('table:has(caption) caption')[1]?.textContent?.includes(`${n} shown`), phenotypeIris.filter((p) => /carcinoma/.test(labelOf(p))).length);
    const carcinoma = (await rowsOf('Phenotypes', 5)).map((r) => r[4]);
    assert.deepEqual(carcinoma, phenotypeIris.filter((p) => /carcinoma/.test(labelOf(p))));
    assert.deepEqual(carcinoma, (await api('/phenotypes/search', { phenotypeAssociationSetId: setId, description: 'carcinoma' })).phenotypes.map((p: any) => p.id));
    assert.ok(carcinoma.length >= 2);
    // The associations of one phenotype.
    const phenotype = carcinoma[0];
    await page.click(`button[aria-label="Associations of ${phenotype}"]`);
    await page.waitForSelector('table:has(caption:has-text("Feature-phenotype associations")) tbody tr');
    const associations = (await api('/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, phenotypeIds: [phenotype] })).associations;
    const rows = await rowsOf('Feature-phenotype associations', 5);
    assert.deepEqual(rows.map((r) => [r[0], r[4]]), associations.map((a: any) => [labelOf(phenotype), a.description ?? '']));
    assert.equal(rows.length, associationIris.filter((a) => phenotypeOf(a) === phenotype).length);
    // Features by the IRI of the association's subject in the Turtle.
    assert.deepEqual(rows.map((r) => r[1]), associations.map((a: any) => objectsOf(a.id, 'http://purl.org/oban/association_has_subject').join(', ')));
    // Each links to its feature's record (the association set's own feature set).
    const feature = await recordOfLink('table:has(caption:has-text("Feature-phenotype associations")) tbody td:nth-child(2) a');
    assert.equal(feature.id, associations[0].featureIds[0]);
    await screenshot('phenotypes');
    // Evidence and environments: a drug's name.
    await page.fill('input[name=phenotypeIds]', '');
    await page.fill('input[name=evidence]', 'imatinib');
    await page.click('button:has-text("Search associations")');
    const imatinib = (await api('/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, evidence: [{ description: 'imatinib' }] })).associations;
    assert.ok(imatinib.length >= 1);
    await page.waitForFunction((n) => [...document.querySelectorAll('caption')].some((c) => c.textContent?.startsWith('Feature-phenotype associations') && c.textContent.includes(`${n} shown`)), imatinib.length);
    const drugRows = await rowsOf('Feature-phenotype associations', 5);
    assert.deepEqual(drugRows.map((r) => r[0]), imatinib.map((a: any) => a.phenotype.description));
    assert.ok(drugRows.every((r) => /imatinib/i.test(r[3])), 'each row names the drug among its environments');
  });

  it('shows read group sets with their read groups, and a region as alignments, page by page', async () => {
    await openView('reads');
    await page.click('button:text-is("Open HG00096")');
    await page.waitForSelector('form[aria-label="Alignments of HG00096"]');
    const ds = await datasetId('demo');
    const [set] = (await api('/readgroupsets/search', { datasetId: ds })).readGroupSets;
    assert.deepEqual((await rowsOf('Read group sets', 4)), [[set.name, String(samReadGroups.length), String(set.stats.alignedReadCount), String(set.stats.unalignedReadCount ?? '')]]);
    assert.equal(set.stats.alignedReadCount, samRecords.filter((r) => r[2] !== '*' && !(Number(r[1]) & 4)).length);
    const groups = await rowsOf('Read groups of', 8);
    assert.deepEqual(groups.map((g) => g[1]), samReadGroups);
    assert.deepEqual(groups.map((g) => [g[2], g[4], g[5], g[6]]), set.readGroups.map((g: any) => [g.sampleName, g.experiment.library, g.experiment.instrumentModel, String(g.predictedInsertSize)]));
    assert.deepEqual(await recordOfLink('table:has(caption:has-text("Read groups of")) tbody a'), await api(`/readgroups/${set.readGroups[0].id}`));
    // The first page of the reference, then a region: as the SAM text has them and as the API answers.
    const columns = (rows: string[][]) => rows.map((r) => [r[0], r[2], r[4], r[5], r[8]]);
    const sam = (records: string[][]) => records.map((r) => [r[0], String(Number(r[3]) - 1), r[4], r[5], r[9]]);
    await page.fill('input[name=pageSize]', '20');
    await page.click('button:has-text("Search reads")');
    await page.waitForSelector('caption:has-text("Alignments in ref_brca1:0-end")');
    assert.deepEqual(columns(await rowsOf('Alignments in', 9)), sam(samRecords.filter((r) => r[2] === 'ref_brca1').slice(0, 20)));
    const from = Number(samRecords[1000][3]) - 1;
    const to = from + 1000;
    await page.fill('input[name=start]', String(from));
    await page.fill('input[name=end]', String(to));
    await page.click('button:has-text("Search reads")');
    await page.waitForSelector(`caption:has-text("Alignments in ref_brca1:${from}-${to}")`);
    const overlapping = samRecords.filter((r) => r[2] === 'ref_brca1' && Number(r[3]) - 1 < to && Number(r[3]) - 1 + Math.max(1, cigarSpan(r[5])) > from);
    assert.ok(overlapping.length > 40, `${overlapping.length} reads in the region`);
    assert.deepEqual(columns(await rowsOf('Alignments in', 9)), sam(overlapping.slice(0, 20)));
    const referenceId = (await api('/references/search', { referenceSetId: set.readGroups[0].referenceSetId })).references[0].id;
    const answer = await api('/reads/search', { readGroupIds: set.readGroups.map((g: any) => g.id), referenceId, start: from, end: to, pageSize: 20 });
    assert.deepEqual((await rowsOf('Alignments in', 9)).map((r) => [r[0], Number(r[2]), Number(r[4])]), answer.alignments.map((a: any) => [a.fragmentName, a.alignment.position.position, a.alignment.mappingQuality]));
    await screenshot('reads');
    await page.click('button:has-text("Next page")');
    await page.waitForSelector('caption:has-text("page 2")');
    assert.deepEqual(columns(await rowsOf('Alignments in', 9)), sam(overlapping.slice(20, 40)));
    // One read group only.
    for (const name of samReadGroups.slice(1)) await page.uncheck(`input[aria-label="Include ${name}"]`);
    await page.click('button:has-text("Search reads")');
    // The alignments' own caption: the read group sets' table says "(page 1," too, from the start.
    await page.waitForSelector(`caption:has-text("Alignments in ref_brca1:${from}-${to} (page 1,")`);
    const own = overlapping.filter((r) => r.some((field) => field === `RG:Z:${samReadGroups[0]}`));
    assert.deepEqual(columns(await rowsOf('Alignments in', 9)), sam(own.slice(0, 20)));
    assert.ok((await rowsOf('Alignments in', 2)).every((r) => r[1] === samReadGroups[0]));
  });

  it('shows feature sets, a search by region, gene symbol and type, and a feature\'s parent and children', async () => {
    await openView('features');
    await page.click('button:text-is("Open gencode-brca1")');
    await page.waitForSelector('table:has(caption:has-text("Features of gencode-brca1")) tbody tr');
    const featureSetId = (await api('/featuresets/search', { datasetId: await datasetId('demo') })).featureSets.find((s: any) => s.name === 'gencode-brca1').id;
    // The whole set, first page: as the API lists it.
    const listing = await api('/features/search', { featureSetId, pageSize: 20 });
    const shown = async () => (await rowsOf('Features of', 9)).map((r) => [r[0], r[2], r[3], r[4], r[5], r[6], r[7]]);
    const asRows = (features: any[]) => features.map((f) => [JSON.parse(Buffer.from(f.id, 'base64url').toString()).at(-1), f.geneSymbol ?? '', f.featureType?.term ?? '', f.referenceName, String(f.start), String(f.end), f.strand === 'NEG_STRAND' ? '-' : '+']);
    assert.deepEqual(await shown(), asRows(listing.features));
    // A gene symbol, narrowed to a region and to exons: the GFF3 lines that hold them.
    await page.fill('input[name=geneSymbol]', 'RPL21P4');
    await page.click('button:has-text("Search features")');
    const rpl = gffLines.filter((l) => l.attrs.gene_name?.[0] === 'RPL21P4');
    await captionShows('Features of', uniqueIds(rpl).length);
    assert.deepEqual((await shown()).map((r) => r[0]).sort(), uniqueIds(rpl).sort());
    assert.ok((await shown()).every((r) => r[1] === 'RPL21P4'));
    await page.fill('input[name=geneSymbol]', '');
    await page.fill('input[name=referenceName]', 'ref_brca1');
    await page.fill('input[name=start]', '35000');
    await page.fill('input[name=end]', '35300');
    await page.fill('input[name=featureTypes]', 'exon');
    await page.click('button:has-text("Search features")');
    const exons = gffLines.filter((l) => l.type === 'exon' && l.start < 35300 && l.end > 35000);
    await captionShows('Features of', uniqueIds(exons).length);
    const exonRows = await shown();
    assert.deepEqual(exonRows.map((r) => r[0]).sort(), uniqueIds(exons).sort());
    assert.deepEqual(exonRows, asRows((await api('/features/search', { featureSetId, referenceName: 'ref_brca1', start: 35000, end: 35300, featureTypes: ['exon'], pageSize: 20 })).features));
    // Parent and children: an exon's transcript, the transcript's children in the file.
    const exon = exons[0];
    const transcript = exon.attrs.Parent[0];
    await page.click(`button[aria-label="Parent of ${gffId(exon)}"]`);
    await page.waitForSelector(`caption:text-is("Feature ${transcript}")`);
    await page.waitForSelector(`caption:has-text("Children of ${transcript}")`);
    // The transcript's children: the file's lines naming it as parent; the first page as the API answers it.
    const children = uniqueIds(gffLines.filter((l) => l.attrs.Parent?.[0] === transcript));
    const transcriptRecord = await recordOfLink(`table:has(caption:text-is("Feature ${transcript}")) a`);
    assert.deepEqual(transcriptRecord.childIds.map((id: string) => JSON.parse(Buffer.from(id, 'base64url').toString()).at(-1)), children);
    const childRows = (await rowsOf(`Children of ${transcript}`, 1)).flat();
    assert.equal(childRows.length, Math.min(50, children.length));
    assert.deepEqual(childRows, asRows((await api('/features/search', { parentId: transcriptRecord.id, pageSize: 50 })).features).map((r) => r[0]));
    await screenshot('features');
    const gene = gffLines.find((l) => gffId(l) === transcript)!.attrs.Parent[0];
    await page.click('button:has-text("Open the parent")');
    await page.waitForSelector(`caption:text-is("Feature ${gene}")`);
    const record = await recordOfLink(`table:has(caption:text-is("Feature ${gene}")) a`);
    assert.equal(record.geneSymbol, gffLines.find((l) => gffId(l) === gene)!.attrs.gene_name[0]);
  });

  it('shows continuous sets and the values of a region as a plot and as records', async () => {
    await openView('continuous');
    await page.click('button:text-is("Open wiggle")');
    await page.waitForSelector('form[aria-label="Values of wiggle"]');
    const first = Math.min(...wiggle.keys());
    const barsShown = () => page.$$eval('svg[role=img] rect', (rects) => rects.map((r) => [Number(r.getAttribute('data-start')), Number(r.getAttribute('data-value'))]));
    const wiggleIn = (from: number, to: number) => [...wiggle].filter(([base]) => base >= from && base < to).sort((a, b) => a[0] - b[0]);
    // The first values of the set, found by the page (the API lists no sequences of a continuous set).
    await page.click('button:has-text("Go to the first values")');
    await page.waitForSelector(`caption:has-text("Values in chr19:${first}-${first + 800}")`);
    await page.waitForSelector(`svg[aria-label^="Values from ${first} to ${first + 800}"]`);
    assert.deepEqual(await barsShown(), wiggleIn(first, first + 800));
    const [from, to] = [first - 10, first - 10 + 600];
    await page.fill('input[name=referenceName]', 'chr19');
    await page.fill('input[name=start]', String(from));
    await page.fill('input[name=end]', String(to));
    await page.click('button:has-text("Show values")');
    await page.waitForSelector(`caption:has-text("Values in chr19:${from}-${to}")`);
    await page.waitForSelector(`svg[aria-label^="Values from ${from} to ${to}"]`);
    // One bar per base with a value, as the wiggle text gives them.
    const expected = wiggleIn(from, to);
    assert.ok(expected.length > 5);
    assert.deepEqual(await barsShown(), expected);
    // A longer region: each of the 800 bars is the largest value of its bases.
    const [wideFrom, wideTo] = [first, first + 8000];
    await page.fill('input[name=start]', String(wideFrom));
    await page.fill('input[name=end]', String(wideTo));
    await page.click('button:has-text("Show values")');
    await page.waitForSelector(`svg[aria-label^="Values from ${wideFrom} to ${wideTo}"]`);
    const bins = new Map<number, number>();
    for (const [base, value] of wiggleIn(wideFrom, wideTo)) {
      const bin = Math.floor((base - wideFrom) / 10);
      bins.set(bin, Math.max(bins.get(bin) ?? -Infinity, value));
    }
    assert.deepEqual(await barsShown(), [...bins].map(([bin, value]) => [wideFrom + bin * 10, value]));
    await page.fill('input[name=start]', String(from));
    await page.fill('input[name=end]', String(to));
    await page.click('button:has-text("Show values")');
    await page.waitForSelector(`svg[aria-label^="Values from ${from} to ${to}"]`);
    // The records, as the API answers them.
    const setId = (await api('/continuoussets/search', { datasetId: await datasetId('demo') })).continuousSets[0].id;
    const { continuous } = await api('/continuous/search', { continuousSetId: setId, referenceName: 'chr19', start: from, end: to, pageSize: 20 });
    await page.waitForSelector('table:has(caption:has-text("Values in chr19")) tbody tr');
    assert.deepEqual(await rowsOf('Values in chr19', 4), continuous.map((c: any) => [String(c.start), String(c.start + c.values.length), String(c.values.length), c.values.slice(0, 5).join(' ')]));
    await screenshot('continuous');
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
    for (const view of ['references', 'variants', 'annotations', 'reads', 'features', 'continuous', 'rna', 'biosamples', 'phenotypes']) {
      await openView(view);
      if (view === 'annotations') await page.selectOption('select[name=dataset]', { label: 'vep' });
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
