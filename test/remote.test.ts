/**
 * Reference sets whose FASTA and indexes are http(s) URLs, read by byte ranges: the same answers as
 * the same files registered locally, and a clear error (not a crash) when a remote file disappears.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { copyFixture, idOf, newRegistry, runCliAsync, startTestServer, tempDir, type TestServer } from './helpers.js';
import { startRangeServer, type RangeServer } from './range-server.js';

const dir = tempDir();
const served = path.join(dir, 'served');
const local = path.join(dir, 'local');
fs.mkdirSync(served);
fs.mkdirSync(local);
for (const name of ['NCBI37.fa.gz', 'NCBI37.fa.gz.fai', 'NCBI37.fa.gz.gzi']) {
  copyFixture(`ga4gh-server/referenceSets/${name}`, served);
  copyFixture(`ga4gh-server/referenceSets/${name}`, local);
}
copyFixture('compliance/ref_brca1.fa', served);
copyFixture('compliance/ref_brca1.fa', local);

let files: RangeServer;
let remote: TestServer;
let reference: TestServer;

before(async () => {
  files = await startRangeServer(served);
  const remoteRegistry = await newRegistry(dir);
  const localRegistry = await newRegistry(dir);
  // A remote FASTA needs its indexes beside it: the loader cannot write them there.
  await assert.rejects(loadReferenceSet(remoteRegistry.registry, `${files.url}/ref_brca1.fa`, {}), /ref_brca1\.fa\.fai is missing; create it with samtools faidx/);
  await loadReferenceSet(localRegistry.registry, path.join(local, 'ref_brca1.fa'), {}); // writes local .fai
  fs.copyFileSync(path.join(local, 'ref_brca1.fa.fai'), path.join(served, 'ref_brca1.fa.fai'));
  for (const [registry, base] of [[remoteRegistry.registry, files.url], [localRegistry.registry, local]] as const) {
    const join = (name: string) => (base.startsWith('http') ? `${base}/${name}` : path.join(base, name));
    await loadReferenceSet(registry, join('NCBI37.fa.gz'), { assemblyId: 'NCBI37' });
    if (base.startsWith('http')) await loadReferenceSet(registry, join('ref_brca1.fa'), {});
  }
  remote = await startTestServer(remoteRegistry.location);
  reference = await startTestServer(localRegistry.location);
});

describe('remote data files', () => {
  it('give the same reference sets and references as local files', async () => {
    for (const p of ['/referencesets/search', '/references/search']) {
      const [a, b] = await Promise.all([remote.post(p, {}), reference.post(p, {})]);
      assert.equal(a.status, 200);
      assert.deepEqual(a.json, b.json);
    }
  });

  it('give the same bases, read by byte ranges', async () => {
    files.log.length = 0;
    for (const [set, name, q] of [
      ['NCBI37', '1', 'start=3&end=300'],
      ['NCBI37', '3', ''],
      ['ref_brca1', 'ref_brca1', 'start=40000&end=40100'],
    ]) {
      const p = `/references/${idOf(set, name)}/bases?${q}`;
      const [a, b] = await Promise.all([remote.get(p), reference.get(p)]);
      assert.equal(a.status, 200, a.text);
      assert.deepEqual(a.json, b.json);
    }
    assert.ok(files.log.some((line) => /bytes=\d+-\d+/.test(line)), 'reads used Range requests');
    assert.ok(!files.log.some((line) => /^GET \/ref_brca1\.fa $/.test(line)), 'never fetched the whole FASTA to serve a range');
  });

  it('answer 503 with a clear message when a remote file disappears, and keep serving', async () => {
    fs.renameSync(path.join(served, 'ref_brca1.fa'), path.join(served, 'gone.fa'));
    const res = await remote.get(`/references/${idOf('ref_brca1', 'ref_brca1')}/bases?start=0&end=10`);
    assert.equal(res.status, 503);
    assert.match(res.json.message, /reference set 'ref_brca1' cannot be read/);
    assert.equal((await remote.get(`/references/${idOf('NCBI37', '1')}/bases?start=0&end=10`)).status, 200);
    fs.renameSync(path.join(served, 'gone.fa'), path.join(served, 'ref_brca1.fa'));
    assert.equal((await remote.get(`/references/${idOf('ref_brca1', 'ref_brca1')}/bases?start=0&end=10`)).status, 200);
  });

  it('are reported by repo check when unreachable', async () => {
    const { location } = await newRegistry(dir);
    assert.equal((await runCliAsync('repo', 'add-referenceset', location, `${files.url}/NCBI37.fa.gz`, '--name', 'far')).code, 0);
    assert.equal((await runCliAsync('repo', 'check', location)).code, 0);
    fs.renameSync(path.join(served, 'NCBI37.fa.gz'), path.join(served, 'moved.fa.gz'));
    const r = await runCliAsync('repo', 'check', location);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /reference set 'far'/);
    fs.renameSync(path.join(served, 'moved.fa.gz'), path.join(served, 'NCBI37.fa.gz'));
  });
});
