/**
 * Continuous sets and data over HTTP, on SQLite and PostgreSQL, from the reference server's bigWig files,
 * local and over HTTP ranges. Expected values come from wiggle.txt / wiggle_2.txt, the text the bigWig
 * files were made from, expanded to one value per base in the test.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadContinuousSet } from '../src/areas/continuous/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { expectedRuns, wiggleValues, writeContigFasta } from './annotation-fixture.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';
import { startRangeServer } from './range-server.js';

const dir = tempDir();
const CONTINUOUS = 'ga4gh-server/datasets/dataset1/continuous';
const files = {
  bigwig1: copyFixture(`${CONTINUOUS}/bigwig_1.bw`, dir),
  bigwig2: copyFixture(`${CONTINUOUS}/bigwig_2.bw`, dir),
  wiggle1: copyFixture(`${CONTINUOUS}/wiggle.txt`, dir),
  wiggle2: copyFixture(`${CONTINUOUS}/wiggle_2.txt`, dir),
  sizes: copyFixture(`${CONTINUOUS}/chromSizes.txt`, dir),
};
const chromosomes = fs.readFileSync(files.sizes, 'utf8').trim().split('\n').map((l) => l.split(/\s+/)[0]);
const contigs = writeContigFasta(path.join(dir, 'contigs', 'contigs.fa'), chromosomes);

for (const backend of backends) {
  describe(`continuous (${backend.name})`, { skip: backend.skip }, () => {
    let server: TestServer;
    const damaged = path.join(dir, `damaged-${backend.name}.bw`);
    const setId = (name: string) => idOf('ds', 'cs', name);
    const search = (body: Record<string, unknown>, prefix = '') => server.post(`${prefix}/continuous/search`, body);

    before(async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      await addDataset(registry, 'ds');
      await loadReferenceSet(registry, contigs, { name: 'contigs' });
      await loadContinuousSet(registry, 'ds', files.bigwig1, { referenceSet: 'contigs' });
      await loadContinuousSet(registry, 'ds', files.bigwig2, { referenceSet: 'contigs', sourceUri: 'https://example.org/wiggle_2' });
      fs.copyFileSync(files.bigwig1, damaged);
      await loadContinuousSet(registry, 'ds', damaged, { referenceSet: 'contigs', name: 'damaged' });
      const remote = await startRangeServer(dir);
      await loadContinuousSet(registry, 'ds', `${remote.url}/bigwig_1.bw`, { referenceSet: 'contigs', name: 'remote' });
      server = await startTestServer(location);
    });

    it('searches and gets continuous sets, also under /v0.6.0a8/', async () => {
      const res = await server.post('/continuoussets/search', { datasetId: idOf('ds') });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json.continuousSets.map((s: any) => s.name), ['bigwig_1', 'bigwig_2', 'damaged', 'remote']);
      const second = res.json.continuousSets[1];
      assert.deepEqual(second, { id: setId('bigwig_2'), datasetId: idOf('ds'), referenceSetId: idOf('contigs'), name: 'bigwig_2', sourceUri: 'https://example.org/wiggle_2' });
      assert.deepEqual((await server.get(`/continuoussets/${second.id}`)).json, second);
      assert.deepEqual((await server.get(`/v0.6.0a8/continuoussets/${second.id}`)).json, second);
      assert.deepEqual((await server.post('/v0.6.0a8/continuoussets/search', { datasetId: idOf('ds') })).json, res.json);
      assert.equal((await server.get(`/continuoussets/${idOf('ds', 'cs', 'nope')}`)).status, 404);
    });

    for (const [name, wiggle] of [['bigwig_1', 'wiggle1'], ['bigwig_2', 'wiggle2'], ['remote', 'wiggle1']] as const) {
      it(`returns the values of ${name} as runs of consecutive bases, paged`, async () => {
        const values = wiggleValues(files[wiggle]);
        const bases = [...values.keys()];
        const [start, end] = [Math.min(...bases) - 100, Math.max(...bases) + 100];
        const expected = expectedRuns(values, start, end);
        assert.ok(expected.length > 5);
        const { records, pages } = await collectPages(server, '/continuous/search', { continuousSetId: setId(name), referenceName: 'chr19', start, end, pageSize: 2 }, 'continuous');
        assert.equal(pages, Math.ceil(expected.length / 2));
        assert.deepEqual(records, expected.map((r) => ({ ...r, continuousSetId: setId(name), referenceName: 'chr19' })));
        // A window cutting a run on both sides: the run is clipped, never extended.
        const cut = expected[1];
        const inner = await search({ continuousSetId: setId(name), referenceName: 'chr19', start: cut.start + 1, end: cut.start + cut.values.length - 0 });
        assert.deepEqual(inner.json.continuous.map((r: any) => r.start), expectedRuns(values, cut.start + 1, cut.start + cut.values.length).map((r) => r.start));
        const prefixed = await search({ continuousSetId: setId(name), referenceName: 'chr19', start, end }, '/v0.6.0a8');
        assert.deepEqual(prefixed.json.continuous, records);
      });
    }

    it('returns nothing for a window without values or a sequence the file lacks', async () => {
      const empty = await search({ continuousSetId: setId('bigwig_1'), referenceName: 'chr19', start: 0, end: 1000 });
      assert.deepEqual(empty.json, { continuous: [] });
      const other = await search({ continuousSetId: setId('bigwig_1'), referenceName: 'chr1', start: 0, end: 1000 });
      assert.deepEqual(other.json, { continuous: [] });
    });

    it('answers 400 naming the field, 404 for unknown sets, 503 naming the set for a damaged file', async () => {
      const base = { continuousSetId: setId('bigwig_1'), referenceName: 'chr19', start: 10, end: 20 };
      for (const field of ['continuousSetId', 'referenceName'] as const) {
        const { [field]: _, ...rest } = base;
        const res = await search(rest);
        assert.equal(res.status, 400);
        assert.match(res.json.message, new RegExp(field));
      }
      assert.match((await search({ ...base, end: 10 })).json.message, /'end'/);
      assert.match((await search({ ...base, start: -1 })).json.message, /'start'/);
      assert.equal((await search({ ...base, pageToken: 'x' })).status, 400);
      assert.equal((await search({ ...base, continuousSetId: idOf('ds', 'cs', 'nope') })).status, 404);

      // The file is cut short after registration: its data blocks are gone.
      fs.truncateSync(damaged, 600);
      const res = await search({ ...base, continuousSetId: setId('damaged'), start: 49_300_000, end: 49_400_000 });
      assert.equal(res.status, 503);
      assert.equal(res.json.errorCode, 22);
      assert.match(res.json.message, /'damaged'/);
    });
  });
}
