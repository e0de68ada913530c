/**
 * Whole pages built on the main thread (src/workers/main-thread-pages.ts), driven in this process with
 * the variants' real operation on a real registry and real files: pages built ahead of their requests
 * are the bytes of pages built on request, and are taken by the next request of any client; they are
 * not served once the set was registered again, and not built while the server is at its limit of
 * large responses, beyond the memory bound, or kept past the hold time; a page built ahead that fails
 * is reported to no one. Then over HTTP: uncompressed pages built here are the bytes of the pages the
 * page workers build (and compress). (test/streams.test.ts: they hold a slot for large replies until sent.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import type { SearchVariantsQuery } from '../src/areas/variants/messages.js';
import { variantService } from '../src/areas/variants/service.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { removeVariantSet } from '../src/areas/variants/store.js';
import { StreamSlots } from '../src/http/limits.js';
import { GAException } from '../src/protocol/errors.js';
import { defaultCompression } from '../src/content-coding.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import type { NamingForm } from '../src/protocol/schema.js';
import type { Registry } from '../src/registry/registry.js';
import { canonicalJson, type ReadAheadLimits } from '../src/workers/operations.js';
import { mainThreadPages } from '../src/workers/main-thread-pages.js';
import { bgzippedVcf, copyFixture, idOf, newRegistry, startTestServer, tempDir, TESTDATA } from './helpers.js';

const dir = tempDir();
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
copyFixture('compliance/ref_brca1.fa.fai', dir);
const vcfText = fs.readFileSync(path.join(TESTDATA, 'compliance', 'brca1_1kgPhase3_variants.vcf'), 'utf8');
const VARIANTS = vcfText.split('\n').filter((l) => l && !l.startsWith('#')).length;

const variantsRequest = (set: string, pageSize: number): SearchVariantsQuery => ({ variantSetId: idOf('ds', 'vs', set), referenceName: 'ref_brca1', pageSize }) as SearchVariantsQuery;

let location: string;
let registry: Registry;
let vcf: string;
let damagedVcf: string;

before(async () => {
  ({ location, registry } = await newRegistry(dir));
  await addDataset(registry, 'ds');
  await loadReferenceSet(registry, fasta, { name: 'hg37' });
  vcf = bgzippedVcf(dir, 'brca.vcf.gz', vcfText);
  await loadVariantSet(registry, 'ds', [vcf], { referenceset: 'hg37', name: 'brca' });
  damagedVcf = bgzippedVcf(dir, 'damaged.vcf.gz', vcfText);
  await loadVariantSet(registry, 'ds', [damagedVcf], { referenceset: 'hg37', name: 'damaged' });
});

interface Answer {
  text: string;
  /** Its page was being built, or built, before its request came. */
  ahead: boolean;
}

/**
 * The variants' search through main-thread pages, with an HTTP layer that hands every page to its
 * "socket" at once and says it was sent; it counts the builds of each request.
 */
function harness(limits: Partial<ReadAheadLimits> = {}, registryCacheMs = 60_000, load?: StreamSlots, startDelayMs = 0) {
  const service = variantService(registry, { ...defaultPagingLimits, maxPageSize: 5000 }, registryCacheMs);
  const builds = new Map<string, number>();
  const pages = mainThreadPages({ maxBytes: 64 << 20, holdMs: 60_000, ...limits }, load);
  const { run: search } = pages.operation({
    start: async (request: SearchVariantsQuery) => {
      builds.set(canonicalJson(request), (builds.get(canonicalJson(request)) ?? 0) + 1);
      if (startDelayMs) await new Promise((resolve) => setTimeout(resolve, startDelayMs));
      return service.searchVariants(request);
    },
    registration: (request: SearchVariantsQuery) => service.registrationOf(request.variantSetId),
  });
  async function request(arg: SearchVariantsQuery, form: NamingForm = 'camel'): Promise<Answer> {
    const ahead = builds.has(canonicalJson(arg));
    const reply = await search(arg, form);
    assert.equal(reply.kind, 'bytes');
    if (reply.kind !== 'bytes') throw new Error('not whole');
    assert.equal(reply.large, true);
    const text = Buffer.concat(reply.chunks(form)).toString('utf8');
    reply.handedOver?.(Promise.resolve());
    return { text, ahead };
  }
  /** Every page of a search, following nextPageToken, each request once the pages built ahead of it are complete. */
  async function all(arg: SearchVariantsQuery, form: NamingForm = 'camel'): Promise<Answer[]> {
    const answers: Answer[] = [];
    let token: string | undefined;
    do {
      await pages.aheadSettled();
      const answer = await request(token ? { ...arg, pageToken: token } : arg, form);
      answers.push(answer);
      token = JSON.parse(answer.text)[form === 'snake' ? 'next_page_token' : 'nextPageToken'];
    } while (token);
    return answers;
  }
  const next = (arg: SearchVariantsQuery, answer: Answer) => ({ ...arg, pageToken: JSON.parse(answer.text).nextPageToken as string });
  return { request, all, next, builds, settled: () => pages.aheadSettled() };
}

describe('main-thread pages built ahead', () => {
  it('are the bytes of the pages built on request, and every page after the first was built ahead, in either naming form', async () => {
    for (const form of ['camel', 'snake'] as const) {
      const ahead = await harness().all(variantsRequest('brca', 150), form);
      const onRequest = await harness({ maxBytes: 0 }).all(variantsRequest('brca', 150), form);
      assert.ok(ahead.length >= 5, `${ahead.length} pages`);
      assert.deepEqual(
        ahead.map((a) => a.text),
        onRequest.map((a) => a.text),
      );
      assert.deepEqual(
        ahead.map((a) => a.ahead),
        ahead.map((_, i) => i > 0),
      );
      assert.ok(onRequest.every((a) => !a.ahead));
      assert.equal(ahead.reduce((n, a) => n + JSON.parse(a.text).variants.length, 0), VARIANTS);
    }
  });

  it('are taken by the client that asks, whichever client the page before went to, and each is built once', async () => {
    const { request, next, builds, settled } = harness();
    const query = variantsRequest('brca', 100);
    // Two clients paging the same query, one a page behind the other.
    const a1 = await request(query);
    await settled();
    const a2 = await request(next(query, a1));
    const b1 = await request(query);
    await settled();
    const b2 = await request(next(query, b1));
    const a3 = await request(next(query, a2));
    assert.equal(b2.text, a2.text);
    assert.deepEqual([a2.ahead, b2.ahead, a3.ahead], [true, true, true]);
    // The first page twice (each client asked for it), every later page once.
    assert.equal(builds.get(canonicalJson(query)), 2);
    assert.equal(builds.get(canonicalJson(next(query, a1))), 2, 'page 2: built ahead for a, and again ahead for b once a had taken it');
    assert.equal(builds.get(canonicalJson(next(query, a2))), 1);
  });

  it('are not served once the set was registered again', async () => {
    // Registrations read afresh on every request (a registry cache time of 0).
    const { request, next, settled } = harness({}, 0);
    const query = variantsRequest('brca', 150);
    const first = await request(query);
    await settled(); // the second page is built, under the first registration
    await removeVariantSet(registry, 'ds', 'brca');
    await loadVariantSet(registry, 'ds', [vcf], { referenceset: 'hg37', name: 'brca' });
    const second = await request(next(query, first));
    assert.equal(second.ahead, true, 'it was built ahead');
    const [expected] = await harness({ maxBytes: 0 }).all(next(query, first));
    assert.equal(second.text, expected.text);
    // The page after it, built ahead under the new registration, is served.
    await settled();
    const third = await request(next(query, second));
    assert.equal(third.ahead, true);
  });

  it('are built again by the request when the set was registered again meanwhile (a page built before it is not served)', async () => {
    // A page whose registration no longer holds is dropped, and its request builds its own: seen in
    // the builds of its key.
    const { request, next, builds, settled } = harness({}, 0);
    const query = variantsRequest('brca', 150);
    const first = await request(query);
    await settled();
    const key = canonicalJson(next(query, first));
    assert.equal(builds.get(key), 1);
    await removeVariantSet(registry, 'ds', 'brca');
    await loadVariantSet(registry, 'ds', [vcf], { referenceset: 'hg37', name: 'brca' });
    await request(next(query, first));
    assert.equal(builds.get(key), 2);
  });

  it('are not built while the server writes as many large responses as it may', async () => {
    const slots = new StreamSlots(1);
    const { request, next, settled } = harness({}, 60_000, slots);
    const query = variantsRequest('brca', 150);
    const release = slots.take();
    const first = await request(query);
    await settled();
    const second = await request(next(query, first));
    assert.equal(second.ahead, false);
    release();
    await settled();
    const third = await request(next(query, second));
    assert.equal(third.ahead, true);
  });

  it('are built, and requests answered, only while the server writes no other large reply', async () => {
    const slots = new StreamSlots(8);
    const service = variantService(registry, { ...defaultPagingLimits, maxPageSize: 5000 }, 60_000);
    const pages = mainThreadPages({ maxBytes: 64 << 20, holdMs: 60_000 }, slots);
    const { answersHere, run } = pages.operation({
      start: (request: SearchVariantsQuery) => service.searchVariants(request),
      registration: (request: SearchVariantsQuery) => service.registrationOf(request.variantSetId),
    });
    const query = variantsRequest('brca', 150);
    assert.equal(answersHere(query, 'camel'), true, 'nothing else is being written');
    const other = slots.take(); // another client's large reply
    assert.equal(answersHere(query, 'camel'), false);
    // Answered here all the same (a server without page workers): its next page is not built ahead while
    // this page and the other reply are being written.
    const first = await run(query, 'camel');
    assert.equal(first.kind, 'bytes');
    if (first.kind !== 'bytes') return;
    const own = slots.take();
    const next = { ...query, pageToken: JSON.parse(Buffer.concat(first.chunks('camel')).toString()).nextPageToken as string };
    first.handedOver?.(Promise.resolve());
    await pages.aheadSettled();
    assert.equal(answersHere(next, 'camel'), false, 'not built ahead');
    own();
    other();
    // Its own page alone is being written when it is handed over: the next is built ahead, and its
    // request is answered here even while another large reply is being written.
    const again = await run(query, 'camel');
    if (again.kind !== 'bytes') return;
    const ownAgain = slots.take();
    again.handedOver?.(Promise.resolve());
    await pages.aheadSettled();
    const another = slots.take();
    assert.equal(answersHere(next, 'camel'), true, 'built ahead while only its own page was being written');
    ownAgain();
    another();
  });

  it('answer one request at a time here: one that comes while a page is built here for another goes to the page workers', async () => {
    const service = variantService(registry, { ...defaultPagingLimits, maxPageSize: 5000 }, 60_000);
    const pages = mainThreadPages({ maxBytes: 0, holdMs: 60_000 }, new StreamSlots(8));
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const { answersHere, run } = pages.operation({
      // The first page's start waits for the test: its build is under way meanwhile.
      start: async (request: SearchVariantsQuery) => {
        await opened;
        return service.searchVariants(request);
      },
      registration: (request: SearchVariantsQuery) => service.registrationOf(request.variantSetId),
    });
    const query = variantsRequest('brca', 150);
    const other = variantsRequest('brca', 10);
    assert.equal(answersHere(query, 'camel'), true, 'nothing else is being written or built');
    const building = run(query, 'camel');
    assert.equal(answersHere(other, 'camel'), false, 'a page is being built here');
    open();
    assert.equal((await building).kind, 'bytes');
    assert.equal(answersHere(other, 'camel'), true, 'built, and no large reply is being written');
    // A build that fails gives way too.
    const missing = run(variantsRequest('nope', 10), 'camel');
    assert.equal(answersHere(other, 'camel'), false);
    await assert.rejects(missing, (e: unknown) => e instanceof GAException && e.status === 404);
    assert.equal(answersHere(other, 'camel'), true);
  });

  it('are not built beyond the memory bound, nor kept past the hold time', async () => {
    const query = variantsRequest('brca', 150);
    const small = harness({ maxBytes: 16 * 1024 }); // a page of 150 variants is larger
    const first = await small.request(query);
    await small.settled();
    assert.equal((await small.request(small.next(query, first))).ahead, true, 'its build began');
    // It was dropped once it passed the bound: the request built it again.
    assert.equal(small.builds.get(canonicalJson(small.next(query, first))), 2);

    // Pages asked for while still being built ahead: once taken, their bytes are the request's, and the
    // bound still leaves room for the next page every time (it counted them on and let nothing be built
    // ahead after a few pages, before this was mended).
    const pageBytes = Buffer.byteLength(first.text);
    const eager = harness({ maxBytes: Math.floor(pageBytes * 1.5) }, 60_000, undefined, 20);
    const asked = [query];
    const answers = [await eager.request(query)];
    for (let token = JSON.parse(answers[0].text).nextPageToken; token; token = JSON.parse(answers.at(-1)!.text).nextPageToken) {
      await new Promise((resolve) => setImmediate(resolve)); // the next page's build has begun (its start takes 20 ms)
      asked.push({ ...query, pageToken: token });
      answers.push(await eager.request(asked.at(-1)!));
    }
    assert.ok(answers.length >= 5, `${answers.length} pages`);
    // Each page after the first was built once, ahead, and taken as it was.
    assert.deepEqual(
      asked.map((q) => eager.builds.get(canonicalJson(q))),
      asked.map(() => 1),
    );

    const brief = harness({ holdMs: 50 });
    const page = await brief.request(query);
    await brief.settled();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = await brief.request(brief.next(query, page));
    assert.equal(brief.builds.get(canonicalJson(brief.next(query, page))), 2, 'built again: the page built ahead was dropped');
    assert.equal(late.text, (await harness({ maxBytes: 0 }).request(brief.next(query, page))).text);
  });

  it('that fail are reported to no one: the request builds its page and reports its own error', async () => {
    // The last data block is overwritten: the first page lies before it, the second over it.
    const bytes = fs.readFileSync(damagedVcf);
    const blocks: number[] = [];
    for (let at = 0; at < bytes.length; at += bytes.readUInt16LE(at + 16) + 1) blocks.push(at);
    const last = blocks.length - 2; // the one before the end-of-file block
    bytes.fill(0x5a, blocks[last] + 2000, blocks[last] + 2064);
    fs.writeFileSync(damagedVcf, bytes);
    const query = variantsRequest('damaged', Math.floor(VARIANTS / 2) - 50);
    const { request, next, settled } = harness();
    const first = await request(query);
    await settled(); // the page built ahead has failed
    await assert.rejects(request(next(query, first)), (e: GAException) => e.kind === 'unavailable' && /variant set 'damaged'/.test(e.message));
  });
});

describe('uncompressed variant pages over HTTP', () => {
  it('are the bytes of the pages built in a page worker, compressed or not, with and without read-ahead', async () => {
    const request = variantsRequest('brca', 120);
    const runs = [
      { pageWorkers: 1 },
      { pageWorkers: 1, readAheadBytes: 0 },
      { pageWorkers: 0 },
      { pageWorkers: 1, coding: 'gzip' },
      { pageWorkers: 1, coding: 'br' },
      { pageWorkers: 0, coding: 'gzip' },
    ];
    const texts: string[][] = [];
    for (const { coding, ...overrides } of runs) {
      const server = await startTestServer(location, overrides);
      const pages: string[] = [];
      let token: string | undefined;
      do {
        const res = await server.post('/variants/search', token ? { ...request, pageToken: token } : request, { 'accept-encoding': coding ?? 'identity' });
        assert.equal(res.status, 200, res.text);
        if (Buffer.byteLength(res.text) >= defaultCompression().threshold) assert.equal(res.headers.get('content-encoding'), coding ?? null);
        // Whole pages carry their length; streamed ones are chunked.
        if (!coding) assert.equal(Number(res.headers.get('content-length')), Buffer.byteLength(res.text));
        pages.push(res.text);
        token = res.json.nextPageToken;
      } while (token);
      await server.close();
      texts.push(pages);
    }
    assert.ok(texts[0].length >= 5);
    for (const other of texts.slice(1)) assert.deepEqual(other, texts[0]);
    assert.equal(texts[0].reduce((n, t) => n + JSON.parse(t).variants.length, 0), VARIANTS);
  });
});
