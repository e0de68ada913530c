/**
 * Beacon v2's framework under /beacon, over a registry made with the real CLI and a real server on a
 * loopback port: the informational endpoints, /beacon/datasets, the datasets' granularity as
 * `add-dataset --beacon-granularity` and `set-beacon-granularity` set it, and the error form. Every
 * answer is validated against the Beacon schemas (test/beacon-harness.ts).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { beaconClient, type BeaconClient } from './beacon-harness.js';
import { runCli, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir();
const registry = path.join(dir, 'registry.sqlite');
let server: TestServer;
let beacon: BeaconClient;

const cli = (...args: string[]) => {
  const r = runCli(...args);
  assert.equal(r.code, 0, r.stderr);
  return r;
};

type Listed = { name: string; description: string | null; beacon_granularity: string };

/** The datasets as `repo list --json` lists them: name -> description and beacon granularity. */
function listedDatasets(location = registry): Map<string, { description: string | null; granularity: string }> {
  const { datasets } = JSON.parse(cli('repo', 'list', location, '--json').stdout) as { datasets: Listed[] };
  return new Map(datasets.map((d) => [d.name, { description: d.description, granularity: d.beacon_granularity }]));
}

before(async () => {
  cli('repo', 'init', registry);
  cli('repo', 'add-dataset', registry, 'open', '--description', 'records for anyone', '--beacon-granularity', 'record');
  cli('repo', 'add-dataset', registry, 'counted', '--beacon-granularity', 'count');
  cli('repo', 'add-dataset', registry, 'closed');
  server = await startTestServer(registry, { options: { serviceId: 'org.example.test' } });
  beacon = beaconClient(server.url);
});

describe('beacon: granularity of datasets (CLI)', () => {
  it('add-dataset takes --beacon-granularity, boolean when not given; repo list shows it', () => {
    const listed = listedDatasets();
    assert.deepEqual(
      [...listed].map(([name, d]) => [name, d.granularity]),
      [
        ['closed', 'boolean'],
        ['counted', 'count'],
        ['open', 'record'],
      ],
    );
  });

  it('set-beacon-granularity changes it; a level or a dataset that does not exist is refused in one line', () => {
    const other = path.join(dir, 'other.sqlite');
    cli('repo', 'init', other);
    cli('repo', 'add-dataset', other, 'd');
    cli('repo', 'set-beacon-granularity', other, 'd', 'record');
    assert.equal(listedDatasets(other).get('d')?.granularity, 'record');
    for (const args of [
      ['set-beacon-granularity', other, 'd', 'everything'],
      ['set-beacon-granularity', other, 'missing', 'count'],
      ['add-dataset', other, 'e', '--beacon-granularity', 'records'],
    ]) {
      const r = runCli('repo', ...args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^ga4gh: /);
    }
    assert.match(runCli('repo', 'set-beacon-granularity', other, 'd', 'everything').stderr, /boolean, count, record/);
  });
});

describe('beacon: the framework endpoints', () => {
  it('/beacon/ and /beacon/info describe the beacon, its id the service id with .beacon', async () => {
    for (const p of ['/beacon', '/beacon/', '/beacon/info']) {
      const { status, body } = await beacon.get(p);
      assert.equal(status, 200);
      assert.equal(body.response.id, 'org.example.test.beacon');
      assert.equal(body.meta.beaconId, 'org.example.test.beacon');
      assert.equal(body.response.apiVersion, 'v2.1.1');
    }
  });

  it('/beacon/service-info is a GA4GH service-info of type beacon', async () => {
    const { status, body } = await beacon.get('/beacon/service-info');
    assert.equal(status, 200);
    assert.deepEqual(body.type, { group: 'org.ga4gh', artifact: 'beacon', version: 'v2.1.1' });
  });

  it('/beacon/configuration and /beacon/entry_types list the entry types served', async () => {
    const configuration = await beacon.get('/beacon/configuration');
    const entryTypes = await beacon.get('/beacon/entry_types');
    for (const answer of [configuration.body.response, entryTypes.body.response]) {
      assert.deepEqual(Object.keys(answer.entryTypes).sort(), ['biosample', 'dataset', 'genomicVariant', 'individual']);
    }
    assert.deepEqual(configuration.body.response.securityAttributes.securityLevels, ['PUBLIC']);
  });

  it('/beacon/map gives absolute URLs from the address the client used, and every lookup it declares is an endpoint', async () => {
    const { body } = await beacon.get('/beacon/map');
    const sets = body.response.endpointSets;
    assert.equal(sets.genomicVariantEndpoints.rootUrl, `${server.url}/beacon/g_variants`);
    const lookups = Object.values(sets).flatMap((s: any) => Object.values(s.endpoints).map((e: any) => e.url as string));
    assert.ok(lookups.includes(`${server.url}/beacon/individuals/{id}/g_variants`), lookups.join(' '));
    assert.ok(lookups.includes(`${server.url}/beacon/g_variants/{id}/biosamples`), lookups.join(' '));
  });
});

describe('beacon: /beacon/datasets', () => {
  it('lists the registered datasets, a dataset id being its name, with their descriptions', async () => {
    const listed = listedDatasets();
    const { status, body } = await beacon.get('/beacon/datasets');
    assert.equal(status, 200);
    assert.equal(body.meta.returnedGranularity, 'record');
    assert.deepEqual(
      body.response.collections.map((d: any) => [d.id, d.name, d.description]),
      [...listed].map(([name, d]) => [name, name, d.description ?? undefined]),
    );
    assert.equal(body.responseSummary.numTotalResults, listed.size);
  });

  it('one dataset by id, by GET and POST; an unknown one is a 404 in the error form', async () => {
    const got = await beacon.get('/beacon/datasets/open');
    const posted = await beacon.post('/beacon/datasets/open', { meta: { apiVersion: 'v2.0' }, query: {} });
    for (const answer of [got, posted]) assert.deepEqual(answer.body.response.collections.map((d: any) => d.id), ['open']);
    const missing = await beacon.get('/beacon/datasets/nope');
    assert.equal(missing.status, 404);
    assert.match(missing.body.error.errorMessage, /nope/);
  });

  it('pages with skip (in pages) and limit', async () => {
    const all = (await beacon.get('/beacon/datasets')).body.response.collections.map((d: any) => d.id);
    const page = await beacon.get('/beacon/datasets?limit=1&skip=1');
    assert.deepEqual(page.body.response.collections.map((d: any) => d.id), all.slice(1, 2));
    const posted = await beacon.post('/beacon/datasets', { meta: { apiVersion: 'v2.0' }, query: { pagination: { skip: 0, limit: 2 } } });
    assert.deepEqual(posted.body.response.collections.map((d: any) => d.id), all.slice(0, 2));
  });

  it('answers whether datasets exist and how many when that is what is asked', async () => {
    const count = await beacon.post('/beacon/datasets', { meta: { apiVersion: 'v2.0' }, query: { requestedGranularity: 'count' } });
    assert.equal(count.body.meta.returnedGranularity, 'count');
    assert.equal(count.body.responseSummary.numTotalResults, listedDatasets().size);
    const boolean = await beacon.get('/beacon/datasets?requestedGranularity=boolean');
    assert.deepEqual(boolean.body.responseSummary, { exists: true });
  });
});

describe('beacon: bad input is a 400 in the error form, naming what was wrong', () => {
  const cases: Array<[string, () => Promise<{ status: number; body: any }>, RegExp]> = [
    ['an unknown entry type', () => beacon.get('/beacon/variants'), /unknown entry type 'variants'/],
    ['an unknown entry type, by POST', () => beacon.post('/beacon/runs', {}), /unknown entry type 'runs'/],
    ['an unknown lookup', () => beacon.get('/beacon/datasets/open/runs'), /unknown entry type 'runs'/],
    ['an unknown parameter', () => beacon.get('/beacon/datasets?colour=red'), /unknown parameter 'colour'/],
    ['a parameter given twice', () => beacon.get('/beacon/datasets?limit=1&limit=2'), /'limit' is given twice/],
    ['skip not a number', () => beacon.get('/beacon/datasets?skip=two'), /skip must be a non-negative integer/],
    ['a granularity that does not exist', () => beacon.get('/beacon/datasets?requestedGranularity=all'), /requestedGranularity/],
    ['a body that is not JSON', () => beacon.post('/beacon/datasets', '{"meta": '), /not valid JSON/],
    ['a body field that does not exist', () => beacon.post('/beacon/datasets', { meta: {}, querry: {} }), /no field 'querry'/],
    ['pagination that is not an object', () => beacon.post('/beacon/datasets', { query: { pagination: 3 } }), /pagination must be a JSON object/],
    ['includeResultsetResponses that does not exist', () => beacon.post('/beacon/datasets', { query: { includeResultsetResponses: 'SOME' } }), /includeResultsetResponses/],
  ];
  for (const [what, ask, message] of cases) {
    it(what, async () => {
      const { status, body } = await ask();
      assert.equal(status, 400);
      assert.equal(body.error.errorCode, 400);
      assert.match(body.error.errorMessage, message);
    });
  }

  it('a POST with query parameters', async () => {
    const res = await fetch(`${server.url}/beacon/datasets?limit=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = await res.json();
    assert.equal(res.status, 400);
    assert.match(body.error.errorMessage, /limit/);
  });

  it('a method the path does not take is a 405, refused before any Beacon route is chosen', async () => {
    const res = await fetch(`${server.url}/beacon/info`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
  });
});
