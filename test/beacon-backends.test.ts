/**
 * Beacon on PostgreSQL: the fixture of test/beacon-fixture.ts registered on both backends, and the
 * same requests (collections, queries of every kind, filters with and without descendants, entries
 * by id, lookups, filtering terms, refusals) answered alike by each. The SQLite answers are checked
 * against bcftools and the registered files in the other Beacon tests; every answer here is
 * validated against the Beacon schemas by the harness.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { backends } from './backends.js';
import { beaconFixture, type BeaconFixture } from './beacon-fixture.js';
import { idOf } from './helpers.js';

const postgres = backends.find((b) => b.name === 'postgres')!;

const post = (query: Record<string, unknown>) => ({ meta: { apiVersion: 'v2.0' }, query: { includeResultsetResponses: 'ALL', ...query } });

/** Requests whose answers do not depend on the backend: [method, path, body]. */
const REQUESTS: Array<[string, string, unknown?]> = [
  ['GET', '/beacon/datasets'],
  ['GET', '/beacon/filtering_terms'],
  ['GET', '/beacon/g_variants?referenceName=1&start=10176&referenceBases=A&alternateBases=AC&requestedGranularity=record'],
  ['GET', '/beacon/g_variants?referenceName=1&start=0&end=20000&variantType=SNP&requestedGranularity=count'],
  ['GET', '/beacon/g_variants?referenceName=1&start=10000,10200&end=10150,10300&requestedGranularity=count'],
  ['GET', '/beacon/g_variants?geneId=WASH7P&requestedGranularity=count'],
  ['GET', '/beacon/g_variants?referenceName=1&start=10000&end=11000&assemblyId=GRCh37&requestedGranularity=boolean'],
  ['POST', '/beacon/individuals', post({ filters: [{ id: 'DOID:1781', includeDescendantTerms: true }] })],
  ['POST', '/beacon/individuals', post({ filters: [{ id: 'DOID:1781', includeDescendantTerms: false }] })],
  ['POST', '/beacon/biosamples', post({ filters: [{ id: 'UBERON:0000179', includeDescendantTerms: true }] })],
  ['POST', '/beacon/biosamples', post({ filters: [{ id: 'NOT:0000001' }] })],
  ['GET', `/beacon/individuals/${idOf('compliance', 'ind', 'HG00096')}`],
  ['GET', `/beacon/individuals/${idOf('compliance', 'ind', 'HG00099')}/g_variants?requestedGranularity=count`],
  ['GET', `/beacon/biosamples/${idOf('compliance', 'bs', 'HG00096')}`],
  ['GET', '/beacon/g_variants?start=16049'],
  ['GET', '/beacon/nothing_here'],
];

/** An answer with what differs between two servers left out: registration times, and each server's own origin in URLs. */
function comparable(body: any, origin: string): unknown {
  return JSON.parse(JSON.stringify(body).replaceAll(origin, 'ORIGIN'), (key, value) => (key === 'createDateTime' || key === 'updateDateTime' ? undefined : value));
}
const originOf = (f: BeaconFixture) => new URL(f.server.url).origin;

describe('Beacon on PostgreSQL answers as on SQLite', { skip: postgres.skip }, () => {
  let sqlite: BeaconFixture;
  let pg: BeaconFixture;

  before(async () => {
    sqlite = await beaconFixture();
    pg = await beaconFixture(() => postgres.newLocation(''));
  });

  for (const [method, pathName, body] of REQUESTS) {
    it(`${method} ${pathName.slice(0, 90)}`, async () => {
      const ask = (f: BeaconFixture) => (method === 'GET' ? f.beacon.get(pathName) : f.beacon.post(pathName, body));
      const [a, b] = await Promise.all([ask(sqlite), ask(pg)]);
      assert.equal(b.status, a.status, JSON.stringify(b.body).slice(0, 400));
      assert.deepEqual(comparable(b.body, originOf(pg)), comparable(a.body, originOf(sqlite)));
    });
  }

  it('the set of requests reaches records, counts and refusals', async () => {
    const statuses = await Promise.all(REQUESTS.map(([m, p, b]) => (m === 'GET' ? sqlite.beacon.get(p) : sqlite.beacon.post(p, b)).then((r) => r.status)));
    assert.ok(statuses.includes(200) && statuses.some((s) => s >= 400), String(statuses));
  });
});
