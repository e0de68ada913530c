/**
 * Variant sets whose VCF and index are http(s) URLs (served here by a Range-capable server standing in
 * for object storage): the same answers as the same file registered locally, clear refusals for what a
 * remote VCF cannot be, and a clear error (not a crash) when the remote file disappears.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import type { Registry } from '../src/registry/registry.js';
import { copyFixture, idOf, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';
import { startRangeServer, type RangeServer } from './range-server.js';
import { pagesAcross, fetchedById, type PagedSearch } from './scale-fixture.js';

const dir = tempDir();
const served = path.join(dir, 'served');
const local = path.join(dir, 'local');
fs.mkdirSync(served);
fs.mkdirSync(local);
for (const name of ['chr1.vcf.gz', 'chr1.vcf.gz.tbi']) {
  copyFixture(`ga4gh-server/datasets/dataset1/variants/1kgPhase1/${name}`, served);
  copyFixture(`ga4gh-server/datasets/dataset1/variants/1kgPhase1/${name}`, local);
}
copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase1/chr2.vcf.gz', served); // no index beside it
copyFixture('compliance/brca1_1kgPhase3_variants.vcf', served); // plain text
const fasta = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', dir);

let files: RangeServer;
let remoteRegistry: Registry;
let remote: TestServer;
let reference: TestServer;

const setId = idOf('ds', 'vs', 'chr1');
const searches: PagedSearch[] = [
  { path: '/variantsets/search', request: { datasetId: idOf('ds') }, list: 'variantSets', get: '/variantsets/' },
  { path: '/callsets/search', request: { variantSetId: setId, pageSize: 4 }, list: 'callSets', get: '/callsets/' },
  { path: '/variants/search', request: { variantSetId: setId, referenceName: '1', start: 0, end: 0, pageSize: 9 }, list: 'variants', get: '/variants/' },
  {
    path: '/variants/search',
    request: { variantSetId: setId, referenceName: '1', start: 50_000, end: 90_000, pageSize: 4, callSetIds: [] },
    list: 'variants',
  },
];

async function registryWith(): Promise<{ location: string; registry: Registry }> {
  const made = await newRegistry(dir);
  await addDataset(made.registry, 'ds');
  await loadReferenceSet(made.registry, fasta, {});
  return made;
}

before(async () => {
  files = await startRangeServer(served);
  const far = await registryWith();
  const near = await registryWith();
  await loadVariantSet(far.registry, 'ds', [`${files.url}/chr1.vcf.gz`], { referenceset: 'NCBI37' });
  await loadVariantSet(near.registry, 'ds', [path.join(local, 'chr1.vcf.gz')], { referenceset: 'NCBI37' });
  remoteRegistry = far.registry;
  remote = await startTestServer(far.location);
  reference = await startTestServer(near.location);
});

describe('remote VCF files', () => {
  it('give the same variant sets, call sets and variants as the local file, by byte ranges', async () => {
    files.log.length = 0;
    for (const search of searches) {
      const pages = await pagesAcross([remote], search);
      assert.deepEqual(pages, await pagesAcross([reference], search), search.path);
      assert.ok(pages.flatMap((p) => p[search.list]).length > 0, search.path);
      assert.deepEqual(await fetchedById(remote, search, pages), await fetchedById(reference, search, pages), search.path);
    }
    // The VCF is only ever read by byte ranges; its index is read whole once, then kept parsed in memory.
    const vcfReads = files.log.filter((line) => line.startsWith('GET /chr1.vcf.gz '));
    assert.ok(vcfReads.length > 0 && vcfReads.every((line) => /bytes=\d+-\d+$/.test(line)), 'the VCF is read by ranges');
    assert.ok(files.log.filter((line) => line.startsWith('GET /chr1.vcf.gz.tbi')).length <= 1, 'the index is fetched once');
  });

  it('are refused with a clear message when no index is beside them, or when not a bgzipped file', async () => {
    await assert.rejects(
      loadVariantSet(remoteRegistry, 'ds', [`${files.url}/chr2.vcf.gz`], { referenceset: 'NCBI37' }),
      { message: `${files.url}/chr2.vcf.gz has no index beside it (neither ${files.url}/chr2.vcf.gz.tbi nor ${files.url}/chr2.vcf.gz.csi can be read); create one with tabix -p vcf and upload it next to the VCF` },
    );
    await assert.rejects(
      loadVariantSet(remoteRegistry, 'ds', [`${files.url}/brca1_1kgPhase3_variants.vcf`], { referenceset: 'NCBI37' }),
      /is not a bgzipped VCF \(\.vcf\.gz or \.vcf\.bgz\); a remote VCF must be bgzipped and indexed/,
    );
    await assert.rejects(
      loadVariantSet(remoteRegistry, 'ds', [`${files.url}/`], { referenceset: 'NCBI37' }),
      /looks like a folder; a remote folder is not supported/,
    );
    await assert.rejects(
      loadVariantSet(remoteRegistry, 'ds', [`${files.url}/gone.vcf.gz`], { referenceset: 'NCBI37' }),
      /gone\.vcf\.gz has no index beside it/,
    );
    const sets = (await remote.post('/variantsets/search', { datasetId: idOf('ds') })).json.variantSets;
    assert.deepEqual(sets.map((s: any) => s.name), ['chr1'], 'nothing else was registered');
  });

  it('keep serving when the remote file disappears, and again once it is back', async () => {
    const request = { variantSetId: setId, referenceName: '1', start: 0, end: 0, pageSize: 5 };
    fs.renameSync(path.join(served, 'chr1.vcf.gz'), path.join(served, 'moved.vcf.gz'));
    try {
      assert.equal((await remote.post('/variants/search', request)).status, 503);
      assert.equal((await remote.post('/callsets/search', { variantSetId: setId })).status, 200);
      assert.equal((await remote.get('/info')).status, 200);
    } finally {
      fs.renameSync(path.join(served, 'moved.vcf.gz'), path.join(served, 'chr1.vcf.gz'));
    }
    assert.equal((await remote.post('/variants/search', request)).status, 200);
  });

  it('answer 503 with a clear message when the remote file disappears', async () => {
    const request = { variantSetId: setId, referenceName: '1', start: 0, end: 0, pageSize: 5 };
    fs.renameSync(path.join(served, 'chr1.vcf.gz'), path.join(served, 'moved.vcf.gz'));
    try {
      const res = await remote.post('/variants/search', request);
      assert.equal(res.status, 503, res.text);
      assert.match(res.json.message, /variant set 'chr1'.*cannot be read/);
      const byId = await reference.post('/variants/search', request);
      const gone = await remote.get(`/variants/${byId.json.variants[0].id}`);
      assert.equal(gone.status, 503, gone.text);
    } finally {
      fs.renameSync(path.join(served, 'moved.vcf.gz'), path.join(served, 'chr1.vcf.gz'));
    }
  });
});
