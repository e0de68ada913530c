/**
 * The page workers' work (src/workers/page-builder.ts), driven in this process with the areas' real
 * operations on a real registry and real files: pages built ahead of their requests are the very bytes
 * of pages built on request, are taken by the next request, and are not served once the set was
 * registered again, while the server is at its stream limit, beyond the memory bound or after the
 * hold time; a page built ahead that fails is reported to no one; the tail a page's next token is read
 * from is the same whichever chunks of a message it reads. Then over HTTP: pages of variants, of reads
 * and of variant annotations built in a worker, with and without read-ahead, and on the main thread,
 * are the same bytes.
 */
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { pageOperations as annotationOperations } from '../src/areas/annotations/page-operations.js';
import { pageOperations as readOperations } from '../src/areas/reads/page-operations.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { removeReadGroupSet } from '../src/areas/reads/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { pageOperations as variantOperations } from '../src/areas/variants/page-operations.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import { PAUSE_BYTES, type ContentCoding } from '../src/protocol/reply.js';
import { defaultCompression, encodeWhole } from '../src/content-coding.js';
import type { NamingForm } from '../src/protocol/schema.js';
import type { Registry } from '../src/registry/registry.js';
import type { FromWorker, ReadAheadLimits, WorkerSettings } from '../src/workers/operations.js';
import { PageBuilder, Tail, type Encode } from '../src/workers/page-builder.js';
import { bgzippedVcf, copyFixture, idOf, newRegistry, startTestServer, tempDir, TESTDATA } from './helpers.js';

const dir = tempDir();
const bamDir = path.join(dir, 'bam');
fs.mkdirSync(bamDir);
const bam = copyFixture('compliance/brca1_HG00096.bam', bamDir);
copyFixture('compliance/brca1_HG00096.bam.bai', bamDir);
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
copyFixture('compliance/ref_brca1.fa.fai', dir);
const samText = fs.readFileSync(path.join(TESTDATA, 'compliance', 'brca1_HG00096.sam'), 'utf8');
const READ_GROUPS = [...samText.matchAll(/^@RG\tID:([^\t\n]+)/gm)].map((m) => m[1]);
const READS = samText.split('\n').filter((l) => l && !l.startsWith('@')).length;
const readsRequest = { readGroupIds: READ_GROUPS.map((g) => idOf('ds', 'rgs', 'brca', g)), pageSize: 300 };

// The compliance VCF, bgzipped by the bgzip tool, whose later blocks are damaged in one test.
const vcfText = fs.readFileSync(path.join(TESTDATA, 'compliance', 'brca1_1kgPhase3_variants.vcf'), 'utf8');
const VARIANTS = vcfText.split('\n').filter((l) => l && !l.startsWith('#')).length;
const variantsRequest = (set: string, pageSize: number) => ({ variantSetId: idOf('ds', 'vs', set), referenceName: 'ref_brca1', pageSize });

// A SnpEff-annotated VCF of the compliance data set: its annotation set is registered with it.
const annotatedText = fs.readFileSync(path.join(TESTDATA, 'compliance', 'brca1_OR4F_annotation.vcf'), 'utf8');
const ANNOTATIONS = annotatedText.split('\n').filter((l) => l && !l.startsWith('#')).length;
const annotationsRequest = { variantAnnotationSetId: idOf('ds', 'vas', 'or4f'), referenceName: '1', pageSize: 100 };

let location: string;
let registry: Registry;
let damagedVcf: string;

before(async () => {
  ({ location, registry } = await newRegistry(dir));
  await addDataset(registry, 'ds');
  await loadReferenceSet(registry, fasta, { name: 'hg37' });
  await loadReadGroupSet(registry, 'ds', bam, { referenceset: 'hg37', name: 'brca' });
  await loadVariantSet(registry, 'ds', [bgzippedVcf(dir, 'brca.vcf.gz', vcfText)], { referenceset: 'hg37', name: 'brca' });
  const annotated = path.join(fs.mkdtempSync(path.join(dir, 'vcf-')), 'or4f.vcf');
  fs.writeFileSync(annotated, annotatedText);
  await loadVariantSet(registry, 'ds', [annotated], { referenceset: 'hg37', name: 'or4f', allowMissingContigs: true });
  damagedVcf = bgzippedVcf(dir, 'damaged.vcf.gz', vcfText);
  await loadVariantSet(registry, 'ds', [damagedVcf], { referenceset: 'hg37', name: 'damaged' });
});

interface Answer {
  ahead: boolean;
  /** The content coding its bytes came in (the text is decompressed here). */
  coded?: ContentCoding;
  /** Bytes as sent, before decompression. */
  sent: number;
  text: string;
  error?: { kind: string; message: string };
  /** How many messages the worker posted for it. */
  messages: number;
}

/** A builder with the reads (module 0), variants (module 1) and annotations (module 2) operations, and a main thread that writes every chunk at once. */
function harness(limits: Partial<ReadAheadLimits> = {}, registryCacheMs = 60_000, encode?: Encode) {
  const settings: WorkerSettings = {
    registryLocation: location,
    paging: { ...defaultPagingLimits, maxPageSize: 5000 },
    registryCacheMs,
    readAhead: { maxBytes: 64 << 20, holdMs: 60_000, ...limits },
    compression: defaultCompression(),
    modules: [],
  };
  const inboxes = new Map<number, (m: FromWorker) => void>();
  /** Messages for requests nobody made (a page built ahead must never report anything). */
  const strays: FromWorker[] = [];
  const operations = [readOperations(registry, settings), variantOperations(registry, settings), annotationOperations(registry, settings)];
  const builder = new PageBuilder(
    operations,
    settings.readAhead,
    (m) => {
      const deliver = inboxes.get(m.id);
      if (deliver) deliver(m);
      else strays.push(m);
    },
    encode ?? ((coding, pieces, size) => encodeWhole(coding, settings.compression, pieces, size)),
  );
  let nextId = 1;
  function request(module: number, name: string, arg: unknown, form: NamingForm = 'camel', coding?: ContentCoding): Promise<Answer> {
    const id = nextId++;
    const chunks: Buffer[] = [];
    let ahead = false;
    let coded: ContentCoding | undefined;
    let messages = 0;
    return new Promise((resolve) => {
      inboxes.set(id, (m) => {
        messages++;
        if (m.type === 'chunk') {
          if (m.start) ({ ahead, coded } = m.start);
          for (const chunk of m.chunks) chunks.push(Buffer.from(chunk));
          if (!m.end) setImmediate(() => builder.receive({ op: 'ack', id }));
        }
        if (m.type === 'error' || m.end) {
          inboxes.delete(id);
          const bytes = Buffer.concat(chunks);
          const decoded = coded === 'gzip' ? gunzipSync(bytes) : coded === 'br' ? brotliDecompressSync(bytes) : bytes;
          const answer = { ahead, coded, sent: bytes.length, text: decoded.toString('utf8'), messages };
          resolve(m.type === 'error' ? { ...answer, error: { kind: m.kind, message: m.message } } : answer);
        }
      });
      builder.receive({ op: 'run', id, module, name, arg, form, coding });
    });
  }
  /**
   * Every page of a search, following nextPageToken (in the form asked for); with `settled`, each
   * request waits until the pages built ahead of it are complete (compressed, for a coding).
   */
  async function pages(module: number, name: string, arg: Record<string, unknown>, form: NamingForm = 'camel', coding?: ContentCoding, settled = false): Promise<Answer[]> {
    const answers: Answer[] = [];
    let token: string | undefined;
    do {
      if (settled) await builder.aheadSettled();
      const answer = await request(module, name, token ? { ...arg, pageToken: token } : arg, form, coding);
      assert.equal(answer.error, undefined, answer.error?.message);
      answers.push(answer);
      token = JSON.parse(answer.text)[form === 'snake' ? 'next_page_token' : 'nextPageToken'];
    } while (token);
    return answers;
  }
  return { builder, request, pages, strays };
}

describe('pages built ahead', () => {
  it('are the bytes of the pages built on request, taken by the next request, in either naming form', async () => {
    for (const [module, name, arg, count] of [
      [0, 'searchReads', readsRequest, READS],
      [1, 'searchVariants', variantsRequest('brca', 150), VARIANTS],
      [2, 'searchAnnotations', annotationsRequest, ANNOTATIONS],
    ] as const) {
      for (const form of ['camel', 'snake'] as const) {
        const ahead = await harness().pages(module, name, arg, form);
        const onRequest = await harness({ maxBytes: 0 }).pages(module, name, arg, form);
        assert.ok(ahead.length >= 5, `${ahead.length} pages`);
        assert.deepEqual(
          ahead.map((a) => a.text),
          onRequest.map((a) => a.text),
        );
        assert.deepEqual(
          ahead.map((a) => a.ahead),
          ahead.map((_, i) => i > 0),
          'every page after the first was built ahead',
        );
        assert.ok(onRequest.every((a) => !a.ahead));
        const list = { searchReads: 'alignments', searchVariants: 'variants', searchAnnotations: form === 'camel' ? 'variantAnnotations' : 'variant_annotations' }[name];
        assert.equal(ahead.reduce((n, a) => n + JSON.parse(a.text)[list].length, 0), count);
      }
    }
  });

  it('go to the main thread in one message when complete before their request, and in order when not', async () => {
    // A page of 1000 reads is ~1.2 MB of JSON: two chunks.
    const request = { ...readsRequest, pageSize: 1000 };
    const settled = await harness().pages(0, 'searchReads', request, 'camel', undefined, true);
    const onRequest = await harness({ maxBytes: 0 }).pages(0, 'searchReads', request);
    assert.deepEqual(
      settled.map((a) => a.text),
      onRequest.map((a) => a.text),
    );
    assert.ok(settled.length >= 3 && Buffer.byteLength(settled[1].text) > 1 << 20, `${settled.length} pages`);
    for (const [i, page] of settled.entries()) {
      if (i > 0) assert.equal(page.messages, 1, `page ${i}, built ahead and complete: one message`);
    }
    // Built on request, a page of several chunks goes as they are written, then ends.
    assert.ok(onRequest.every((a) => a.messages >= 2), onRequest.map((a) => a.messages).join());
  });

  it('are compressed ahead for a client that takes a coding, and are then the bytes of the pages built on request', async () => {
    const { threshold } = defaultCompression();
    for (const [module, name, arg] of [
      [0, 'searchReads', readsRequest],
      [1, 'searchVariants', variantsRequest('brca', 150)],
    ] as const) {
      const onRequest = await harness({ maxBytes: 0 }).pages(module, name, arg);
      for (const coding of ['gzip', 'br'] as const) {
        const ahead = await harness().pages(module, name, arg, 'camel', coding, true);
        assert.deepEqual(
          ahead.map((a) => a.text),
          onRequest.map((a) => a.text),
        );
        // The first page is built on request (the main thread compresses it as it goes); every later one
        // was built ahead, and is compressed already when it is at least the threshold.
        assert.equal(ahead[0].coded, undefined);
        for (const [i, page] of ahead.entries()) {
          if (i === 0) continue;
          assert.ok(page.ahead, `page ${i} built ahead`);
          assert.equal(page.coded, Buffer.byteLength(page.text) >= threshold ? coding : undefined, `page ${i}`);
          if (page.coded) assert.ok(page.sent < Buffer.byteLength(page.text) / 4, `page ${i}: ${page.sent} bytes sent`);
        }
        assert.ok(ahead.slice(1).some((a) => a.coded === coding));
        // Asked for at once, the pages are taken while still being built: as they are (the main thread
        // compresses them), the same bytes.
        const eager = await harness().pages(module, name, arg, 'camel', coding);
        assert.deepEqual(
          eager.map((a) => a.text),
          onRequest.map((a) => a.text),
        );
        assert.ok(eager.slice(1).every((a) => a.ahead));
        assert.ok(eager.slice(1).some((a) => a.coded === undefined && Buffer.byteLength(a.text) >= threshold), 'a page taken while being built goes as it is');
      }
    }
    // Pages under the threshold are built ahead but go as they are.
    const small = await harness().pages(0, 'searchReads', { ...readsRequest, pageSize: 3 }, 'camel', 'gzip', true);
    assert.ok(small.length > 5 && small.slice(1).every((a) => a.ahead && a.coded === undefined));
    // A client that changes its coding gets pages built for it (the page built ahead was for the other).
    const { request } = harness();
    const first = await request(0, 'searchReads', readsRequest, 'camel', 'gzip');
    const second = await request(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(first.text).nextPageToken }, 'camel', 'br');
    assert.equal(second.ahead, false);
    assert.equal(second.coded, undefined);
    // So does one that changes its page size or its naming form: pages built ahead are of one query.
    for (const [arg, form] of [
      [{ ...readsRequest, pageSize: readsRequest.pageSize - 1 }, 'camel'],
      [readsRequest, 'snake'],
    ] as const) {
      const { builder, request } = harness();
      const firstPage = await request(0, 'searchReads', readsRequest);
      await builder.aheadSettled();
      const next = await request(0, 'searchReads', { ...arg, pageToken: JSON.parse(firstPage.text).nextPageToken }, form);
      assert.equal(next.ahead, false, `${arg.pageSize} ${form}`);
      const [expected] = await harness({ maxBytes: 0 }).pages(0, 'searchReads', { ...arg, pageToken: JSON.parse(firstPage.text).nextPageToken }, form);
      assert.equal(next.text, expected.text);
    }
  });

  it('are built one after the other while the ones before are compressed', async () => {
    // Compression held until two pages wait for it: the page after a page built ahead is built while
    // that page is compressed (one after the other, a client that takes a coding waited for both).
    const held: Array<() => void> = [];
    let twoHeld!: () => void;
    const bothWaiting = new Promise<void>((resolve) => (twoHeld = resolve));
    const encode: Encode = async (coding, pieces, size) => {
      if (held.length < 2) {
        await new Promise<void>((release) => {
          held.push(release);
          if (held.length === 2) twoHeld();
        });
      }
      return encodeWhole(coding, defaultCompression(), pieces, size);
    };
    const { request } = harness({}, 60_000, encode);
    const first = await request(0, 'searchReads', readsRequest, 'camel', 'gzip');
    assert.ok(Buffer.byteLength(first.text) >= defaultCompression().threshold, 'pages above the compression threshold');
    // Old behaviour never gets there: the third page waited for the second's compression.
    const gaveUp = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
    await Promise.race([bothWaiting, gaveUp]);
    assert.equal(held.length, 2, 'the second and third pages wait for compression together');
    for (const release of held) release();
    const second = await request(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(first.text).nextPageToken }, 'camel', 'gzip');
    assert.equal(second.coded, 'gzip');
    const [expected] = await harness({ maxBytes: 0 }).pages(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(first.text).nextPageToken });
    assert.equal(second.text, expected.text);
  });

  it('are not served once the set was registered again', async () => {
    // Registrations read afresh on every request (a registry cache time of 0), pages held a minute.
    const { builder, request } = harness({}, 0);
    const first = await request(0, 'searchReads', readsRequest);
    const token = JSON.parse(first.text).nextPageToken;
    await builder.aheadSettled(); // the second page is built, under the first registration
    await removeReadGroupSet(registry, 'ds', 'brca');
    await loadReadGroupSet(registry, 'ds', bam, { referenceset: 'hg37', name: 'brca' });
    const second = await request(0, 'searchReads', { ...readsRequest, pageToken: token });
    assert.equal(second.error, undefined);
    assert.equal(second.ahead, false);
    // The page after it, built ahead under the new registration, is served.
    const third = await request(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(second.text).nextPageToken });
    assert.equal(third.ahead, true);
  });

  it('are not built while the server writes as many large responses as it may', async () => {
    const { builder, request } = harness();
    builder.receive({ op: 'limit', id: 0, atLimit: true });
    const first = await request(0, 'searchReads', readsRequest);
    const second = await request(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(first.text).nextPageToken });
    assert.equal(second.ahead, false);
    builder.receive({ op: 'limit', id: 0, atLimit: false });
    const third = await request(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(second.text).nextPageToken });
    const fourth = await request(0, 'searchReads', { ...readsRequest, pageToken: JSON.parse(third.text).nextPageToken });
    assert.equal(third.ahead, false);
    assert.equal(fourth.ahead, true);
  });

  it('are not built beyond the memory bound, nor kept past the hold time', async () => {
    const small = harness({ maxBytes: 64 * 1024 }); // a page of 300 reads is ~360 KB
    const first = await small.request(0, 'searchReads', readsRequest);
    const next = { ...readsRequest, pageToken: JSON.parse(first.text).nextPageToken };
    // (A request that came while the page was still being built would take it over, bound or not.)
    await small.builder.aheadSettled();
    assert.equal((await small.request(0, 'searchReads', next)).ahead, false);

    // Pages of a hundred reads (~120 KB), each moved in the pooled 1 MB chunk it was written in: the
    // bound counts that memory, not the JSON, so two pages fit in 2.5 MB and not six.
    const hundreds = harness({ maxBytes: 2.5 * 1024 * 1024 });
    const hundredQueries = [0, 1, 2].map((i) => ({ ...readsRequest, pageSize: 100 + i }));
    const nextOf = async (query: object) => ({ ...query, pageToken: JSON.parse((await hundreds.request(0, 'searchReads', query)).text).nextPageToken });
    const nexts = [];
    for (const query of hundredQueries) nexts.push(await nextOf(query));
    await hundreds.builder.aheadSettled();
    const servedAhead = [];
    for (const query of nexts) servedAhead.push((await hundreds.request(0, 'searchReads', query)).ahead);
    assert.ok(servedAhead.filter(Boolean).length <= 2, `pages served from memory: ${servedAhead.join(', ')}`);

    const brief = harness({ holdMs: 50 });
    await brief.request(0, 'searchReads', readsRequest);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = await brief.request(0, 'searchReads', next);
    assert.equal(late.ahead, false);
    assert.equal(late.text, (await harness({ maxBytes: 0 }).request(0, 'searchReads', next)).text);
  });

  it('that fail are reported to no one: the request builds its page and reports its own error', async () => {
    // The last data block is overwritten: the first page lies before it, the second over it.
    const bytes = fs.readFileSync(damagedVcf);
    const blocks: number[] = [];
    for (let at = 0; at < bytes.length; at += bytes.readUInt16LE(at + 16) + 1) blocks.push(at);
    const last = blocks.length - 2; // the one before the end-of-file block
    bytes.fill(0x5a, blocks[last] + 2000, blocks[last] + 2064);
    fs.writeFileSync(damagedVcf, bytes);
    const pageSize = Math.floor(VARIANTS / 2) - 50;
    const { builder, request, strays } = harness();
    const first = await request(1, 'searchVariants', variantsRequest('damaged', pageSize));
    assert.equal(first.error, undefined, first.error?.message);
    const token = JSON.parse(first.text).nextPageToken;
    await builder.aheadSettled(); // the page built ahead has failed
    const second = await request(1, 'searchVariants', { ...variantsRequest('damaged', pageSize), pageToken: token });
    assert.equal(second.error?.kind, 'unavailable');
    assert.match(second.error!.message, /variant set 'damaged'/);
    assert.deepEqual(strays, []);
  });
});

describe('the tail of a page, which its next token is read from', () => {
  it('is the same when the chunks of a message are read together as when each is read', () => {
    // A token of 4,000 characters after 3 MB of JSON, cut into chunks of many sizes: one longer than the
    // tail, a last one of a few bytes after a long one, and many short ones that hold the tail together.
    const token = 'T'.repeat(3990) + '0123456789';
    const page = Buffer.from(`{"alignments":[${'{"id":"x"},'.repeat(300_000)}{"id":"y"}],"nextPageToken":"${token}"}`);
    const cuts: number[][] = [
      [page.length - 5],
      [page.length - 9000, page.length - 3],
      Array.from({ length: 400 }, (_, i) => page.length - 40 * (400 - i)),
      [1 << 20, 2 << 20],
    ];
    for (const cut of cuts) {
      const ends = [...cut, page.length];
      const chunks = ends.map((end, i) => page.subarray(i === 0 ? 0 : ends[i - 1], end));
      const together = new Tail();
      together.addAll(chunks.slice(0, 2));
      together.addAll(chunks.slice(2));
      const each = new Tail();
      for (const chunk of chunks) each.add(chunk);
      assert.equal(each.token(), token);
      assert.equal(together.token(), token, `cut at ${cut.length} places`);
    }
  });
});

describe('a variant page, held until it is complete', () => {
  it('pauses its sink after each megabyte it builds, before writing a byte, and writes the same bytes', async () => {
    const settings: WorkerSettings = {
      registryLocation: location,
      paging: { ...defaultPagingLimits, maxPageSize: 5000 },
      registryCacheMs: 60_000,
      readAhead: { maxBytes: 0, holdMs: 0 },
      compression: defaultCompression(),
      modules: [],
    };
    const { searchVariants } = variantOperations(registry, settings);
    const events: string[] = [];
    const paused: Buffer[] = [];
    await (await searchVariants.start(variantsRequest('brca', 5000))).write(
      {
        write: (chunk) => void (events.push('write'), paused.push(Buffer.from(chunk))),
        pause: () => void events.push('pause'),
      },
      'camel',
    );
    const plain: Buffer[] = [];
    await (await searchVariants.start(variantsRequest('brca', 5000))).write({ write: (chunk) => void plain.push(Buffer.from(chunk)) }, 'camel');
    const page = Buffer.concat(plain);
    assert.equal(JSON.parse(page.toString('utf8')).variants.length, VARIANTS, 'every variant of the file in one page');
    assert.ok(Buffer.concat(paused).equals(page), 'the same bytes with and without pauses');
    const pauses = events.filter((e) => e === 'pause').length;
    assert.ok(page.length > PAUSE_BYTES, `a page of ${page.length} bytes`);
    assert.ok(pauses >= 1 && pauses <= Math.ceil(page.length / PAUSE_BYTES), `${pauses} pauses for ${page.length} bytes`);
    assert.equal(events.indexOf('write'), pauses, 'every pause comes before the first byte is written');
  });
});

describe('pages over HTTP', () => {
  for (const [route, request, list, count] of [
    ['/variants/search', variantsRequest('brca', 120), 'variants', VARIANTS],
    ['/reads/search', readsRequest, 'alignments', READS],
    ['/variantannotations/search', annotationsRequest, 'variantAnnotations', ANNOTATIONS],
  ] as const) {
    it(`are the same bytes built in a worker with and without read-ahead, in one of two workers, and on the main thread (${route})`, async () => {
      const texts: string[][] = [];
      // With two workers, a query's pages go to the one a digest of the query picks. Then with a client
      // that takes gzip or br (fetch decompresses): pages built ahead are compressed in the worker.
      const runs = [
        { pageWorkers: 1 },
        { pageWorkers: 1, readAheadBytes: 0 },
        { pageWorkers: 0 },
        { pageWorkers: 2 },
        { pageWorkers: 1, coding: 'gzip' },
        { pageWorkers: 1, coding: 'br' },
      ];
      for (const { coding, ...overrides } of runs) {
        const server = await startTestServer(location, overrides);
        const pages: string[] = [];
        let token: string | undefined;
        do {
          const res = await server.post(route, token ? { ...request, pageToken: token } : request, { 'accept-encoding': coding ?? 'identity' });
          assert.equal(res.status, 200, res.text);
          if (Buffer.byteLength(res.text) >= defaultCompression().threshold) assert.equal(res.headers.get('content-encoding'), coding ?? null);
          pages.push(res.text);
          token = res.json.nextPageToken;
        } while (token);
        await server.close();
        texts.push(pages);
      }
      assert.ok(texts[0].length >= 5);
      for (const other of texts.slice(1)) assert.deepEqual(other, texts[0]);
      assert.equal(texts[0].reduce((n, t) => n + JSON.parse(t)[list].length, 0), count);
    });
  }
});
