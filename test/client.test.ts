/**
 * The typed client, imported as a user would ('ga4gh-server/client'), against a real server over the
 * compliance data: paging with async iterators, typed errors, retries honouring Retry-After, and the
 * generated part kept in step with the server's OpenAPI document.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { Ga4ghClient, Ga4ghError, retryAfterMs } from 'ga4gh-server/client';
import { CLIENT_API_FILE, clientSource } from '../scripts/generate-client.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { atEnd, copyFixture, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
const vcf = copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir);
const bases = fs.readFileSync(fasta, 'utf8').split('\n').slice(1).join('').trim().toUpperCase();
const vcfLines = fs.readFileSync(vcf, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('\t'));

let server: TestServer;
let client: Ga4ghClient;
let variantSetId: string;

before(async () => {
  const { location, registry } = await newRegistry(dir);
  await addDataset(registry, 'demo');
  await loadReferenceSet(registry, fasta, { name: 'hg37' });
  await loadVariantSet(registry, 'demo', [vcf], { referenceset: 'hg37', name: 'brca1' });
  server = await startTestServer(location);
  client = new Ga4ghClient(server.url);
  const [dataset] = await client.searchDatasets().all();
  variantSetId = (await client.searchVariantSets({ datasetId: dataset.id! }).all())[0].id!;
});

describe('the typed client', () => {
  it('is generated from the current OpenAPI document (npm run generate-client)', async () => {
    const document = (await server.get('/openapi.json')).json;
    assert.equal(fs.readFileSync(CLIENT_API_FILE, 'utf8'), clientSource(document));
  });

  it('iterates over every record of a search across pages with for await', async () => {
    const starts: number[] = [];
    for await (const variant of client.searchVariants({ variantSetId, referenceName: 'ref_brca1', pageSize: 300 })) {
      starts.push(variant.start!);
    }
    assert.deepEqual(starts, vcfLines.map((l) => Number(l[1]) - 1));
    let pages = 0;
    for await (const page of client.searchVariants({ variantSetId, referenceName: 'ref_brca1', pageSize: 500, callSetIds: [] }).pages()) {
      pages++;
      assert.ok(page.variants.length <= 500);
    }
    assert.equal(pages, Math.ceil(vcfLines.length / 500));
  });

  it('answers the records the raw API answers, typed', async () => {
    const first = (await client.searchVariants({ variantSetId, referenceName: 'ref_brca1', pageSize: 1 }).page()).variants[0];
    assert.deepEqual(first, (await server.post('/variants/search', { variantSetId, referenceName: 'ref_brca1', pageSize: 1 })).json.variants[0]);
    assert.deepEqual(await client.getVariant(first.id!), first);
    const samples = first.calls!.map((c) => c.callSetName);
    assert.deepEqual(samples, ['HG00096', 'HG00099', 'HG00101']);
    const [reference] = await client.searchReferences({ referenceSetId: (await client.searchReferenceSets().all())[0].id }).all();
    assert.equal(reference.length, bases.length);
    const page = await client.listReferenceBases(reference.id!, { start: 1000, end: 1100 });
    assert.equal(page.sequence, bases.slice(1000, 1100));
    assert.equal(page.offset, 1000);
  });

  it('throws Ga4ghError with the status and errorCode of the answer', async () => {
    const raw = await server.get('/variantsets/WyJubyJd');
    await assert.rejects(client.getVariantSet('WyJubyJd'), (e: unknown) => {
      assert.ok(e instanceof Ga4ghError);
      assert.equal(e.status, 404);
      assert.equal(e.errorCode, raw.json.errorCode);
      assert.equal(e.message, raw.json.message);
      return true;
    });
    const bad = await server.post('/variants/search', { variantSetId, referenceName: 'ref_brca1', start: -5 });
    await assert.rejects(client.searchVariants({ variantSetId, referenceName: 'ref_brca1', start: -5 }).all(), (e: Ga4ghError) => {
      assert.equal(e.status, 400);
      assert.equal(e.errorCode, bad.json.errorCode);
      return true;
    });
  });

  it('retries on 503 and 429, waiting as long as Retry-After says', async () => {
    // A proxy in front of the server that sheds the first two requests.
    let seen = 0;
    const proxy = http.createServer(async (req, res) => {
      seen++;
      if (seen === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end('{"errorCode":22,"message":"busy"}');
        return;
      }
      if (seen === 2) {
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end('{"errorCode":16,"message":"slow down"}');
        return;
      }
      const upstream = await fetch(server.url + req.url, { method: req.method });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    atEnd(() => new Promise((resolve) => proxy.close(resolve)));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const started = Date.now();
    const info = await new Ga4ghClient(url, { backoffMs: 10 }).getInfo();
    assert.equal(info.protocolVersion, '0.6.0a10');
    assert.equal(seen, 3);
    assert.ok(Date.now() - started >= 1000, `waited ${Date.now() - started} ms`);
    // With retries off, the shedding answer is the error.
    seen = 0;
    await assert.rejects(new Ga4ghClient(url, { retries: 0 }).getInfo(), (e: Ga4ghError) => e.status === 503 && e.errorCode === 22);
  });

  it('reads Retry-After as seconds or as a date', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6000);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(null), undefined);
  });
});
