/**
 * Feature sets and features over HTTP, on SQLite and PostgreSQL, loaded from the reference server's GFF3
 * files and the compliance data set's BRCA1 annotation. Expected features come from the GFF3 text read
 * in the test (annotation-fixture.ts), and type closures from the OBO text.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadFeatureSet } from '../src/areas/features/loader.js';
import { insertFeatureSet } from '../src/areas/features/store.js';
import { addOntology } from '../src/areas/ontologies/store.js';
import { readOboTerms } from '../src/areas/ontologies/obo.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { oboSubclasses, readGffLines, writeContigFasta, type GffLine } from './annotation-fixture.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, registryBefore, servedAfterMigrating, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
const ANNOTATIONS = 'ga4gh-server/datasets/dataset1/sequenceAnnotations';
const files = {
  brca1: copyFixture('compliance/brca1_gencodev19.gff3', dir),
  gencode: copyFixture(`${ANNOTATIONS}/gencodeV21Set1.gff3`, dir),
  sacCer: copyFixture(`${ANNOTATIONS}/sacCerTest.gff3`, dir),
  special: copyFixture(`${ANNOTATIONS}/specialCasesTest.gff3`, dir),
  discontinuous: copyFixture(`${ANNOTATIONS}/discontinuous.gff3`, dir),
  obo: copyFixture('compliance/so-xp-simple.obo', dir),
  fasta: copyFixture('compliance/ref_brca1.fa', dir),
};
/** Lines without ID (keys made from parent or sequence, type and span; one repeated) and Names absent, empty or given. */
const idless = path.join(dir, 'idless.gff3');
fs.writeFileSync(
  idless,
  [
    '##gff-version 3',
    'chrI\ttest\tgene\t100\t900\t.\t+\t.\tID=g1',
    'chrI\ttest\texon\t100\t200\t.\t+\t.\tParent=g1',
    'chrI\ttest\texon\t100\t200\t.\t+\t.\tParent=g1',
    'chrI\ttest\tregion\t300\t400\t.\t+\t.\tnote=no ID and no parent',
    'chrI\ttest\tmRNA\t100\t900\t.\t+\t.\tID=t1;Parent=g1;Name=',
    'chrI\ttest\tCDS\t150\t200\t.\t+\t0\tID=cds1;Parent=t1;Name=CDS one',
    '',
  ].join('\n'),
);
const gencodeGz = path.join(dir, 'gencode-copy.gff3.gz');
fs.writeFileSync(gencodeGz, zlib.gzipSync(fs.readFileSync(files.gencode)));
const contigs = writeContigFasta(
  path.join(dir, 'contigs', 'annotation-contigs.fa'),
  [files.gencode, files.sacCer, files.special, files.discontinuous].flatMap((f) => readGffLines(f).map((l) => l.seqid)),
);

const lines = {
  brca1: readGffLines(files.brca1),
  gencode: readGffLines(files.gencode),
  sacCer: readGffLines(files.sacCer),
  special: readGffLines(files.special),
  discontinuous: readGffLines(files.discontinuous),
  idless: readGffLines(idless),
};
const so = oboSubclasses(files.obo);

const featureId = (set: string, key: string) => idOf('ds', 'fs', set, key);
/** Attribute values of every type another area may store, with characters JSON must escape. */
const typedAttributes = { s: ['x"y\u0001z\\', 'é'], n: [3, -2], d: [1.5, NaN, -Infinity], b: [true, false], none: [] };
/** The same as the protocol writes them (Attributes of common.proto; non-finite doubles as strings). */
const typedAttributesJson = (value: (field: string) => string) => ({
  attr: {
    s: { values: [{ [value('stringValue')]: 'x"y\u0001z\\' }, { [value('stringValue')]: 'é' }] },
    n: { values: [{ [value('int64Value')]: 3 }, { [value('int64Value')]: -2 }] },
    d: { values: [{ [value('doubleValue')]: 1.5 }, { [value('doubleValue')]: 'NaN' }, { [value('doubleValue')]: '-Infinity' }] },
    b: { values: [{ [value('boolValue')]: true }, { [value('boolValue')]: false }] },
  },
});
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const overlaps = (l: GffLine, ref: string, start: number, end: number) => l.seqid === ref && l.start < end && l.end > start;
/** Distinct IDs of lines, in first-seen order. */
const idsOf = (ls: GffLine[]) => [...new Set(ls.map((l) => l.attrs.ID[0]))];

for (const backend of backends) {
  describe(`features (${backend.name})`, { skip: backend.skip }, () => {
    let server: TestServer;
    const setId = (name: string) => idOf('ds', 'fs', name);
    const search = (body: Record<string, unknown>) => server.post('/features/search', body);
    const all = async (body: Record<string, unknown>) => (await collectPages(server, '/features/search', body, 'features')).records;

    before(async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      await addDataset(registry, 'ds');
      await addDataset(registry, 'other');
      await loadReferenceSet(registry, files.fasta, { name: 'hg37' });
      await loadReferenceSet(registry, contigs, { name: 'contigs' });
      const header: Record<string, string> = {};
      await addOntology(registry, 'so', files.obo, readOboTerms(files.obo, header), header);
      await loadFeatureSet(registry, 'ds', files.brca1, { referenceSet: 'hg37', ontology: 'so', name: 'brca1', sourceUri: 'https://example.org/brca1.gff3' });
      await loadFeatureSet(registry, 'ds', files.gencode, { referenceSet: 'contigs', name: 'gencode' });
      await loadFeatureSet(registry, 'ds', gencodeGz, { referenceSet: 'contigs', name: 'gencode-gz' });
      await loadFeatureSet(registry, 'ds', files.sacCer, { referenceSet: 'contigs', ontology: 'so', name: 'sacCer' });
      await loadFeatureSet(registry, 'ds', files.special, { referenceSet: 'contigs', name: 'special' });
      await loadFeatureSet(registry, 'ds', files.discontinuous, { referenceSet: 'contigs', name: 'discontinuous' });
      await loadFeatureSet(registry, 'other', idless, { referenceSet: 'contigs', name: 'idless' });
      // Another area's features through the shared load path: no locations, one with a parent.
      await registry.db.transaction().execute((trx) =>
        insertFeatureSet(
          registry,
          trx,
          { datasetName: 'other', name: 'g2p', referenceSetName: null, ontologyName: null, sourceUri: null, attributes: { note: ['from a test'] }, source: null },
          [
            { key: 'B', referenceName: null, start: null, end: null, strand: 'STRAND_UNSPECIFIED', type: { termId: 'SO:0000704', term: 'gene' }, name: 'beta', geneSymbol: 'BET', parentKeys: [], attributes: null },
            { key: 'A', referenceName: null, start: null, end: null, strand: 'STRAND_UNSPECIFIED', type: null, name: 'alpha', geneSymbol: null, parentKeys: ['B'], attributes: { k: ['v'] } },
            {
              key: 'C',
              referenceName: null,
              start: null,
              end: null,
              strand: 'NEG_STRAND',
              type: { termId: '', term: 'odd' },
              name: '',
              geneSymbol: null,
              parentKeys: [],
              attributes: typedAttributes,
            },
          ],
        ),
      );
      server = await startTestServer(location);
    });

    it('searches and gets feature sets', async () => {
      const res = await server.post('/featuresets/search', { datasetId: idOf('ds') });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.json.featureSets.map((s: any) => s.name),
        ['brca1', 'discontinuous', 'gencode', 'gencode-gz', 'sacCer', 'special'],
      );
      const brca1 = res.json.featureSets[0];
      assert.deepEqual(brca1, { id: setId('brca1'), datasetId: idOf('ds'), referenceSetId: idOf('hg37'), name: 'brca1', sourceUri: 'https://example.org/brca1.gff3' });
      assert.deepEqual((await server.get(`/featuresets/${setId('brca1')}`)).json, brca1);
      const other = await server.post('/v0.6.0a10/featuresets/search', { datasetId: idOf('other') });
      assert.deepEqual(other.json.featureSets[0].attributes, { attr: { note: { values: [{ stringValue: 'from a test' }] } } });
      assert.equal((await server.get(`/featuresets/${idOf('ds', 'fs', 'nope')}`)).status, 404);
      assert.equal((await server.get(`/featuresets/${idOf('ds', 'vs', 'brca1')}`)).status, 404);
    });

    it('returns the features of a region, a feature overlapping the window edge included, sorted by start', async () => {
      // A window starting inside the gene (1-81189) and inside exons: overlap semantics on [start, end).
      const [start, end] = [41_000, 43_500];
      const first = await search({ featureSetId: setId('brca1'), referenceName: 'ref_brca1', start, end, pageSize: 7 });
      assert.equal(first.status, 200, first.text);
      const got = await all({ featureSetId: setId('brca1'), referenceName: 'ref_brca1', start, end, pageSize: 7 });
      const expected = lines.brca1.filter((l) => overlaps(l, 'ref_brca1', start, end));
      assert.ok(expected.length > 15);
      assert.deepEqual(new Set(got.map((f) => f.id)), new Set(idsOf(expected).map((k) => featureId('brca1', k))));
      assert.equal(got.length, idsOf(expected).length);
      const starts = got.map((f) => f.start);
      assert.deepEqual(starts, [...starts].sort((a, b) => a - b));
      const gene = got.find((f) => f.featureType.term === 'gene');
      assert.ok(gene.start < start, 'the gene starts before the window');
      // Every field against its line.
      for (const f of got) {
        const line = expected.find((l) => featureId('brca1', l.attrs.ID[0]) === f.id)!;
        assert.equal(f.referenceName, 'ref_brca1');
        assert.equal(f.start, line.start);
        assert.equal(f.end, line.end);
        assert.equal(f.strand, line.strand === '-' ? 'NEG_STRAND' : 'POS_STRAND');
        assert.equal(f.geneSymbol, line.attrs.gene_name[0]);
        // GENCODE lines carry no Name: a feature is named by its ID.
        assert.equal(line.attrs.Name, undefined);
        assert.equal(f.name, line.attrs.ID[0]);
        assert.equal(f.featureSetId, setId('brca1'));
        assert.equal(f.featureType.termId, so.byName.get(line.type));
        assert.deepEqual(f.attributes.attr.gene_id, { values: [{ stringValue: line.attrs.gene_id[0] }] });
        assert.equal(f.attributes.attr.ID, undefined);
        if (line.phase !== '.') assert.deepEqual(f.attributes.attr.Phase, { values: [{ stringValue: line.phase }] });
        assert.equal(f.parentId, line.attrs.Parent ? featureId('brca1', line.attrs.Parent[0]) : undefined);
      }
      // A window touching a feature's end only does not overlap it.
      const exon = lines.brca1.find((l) => l.type === 'exon')!;
      const after = await all({ featureSetId: setId('brca1'), referenceName: 'ref_brca1', start: exon.end, end: exon.end + 1 });
      assert.ok(!after.some((f) => f.id === featureId('brca1', exon.attrs.ID[0])));
      // An unknown reference name: empty, not an error.
      const none = await search({ featureSetId: setId('brca1'), referenceName: 'chrZ', start: 0, end: 100 });
      assert.deepEqual(none.json, { features: [] });
    });

    it('links parents and children both ways, children in file order', async () => {
      const gene = lines.brca1.find((l) => l.type === 'gene')!;
      const geneKey = gene.attrs.ID[0];
      const transcripts = lines.brca1.filter((l) => l.attrs.Parent?.[0] === geneKey).map((l) => featureId('brca1', l.attrs.ID[0]));
      const geneRecord = (await server.get(`/features/${featureId('brca1', geneKey)}`)).json;
      assert.deepEqual(geneRecord.childIds, transcripts);
      assert.equal(geneRecord.parentId, undefined);
      const children = await all({ parentId: featureId('brca1', geneKey), pageSize: 5 });
      assert.deepEqual(new Set(children.map((c) => c.id)), new Set(transcripts));
      for (const child of children) assert.equal(child.parentId, geneRecord.id);
      // A transcript's children: its exons, CDS, UTRs and codons, in file order.
      const transcriptKey = lines.brca1.find((l) => l.type === 'transcript')!.attrs.ID[0];
      const parts = lines.brca1.filter((l) => l.attrs.Parent?.[0] === transcriptKey).map((l) => featureId('brca1', l.attrs.ID[0]));
      assert.deepEqual((await server.get(`/features/${featureId('brca1', transcriptKey)}`)).json.childIds, parts);
      assert.equal((await search({ parentId: featureId('brca1', 'nope') })).status, 404);
      const wrongSet = await search({ parentId: featureId('brca1', geneKey), featureSetId: setId('gencode') });
      assert.equal(wrongSet.status, 400);
    });

    it('gets each feature equal to its search record', async () => {
      const page = await search({ featureSetId: setId('sacCer'), referenceName: 'chrI', start: 0, end: 1_000_000, pageSize: 40 });
      assert.equal(page.status, 200);
      for (const f of page.json.features) assert.deepEqual((await server.get(`/features/${f.id}`)).json, f);
      assert.equal((await server.get(`/features/${featureId('sacCer', 'nope')}`)).status, 404);
      assert.equal((await server.get(`/features/${idOf('ds', 'fs', 'sacCer')}`)).status, 404);
    });

    it('searches by name and by gene symbol, with or without a region', async () => {
      const named = lines.sacCer.filter((l) => l.attrs.Name?.[0] === 'YAL069W');
      assert.ok(named.length > 0);
      const byName = await all({ featureSetId: setId('sacCer'), name: 'YAL069W' });
      assert.deepEqual(byName.map((f) => [f.name, f.start, f.end]), named.map((l) => ['YAL069W', l.start, l.end]));
      // A feature without Name is found by its ID, as clients of the reference server search GENCODE.
      const transcript = lines.brca1.find((l) => l.type === 'transcript')!.attrs.ID[0];
      const byId = await all({ featureSetId: setId('brca1'), name: transcript });
      assert.deepEqual(byId.map((f) => [f.id, f.name]), [[featureId('brca1', transcript), transcript]]);
      // A line without ID has no ID to be named by; a Name given wins, an empty one is none.
      const idlessFeatures = await all({ featureSetId: idOf('other', 'fs', 'idless') });
      assert.deepEqual(
        idlessFeatures.map((f) => [f.featureType.term, f.start, f.name]),
        [...lines.idless].sort((a, b) => a.start - b.start).map((l) => [l.type, l.start, l.attrs.Name?.[0] || l.attrs.ID?.[0]]),
      );
      // The gene's Name is the symbol of its descendants in a file without gene_name.
      const gene = lines.sacCer.find((l) => l.type === 'gene' && l.attrs.Name)!;
      const descendants = new Set([gene.attrs.ID[0]]);
      let idless = 0;
      for (const l of lines.sacCer) {
        if (!l.attrs.Parent?.some((p) => descendants.has(p))) continue;
        if (l.attrs.ID) descendants.add(l.attrs.ID[0]);
        else idless++;
      }
      const bySymbol = await all({ featureSetId: setId('sacCer'), geneSymbol: gene.attrs.Name[0] });
      assert.equal(bySymbol.length, descendants.size + idless);
      for (const k of descendants) assert.ok(bySymbol.some((f) => f.id === featureId('sacCer', k)), k);

      const symbolLines = lines.brca1.filter((l) => l.attrs.gene_name[0] === 'BRCA1');
      const brca1 = await all({ featureSetId: setId('brca1'), geneSymbol: 'BRCA1', pageSize: 100 });
      assert.equal(brca1.length, idsOf(symbolLines).length);
      const inWindow = await all({ featureSetId: setId('brca1'), geneSymbol: 'BRCA1', referenceName: 'ref_brca1', start: 0, end: 2000 });
      assert.equal(inWindow.length, idsOf(symbolLines.filter((l) => overlaps(l, 'ref_brca1', 0, 2000))).length);
      assert.deepEqual((await search({ featureSetId: setId('brca1'), geneSymbol: 'NOPE' })).json, { features: [] });
      // Names and symbols of features without a location (the shared load path).
      const alpha = await search({ featureSetId: idOf('other', 'fs', 'g2p'), name: 'alpha' });
      assert.deepEqual(alpha.json.features, [
        { id: idOf('other', 'fs', 'g2p', 'A'), name: 'alpha', parentId: idOf('other', 'fs', 'g2p', 'B'), featureSetId: idOf('other', 'fs', 'g2p'), attributes: { attr: { k: { values: [{ stringValue: 'v' }] } } } },
      ]);
      const listed = await all({ featureSetId: idOf('other', 'fs', 'g2p') });
      assert.deepEqual(listed.map((f) => f.name), ['beta', 'alpha', '']);
      assert.deepEqual(listed[0].childIds, [idOf('other', 'fs', 'g2p', 'A')]);
    });

    it('writes attribute values of every type, and every field in snake_case for snake_case requests', async () => {
      const typed = { id: idOf('other', 'fs', 'g2p', 'C'), name: '', featureSetId: idOf('other', 'fs', 'g2p'), strand: 'NEG_STRAND', featureType: { term: 'odd' } };
      assert.deepEqual((await server.get(`/features/${typed.id}`)).json, { ...typed, attributes: typedAttributesJson((v) => v) });
      // An empty name is no name filter (proto3): the set is listed, and the unnamed feature is in it.
      const snakeTyped = await search({ feature_set_id: idOf('other', 'fs', 'g2p'), name: '' });
      assert.deepEqual(snakeTyped.json.features.filter((f: any) => f.id === typed.id), [
        { id: typed.id, name: '', feature_set_id: typed.featureSetId, strand: 'NEG_STRAND', feature_type: { term: 'odd' }, attributes: typedAttributesJson(snake) },
      ]);
      // A page of GFF3 features: the camelCase page with every field name (not attribute keys) in snake_case.
      const window = { referenceName: 'ref_brca1', start: 41_000, end: 43_500, pageSize: 15 };
      const camelPage = (await search({ featureSetId: setId('brca1'), ...window })).json.features as object[];
      const snakePage = await search(Object.fromEntries(Object.entries({ featureSetId: setId('brca1'), ...window }).map(([k, v]) => [snake(k), v])));
      const renamed = (value: unknown, inMap = false): unknown =>
        Array.isArray(value)
          ? value.map((v) => renamed(v))
          : value && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [inMap ? k : snake(k), renamed(v, k === 'attr')]))
            : value;
      assert.equal(camelPage.length, 15);
      assert.ok(camelPage.some((f: any) => f.childIds) && camelPage.some((f: any) => f.parentId) && camelPage.every((f: any) => f.attributes));
      assert.deepEqual(snakePage.json.features, renamed(camelPage));
    });

    it('filters by type: term id or name, with subclasses when the set has an ontology', async () => {
      const window = { featureSetId: setId('brca1'), referenceName: 'ref_brca1', start: 0, end: 100_000 };
      const exons = await all({ ...window, featureTypes: ['exon'] });
      assert.equal(exons.length, idsOf(lines.brca1.filter((l) => l.type === 'exon')).length);
      assert.deepEqual(await all({ ...window, featureTypes: [so.byName.get('exon')!] }), exons);
      // transcript_region: every file type whose SO term lies below it.
      const regionIds = so.below(so.byName.get('transcript_region')!);
      const expected = lines.brca1.filter((l) => regionIds.has(so.byName.get(l.type)!));
      assert.ok(new Set(expected.map((l) => l.type)).size >= 3, 'several types lie below transcript_region');
      const below = await all({ ...window, featureTypes: ['transcript_region'] });
      assert.equal(below.length, idsOf(expected).length);
      const both = await all({ ...window, featureTypes: ['gene', 'CDS'] });
      assert.equal(both.length, idsOf(lines.brca1.filter((l) => l.type === 'gene' || l.type === 'CDS')).length);
      // A set loaded without --ontology has its type names matched in the registered ontology when the search runs.
      const genes = await all({ featureSetId: setId('gencode'), referenceName: 'chr1', start: 0, end: 10_000_000, featureTypes: ['gene'] });
      assert.equal(genes.length, lines.gencode.filter((l) => l.seqid === 'chr1' && l.type === 'gene').length);
      assert.deepEqual(genes[0].featureType, { termId: so.byName.get('gene'), term: 'gene' });
    });

    it('pages with stateless tokens, one record at a time down to the last', async () => {
      const request = { featureSetId: setId('gencode'), referenceName: 'chr1', start: 0, end: 40_000 };
      const whole = await search({ ...request, pageSize: 1000 });
      const expected = idsOf(lines.gencode.filter((l) => overlaps(l, 'chr1', 0, 40_000)));
      assert.ok(expected.length > 33);
      assert.equal(whole.json.features.length, expected.length);
      assert.equal(whole.json.nextPageToken, undefined);
      const { records, pages } = await collectPages(server, '/features/search', { ...request, pageSize: 1 }, 'features');
      assert.equal(pages, expected.length);
      assert.deepEqual(records, whole.json.features);
      const first = await search({ ...request, pageSize: 3 });
      const second = await search({ ...request, pageSize: 30, pageToken: first.json.nextPageToken });
      assert.deepEqual([...first.json.features, ...second.json.features], whole.json.features.slice(0, 33));
      const otherQuery = await search({ ...request, start: 1, pageToken: first.json.nextPageToken });
      assert.equal(otherQuery.status, 400);
      // The gzipped copy loads the same features.
      const gz = await search({ ...request, featureSetId: setId('gencode-gz'), pageSize: 1000 });
      assert.deepEqual(
        gz.json.features.map((f: any) => [f.start, f.end, f.name, f.geneSymbol]),
        whole.json.features.map((f: any) => [f.start, f.end, f.name, f.geneSymbol]),
      );
    });

    it('merges the lines of a discontinuous feature and keeps odd cases of the GFF3 format', async () => {
      const cds = lines.discontinuous.filter((l) => l.attrs.ID[0] === 'apidb|cds_MAL13P1.103-1');
      assert.equal(cds.length, 10);
      const record = (await server.get(`/features/${featureId('discontinuous', 'apidb|cds_MAL13P1.103-1')}`)).json;
      assert.equal(record.start, Math.min(...cds.map((l) => l.start)));
      assert.equal(record.end, Math.max(...cds.map((l) => l.end)));
      assert.deepEqual(record.attributes.attr.Phase.values.map((v: any) => v.stringValue), [...new Set(cds.map((l) => l.phase))]);
      const all1 = await all({ featureSetId: setId('discontinuous'), referenceName: 'apidb|Pf3D7_13', start: 0, end: 1_000_000 });
      assert.equal(all1.length, idsOf(lines.discontinuous).length);
      const mrna = (await server.get(`/features/${featureId('discontinuous', 'apidb|rna_MAL13P1.103-1')}`)).json;
      assert.equal(mrna.childIds.filter((c: string) => c === record.id).length, 1);

      // Lines without ID get stable keys and still link to their parent; an empty Name is no Name.
      const special = await all({ featureSetId: setId('special'), referenceName: '2L', start: 0, end: 30_000_000 });
      const parts = special.filter((f) => f.featureType.term === 'match_part');
      assert.equal(parts.length, lines.special.filter((l) => l.seqid === '2L' && l.type === 'match_part').length);
      for (const part of parts) assert.ok(part.parentId);
      const again = await all({ featureSetId: setId('special'), referenceName: '2L', start: 0, end: 30_000_000 });
      assert.deepEqual(again.map((f) => f.id), special.map((f) => f.id));
      const tm = (await server.get(`/features/${featureId('special', 'tmRNA')}`)).json;
      assert.equal(tm.name, 'tmRNA');
      assert.deepEqual(tm.attributes.attr.Note, { values: [{ stringValue: 'regulatory ncRNA' }] });
      const region = (await server.get(`/features/${featureId('special', 'id1588083')}`)).json;
      assert.deepEqual(region.attributes.attr.country, { values: [{ stringValue: 'United Kingdom: Great Britain' }] });
    });

    it('migrates a registry whose attributes were stored as JSON lists: every feature answers as it did', async () => {
      // A registry as the migrations before 'feature attributes in wire form' left it, with rows as they
      // were written then: attributes as the JSON of their lists (more rows than one migration batch).
      const location = await backend.newLocation(dir);
      const old = await registryBefore(location, 'feature attributes in wire form');
      const now = new Date().toISOString();
      await old.registry.db.insertInto('dataset').values({ name: 'ds', description: null, created_at: now }).execute();
      await old.registry.db
        .insertInto('feature_set')
        .values({ id: 1, dataset_name: 'ds', name: 'old', reference_set_name: null, ontology_name: null, source_uri: null, attributes: null, source: null, feature_count: 0, longest: '{}', created_at: now })
        .execute();
      // Typed values as JSON could hold them (no NaN or infinities: JSON.stringify wrote those as null).
      const typed = { s: typedAttributes.s, n: typedAttributes.n, d: [1.5, -0.25], b: typedAttributes.b, none: [] };
      const typedJson = { attr: { ...typedAttributesJson((v) => v).attr, d: { values: [{ doubleValue: 1.5 }, { doubleValue: -0.25 }] } } };
      const attributesOf = (i: number) => (i % 7 === 0 ? null : i === 1 ? typed : { gene_id: [`G${i}`], tag: ['basic', `t,${i}`], level: ['2'] });
      const rows = Array.from({ length: 4500 }, (_, i) => ({
        set_id: 1, key: `f${String(i).padStart(5, '0')}`, seq: i, reference_name: 'chr1', start: i * 10, end: i * 10 + 5, strand: 2,
        type_id: null, type_term: 'exon', name: null, gene_symbol: null, parent_key: null, child_keys: null,
        attributes: attributesOf(i) === null ? null : JSON.stringify(attributesOf(i)),
      }));
      for (let i = 0; i < rows.length; i += 500) await old.registry.db.insertInto('feature').values(rows.slice(i, i + 500)).execute();
      await old.registry.db.updateTable('feature_set').set({ feature_count: rows.length, longest: '{"chr1":5}' }).execute();
      await old.registry.close();

      const migrated = await servedAfterMigrating(location, ['feature attributes in wire form']);
      const features = (await collectPages(migrated, '/features/search', { featureSetId: idOf('ds', 'fs', 'old'), referenceName: 'chr1', start: 0, end: 50_000, pageSize: 1000 }, 'features')).records;
      assert.equal(features.length, rows.length);
      features.forEach((f: any, i: number) => {
        const values = attributesOf(i);
        const expected =
          values === null ? undefined : i === 1 ? typedJson : { attr: Object.fromEntries(Object.entries(values).map(([k, list]) => [k, { values: list.map((v) => ({ stringValue: v })) }])) };
        assert.deepEqual(f.attributes, expected, `feature ${i}`);
        assert.equal(f.id, idOf('ds', 'fs', 'old', rows[i].key));
      });
    });

    it('names the features of a registry made before features were named by their ID, as a load now does', async () => {
      // A registry as the migrations before 'features named by their ID' left it, its sets loaded as
      // the loader did then: a feature's name from a Name value only.
      const location = await backend.newLocation(dir);
      const old = await registryBefore(location, 'features named by their ID');
      await addDataset(old.registry, 'ds');
      await addDataset(old.registry, 'other');
      await loadReferenceSet(old.registry, files.fasta, { name: 'hg37' });
      await loadReferenceSet(old.registry, contigs, { name: 'contigs' });
      const header: Record<string, string> = {};
      await addOntology(old.registry, 'so', files.obo, readOboTerms(files.obo, header), header);
      const loads = [
        { dataset: 'ds', name: 'brca1', lines: lines.brca1, file: files.brca1, options: { referenceSet: 'hg37', ontology: 'so', sourceUri: 'https://example.org/brca1.gff3' } },
        { dataset: 'ds', name: 'special', lines: lines.special, file: files.special, options: { referenceSet: 'contigs' } },
        { dataset: 'other', name: 'idless', lines: lines.idless, file: idless, options: { referenceSet: 'contigs' } },
      ];
      for (const load of loads) {
        await loadFeatureSet(old.registry, load.dataset, load.file, { ...load.options, name: load.name });
        const unnamed = load.lines.filter((l) => l.attrs.ID?.[0] && !l.attrs.Name?.[0]).map((l) => l.attrs.ID[0]);
        const set = await old.registry.db.selectFrom('feature_set').select('id').where('dataset_name', '=', load.dataset).where('name', '=', load.name).executeTakeFirstOrThrow();
        for (let i = 0; i < unnamed.length; i += 500) {
          await old.registry.db.updateTable('feature').set({ name: null }).where('set_id', '=', set.id).where('key', 'in', unnamed.slice(i, i + 500)).execute();
        }
      }
      // Another area's set, without reference set or names: it keeps its features as stored.
      await old.registry.db.transaction().execute((trx) =>
        insertFeatureSet(old.registry, trx, { datasetName: 'other', name: 'g2p', referenceSetName: null, ontologyName: null, sourceUri: null, attributes: null, source: null }, [
          { key: 'http://example.org/allele', referenceName: null, start: null, end: null, strand: 'STRAND_UNSPECIFIED', type: null, name: null, geneSymbol: null, parentKeys: [], attributes: null },
        ]),
      );
      await old.registry.close();

      const migrated = await servedAfterMigrating(location, ['features named by their ID']);
      for (const load of loads) {
        const request = { featureSetId: idOf(load.dataset, 'fs', load.name), pageSize: 1000 };
        const got = (await collectPages(migrated, '/features/search', request, 'features')).records;
        assert.deepEqual(got, await all(request), load.name);
        // Lines without ID, and without Name, stay unnamed (their keys are made up).
        const unnamed = load.lines.filter((l) => !l.attrs.ID?.[0] && !l.attrs.Name?.[0]).length;
        assert.equal(got.filter((f) => f.name === undefined).length, unnamed, load.name);
      }
      const transcript = lines.brca1.find((l) => l.type === 'transcript')!.attrs.ID[0];
      const byId = (await migrated.post('/features/search', { featureSetId: setId('brca1'), name: transcript })).json.features;
      assert.deepEqual(byId.map((f: any) => f.id), [featureId('brca1', transcript)]);
      const allele = (await migrated.post('/features/search', { featureSetId: idOf('other', 'fs', 'g2p') })).json.features;
      assert.deepEqual(allele.map((f: any) => f.name), [undefined]);
    });

    it('answers 400 naming the field for bad searches', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ referenceName: 'chr1', start: 0, end: 10 }, /featureSetId/],
        [{ featureSetId: setId('gencode'), referenceName: 'chr1', start: -1, end: 10 }, /'start'/],
        [{ featureSetId: setId('gencode'), referenceName: 'chr1', start: 20, end: 10 }, /'end'/],
        [{ featureSetId: setId('gencode'), pageSize: -1 }, /pageSize/],
        [{ featureSetId: setId('gencode'), featuretypes: ['gene'] }, /featuretypes/],
        [{ featureSetId: setId('gencode'), pageToken: 'garbage' }, /pageToken/],
      ];
      for (const [body, message] of cases) {
        const res = await search(body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.match(res.json.message, message);
      }
      assert.equal((await search({ featureSetId: idOf('ds', 'fs', 'nope'), name: 'x' })).status, 404);
    });
  });
}
