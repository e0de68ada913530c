/**
 * Replicas: two servers on different loopback ports over one PostgreSQL registry, as behind a load
 * balancer. A peer announced to one is listed by the other; a page token written by one is continued by
 * the other; ids are the same. PostgreSQL only (a shared SQLite file is not a deployment this supports).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { backends } from './backends.js';
import { newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';
import { fetchedById, fillRegistry, fixtureFiles, pagesAcross, searches } from './scale-fixture.js';

const postgres = backends.find((b) => b.name === 'postgres')!;

describe('two replicas on one PostgreSQL registry', { skip: postgres.skip }, () => {
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    const dir = tempDir();
    const { location, registry } = await newRegistry(await postgres.newLocation(dir));
    await fillRegistry(registry, fixtureFiles(dir));
    const options = { peerPolicy: 'open', announceRate: 1000 };
    a = await startTestServer(location, { options });
    b = await startTestServer(location, { options });
    assert.notEqual(new URL(a.url).port, new URL(b.url).port);
  });

  it('list a peer announced to either of them', async () => {
    const listed = async (server: TestServer) => (await server.post('/peers/list', {})).json.peers.map((p: any) => p.url);
    assert.deepEqual(await listed(b), []);
    assert.equal((await a.post('/peers/announce', { peer: { url: 'https://one.example.org' } })).status, 200);
    assert.deepEqual(await listed(b), ['https://one.example.org']);
    assert.equal((await b.post('/announce', { peer: { url: 'https://two.example.org/ga4gh' } })).status, 200);
    assert.deepEqual(await listed(a), ['https://one.example.org', 'https://two.example.org/ga4gh']);
    assert.deepEqual(await listed(b), await listed(a));
  });

  it('continue each other\'s page tokens, page for page, with the same ids', async () => {
    for (const search of searches) {
      const alone = await pagesAcross([a], search);
      const alternating = await pagesAcross([a, b], search);
      const fromB = await pagesAcross([b, a], search);
      assert.deepEqual(alternating, alone, search.path);
      assert.deepEqual(fromB, alone, search.path);
      if (search.list !== 'datasets' && search.list !== 'rnaQuantificationSets') {
        assert.ok(alone.length > 1, `${search.path} ${JSON.stringify(search.request)} should take several pages`);
      }
    }
  });

  it('fetch by id on one what the other listed', async () => {
    for (const search of searches.filter((s) => s.get)) {
      const pages = await pagesAcross([a], search);
      const listed = pages.flatMap((p) => p[search.list]);
      assert.ok(listed.length > 0, search.path);
      assert.deepEqual(await fetchedById(b, search, pages), await fetchedById(a, search, pages), search.path);
      // GET returns what the search listed (the variant search above leaves calls out: callSetIds []).
      if (search.list !== 'variants') assert.deepEqual(await fetchedById(b, search, pages), listed, search.path);
    }
  });
});
