/**
 * Content-Encoding of replies: the coding chosen from Accept-Encoding (q-values included), compressed
 * answers that decompress to exactly the bytes of the uncompressed answer, small replies, errors and
 * HEAD left as they were, and the `--compression` settings. Requests are made with node:http, which
 * (unlike fetch) hands over the bytes as they came.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { defaultCompression } from '../src/content-coding.js';
import { chooseCoding, formatCompressionOption, parseCompressionOption } from '../src/http/compression.js';
import { copyFixture, decoded, idOf, newRegistry, raw, runCli, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase1', dir);
const fasta = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', dir);

const setId = idOf('ds', 'vs', '1kgPhase1');
// What the test expects, read from the VCF text itself.
const vcfText = zlib.gunzipSync(fs.readFileSync(path.join(dir, '1kgPhase1', 'chr1.vcf.gz'))).toString('utf8').split('\n');
const chr1Lines = vcfText.filter((l) => l && !l.startsWith('#'));
const firstSample = vcfText.find((l) => l.startsWith('#CHROM'))!.split('\t')[9];

const page = { variantSetId: setId, referenceName: '1', start: 0, end: 0, pageSize: 1000 };

describe('choosing the coding from Accept-Encoding', () => {
  const both = defaultCompression(); // br first, then gzip
  const cases: Array<[string | undefined, string | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['gzip', 'gzip'],
    ['GZip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0', undefined],
    ['gzip;q=0.5, br;q=0.8', 'br'],
    ['gzip;q=1, br;q=0.999', 'gzip'],
    ['identity, gzip;q=0.5', undefined],
    ['gzip;q=0.5', 'gzip'], // identity not named: no more wanted than the least wanted coding named
    ['identity;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0', undefined],
    ['*;q=0, gzip;q=0.1', 'gzip'],
    ['br;q=0, *;q=0.3', 'gzip'],
    ['deflate', undefined],
    ['gzip;q=2', undefined], // not a q-value: the entry is dropped
    ['gzip;q=0.0001', undefined],
    ['gzip ; q=0.20 , identity;q=0.1', 'gzip'],
  ];
  for (const [header, expected] of cases) {
    it(`${JSON.stringify(header)} -> ${expected ?? 'identity'}`, () => {
      assert.equal(chooseCoding(header, both), expected);
    });
  }
  it('a tie between codings goes to the server order; identity wins a tie only when no coding is offered', () => {
    assert.equal(chooseCoding('gzip, br', both), 'br');
    assert.equal(chooseCoding('gzip, br', { ...both, codings: ['gzip', 'br'] }), 'gzip');
    assert.equal(chooseCoding('br', { ...both, codings: ['gzip'] }), undefined);
    assert.equal(chooseCoding('gzip, br', { ...both, codings: [] }), undefined);
    // identity;q=0.5 and gzip;q=0.5: the client takes either, and a coding is offered.
    assert.equal(chooseCoding('identity;q=0.5, gzip;q=0.5', both), 'gzip');
  });
});

describe('--compression text', () => {
  const base = defaultCompression();
  it('reads codings in order with optional levels, and off', () => {
    assert.deepEqual(parseCompressionOption('gzip:6', base), { ...base, codings: ['gzip'], gzipLevel: 6 });
    assert.deepEqual(parseCompressionOption('gzip,br:9', base), { ...base, codings: ['gzip', 'br'], brotliQuality: 9 });
    assert.deepEqual(parseCompressionOption('off', base).codings, []);
    assert.equal(formatCompressionOption(base), `br:${base.brotliQuality},gzip:${base.gzipLevel}`);
    assert.equal(formatCompressionOption({ ...base, codings: [] }), 'off');
  });
  it('refuses other text with a message naming the option', () => {
    for (const bad of ['deflate', 'gzip:0', 'gzip:10', 'br:12', 'gzip,gzip', '', 'gzip:x']) {
      assert.throws(() => parseCompressionOption(bad, base), /--compression/, bad);
    }
  });
  it('ga4gh serve refuses a bad --compression or --compression-threshold in one line', () => {
    for (const args of [['--compression', 'zstd'], ['--compression', 'gzip:11'], ['--compression-threshold', '-1']]) {
      const r = runCli('serve', path.join(dir, 'none.sqlite'), '--port', '0', ...args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /--compression/);
    }
  });
});

describe('compressed replies over HTTP', () => {
  let standard: TestServer; // default settings
  let always: TestServer; // threshold 0: even the smallest reply is compressed
  let off: TestServer;

  before(async () => {
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, {});
    await loadVariantSet(registry, 'ds', [path.join(dir, '1kgPhase1')], { referenceset: 'NCBI37' });
    standard = await startTestServer(location);
    always = await startTestServer(location, { compression: { ...defaultCompression(), threshold: 0 } });
    off = await startTestServer(location, { compression: { ...defaultCompression(), codings: [] } });
  });

  it('a variant page in gzip and in brotli decompresses to the bytes of the uncompressed page', async () => {
    const plain = await raw(standard, 'POST', '/variants/search', {}, page);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    const variants = JSON.parse(plain.body.toString('utf8')).variants;
    assert.equal(variants.length, chr1Lines.length, 'every variant of the file');
    assert.ok(plain.body.length > defaultCompression().threshold, `${plain.body.length} bytes is above the threshold`);
    for (const coding of ['gzip', 'br']) {
      const r = await raw(standard, 'POST', '/variants/search', { 'accept-encoding': coding }, page);
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], coding);
      assert.equal(r.headers.vary, 'Accept-Encoding');
      assert.equal(r.headers['content-length'], undefined, 'streamed');
      assert.ok(r.body.length * 4 < plain.body.length, `${coding}: ${r.body.length} of ${plain.body.length} bytes`);
      assert.ok(decoded(r).equals(plain.body), `${coding} decompresses to the same bytes`);
    }
    // The same in the snake_case naming form.
    const snake = { variant_set_id: setId, reference_name: '1', start: 0, end: 0, page_size: 1000 };
    const plainSnake = await raw(standard, 'POST', '/variants/search', {}, snake);
    const gz = await raw(standard, 'POST', '/variants/search', { 'accept-encoding': 'gzip' }, snake);
    assert.ok(decoded(gz).equals(plainSnake.body));
  });

  it('a small record is sent as it is under the threshold, and compressed to the same bytes above it', async () => {
    const id = idOf('ds', 'vs', '1kgPhase1', firstSample);
    const plain = await raw(standard, 'GET', `/callsets/${id}`, {});
    assert.equal(plain.status, 200);
    assert.equal(JSON.parse(plain.body.toString('utf8')).name, firstSample);
    const small = await raw(standard, 'GET', `/callsets/${id}`, { 'accept-encoding': 'gzip, br' });
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(small.headers['content-length'], String(plain.body.length));
    assert.ok(small.body.equals(plain.body));
    for (const coding of ['gzip', 'br']) {
      const r = await raw(always, 'GET', `/callsets/${id}`, { 'accept-encoding': coding });
      assert.equal(r.headers['content-encoding'], coding);
      assert.equal(r.headers['content-length'], String(r.body.length));
      assert.ok(decoded(r).equals(plain.body), coding);
    }
    // A streamed reply that ends under the threshold (one variant, no calls) keeps its length too.
    const one = { ...page, pageSize: 1, callSetIds: [] };
    const plainOne = await raw(standard, 'POST', '/variants/search', {}, one);
    const r = await raw(standard, 'POST', '/variants/search', { 'accept-encoding': 'gzip' }, one);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.headers['content-length'], String(plainOne.body.length));
    assert.ok(r.body.equals(plainOne.body));
    const always1 = await raw(always, 'POST', '/variants/search', { 'accept-encoding': 'gzip' }, one);
    assert.equal(always1.headers['content-encoding'], 'gzip');
    assert.ok(decoded(always1).equals(plainOne.body));
  });

  it('answers without a coding when the client excludes them with q=0 or asks for identity', async () => {
    const plain = await raw(standard, 'POST', '/variants/search', {}, page);
    for (const header of ['identity', 'gzip;q=0, br;q=0', '*;q=0', 'identity;q=0, gzip;q=0, br;q=0', 'br;q=0, gzip;q=0.5, identity']) {
      const r = await raw(standard, 'POST', '/variants/search', { 'accept-encoding': header }, page);
      assert.equal(r.headers['content-encoding'], undefined, header);
      assert.ok(r.body.equals(plain.body), header);
    }
    const gz = await raw(standard, 'POST', '/variants/search', { 'accept-encoding': 'br;q=0, gzip;q=0.5, identity;q=0.1' }, page);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(decoded(gz).equals(plain.body));
  });

  it('leaves errors and HEAD as they were', async () => {
    const missing = `/callsets/${idOf('ds', 'vs', '1kgPhase1', 'nobody')}`;
    for (const server of [standard, always]) {
      const r = await raw(server, 'GET', missing, { 'accept-encoding': 'gzip, br' });
      assert.equal(r.status, 404);
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(JSON.parse(r.body.toString('utf8')).errorCode, 10);
      const bad = await raw(server, 'POST', '/variants/search', { 'accept-encoding': 'gzip' }, { ...page, start: -1 });
      assert.equal(bad.status, 400);
      assert.equal(bad.headers['content-encoding'], undefined);
      assert.match(JSON.parse(bad.body.toString('utf8')).message, /'start'/);
    }
    const id = idOf('ds', 'vs', '1kgPhase1', firstSample);
    const head = await raw(always, 'HEAD', `/callsets/${id}`, {});
    const headGzip = await raw(always, 'HEAD', `/callsets/${id}`, { 'accept-encoding': 'gzip' });
    assert.equal(headGzip.status, head.status);
    assert.equal(headGzip.headers['content-encoding'], undefined);
    assert.equal(headGzip.headers['content-length'], head.headers['content-length']);
    assert.equal(headGzip.body.length, 0);
  });

  it('with --compression off, answers as it is and without Vary', async () => {
    const r = await raw(off, 'POST', '/variants/search', { 'accept-encoding': 'gzip, br' }, page);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.headers.vary, undefined);
    const plain = await raw(standard, 'POST', '/variants/search', {}, page);
    assert.ok(r.body.equals(plain.body));
  });

  it('stops compressing when the client leaves, and goes on serving', async () => {
    await new Promise<void>((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(page));
      const req = http.request(
        standard.url + '/variants/search',
        { method: 'POST', headers: { 'accept-encoding': 'gzip', 'content-type': 'application/json', 'content-length': payload.length } },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(e)));
      req.end(payload);
    });
    const plain = await raw(standard, 'POST', '/variants/search', {}, page);
    const again = await raw(standard, 'POST', '/variants/search', { 'accept-encoding': 'gzip' }, page);
    assert.ok(decoded(again).equals(plain.body));
  });
});
