/**
 * What the two real clients of this protocol need on the wire (the Python client with its strict
 * protobuf parser and `?key=`, the R client that fails on empty lists and writes padded ids), checked
 * on a real server over a registry holding every area's sample data.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet } from '../src/areas/rna/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { backends } from './backends.js';
import { copyFixture, idOf, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
const ncbi37 = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', dir);
const phase1 = copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase1', dir);
const kallisto = copyFixture('ga4gh-server/abundance.trimmed.txt', dir);

// A VCF with ALT '.' (a reference-only site) and ID '.', made from a 1000 Genomes line of the sample.
const sample = zlib.gunzipSync(fs.readFileSync(path.join(phase1, 'chr1.vcf.gz'))).toString('utf8');
const header = sample.split('\n').filter((l) => l.startsWith('#'));
const firstLine = sample.split('\n').find((l) => l && !l.startsWith('#'))!.split('\t');
const refOnly = [firstLine[0], firstLine[1], '.', firstLine[3], '.', ...firstLine.slice(5)].join('\t');
const sites = path.join(dir, 'sites.vcf');
fs.writeFileSync(sites, [...header, refOnly, ''].join('\n'));


/** Paths of every empty list in a JSON value, the top-level result list of a search excepted. */
function emptyLists(value: unknown, at = '', top = true): string[] {
  if (Array.isArray(value)) {
    if (value.length === 0 && !top) return [at];
    return value.flatMap((v, i) => emptyLists(v, `${at}[${i}]`, false));
  }
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => emptyLists(v, at ? `${at}.${k}` : k, top && !at && Array.isArray(v)));
  }
  return [];
}

for (const backend of backends) {
  describe(`real clients, on ${backend.name}`, { skip: backend.skip }, () => {
    let server: TestServer;
    const datasetId = idOf('ds');
    const variantSetId = idOf('ds', 'vs', 'chr1');

    before(async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      await addDataset(registry, 'ds');
      await loadReferenceSet(registry, ncbi37, {});
      await loadVariantSet(registry, 'ds', [path.join(phase1, 'chr1.vcf.gz')], { referenceset: 'NCBI37', name: 'chr1' });
      await loadVariantSet(registry, 'ds', [sites], { referenceset: 'NCBI37', name: 'sites' });
      await addQuantificationSet(registry, 'ds', 'rna');
      await loadQuantification(registry, 'ds', 'rna', kallisto, {});
      server = await startTestServer(location);
    });

    describe('empty lists are left out of records (the R client fails on "names": [])', () => {
      it('in variants: names for ID ".", alternateBases for ALT ".", calls when callSetIds is []', async () => {
        const res = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'sites'), referenceName: firstLine[0] });
        assert.equal(res.status, 200);
        const [v] = res.json.variants;
        assert.deepEqual([v.start, v.referenceBases], [Number(firstLine[1]) - 1, firstLine[3]]);
        assert.ok(!('names' in v) && !('alternateBases' in v), JSON.stringify(v));
        assert.ok(!res.text.includes('[]'), res.text.slice(0, 300));
        const noCalls = await server.post('/variants/search', { variantSetId, referenceName: '1', callSetIds: [], pageSize: 50 });
        assert.ok(noCalls.json.variants.length > 0);
        assert.deepEqual(emptyLists(noCalls.json), []);
        assert.ok(noCalls.json.variants.every((x: any) => !('calls' in x)));
        const byId = await server.get(`/variants/${noCalls.json.variants[0].id}`);
        assert.deepEqual(emptyLists(byId.json), []);
      });

      it('in every other record, while an empty search result stays []', async () => {
        const replies = [
          await server.post('/referencesets/search', {}),
          await server.post('/references/search', { referenceSetId: idOf('NCBI37') }),
          await server.post('/variantsets/search', { datasetId }),
          await server.post('/callsets/search', { variantSetId }),
          await server.post('/rnaquantificationsets/search', { datasetId }),
          await server.post('/rnaquantifications/search', { rnaQuantificationSetId: idOf('ds', 'rna') }),
          await server.post('/datasets/search', {}),
        ];
        for (const reply of replies) {
          assert.equal(reply.status, 200, reply.text);
          assert.deepEqual(emptyLists(reply.json), [], reply.text.slice(0, 200));
        }
        // The sample has no accessions, feature sets or read groups: those lists are absent.
        assert.ok(replies[1].json.references.every((r: any) => !('sourceAccessions' in r)));
        const quantification = replies[5].json.rnaQuantifications[0];
        assert.ok(!('featureSetIds' in quantification) && !('readGroupIds' in quantification), JSON.stringify(quantification));
        const none = await server.post('/variants/search', { variantSetId, referenceName: 'nope' });
        assert.deepEqual([none.status, none.text], [200, '{"variants":[]}']);
      });
    });

    describe('?key= (the Python client adds ?key=invalid to every request)', () => {
      it('is accepted and ignored on every GET and POST', async () => {
        const get = await server.get(`/datasets/${datasetId}?key=invalid`);
        assert.deepEqual([get.status, get.json.id], [200, datasetId]);
        const bases = await server.get(`/references/${idOf('NCBI37', '1')}/bases?start=0&end=5&key=invalid`);
        assert.deepEqual([bases.status, bases.json.sequence.length], [200, 5]);
        const post = await server.post('/datasets/search?key=invalid', {});
        assert.deepEqual([post.status, post.json.datasets.length], [200, 1]);
        // A GET that finds nothing still says so, rather than hiding behind a 400.
        const missing = await server.get(`/readgroupsets/${idOf('ds', 'rgs', 'x')}?key=invalid`);
        assert.equal(missing.status, 404);
      });

      it('while any other query parameter is a 400 naming it', async () => {
        const get = await server.get(`/datasets/${datasetId}?key=invalid&limit=3`);
        assert.equal(get.status, 400);
        assert.match(get.json.message, /takes no query parameters/);
        const bases = await server.get(`/references/${idOf('NCBI37', '1')}/bases?start=0&limit=3`);
        assert.equal(bases.status, 400);
        assert.match(bases.json.message, /'limit'/);
        const post = await server.post('/datasets/search?limit=3', {});
        assert.equal(post.status, 400);
        assert.match(post.json.message, /'limit'/);
      });
    });

    describe('ids as scripts spell them', () => {
      // base64 as Python's base64.b64encode and R's base64enc write it: standard alphabet, padded.
      const padded = (names: string[]) => Buffer.from(JSON.stringify(names)).toString('base64');

      it('resolves a padded id in a path and in a body, answering with the canonical id', async () => {
        assert.equal(padded(['NCBI37']), 'WyJOQ0JJMzciXQ==');
        const set = await server.get(`/referencesets/${padded(['NCBI37'])}`);
        assert.deepEqual([set.status, set.json.id], [200, idOf('NCBI37')]);
        const ref = await server.get(`/references/${encodeURIComponent(padded(['NCBI37', '1']))}`);
        assert.deepEqual([ref.status, ref.json.id], [200, idOf('NCBI37', '1')]);
        const sets = await server.post('/variantsets/search', { datasetId: padded(['ds']) });
        assert.deepEqual(sets.json.variantSets.map((s: any) => s.id), [variantSetId, idOf('ds', 'vs', 'sites')]);
        const unknown = await server.get(`/referencesets/${padded(['nope'])}`);
        assert.equal(unknown.status, 404);
      });
    });

    describe('errors in the naming form of the request', () => {
      it('name a body field as the request spelled it', async () => {
        const res = await server.post('/datasets/search', { page_size: 'x' });
        assert.equal(res.status, 400);
        assert.deepEqual(Object.keys(res.json).sort(), ['error_code', 'message']);
        assert.match(res.json.message, /'page_size'/);
        assert.doesNotMatch(res.json.message, /pageSize/);
        const variants = await server.post('/variants/search', { variant_set_id: variantSetId, reference_name: '1', start: 10, end: 5 });
        assert.match(variants.json.message, /field 'end' \(5\) must not be less than field 'start'/);
        const negative = await server.post('/variants/search', { variant_set_id: variantSetId, reference_name: '1', page_size: -1 });
        assert.deepEqual([negative.status, /'page_size'/.test(negative.json.message), negative.json.error_code], [400, true, 1]);
        const camel = await server.post('/datasets/search', { pageSize: 'x' });
        assert.match(camel.json.message, /'pageSize'/);
      });

      it('answer a snake_case query string in snake_case, a duplicated parameter too', async () => {
        const base = `/references/${idOf('NCBI37', '1')}/bases`;
        const twice = await server.get(`${base}?start=1&start=2&page_token=x`);
        assert.equal(twice.status, 400);
        assert.deepEqual(Object.keys(twice.json).sort(), ['error_code', 'message']);
        const badToken = await server.get(`${base}?start=1&page_token=garbage`);
        assert.deepEqual(Object.keys(badToken.json).sort(), ['error_code', 'message']);
        assert.match(badToken.json.message, /'page_token'/);
        const camel = await server.get(`${base}?start=1&pageToken=garbage`);
        assert.match(camel.json.message, /'pageToken'/);
      });
    });

    describe('HEAD (uptime checkers use it)', () => {
      it('answers on every GET endpoint with the GET status and headers, and no body', async () => {
        for (const p of [
          `/datasets/${datasetId}`,
          `/variantsets/${variantSetId}`,
          `/references/${idOf('NCBI37', '1')}/bases?start=0&end=10`,
          '/info',
          `/datasets/${idOf('nope')}`,
          `/readgroupsets/${idOf('ds', 'rgs', 'x')}`,
        ]) {
          const get = await fetch(server.url + p);
          const getBody = await get.text();
          const head = await fetch(server.url + p, { method: 'HEAD' });
          assert.equal(head.status, get.status, p);
          assert.equal(await head.text(), '', p);
          assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), p);
          if (get.headers.get('content-length')) assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)), p);
        }
        const onPost = await fetch(server.url + '/datasets/search', { method: 'HEAD' });
        assert.equal(onPost.status, 405);
        const wrong = await fetch(`${server.url}/datasets/${datasetId}`, { method: 'DELETE' });
        assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
      });
    });
  });
}

describe('the access log', () => {
  it('says who asked, the status, the bytes and the time of every request (none for HEAD, whose body is not sent)', async () => {
    const { location } = await newRegistry(dir);
    const server = await startTestServer(location, { accessLog: true });
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    (process.stderr as any).write = (chunk: string | Uint8Array, ...rest: any[]) => {
      lines.push(String(chunk));
      return write(chunk as any, ...rest);
    };
    let body: string;
    try {
      body = (await server.post('/datasets/search', {})).text;
      await server.get(`/datasets/${idOf('nope')}`);
      const head = await fetch(server.url + '/info', { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.ok(Number(head.headers.get('content-length')) > 0, 'the length of the body a GET would have');
    } finally {
      (process.stderr as any).write = write;
    }
    const [ok, missing] = lines.filter((l) => / (POST|GET) \/datasets/.test(l));
    assert.match(ok, new RegExp(`^\\S+ 127\\.0\\.0\\.1 POST /datasets/search 200 ${Buffer.byteLength(body)}B [\\d.]+ms - \\S+\\n$`));
    assert.match(missing, /^\S+ 127\.0\.0\.1 GET \/datasets\/\S+ 404 \d+B [\d.]+ms - nope\n$/);
    assert.match(lines.find((l) => / HEAD \/info /.test(l)) ?? '', /^\S+ 127\.0\.0\.1 HEAD \/info 200 0B [\d.]+ms - -\n$/);
  });
});
