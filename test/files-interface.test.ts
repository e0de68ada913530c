/**
 * The registered files genome browsers read by range (`/files`), over a real registry and server: a
 * plain FASTA and a bgzipped one with their indexes, a set without bases, a bigWig; whole files,
 * ranges, HEAD, and the errors of what is not served. Expected bytes are the files' own, read here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadContinuousSet } from '../src/areas/continuous/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadDictionaryReferenceSet, loadReferenceSet } from '../src/areas/references/loader.js';
import { copyFixture, idOf, newRegistry, ROOT, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
const plainFasta = copyFixture('compliance/ref_brca1.fa', dir);
const gzFolder = copyFixture('ga4gh-server/referenceSets', dir);
const gzFasta = path.join(gzFolder, 'NCBI37.fa.gz');
const bigWig = copyFixture('ga4gh-server/datasets/dataset1/continuous/bigwig_1.bw', dir);
// The bigWig's sequences, with their lengths, as a set without bases.
const chromSizes = fs.readFileSync(path.join(ROOT, 'testdata/ga4gh-server/datasets/dataset1/continuous/chromSizes.txt'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/));
const dictionary = path.join(dir, 'contigs.dict');
fs.writeFileSync(dictionary, ['@HD\tVN:1.6', ...chromSizes.map(([name, length]) => `@SQ\tSN:${name}\tLN:${length}`)].join('\n') + '\n');

let server: TestServer;
const fetchFile = (p: string, init: RequestInit = {}) => fetch(server.url + p, init);
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());

before(async () => {
  const { location, registry } = await newRegistry(dir);
  await addDataset(registry, 'demo', '');
  await loadReferenceSet(registry, plainFasta, { name: 'hg37' });
  await loadReferenceSet(registry, gzFasta, { name: 'NCBI37' });
  await loadDictionaryReferenceSet(registry, dictionary, { name: 'contigs' });
  await loadContinuousSet(registry, 'demo', bigWig, { referenceSet: 'contigs', name: 'wiggle' });
  server = await startTestServer(location);
});

describe('the files of reference sets', () => {
  it('serves a plain FASTA and its .fai as they are, whole and by range', async () => {
    const whole = await fetchFile(`/files/referencesets/${idOf('hg37')}/fasta`);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(await bytesOf(whole), fs.readFileSync(plainFasta));
    const fai = await fetchFile(`/files/referencesets/${idOf('hg37')}/fai`);
    assert.equal(await fai.text(), fs.readFileSync(`${plainFasta}.fai`, 'utf8'));
    const part = await fetchFile(`/files/referencesets/${idOf('hg37')}/fasta`, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${fs.statSync(plainFasta).size}`);
    assert.deepEqual(await bytesOf(part), fs.readFileSync(plainFasta).subarray(100, 200));
  });

  it('serves a bgzipped FASTA with its .fai and .gzi; a plain one has no .gzi', async () => {
    const id = idOf('NCBI37');
    assert.deepEqual(await bytesOf(await fetchFile(`/files/referencesets/${id}/fasta`)), fs.readFileSync(gzFasta));
    assert.deepEqual(await bytesOf(await fetchFile(`/files/referencesets/${id}/gzi`)), fs.readFileSync(`${gzFasta}.gzi`));
    assert.equal(await (await fetchFile(`/files/referencesets/${id}/fai`)).text(), fs.readFileSync(`${gzFasta}.fai`, 'utf8'));
    const none = await fetchFile(`/files/referencesets/${idOf('hg37')}/gzi`);
    assert.equal(none.status, 404);
    assert.match((await none.json()).message, /reference set 'hg37' is not bgzipped/);
  });

  it('answers HEAD with the headers alone', async () => {
    const res = await fetchFile(`/files/referencesets/${idOf('hg37')}/fasta`, { method: 'HEAD', headers: { range: 'bytes=0-9' } });
    assert.equal(res.status, 206);
    assert.equal(res.headers.get('content-length'), '10');
    assert.equal((await bytesOf(res)).length, 0);
  });

  it('is 404 for a set registered without bases and for an unknown set', async () => {
    const dictionarySet = await fetchFile(`/files/referencesets/${idOf('contigs')}/fasta`);
    assert.equal(dictionarySet.status, 404);
    assert.match((await dictionarySet.json()).message, /'contigs' was registered from a sequence dictionary/);
    const unknown = await fetchFile(`/files/referencesets/${idOf('nothing')}/fai`);
    assert.equal(unknown.status, 404);
    assert.match((await unknown.json()).message, /no reference set with id/);
  });

  it('refuses ranges it cannot serve and query parameters', async () => {
    const outside = await fetchFile(`/files/referencesets/${idOf('hg37')}/fasta`, { headers: { range: `bytes=${fs.statSync(plainFasta).size}-` } });
    assert.equal(outside.status, 416);
    assert.match((await outside.json()).message, /lies outside the file/);
    const query = await fetchFile(`/files/referencesets/${idOf('hg37')}/fasta?path=/etc/passwd`);
    assert.equal(query.status, 400);
  });
});

describe('the files of continuous sets', () => {
  it('serves the bigWig by range', async () => {
    const id = idOf('demo', 'cs', 'wiggle');
    assert.deepEqual(await bytesOf(await fetchFile(`/files/continuoussets/${id}/bigwig`)), fs.readFileSync(bigWig));
    const header = await fetchFile(`/files/continuoussets/${id}/bigwig`, { headers: { range: 'bytes=0-63' } });
    assert.equal(header.status, 206);
    assert.deepEqual(await bytesOf(header), fs.readFileSync(bigWig).subarray(0, 64));
  });

  it('does not serve a bigWig whose size changed since it was registered: 503 naming the set', async () => {
    const id = idOf('demo', 'cs', 'wiggle');
    const original = fs.readFileSync(bigWig);
    fs.writeFileSync(bigWig, original.subarray(0, original.length - 100));
    try {
      const res = await fetchFile(`/files/continuoussets/${id}/bigwig`);
      assert.equal(res.status, 503);
      assert.match((await res.json()).message, /continuous set 'wiggle' cannot be read right now/);
    } finally {
      fs.writeFileSync(bigWig, original);
    }
    assert.equal((await fetchFile(`/files/continuoussets/${id}/bigwig`)).status, 200);
  });

  it('is 404 for an unknown set', async () => {
    const res = await fetchFile(`/files/continuoussets/${idOf('demo', 'cs', 'nothing')}/bigwig`);
    assert.equal(res.status, 404);
  });
});
