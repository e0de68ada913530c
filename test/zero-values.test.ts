/**
 * Requests as a proto3 client sends them (the Python ga4gh client, whose protobuf JSON writer leaves
 * out every field at its zero value and writes int64 as decimal strings), on both registry backends.
 * Expected records come from the files, read here: GFF3 lines and wiggle text.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadContinuousSet } from '../src/areas/continuous/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadFeatureSet } from '../src/areas/features/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { expectedRuns, readGffLines, wiggleValues, writeContigFasta, type GffLine } from './annotation-fixture.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
const files = {
  gencode: copyFixture('ga4gh-server/datasets/dataset1/sequenceAnnotations/gencodeV21Set1.gff3', dir),
  bigwig: copyFixture('ga4gh-server/datasets/dataset1/continuous/bigwig_1.bw', dir),
  wiggle: copyFixture('ga4gh-server/datasets/dataset1/continuous/wiggle.txt', dir),
};

/**
 * The reference set of the GFF3 and bigWig, in an order that is neither the GFF3's (chr1, chrX, chrY)
 * nor the names' order: a search without referenceName must follow it.
 */
const REFERENCE_ORDER = ['chrY', 'chr19', 'chr1', 'chrX'];
const contigs = writeContigFasta(path.join(dir, 'contigs', 'contigs.fa'), REFERENCE_ORDER);

// ---------------------------------------------------------------------------------------------------
// The files, read independently

const gff = readGffLines(files.gencode);
assert.equal(new Set(gff.map((l) => l.attrs.ID[0])).size, gff.length, 'one line per feature in this file');
const keyOf = (l: GffLine) => l.attrs.ID[0];
/** Features in the order a search without referenceName gives them: reference order, then start, then file order. */
const inSearchOrder = (ls: GffLine[]) =>
  ls
    .map((l, i) => ({ l, i }))
    .sort((a, b) => REFERENCE_ORDER.indexOf(a.l.seqid) - REFERENCE_ORDER.indexOf(b.l.seqid) || a.l.start - b.l.start || a.i - b.i)
    .map(({ l }) => keyOf(l));
const overlapping = (start: number, end: number, ref?: string) =>
  gff.filter((l) => (ref === undefined || l.seqid === ref) && l.start < end && l.end > start);

const wiggle = wiggleValues(files.wiggle);
const runsOf = (start: number, end: number) => expectedRuns(wiggle, start, end);


for (const backend of backends) {
  describe(`requests without their zero fields (${backend.name})`, { skip: backend.skip }, () => {
    let server: TestServer;
    const gencodeSet = idOf('ds', 'fs', 'gencode');
    const bigwigSet = idOf('ds', 'cs', 'bigwig_1');
    const features = async (body: Record<string, unknown>) => (await collectPages(server, '/features/search', body, 'features')).records;
    const keysOf = (records: any[]) => records.map((f) => Buffer.from(f.id, 'base64url').toString()).map((t) => JSON.parse(t).at(-1));

    before(async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      await addDataset(registry, 'ds');
      await loadReferenceSet(registry, contigs, { name: 'contigs' });
      await loadFeatureSet(registry, 'ds', files.gencode, { referenceSet: 'contigs', name: 'gencode' });
      await loadContinuousSet(registry, 'ds', files.bigwig, { referenceSet: 'contigs' });
      server = await startTestServer(location);
    });

    describe('features', () => {
      it('reads an absent start as 0 and an absent end as the end of the reference', async () => {
        // The Python client's shape: no start, int64 as a string.
        const res = await server.post('/features/search', { featureSetId: gencodeSet, referenceName: 'chr1', end: '40000', pageSize: 100 });
        assert.equal(res.status, 200, res.text);
        const expected = inSearchOrder(overlapping(0, 40_000, 'chr1'));
        assert.ok(expected.length > 30);
        assert.deepEqual(keysOf(res.json.features), expected);
        const explicit = await server.post('/features/search', { featureSetId: gencodeSet, referenceName: 'chr1', start: 0, end: 40_000, pageSize: 100 });
        assert.deepEqual(res.json, explicit.json);
        // No end: everything from start to the end of the reference.
        const from = 700_000;
        assert.deepEqual(keysOf(await features({ featureSetId: gencodeSet, referenceName: 'chr1', start: String(from) })), inSearchOrder(overlapping(from, Infinity, 'chr1')));
        // end 0 is the same as no end.
        assert.deepEqual(
          keysOf(await features({ featureSetId: gencodeSet, referenceName: 'chrX', end: '0' })),
          inSearchOrder(gff.filter((l) => l.seqid === 'chrX')),
        );
      });

      it('searches every reference of the set without referenceName, in the reference set order, then by position', async () => {
        const expected = inSearchOrder(gff);
        assert.ok(expected.length > 500);
        // The order is the reference set's, not the file's nor the names': chrY's features come first.
        assert.equal(gff.find((l) => l.attrs.ID[0] === expected[0])!.seqid, 'chrY');
        const whole = await server.post('/features/search', { featureSetId: gencodeSet, pageSize: 1000 });
        assert.equal(whole.status, 200, whole.text);
        assert.deepEqual(keysOf(whole.json.features), expected);
        assert.equal(whole.json.nextPageToken, undefined);
        // Paging is exact across the references: small pages give the same features, each once.
        const paged = await collectPages(server, '/features/search', { featureSetId: gencodeSet, pageSize: 4 }, 'features');
        assert.equal(paged.pages, Math.ceil(expected.length / 4));
        assert.deepEqual(keysOf(paged.records), expected);
        // A window without referenceName: that window on every reference, in the same order.
        const [start, end] = [800_000, 156_010_000];
        const window = await features({ featureSetId: gencodeSet, start: String(start), end: String(end), pageSize: 3 });
        const inWindow = inSearchOrder(overlapping(start, end));
        assert.equal(new Set(overlapping(start, end).map((l) => l.seqid)).size, 3, 'the window holds features of every reference');
        assert.ok(inWindow.length < expected.length, 'and not every feature');
        assert.deepEqual(keysOf(window), inWindow);
        // Filters apply across every reference too.
        const genes = await features({ featureSetId: gencodeSet, featureTypes: ['gene'], pageSize: 5 });
        assert.deepEqual(keysOf(genes), inSearchOrder(gff.filter((l) => l.type === 'gene')));
        const symbol = gff.find((l) => l.seqid === 'chrX')!.attrs.gene_name[0];
        assert.deepEqual(keysOf(await features({ featureSetId: gencodeSet, geneSymbol: symbol })), inSearchOrder(gff.filter((l) => l.attrs.gene_name?.[0] === symbol)));
      });
    });

    describe('continuous', () => {
      it('reads an absent start as 0 and an absent end as the end of the reference', async () => {
        const bases = [...wiggle.keys()];
        const end = Math.max(...bases) + 100;
        const noStart = await collectPages(server, '/continuous/search', { continuousSetId: bigwigSet, referenceName: 'chr19', end: String(end) }, 'continuous');
        const expected = runsOf(0, end).map((r) => ({ ...r, continuousSetId: bigwigSet, referenceName: 'chr19' }));
        assert.ok(expected.length > 5);
        assert.deepEqual(noStart.records, expected);
        const explicit = await collectPages(server, '/continuous/search', { continuousSetId: bigwigSet, referenceName: 'chr19', start: 0, end }, 'continuous');
        assert.deepEqual(explicit.records, noStart.records);
        assert.deepEqual((await collectPages(server, '/continuous/search', { continuousSetId: bigwigSet, referenceName: 'chr19' }, 'continuous')).records, expected);
        const from = expected[2].start + 1;
        const noEnd = await collectPages(server, '/continuous/search', { continuousSetId: bigwigSet, referenceName: 'chr19', start: String(from), pageSize: 2 }, 'continuous');
        assert.deepEqual(noEnd.records, runsOf(from, Infinity).map((r) => ({ ...r, continuousSetId: bigwigSet, referenceName: 'chr19' })));
      });
    });
  });
}
