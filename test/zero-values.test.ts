/**
 * Requests as a proto3 client sends them (the Python ga4gh client, whose protobuf JSON writer leaves
 * out every field at its zero value and writes int64 as decimal strings), on both registry backends.
 * Expected records come from the files, read here: GFF3 lines, wiggle text, FASTA text, VCF text,
 * the BAM through samtools, the compliance metadata JSON.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addBiosampleFromFile, addIndividualFromFile } from '../src/areas/biometadata/loader.js';
import { loadContinuousSet } from '../src/areas/continuous/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadFeatureSet } from '../src/areas/features/loader.js';
import { insertFeatureSet, type NewFeature } from '../src/areas/features/store.js';
import { loadPhenotypeSet } from '../src/areas/phenotypes/loader.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet } from '../src/areas/rna/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { expectedRuns, readGffLines, wiggleValues, writeContigFasta, type GffLine } from './annotation-fixture.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, TESTDATA, tool, type TestServer } from './helpers.js';

const dir = tempDir();
const files = {
  gencode: copyFixture('ga4gh-server/datasets/dataset1/sequenceAnnotations/gencodeV21Set1.gff3', dir),
  bigwig: copyFixture('ga4gh-server/datasets/dataset1/continuous/bigwig_1.bw', dir),
  wiggle: copyFixture('ga4gh-server/datasets/dataset1/continuous/wiggle.txt', dir),
  brca1Fasta: copyFixture('compliance/ref_brca1.fa', dir),
  vcf: copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir),
  bam: copyFixture('compliance/brca1_HG00096.bam', dir),
  rna: copyFixture('compliance/rna_brca1.tsv', dir),
  annotated: copyFixture('compliance/brca1_OR4F_annotation.vcf', dir),
  cgd: copyFixture('compliance/cgd', dir),
  ncbi37: copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir),
};
copyFixture('compliance/brca1_HG00096.bam.bai', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', dir);

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

/**
 * Features sharing a name, in load order, over three references and none: a few named `few`, more
 * named `many` than a search by name reads at once.
 */
const namedFeatures: NewFeature[] = ['few', 'many'].flatMap((name, n) =>
  Array.from({ length: n === 0 ? 30 : 1500 }, (_, i): NewFeature => {
    const referenceName = i % 10 === 9 ? null : ['chr1', 'chrX', 'chrY'][i % 3];
    const start = (i * 7919) % 5000;
    return {
      key: `${name}${i}`,
      referenceName,
      start: referenceName === null ? null : start,
      end: referenceName === null ? null : start + 10,
      strand: 'POS_STRAND',
      type: null,
      name,
      geneSymbol: null,
      parentKeys: [],
      attributes: null,
    };
  }),
);
/** Keys of the named features in search order: reference order, the unlocated last, then start, then load order. */
const namedInOrder = (name: string) =>
  namedFeatures
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => f.name === name)
    .sort((a, b) => rankOf(a.f.referenceName) - rankOf(b.f.referenceName) || (a.f.start ?? 0) - (b.f.start ?? 0) || a.i - b.i)
    .map(({ f }) => f.key);
const rankOf = (reference: string | null) => (reference === null ? REFERENCE_ORDER.length : REFERENCE_ORDER.indexOf(reference));

const wiggle = wiggleValues(files.wiggle);
const runsOf = (start: number, end: number) => expectedRuns(wiggle, start, end);

const brca1Bases = fs.readFileSync(files.brca1Fasta, 'utf8').split('\n').slice(1).join('').trim().toUpperCase();
const vcfLines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
const vcfSamples = fs.readFileSync(files.vcf, 'utf8').split('\n').find((l) => l.startsWith('#CHROM'))!.split('\t').slice(9);
const bamRecords = Number(tool('samtools', 'view', '-c', files.bam).toString().trim());
const SAMPLES = ['HG00096', 'HG00099', 'HG00101'];
const metadataFile = (kind: 'individual' | 'biosample', sample: string) => path.join(TESTDATA, 'compliance', `${kind}_${sample}.json`);
const nameIn = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')).name as string;
/** Each FASTA's sequence names, from its .fai (the loader writes one beside a FASTA that has none). */
const faiNames = (fasta: string) => fs.readFileSync(fasta + '.fai', 'utf8').trim().split('\n').map((l) => l.split('\t')[0]);

for (const backend of backends) {
  describe(`requests without their zero fields (${backend.name})`, { skip: backend.skip }, () => {
    let server: TestServer;
    const gencodeSet = idOf('ds', 'fs', 'gencode');
    const bigwigSet = idOf('ds', 'cs', 'bigwig_1');
    const features = async (body: Record<string, unknown>) => (await collectPages(server, '/features/search', body, 'features')).records;
    const keysOf = (records: any[]) => records.map((f) => Buffer.from(f.id, 'base64url').toString()).map((t) => JSON.parse(t).at(-1));
    const refused = async (pathName: string, body: Record<string, unknown>, field: string) => {
      const res = await server.post(pathName, body);
      assert.equal(res.status, 400, `${pathName} ${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json.errorCode, 5, res.text);
      assert.match(res.json.message, new RegExp(`'${field}'`));
      return res;
    };

    before(async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      await addDataset(registry, 'ds');
      await loadReferenceSet(registry, contigs, { name: 'contigs' });
      await loadReferenceSet(registry, files.brca1Fasta, { name: 'hg37' });
      await loadReferenceSet(registry, files.ncbi37, {});
      await loadFeatureSet(registry, 'ds', files.gencode, { referenceSet: 'contigs', name: 'gencode' });
      await registry.db.transaction().execute((trx) =>
        insertFeatureSet(registry, trx, { datasetName: 'ds', name: 'named', referenceSetName: 'contigs', ontologyName: null, sourceUri: null, attributes: null, source: null }, namedFeatures),
      );
      await loadContinuousSet(registry, 'ds', files.bigwig, { referenceSet: 'contigs' });
      await loadVariantSet(registry, 'ds', [files.vcf], { referenceset: 'hg37', name: 'brca1' });
      await loadVariantSet(registry, 'ds', [files.annotated], { referenceset: 'NCBI37', allowMissingContigs: true, name: 'or4f' });
      await loadReadGroupSet(registry, 'ds', files.bam, { referenceset: 'hg37', name: 'hg00096' });
      await addQuantificationSet(registry, 'ds', 'rset');
      await loadQuantification(registry, 'ds', 'rset', files.rna, { name: 'brca1', format: 'rsem' });
      for (const s of SAMPLES) {
        await addIndividualFromFile(registry, 'ds', metadataFile('individual', s));
        await addBiosampleFromFile(registry, 'ds', metadataFile('biosample', s));
      }
      await loadPhenotypeSet(registry, 'ds', files.cgd, { name: 'cgd' });
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

      it('pages a search by name across references in that order, whether it has few matches or many', async () => {
        for (const [name, pageSize] of [['few', 4], ['many', 250]] as const) {
          const { records, pages } = await collectPages(server, '/features/search', { featureSetId: idOf('ds', 'fs', 'named'), name, pageSize }, 'features');
          const expected = namedInOrder(name);
          assert.deepEqual(keysOf(records), expected, name);
          assert.equal(pages, Math.ceil(expected.length / pageSize));
        }
      });

      it('reads empty ids and filters as not given, and lists every feature set for an empty datasetId', async () => {
        await refused('/features/search', { featureSetId: '', parentId: '' }, 'featureSetId');
        const unfiltered = await server.post('/features/search', { featureSetId: gencodeSet, name: '', geneSymbol: '', referenceName: '', pageSize: 1000 });
        assert.deepEqual(keysOf(unfiltered.json.features), inSearchOrder(gff));
        const sets = await server.post('/featuresets/search', { datasetId: '' });
        assert.equal(sets.status, 200, sets.text);
        assert.deepEqual(sets.json.featureSets.map((s: any) => s.name), ['cgd', 'gencode', 'named']);
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

      it('refuses an empty set id or reference name as missing, naming the field', async () => {
        await refused('/continuous/search', { continuousSetId: '', referenceName: 'chr19', end: '1000' }, 'continuousSetId');
        await refused('/continuous/search', { continuousSetId: bigwigSet, referenceName: '' }, 'referenceName');
        const sets = await server.post('/continuoussets/search', { datasetId: '' });
        assert.deepEqual(sets.json.continuousSets.map((s: any) => s.name), ['bigwig_1']);
      });
    });

    it('references: empty filters are no filters, start and end 0 are the whole sequence, an empty referenceId is missing', async () => {
      const all = await collectPages(server, '/references/search', { referenceSetId: '', md5checksum: '', accession: '' }, 'references');
      const names = [...faiNames(contigs), ...faiNames(files.brca1Fasta), ...faiNames(files.ncbi37)];
      assert.deepEqual(all.records.map((r: any) => r.name).sort(), names.sort());
      const id = idOf('hg37', 'ref_brca1');
      const bases = await server.get(`/references/${id}/bases?start=0&end=0`);
      assert.equal(bases.status, 200, bases.text);
      assert.equal(bases.json.sequence, brca1Bases);
      assert.equal(bases.json.nextPageToken, undefined);
      await refused('/listreferencebases', { referenceId: '', end: '10' }, 'referenceId');
      const listed = await server.post('/listreferencebases', { referenceId: id, end: '10' });
      assert.deepEqual(listed.json, { offset: 0, sequence: brca1Bases.slice(0, 10) });
    });

    it('variants: an empty name is no filter; an empty variantSetId or datasetId is missing', async () => {
      const variantSet = idOf('ds', 'vs', 'brca1');
      const callSets = await server.post('/callsets/search', { variantSetId: variantSet, name: '' });
      assert.deepEqual(callSets.json.callSets.map((c: any) => c.name), vcfSamples);
      await refused('/variantsets/search', { datasetId: '' }, 'datasetId');
      await refused('/variants/search', { variantSetId: '', referenceName: 'ref_brca1' }, 'variantSetId');
      await refused('/variants/search', { variantSetId: variantSet, referenceName: '' }, 'referenceName');
      const variants = await collectPages(server, '/variants/search', { variantSetId: variantSet, referenceName: 'ref_brca1', callSetIds: [], pageSize: 1000 }, 'variants');
      assert.equal(variants.records.length, vcfLines(files.vcf).length);
    });

    it('reads: an empty referenceId is every reference and the unplaced reads; an empty datasetId is missing', async () => {
      await refused('/readgroupsets/search', { datasetId: '' }, 'datasetId');
      const [set] = (await server.post('/readgroupsets/search', { datasetId: idOf('ds') })).json.readGroupSets;
      const readGroupIds = set.readGroups.map((g: any) => g.id);
      const reads = await collectPages(server, '/reads/search', { readGroupIds, referenceId: '', pageSize: 1000 }, 'alignments');
      assert.equal(reads.records.length, bamRecords);
    });

    it('RNA: an empty biosampleId is no filter; an empty rnaQuantificationId is missing', async () => {
      const setId = (await server.post('/rnaquantificationsets/search', { datasetId: '' })).json.rnaQuantificationSets[0].id;
      const quantifications = await server.post('/rnaquantifications/search', { rnaQuantificationSetId: setId, biosampleId: '' });
      assert.deepEqual(quantifications.json.rnaQuantifications.map((q: any) => q.name), ['brca1']);
      await refused('/rnaquantifications/search', { rnaQuantificationSetId: '' }, 'rnaQuantificationSetId');
      await refused('/expressionlevels/search', { rnaQuantificationId: '', threshold: 0 }, 'rnaQuantificationId');
    });

    it('individuals and biosamples: an empty datasetId or name is no filter', async () => {
      const individuals = await server.post('/individuals/search', { datasetId: '', name: '' });
      assert.equal(individuals.status, 200, individuals.text);
      assert.deepEqual(individuals.json.individuals.map((i: any) => i.name).sort(), SAMPLES.map((s) => nameIn(metadataFile('individual', s))).sort());
      const biosamples = await server.post('/biosamples/search', { datasetId: '', name: '', individualId: '' });
      assert.deepEqual(biosamples.json.biosamples.map((b: any) => b.name).sort(), SAMPLES.map((s) => nameIn(metadataFile('biosample', s))).sort());
    });

    it('variant annotations: an empty referenceId is not given; with an empty referenceName too, one of them is missing', async () => {
      const [annotationSet] = (await server.post('/variantannotationsets/search', { variantSetId: idOf('ds', 'vs', 'or4f') })).json.variantAnnotationSets;
      const res = await server.post('/variantannotations/search', { variantAnnotationSetId: annotationSet.id, referenceName: '', referenceId: '' });
      assert.equal(res.status, 400, res.text);
      assert.match(res.json.message, /'referenceName'/);
      const end = 60_000;
      const annotations = await collectPages(server, '/variantannotations/search', { variantAnnotationSetId: annotationSet.id, referenceName: '1', referenceId: '', end: String(end) }, 'variantAnnotations');
      const expected = vcfLines(files.annotated).filter((l) => Number(l.split('\t')[1]) - 1 < end && /(^|;)ANN=/.test(l.split('\t')[7]));
      assert.ok(expected.length > 3);
      assert.equal(annotations.records.length, expected.length);
      await refused('/variantannotationsets/search', { variantSetId: '' }, 'variantSetId');
    });

    it('phenotype association sets: an empty datasetId is no filter', async () => {
      const sets = await server.post('/phenotypeassociationsets/search', { datasetId: '' });
      assert.equal(sets.status, 200, sets.text);
      assert.deepEqual(sets.json.phenotypeAssociationSets.map((s: any) => s.name), ['cgd']);
    });

    it('peers: an announcement with an empty url has none, and is refused naming it', async () => {
      const res = await server.post('/peers/announce', { peer: { url: '' } });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json, { success: false, errorCode: 5, message: "field 'peer.url' is required" });
    });

    it('datasets: page size 0 and an empty page token are the first page at the default size', async () => {
      assert.deepEqual((await server.post('/datasets/search', { pageSize: '0', pageToken: '' })).json.datasets.map((d: any) => d.name), ['ds']);
    });
  });
}
