/**
 * The access policy enforced in the routes: a real server with a policy file, a real registry with
 * variant sets in an open dataset and in a controlled one, and a test issuer signing tokens and visas
 * here. For each kind of route (0.6.0a10 listing, get by id, dataset-scoped search; htsget tickets and
 * their data URLs; refget), each kind of caller: anonymous, authenticated without a grant, granted by
 * identity, group, visa and key; refused credentials answered 401 in each interface's error form; a
 * hidden dataset answering what an unknown id answers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../src/access/keys.js';
import { addIndividualFromFile } from '../src/areas/biometadata/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { startServer } from '../src/app.js';
import { defaultServerConfig } from '../src/config.js';
import { TestIssuer } from './access-issuer.js';
import { chromiumMissing, launchChromium } from './chromium.js';
import { addHeaderReferenceSet } from './htsget-fixture.js';
import { atEnd, idOf, newRegistry, tempDir, TESTDATA, toResult, type HttpResult } from './helpers.js';

const dir = tempDir('ga4gh-access-routes-');
const VCF = path.join(TESTDATA, 'htsget', 'spec-v4.3.vcf.gz');
/** Large enough that a ticket names byte ranges of it (a small file is given inline). */
const BAM = path.join(TESTDATA, 'htsget', 'htsnexus_test_NA12878.bam');
const COHORT_URL = 'https://example.org/datasets/cohort';

const login = await TestIssuer.start();
const visas = await TestIssuer.start();
const pipeline = await newApiKey();

const POLICY = `
issuers:
  - { issuer: ${login.url}, jwks: ${login.jwksUrl}, audience: ga4gh-server }
visas:
  - { issuer: ${visas.url}, jwks: ${visas.jwksUrl} }
datasets:
  cohort:
    anonymous: none
    authenticated: count
    url: ${COHORT_URL}
    grants:
      - { issuer: ${login.url}, subject: alice, level: data }
      - { group: cohort-readers, level: record }
      - { visa: true, level: data }
default: { anonymous: data, authenticated: data }
keys:
  - { name: pipeline, hash: "${pipeline.hash}", datasets: { cohort: record } }
`;

/** Both datasets hold a variant set and a read group set of the same files, by the same names. */
const setId = (dataset: string) => idOf(dataset, 'vs', 'calls');
const readsId = (dataset: string) => idOf(dataset, 'rgs', 'reads');
const INDIVIDUALS = { cohort: ['c1', 'c2', 'c3'], open: ['o1', 'o2'] };
let url: string;
/** The same registry and policy served with page workers: threads outside the request's access context. */
let workersUrl: string;
let log = '';

before(async () => {
  const { location, registry } = await newRegistry(dir);
  await addHeaderReferenceSet(location, 'spec', VCF);
  // Beacon answers records of both; of a third, open to all by the policy, Beacon says only whether.
  await addDataset(registry, 'open', undefined, undefined, 'record');
  await addDataset(registry, 'cohort', undefined, undefined, 'record');
  await addDataset(registry, 'capped', undefined, undefined, 'boolean');
  await loadVariantSet(registry, 'capped', [VCF], { referenceset: 'spec', name: 'calls' });
  await addHeaderReferenceSet(location, 'hs37d5', BAM);
  for (const dataset of ['open', 'cohort']) {
    await loadVariantSet(registry, dataset, [VCF], { referenceset: 'spec', name: 'calls' });
    await loadReadGroupSet(registry, dataset, BAM, { referenceset: 'hs37d5', name: 'reads' });
  }
  // Searches without a datasetId span every dataset: the hidden dataset's individuals sort first.
  for (const [dataset, names] of Object.entries(INDIVIDUALS)) {
    for (const name of names) {
      const file = path.join(dir, `${dataset}-${name}.json`);
      fs.writeFileSync(file, JSON.stringify({ name }));
      await addIndividualFromFile(registry, dataset, file);
    }
  }
  await registry.close();
  const policyFile = path.join(dir, 'policy.yaml');
  fs.writeFileSync(policyFile, POLICY);
  // The access log goes to stderr: kept here to read who read what.
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    log += chunk.toString();
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  atEnd(() => (process.stderr.write = write));
  const config = defaultServerConfig();
  const server = await startServer(location, { ...config, port: 0, pageWorkers: 0, accessLog: true, options: { ...config.options, accessPolicy: policyFile } });
  atEnd(() => server.close());
  url = server.url;
  const withWorkers = await startServer(location, { ...config, port: 0, pageWorkers: 1, options: { ...config.options, accessPolicy: policyFile } });
  atEnd(() => withWorkers.close());
  workersUrl = withWorkers.url;
});
after(async () => {
  await login.stop();
  await visas.stop();
});

/** Plain fetch: the contract checker of startTestServer does not know 401 answers yet. */
async function call(method: 'GET' | 'POST', p: string, headers: Record<string, string> = {}, body?: unknown, server = url): Promise<HttpResult> {
  const init = body === undefined ? { method, headers } : { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
  return toResult(await fetch(server + p, init));
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The callers of the tests, each with the level the policy above gives them for `cohort`. */
async function callers(): Promise<Array<{ who: string; headers: Record<string, string>; level: string }>> {
  const visa = await visas.visa('dave', { type: 'ControlledAccessGrants', value: COHORT_URL });
  return [
    { who: 'anonymous', headers: {}, level: 'none' },
    { who: 'authenticated, not granted', headers: bearer(await login.token('bob')), level: 'count' },
    { who: 'a group grant', headers: bearer(await login.token('carol', { groups: ['cohort-readers'] })), level: 'record' },
    { who: 'an identity grant', headers: bearer(await login.token('alice')), level: 'data' },
    { who: 'a visa grant', headers: bearer(await login.token('dave', { ga4gh_passport_v1: [visa] })), level: 'data' },
    { who: 'a key (Bearer)', headers: bearer(pipeline.key), level: 'record' },
  ];
}

const RANK = ['none', 'boolean', 'count', 'record', 'data'];
const atLeast = (level: string, needed: string) => RANK.indexOf(level) >= RANK.indexOf(needed);

/** The body with the id it names made neutral: a hidden id must answer what an unknown id answers. */
const withoutId = (text: string, id: string) => text.split(id).join('ID');

describe('access policy in the routes', () => {
  it('refused credentials answer 401 with the bearer challenge, in each interface\'s error form, and the log says why', async () => {
    const expired = await login.token('alice', { exp: Math.floor(Date.now() / 1000) - 3600 });
    const forms: Array<[string, 'GET' | 'POST', unknown, (json: any) => void]> = [
      ['/datasets/search', 'POST', {}, (j) => assert.equal(typeof j.errorCode, 'number')],
      [`/htsget/variants/${setId('open')}`, 'GET', undefined, (j) => assert.equal(j.htsget.error, 'InvalidAuthentication')],
      ['/refget/sequence/service-info', 'GET', undefined, (j) => assert.equal(j.error, 'Unauthorized')],
      ['/beacon/datasets', 'GET', undefined, (j) => assert.equal(j.error.errorCode, 401)],
    ];
    for (const [p, method, body, form] of forms) {
      for (const headers of [bearer(expired), bearer('ga4gh_notakeyofthisserver'), { authorization: 'Basic YWxpY2U6c2VjcmV0' }]) {
        const r = await call(method, p, headers, body);
        assert.equal(r.status, 401, `${p}: ${r.text}`);
        assert.equal(r.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
        form(r.json);
      }
    }
    assert.match(log, /credentials refused: /);
    assert.ok(!log.includes(expired.split('.')[2]), 'the log holds no token');
  });

  it('/datasets/search lists the datasets each caller may read records of', async () => {
    for (const { who, headers, level } of await callers()) {
      const r = await call('POST', '/datasets/search', headers, {});
      assert.equal(r.status, 200, r.text);
      const names = r.json.datasets.map((d: { name: string }) => d.name).sort();
      assert.deepEqual(names, atLeast(level, 'record') ? ['capped', 'cohort', 'open'] : ['capped', 'open'], who);
    }
    // Pages stay full when hidden datasets fall between them.
    const first = await call('POST', '/datasets/search', {}, { pageSize: 1 });
    const second = await call('POST', '/datasets/search', {}, { pageSize: 1, pageToken: first.json.nextPageToken });
    assert.deepEqual([...first.json.datasets, ...second.json.datasets].map((d: { name: string }) => d.name), ['capped', 'open']);
    assert.equal(second.json.nextPageToken, undefined);
  });

  it('searches across every dataset leave out the rows of datasets below record, pages kept full', async () => {
    for (const { who, headers, level } of await callers()) {
      const names: string[] = [];
      let pages = 0;
      for (let token: string | undefined; pages === 0 || token !== undefined; pages++) {
        const r = await call('POST', '/individuals/search', headers, { pageSize: 1, ...(token ? { pageToken: token } : {}) });
        assert.equal(r.status, 200, r.text);
        names.push(...r.json.individuals.map((i: { name: string }) => i.name));
        token = r.json.nextPageToken;
      }
      const expected = [...(atLeast(level, 'record') ? INDIVIDUALS.cohort : []), ...INDIVIDUALS.open];
      assert.deepEqual(names, expected, who);
      assert.equal(pages, expected.length, `${who}: one individual a page, no empty page`);
    }
  });

  it('gets by id and dataset-scoped searches: a dataset below record answers as an unknown id', async () => {
    const hidden = setId('cohort');
    const unknown = setId('nosuch');
    for (const { who, headers, level } of await callers()) {
      const get = await call('GET', `/variantsets/${hidden}`, headers);
      const search = await call('POST', '/variantsets/search', headers, { datasetId: idOf('cohort') });
      if (!atLeast(level, 'record')) {
        const unknownGet = await call('GET', `/variantsets/${unknown}`, headers);
        assert.equal(get.status, 404, who);
        assert.equal(withoutId(get.text, hidden), withoutId(unknownGet.text, unknown), who);
        const unknownSearch = await call('POST', '/variantsets/search', headers, { datasetId: idOf('nosuch') });
        assert.equal(search.status, 404, who);
        assert.equal(withoutId(search.text, idOf('cohort')), withoutId(unknownSearch.text, idOf('nosuch')), who);
      } else {
        assert.equal(get.status, 200, `${who}: ${get.text}`);
        assert.equal(get.json.id, hidden);
        assert.deepEqual(search.json.variantSets.map((s: { id: string }) => s.id), [hidden], who);
      }
      // The open dataset answers everyone.
      assert.equal((await call('GET', `/variantsets/${setId('open')}`, headers)).status, 200, who);
    }
  });

  it('searches and gets answered by the page workers are decided before the hand-off', async () => {
    // The open dataset's read group, as the server names it; the hidden dataset holds its twin.
    const sets = await call('POST', '/readgroupsets/search', {}, { datasetId: idOf('open') });
    const group = (JSON.parse(Buffer.from(sets.json.readGroupSets[0].readGroups[0].id, 'base64url').toString()) as string[])[3];
    const groupId = (dataset: string) => idOf(dataset, 'rgs', 'reads', group);
    for (const { who, headers, level } of await callers()) {
      const on = (p: string, body?: unknown) => call(body === undefined ? 'GET' : 'POST', p, headers, body, workersUrl);
      const variants = (dataset: string) => on('/variants/search', { variantSetId: setId(dataset), referenceName: '20', start: 0, end: 100_000_000 });
      const reads = (dataset: string) => on('/reads/search', { readGroupIds: [groupId(dataset)], pageSize: 10 });
      const allowed = atLeast(level, 'record');
      for (const [search, id] of [[variants, setId], [reads, groupId]] as const) {
        const hidden = await search('cohort');
        if (allowed) {
          assert.notEqual(hidden.status, 404, `${who}: ${hidden.text}`);
          assert.equal(hidden.status, (await search('open')).status, who);
        } else {
          assert.equal(hidden.status, 404, `${who}: ${hidden.text}`);
          assert.equal(withoutId(hidden.text, id('cohort')), withoutId((await search('nosuch')).text, id('nosuch')), who);
        }
      }
      // A variant of the hidden set, by its id as the open set's twin names it.
      const open = await variants('open');
      assert.equal(open.status, 200, open.text);
      assert.ok(open.json.variants.length > 0);
      const names = JSON.parse(Buffer.from(open.json.variants[0].id, 'base64url').toString()) as string[];
      const variantOf = (dataset: string) => idOf(dataset, ...names.slice(1));
      const got = await on(`/variants/${variantOf('cohort')}`);
      if (allowed) assert.equal(got.status, 200, `${who}: ${got.text}`);
      else {
        assert.equal(got.status, 404, who);
        assert.equal(withoutId(got.text, variantOf('cohort')), withoutId((await on(`/variants/${variantOf('nosuch')}`)).text, variantOf('nosuch')), who);
      }
    }
  });

  it('htsget: NotFound below record, PermissionDenied at record, a ticket at data whose URLs need no token', async () => {
    const hidden = readsId('cohort');
    const unknown = readsId('nosuch');
    const bam = fs.readFileSync(BAM);
    for (const { who, headers, level } of await callers()) {
      const r = await call('GET', `/htsget/reads/${hidden}`, headers);
      if (!atLeast(level, 'record')) {
        assert.equal(r.status, 404, who);
        assert.equal(r.json.htsget.error, 'NotFound');
        assert.equal(withoutId(r.text, hidden), withoutId((await call('GET', `/htsget/reads/${unknown}`, headers)).text, unknown), who);
        const named = await call('GET', '/htsget/reads/cohort/reads', headers);
        assert.equal(named.text, (await call('GET', '/htsget/reads/nosuch/reads', headers)).text.replace('nosuch', 'cohort'), who);
        // A bare name held by a hidden dataset and an open one is the open one's, not ambiguous.
        const bare = await call('GET', '/htsget/reads/reads', headers);
        assert.equal(bare.status, 200, bare.text);
      } else if (!atLeast(level, 'data')) {
        assert.equal(r.status, 403, `${who}: ${r.text}`);
        assert.equal(r.json.htsget.error, 'PermissionDenied');
      } else {
        assert.equal(r.status, 200, `${who}: ${r.text}`);
        const ranged = r.json.htsget.urls.filter((u: { url: string }) => u.url.startsWith('http'));
        assert.ok(ranged.length > 0, r.text);
        for (const { url: dataUrl, headers: rangeHeaders } of ranged) {
          // Fetched as a tool fetches it: without the caller's credentials.
          const data = await fetch(dataUrl, { headers: rangeHeaders });
          assert.ok(data.status === 200 || data.status === 206, `${who}: the data URL without a token answers ${data.status}`);
          const m = /bytes=(\d+)-(\d+)/.exec(rangeHeaders?.Range ?? rangeHeaders?.range ?? '');
          const expected = m ? bam.subarray(Number(m[1]), Number(m[2]) + 1) : bam;
          assert.ok(Buffer.from(await data.arrayBuffer()).equals(expected), `${who}: the bytes of ${dataUrl}`);
        }
      }
    }
  });

  it('Beacon: result sets of hidden datasets left out; granularity the lowest of asked, the caller\'s level and the dataset\'s', async () => {
    const query = (granularity: string, datasetIds = ['open', 'cohort']) => ({
      meta: { apiVersion: 'v2.0' },
      query: { requestedGranularity: granularity, requestParameters: { datasetIds, g_variant: { referenceName: '20', start: [0], end: [100_000_000] } } },
    });
    for (const { who, headers, level } of await callers()) {
      const r = await call('POST', '/beacon/g_variants', headers, query('record'));
      assert.equal(r.status, 200, `${who}: ${r.text}`);
      const sets = new Map<string, any>(r.json.response.resultSets.map((set: { id: string }) => [set.id, set]));
      assert.deepEqual([...sets.keys()].sort(), level === 'none' ? ['open'] : ['cohort', 'open'], who);
      // The open dataset holds the same file: its records say what the others may be told of.
      const open = sets.get('open');
      assert.equal(open.info.returnedGranularity, 'record');
      assert.ok(open.results.length > 0);
      // A dataset every caller may have, whose Beacon granularity is boolean.
      const capped = await call('POST', '/beacon/g_variants', headers, query('record', ['capped']));
      assert.equal(capped.json.meta.returnedGranularity, 'boolean', who);
      assert.deepEqual(capped.json.responseSummary, { exists: true }, who);
      if (level !== 'none') {
        const cohort = sets.get('cohort');
        const expected = atLeast(level, 'record') ? 'record' : level;
        assert.equal(cohort.info.returnedGranularity, expected, who);
        if (expected === 'record') assert.deepEqual(cohort.results.map((v: { variation: unknown }) => v.variation), open.results.map((v: { variation: unknown }) => v.variation), who);
        else {
          assert.equal(cohort.results.length, 0, who);
          assert.equal(cohort.resultsCount, open.resultsCount, who);
        }
        // What was asked caps it too.
        const asked = await call('POST', '/beacon/g_variants', headers, query('boolean'));
        assert.deepEqual(asked.json.responseSummary, { exists: true }, who);
      }
    }
  });

  it('?key= is a caller as Bearer is; refget (reference sets belong to no dataset) stays open', async () => {
    const r = await call('GET', `/variantsets/${setId('cohort')}?key=${pipeline.key}`);
    assert.equal(r.status, 200, r.text);
    assert.equal((await call('GET', '/refget/sequence/service-info')).status, 200);
  });

  it('a 404 for a hidden dataset takes as long as one for an unknown id (200 requests each, interleaved)', async () => {
    const hidden = `/variantsets/${setId('cohort')}`;
    const unknown = `/variantsets/${setId('nosuch')}`;
    const times: Record<string, number[]> = { [hidden]: [], [unknown]: [] };
    for (let i = 0; i < 220; i++) {
      for (const p of i % 2 ? [hidden, unknown] : [unknown, hidden]) {
        const started = process.hrtime.bigint();
        const r = await fetch(url + p);
        await r.arrayBuffer();
        assert.equal(r.status, 404);
        // The first requests warm connections and caches.
        if (i >= 20) times[p].push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const [h, u] = [median(times[hidden]), median(times[unknown])];
    console.log(`median 404: hidden ${h.toFixed(3)} ms, unknown ${u.toFixed(3)} ms`);
    // Within noise: a loaded machine moves both by far more than the difference allowed here.
    assert.ok(Math.abs(h - u) < Math.max(0.15, 0.1 * Math.max(h, u)), `hidden ${h} ms against unknown ${u} ms`);
  });

  it('the web page: a pasted token is kept in the tab and shows what its caller may read', { skip: chromiumMissing }, async () => {
    const browser = await launchChromium();
    atEnd(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`${url}/`);
    const caller = () => page.locator('#caller').textContent({ timeout: 15_000 });
    // Anonymous: the datasets that default opens, not the controlled one.
    assert.match((await caller()) ?? '', /^Without a token you may read the records of 2 datasets: capped, open$/);
    await page.fill('#token-form input', await login.token('alice'));
    await Promise.all([page.waitForEvent('load'), page.click('#token-form button[type=submit]')]);
    assert.match((await caller()) ?? '', /^With your token you may read the records of 3 datasets: capped, cohort, open$/);
    assert.ok(await page.evaluate(() => sessionStorage.getItem('ga4gh-access-token')));
    await Promise.all([page.waitForEvent('load'), page.click('#token-form button[type=button]')]);
    assert.match((await caller()) ?? '', /^Without a token/);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('ga4gh-access-token')), null);
  });

  it('access log lines name the caller and the dataset', async () => {
    await call('GET', `/variantsets/${setId('cohort')}`, bearer(await login.token('alice')));
    await call('GET', `/variantsets/${setId('cohort')}?key=${pipeline.key}`);
    const lines = log.split('\n');
    const escaped = login.url.replace(/[.:/]/g, (c) => `\\${c}`);
    assert.ok(lines.some((l) => new RegExp(`GET /variantsets/\\S+ 200 .* ${escaped}#alice cohort$`).test(l)), log.slice(-2000));
    assert.ok(lines.some((l) => /\?key=- 200 .* key:pipeline cohort$/.test(l)), log.slice(-2000));
    assert.ok(!log.includes(pipeline.key), 'the log holds no key');
  });
});
