/**
 * The reference area over HTTP, against a real registry file and the reference server's test FASTA
 * files. Expected checksums and bases are computed here from the FASTA text, independently of the
 * server's own scanner.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';

/** Parses FASTA text the simple way: name → upper-cased sequence, in file order. */
function readFasta(file: string): Array<{ name: string; sequence: string }> {
  const raw = fs.readFileSync(file);
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('latin1');
  const out: Array<{ name: string; sequence: string }> = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('>')) out.push({ name: line.slice(1).split(/\s/)[0], sequence: '' });
    else if (out.length) out[out.length - 1].sequence += line.trim().toUpperCase();
  }
  return out;
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const dir = tempDir();
const sets = path.join(dir, 'sets');
fs.mkdirSync(sets);
const ncbi37 = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);
const example2 = copyFixture('ga4gh-server/referenceSets/example_2.fa.gz', sets); // indexes created by the loader
const brca1 = copyFixture('compliance/ref_brca1.fa', sets); // plain FASTA, .fai created by the loader
// Accessions of single references, as an assembly report gives them (two lines, a comment, a blank).
const accessionsFile = path.join(dir, 'NCBI37.accessions');
fs.writeFileSync(accessionsFile, '# name accessions\n1\tNC_000001.10,CM000663.1\n\n3 NC_000003.11\n');
const accessionsOf = new Map(
  fs
    .readFileSync(accessionsFile, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [name, list] = l.split(/\s+/);
      return [name, list.split(',').sort()] as const;
    }),
);
const compliance = JSON.parse(fs.readFileSync(path.join(TESTDATA, 'compliance/ref_brca1.json'), 'utf8'));

const expected = {
  NCBI37: readFasta(ncbi37),
  example_2: readFasta(example2),
  hg37: readFasta(brca1),
};

for (const backend of backends) {
describe(`on ${backend.name}`, { skip: backend.skip }, () => {
  let server: TestServer;
  let smallPages: TestServer;

  before(async () => {
    const { location, registry } = await newRegistry(await backend.newLocation(dir));
    await addDataset(registry, 'ds1');
    await loadReferenceSet(registry, ncbi37, {
      assemblyId: 'GRCh37',
      speciesTermId: 'NCBITaxon:9606',
      speciesTerm: 'Homo sapiens',
      sourceAccessions: ['GCF_000001405.13'],
      sourceUri: 'https://example.org/NCBI37.fa.gz',
      description: 'test set',
      referenceAccessions: accessionsFile,
    });
    await loadReferenceSet(registry, example2, {});
    await loadReferenceSet(registry, brca1, { name: 'hg37', assemblyId: 'hg37', isDerived: true, sourceAccessions: ['GA4GH_CTS_01'] });
    server = await startTestServer(location);
    smallPages = await startTestServer(location, { basesPageSize: 1000 });
  });

  describe('reference sets', () => {
    it('lists every set by name, with checksums computed from the sequences', async () => {
      const res = await server.post('/referencesets/search', {});
      assert.equal(res.status, 200);
      const names = res.json.referenceSets.map((s: any) => s.name);
      assert.deepEqual(names, ['NCBI37', 'example_2', 'hg37']);
      for (const set of res.json.referenceSets) {
        const refs = expected[set.name as keyof typeof expected];
        assert.equal(set.md5checksum, md5(refs.map((r) => md5(r.sequence)).sort().join('')), set.name);
        assert.equal(set.id, idOf(set.name));
      }
      assert.equal(res.json.nextPageToken, undefined);
    });

    it('carries the metadata given at load, in 0.6.0a10 fields only', async () => {
      const res = await server.get(`/referencesets/${idOf('NCBI37')}`);
      assert.equal(res.status, 200);
      const { md5checksum, ...rest } = res.json;
      assert.match(md5checksum, /^[0-9a-f]{32}$/);
      assert.deepEqual(rest, {
        id: idOf('NCBI37'),
        name: 'NCBI37',
        species: { termId: 'NCBITaxon:9606', term: 'Homo sapiens' },
        description: 'test set',
        assemblyId: 'GRCh37',
        sourceUri: 'https://example.org/NCBI37.fa.gz',
        sourceAccessions: ['GCF_000001405.13'],
        isDerived: false,
      });
    });

    it('filters by md5checksum, accession and assemblyId, exactly and case-sensitively', async () => {
      const all = (await server.post('/referencesets/search', {})).json.referenceSets;
      const hg37 = all.find((s: any) => s.name === 'hg37');
      const search = async (body: object) => (await server.post('/referencesets/search', body)).json.referenceSets.map((s: any) => s.name);
      assert.deepEqual(await search({ md5checksum: hg37.md5checksum }), ['hg37']);
      assert.deepEqual(await search({ md5checksum: hg37.md5checksum.toUpperCase() }), []);
      assert.deepEqual(await search({ accession: 'GA4GH_CTS_01' }), ['hg37']);
      assert.deepEqual(await search({ accession: 'GA4GH_CTS' }), []);
      assert.deepEqual(await search({ assemblyId: 'GRCh37' }), ['NCBI37']);
      const snake = await server.post('/referencesets/search', { assembly_id: 'grch37' });
      assert.deepEqual(snake.json, { reference_sets: [] });
    });

    it('pages one set at a time, the token disappearing after the last', async () => {
      const { records, pages } = await collectPages(server, '/referencesets/search', { pageSize: 1 }, 'referenceSets');
      assert.equal(pages, 3);
      assert.deepEqual(records.map((s) => s.name), ['NCBI37', 'example_2', 'hg37']);
    });

    it('answers get-by-id with the record the search returned', async () => {
      const all = (await server.post('/referencesets/search', {})).json.referenceSets;
      for (const set of all) assert.deepEqual((await server.get(`/referencesets/${set.id}`)).json, set);
    });

    it('answers 404 for unknown and malformed ids', async () => {
      for (const id of [idOf('nope'), idOf('NCBI37', '1'), 'garbage', '%7B%7D']) {
        const res = await server.get(`/referencesets/${id}`);
        assert.equal(res.status, 404, id);
        assert.deepEqual(Object.keys(res.json), ['errorCode', 'message']);
      }
    });
  });

  describe('references', () => {
    it('lists the references of a set in file order with checksums and lengths from the sequence', async () => {
      for (const [setName, refs] of Object.entries(expected)) {
        const res = await server.post('/references/search', { referenceSetId: idOf(setName) });
        assert.equal(res.status, 200);
        assert.deepEqual(
          res.json.references.map((r: any) => [r.id, r.name, r.length, r.md5checksum]),
          refs.map((r) => [idOf(setName, r.name), r.name, r.sequence.length, md5(r.sequence)]),
        );
      }
    });

    it('carries the accessions given for single references, and finds references by them', async () => {
      for (const ref of expected.NCBI37) {
        const res = await server.get(`/references/${idOf('NCBI37', ref.name)}`);
        // Empty lists are left out of records: a reference without accessions has no sourceAccessions.
        assert.deepEqual(res.json.sourceAccessions, accessionsOf.get(ref.name), ref.name);
      }
      for (const [name, list] of accessionsOf) {
        for (const accession of list) {
          const res = await server.post('/references/search', { accession });
          assert.deepEqual(res.json.references.map((r: any) => r.id), [idOf('NCBI37', name)], accession);
        }
      }
      assert.deepEqual((await server.post('/references/search', { accession: 'nc_000001.10' })).json.references, []);
      assert.deepEqual((await server.post('/references/search', { accession: 'NC_000001' })).json.references, []);
      const both = await server.post('/references/search', { referenceSetId: idOf('hg37'), accession: 'NC_000001.10' });
      assert.deepEqual(both.json.references, []);
    });

    it('matches the checksum published with the compliance data', async () => {
      const res = await server.get(`/references/${idOf('hg37', 'ref_brca1')}`);
      assert.equal(res.json.md5checksum, compliance.md5checksum);
      assert.equal(res.json.isDerived, true);
    });

    it('filters by md5checksum, across sets or within one', async () => {
      const target = expected.NCBI37[2];
      const res = await server.post('/references/search', { md5checksum: md5(target.sequence) });
      assert.deepEqual(res.json.references.map((r: any) => r.name), [target.name]);
      const none = await server.post('/references/search', { referenceSetId: idOf('hg37'), md5checksum: md5(target.sequence) });
      assert.deepEqual(none.json.references, []);
    });

    it('answers 404 for a search naming an unknown reference set', async () => {
      assert.equal((await server.post('/references/search', { referenceSetId: idOf('nope') })).status, 404);
    });

    it('pages with pageSize 1 across all sets, each reference once', async () => {
      const { records, pages } = await collectPages(server, '/references/search', { pageSize: 1 }, 'references');
      const all = Object.entries(expected).flatMap(([set, refs]) => refs.map((r) => idOf(set, r.name)));
      assert.equal(pages, all.length);
      assert.deepEqual(records.map((r) => r.id), all);
    });

    it('accepts a token made for one page size with another', async () => {
      const first = await server.post('/references/search', { pageSize: 1 });
      const rest = await server.post('/references/search', { pageSize: 100, pageToken: first.json.nextPageToken });
      assert.equal(rest.json.references.length, Object.values(expected).flat().length - 1);
      assert.equal(rest.json.nextPageToken, undefined);
    });

    it('answers get-by-id with the record the search returned', async () => {
      const all = (await server.post('/references/search', {})).json.references;
      for (const ref of all) assert.deepEqual((await server.get(`/references/${ref.id}`)).json, ref);
    });
  });

  describe('reference bases', () => {
    const ref = expected.NCBI37[0];
    const id = idOf('NCBI37', ref.name);

    it('serves a range in all three request shapes', async () => {
      const want = { offset: 10, sequence: ref.sequence.slice(10, 70) };
      assert.deepEqual((await server.get(`/references/${id}/bases?start=10&end=70`)).json, want);
      assert.deepEqual((await server.post('/listreferencebases', { reference_id: id, start: '10', end: 70 })).json, want);
      assert.deepEqual((await server.post(`/references/${id}/bases`, { start: 10, end: 70 })).json, want);
    });

    it('defaults to the whole reference', async () => {
      const res = await server.get(`/references/${id}/bases`);
      assert.deepEqual(res.json, { offset: 0, sequence: ref.sequence });
      assert.match(res.json.sequence, /^[ACGTMRWSYKVHDBN]*$/);
    });

    it('reads bgzipped, indexed-by-loader and plain files alike', async () => {
      for (const [set, refs] of [['example_2', expected.example_2], ['hg37', expected.hg37]] as const) {
        for (const r of refs) {
          const res = await server.get(`/references/${idOf(set, r.name)}/bases?start=1&end=${r.sequence.length}`);
          assert.equal(res.json.sequence, r.sequence.slice(1), `${set} ${r.name}`);
        }
      }
    });

    it('pages over a long range, each page at its offset, until the token disappears', async () => {
      const whole = expected.hg37[0].sequence;
      const refId = idOf('hg37', 'ref_brca1');
      let token: string | undefined;
      let sequence = '';
      let pages = 0;
      do {
        const res = await smallPages.get(`/references/${refId}/bases?start=5&end=${whole.length - 3}${token ? `&pageToken=${token}` : ''}`);
        assert.equal(res.status, 200);
        assert.equal(res.json.offset, 5 + sequence.length);
        sequence += res.json.sequence;
        token = res.json.nextPageToken;
        pages++;
      } while (token);
      assert.equal(sequence, whole.slice(5, whole.length - 3));
      assert.equal(pages, Math.ceil((whole.length - 8) / 1000));
    });

    it('answers snake_case requests in snake_case', async () => {
      const res = await smallPages.post('/listreferencebases', { reference_id: idOf('hg37', 'ref_brca1'), start: 0, end: 5000 });
      assert.deepEqual(Object.keys(res.json), ['offset', 'sequence', 'next_page_token']);
    });

    it('refuses ranges outside the reference with 416', async () => {
      for (const q of ['start=-1&end=5', `start=0&end=${ref.sequence.length + 1}`, 'start=20&end=20', 'start=30&end=20', `start=${ref.sequence.length}`]) {
        const res = await server.get(`/references/${id}/bases?${q}`);
        assert.equal(res.status, 416, q);
        assert.match(res.json.message, /outside reference/);
      }
    });

    it('refuses tokens of another range, tampered tokens and bad parameters with 400', async () => {
      const refId = idOf('hg37', 'ref_brca1');
      const first = await smallPages.get(`/references/${refId}/bases?start=0&end=5000`);
      const token = first.json.nextPageToken;
      assert.equal((await smallPages.get(`/references/${refId}/bases?start=0&end=6000&pageToken=${token}`)).status, 400);
      assert.equal((await smallPages.get(`/references/${refId}/bases?start=0&end=5000&pageToken=${token.slice(0, -3)}abc`)).status, 400);
      assert.equal((await server.get(`/references/${id}/bases?start=abc`)).status, 400);
      assert.equal((await server.get(`/references/${id}/bases?begin=1`)).status, 400);
      assert.equal((await server.post('/listreferencebases', { start: 1 })).status, 400);
      assert.equal((await server.post(`/references/${id}/bases`, { referenceId: idOf('hg37', 'ref_brca1') })).status, 400);
      assert.equal((await server.get(`/references/${idOf('NCBI37', 'nope')}/bases`)).status, 404);
    });
  });

  describe('datasets', () => {
    it('searches and gets datasets', async () => {
      const res = await server.post('/datasets/search', {});
      assert.deepEqual(res.json, { datasets: [{ id: idOf('ds1'), name: 'ds1' }] });
      assert.deepEqual((await server.get(`/datasets/${idOf('ds1')}`)).json, res.json.datasets[0]);
      assert.equal((await server.get(`/datasets/${idOf('ds2')}`)).status, 404);
    });
  });
});
}
