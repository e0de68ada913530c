/**
 * Large responses under load: the cap on those written at once (503 with Retry-After beyond it), and
 * the slices they are built in, taking turns with each other and with other connections.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { startServer } from '../src/app.js';
import { defaultServerConfig, defaultServerLimits } from '../src/config.js';
import { LARGE_PIECE, SliceQueue, StreamSlots, yieldingSink } from '../src/http/limits.js';
import {
  atEnd,
  copyFixture,
  decoded,
  idOf,
  newRegistry,
  raw,
  SCHED_IDLE,
  SCHED_OTHER,
  schedulingOfThread,
  startServeProcess,
  startTestServer,
  tempDir,
  type TestServer,
} from './helpers.js';
import { connect, rawExchange, rawPost, readResponse } from './raw-http.js';

const SAMPLES = 300;
const RECORDS = 400;

/** A phased GT-only cohort VCF on contig 1: every page of it with every call is tens of megabytes. */
function writeCohort(file: string): void {
  const names = Array.from({ length: SAMPLES }, (_, i) => `S${String(i).padStart(4, '0')}`);
  const lines = ['##fileformat=VCFv4.2', '##contig=<ID=1,length=249250621>', '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">'];
  lines.push(['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', 'FORMAT', ...names].join('\t'));
  for (let r = 0; r < RECORDS; r++) {
    const calls = names.map((_, s) => ((r * 7 + s * 13) % 11 === 0 ? '0|1' : '0|0'));
    lines.push(['1', String(10_000 + r * 10), '.', 'A', 'G', '50', 'PASS', '.', 'GT', ...calls].join('\t'));
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
}

let location: string;
/** Pages of the whole cohort: tens of megabytes, so a client that stops reading one holds its slot. */
const WHOLE_PAGES = { defaultPageSize: 100, maxPageSize: 1000, pageByteBudget: 64 * 1024 * 1024 };
const request = { variantSetId: idOf('d', 'vs', 'cohort'), referenceName: '1', start: 0, end: 20_000, pageSize: 1000 };

before(async () => {
  const dir = tempDir();
  const made = await newRegistry(dir);
  const registry = made.registry;
  location = made.location;
  const sets = path.join(dir, 'sets');
  fs.mkdirSync(sets);
  const fasta = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
  copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
  copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);
  await loadReferenceSet(registry, fasta, {});
  await addDataset(registry, 'd');
  const vcf = path.join(dir, 'cohort.vcf');
  writeCohort(vcf);
  await loadVariantSet(registry, 'd', [vcf], { referenceset: 'NCBI37', name: 'cohort' });
});

// Built in a worker thread (the default), and on the main thread in slices (--page-workers 0).
for (const pageWorkers of [1, 0]) describe(`large responses, --page-workers ${pageWorkers}`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(location, {
      pageWorkers,
      // Refused at once rather than waiting in line (see 'waiting for a slot' for the wait).
      limits: { ...defaultServerLimits(), maxStreams: 1, streamWaitMs: 0 },
      paging: WHOLE_PAGES,
    });
  });

  it('answers one over --max-streams with 503 and Retry-After (--stream-wait-ms 0), and serves again once the slot is free', async () => {
    // A client that asks for a page of every call and stops reading it holds the only slot. It stops
    // once the answer has begun: the slot is taken before the first byte, and on a loaded machine (the
    // page worker runs below everything else) no fixed wait is sure to be long enough.
    const holder = await connect(server.url);
    const begun = new Promise((resolve) => holder.once('data', resolve));
    holder.write(rawPost('/variants/search', JSON.stringify(request)));
    await begun;
    holder.pause();

    const refused = await server.post('/variants/search', { ...request, pageSize: 1 });
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.errorCode, 22);
    assert.match(refused.json.message, /1 large responses/);
    assert.equal(refused.headers.get('retry-after'), '1');
    // Small requests are not large responses: they are answered meanwhile.
    assert.equal((await server.get('/info')).status, 200);

    holder.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const served = await server.post('/variants/search', { ...request, pageSize: 1 });
    assert.equal(served.status, 200, served.text);
    assert.equal(served.json.variants[0].calls.length, SAMPLES);
  });

  it('a whole page read by a client that reads is complete (the slices join up)', async () => {
    const socket = await connect(server.url);
    const response = readResponse(socket, 30_000);
    socket.write(rawPost('/variants/search', JSON.stringify(request)));
    const res = await response;
    socket.destroy();
    assert.equal(res.status, 200);
    assert.equal(res.json.variants.length, RECORDS);
    for (const v of res.json.variants) assert.equal(v.calls.length, SAMPLES);
  });

  it('a page of many pieces in gzip and in brotli decompresses to the uncompressed page (pieces are not reused before they are written)', async () => {
    const plain = await raw(server, 'POST', '/variants/search', {}, request);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(plain.body.toString('utf8')).variants.length, RECORDS);
    assert.ok(plain.body.length > 8 << 20, `${plain.body.length} bytes: several 1 MB pieces`);
    for (const coding of ['gzip', 'br', 'identity', 'gzip']) {
      const again = await raw(server, 'POST', '/variants/search', { 'accept-encoding': coding }, request);
      assert.equal(again.status, 200);
      assert.equal(again.headers['content-encoding'], coding === 'identity' ? undefined : coding);
      assert.ok(decoded(again).equals(plain.body), `${coding}: the same bytes as the first uncompressed page`);
    }
  });

  if (pageWorkers > 0 && process.platform === 'linux') {
    it('builds pages in a thread below the main thread (the idle scheduling policy, or niced)', async () => {
      // A page of variants, built in the page worker.
      assert.equal((await server.post('/variants/search', { ...request, pageSize: 1 }, { 'accept-encoding': 'gzip' })).status, 200);
      const main = schedulingOfThread(process.pid);
      const threads = fs.readdirSync('/proc/self/task').map(schedulingOfThread);
      assert.equal(main.policy, SCHED_OTHER);
      assert.ok(threads.some((t) => t.policy === SCHED_IDLE || t.nice > main.nice), JSON.stringify(threads));
    });
  }

  it('answers the checks of a request before any byte, from wherever the page is built', async () => {
    const missing = await server.post('/variants/search', { ...request, variantSetId: idOf('d', 'vs', 'nope') });
    assert.equal(missing.status, 404, missing.text);
    const backwards = await server.post('/variants/search', { ...request, start: 100, end: 50 });
    assert.equal(backwards.status, 400, backwards.text);
    assert.match(backwards.json.message, /'end'/);
    const one = await server.post('/variants/search', { ...request, pageSize: 1 });
    const byId = await server.get(`/variants/${one.json.variants[0].id}`);
    assert.equal(byId.status, 200, byId.text);
    assert.deepEqual(byId.json, one.json.variants[0]);
  });
});

/** A client asking for a page of every call that reads only the first bytes of its answer, and so keeps its slot. */
interface Holder {
  socket: net.Socket;
  /** The first bytes of the answer. */
  head: Promise<string>;
  answered: boolean;
}

async function askAndHold(url: string): Promise<Holder> {
  const socket = await connect(url);
  const holder: Holder = { socket, head: Promise.resolve(''), answered: false };
  holder.head = new Promise<string>((resolve, reject) => {
    socket.once('data', (data) => {
      socket.pause();
      holder.answered = true;
      resolve(data.toString('latin1'));
    });
    socket.once('close', () => reject(new Error('the connection closed before an answer')));
  });
  holder.head.catch(() => {}); // a holder hung up by the test never answers
  socket.write(rawPost('/variants/search', JSON.stringify(request)));
  return holder;
}

/** Resolves once `count` requests wait in line for a slot. */
async function untilWaiting(slots: StreamSlots, count: number): Promise<void> {
  while (slots.waiting() !== count) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * Hangs up on `first`, which frees its slot, then on each client in `line` once it is answered: the
 * names in the order they were served. Each holds its slot until hung up, so no other can be answered
 * meanwhile.
 */
async function servedOrder(first: Holder, line: Map<string, Holder>): Promise<string[]> {
  const order: string[] = [];
  let serving = first;
  while (line.size) {
    serving.socket.destroy();
    const [name, head] = await Promise.race([...line].map(([name, h]) => h.head.then((head) => [name, head] as const)));
    assert.match(head, /^HTTP\/1.1 200 /, `${name}: ${head.slice(0, 200)}`);
    serving = line.get(name)!;
    line.delete(name);
    assert.deepEqual([...line].filter(([, h]) => h.answered).map(([other]) => other), [], `answered while ${name} holds the slot`);
    order.push(name);
  }
  serving.socket.destroy();
  return order;
}

describe('waiting for a slot', () => {
  /** A server with one slot for large responses, whose line the test watches. */
  async function oneSlot(pageWorkers: number, waitMs: number) {
    const slots = new StreamSlots(1, waitMs);
    const config = { ...defaultServerConfig(), port: 0, pageWorkers, paging: WHOLE_PAGES, limits: { ...defaultServerLimits(), maxStreams: 1, streamWaitMs: waitMs } };
    const server = await startServer(location, config, slots);
    atEnd(() => server.close());
    return { url: server.url, slots };
  }

  for (const pageWorkers of [1, 0]) {
    it(`serves the requests waiting for the only slot in the order they came, none refused (--page-workers ${pageWorkers})`, async () => {
      const { url, slots } = await oneSlot(pageWorkers, 60_000);
      const first = await askAndHold(url);
      await first.head;
      const line = new Map<string, Holder>();
      for (const name of ['b', 'c', 'd']) {
        line.set(name, await askAndHold(url));
        await untilWaiting(slots, line.size);
      }
      assert.deepEqual(await servedOrder(first, line), ['b', 'c', 'd']);
    });
  }

  it('gives the place of a client that hung up while waiting to those behind it, and refuses at once beyond a full line', async () => {
    const { url, slots } = await oneSlot(1, 60_000);
    const first = await askAndHold(url);
    await first.head;
    const line = new Map<string, Holder>();
    for (const name of ['b', 'c', 'd', 'e']) {
      line.set(name, await askAndHold(url));
      await untilWaiting(slots, line.size);
    }
    // Four wait for the one slot (WAITING_PER_SLOT): a fifth is refused without waiting its minute.
    const refused = await rawExchange(url, rawPost('/variants/search', JSON.stringify({ ...request, pageSize: 1 })), 30_000);
    assert.equal(refused.status, 503, refused.body);
    assert.equal(refused.json.errorCode, 22);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.json.message, /1 large responses, its limit, and 4 more wait for one/);

    line.get('c')!.socket.destroy();
    line.delete('c');
    await untilWaiting(slots, 3);
    line.set('f', await askAndHold(url));
    await untilWaiting(slots, 4);
    assert.deepEqual(await servedOrder(first, line), ['b', 'd', 'e', 'f']);
  });

  it('answers 503 with Retry-After once --stream-wait-ms has passed without a free slot', async () => {
    const served = await startServeProcess(location, '--max-streams', '1', '--stream-wait-ms', '200', '--page-byte-budget', String(WHOLE_PAGES.pageByteBudget));
    const first = await askAndHold(served.url);
    await first.head;
    const refused = await rawExchange(served.url, rawPost('/variants/search', JSON.stringify({ ...request, pageSize: 1 })), 30_000);
    assert.equal(refused.status, 503, refused.body);
    assert.equal(refused.json.errorCode, 22);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.json.message, /1 large responses, its limit, and none became free within 200 ms/);
    first.socket.destroy();
    // The slot is free again: the next request is served.
    const again = await rawExchange(served.url, rawPost('/variants/search', JSON.stringify({ ...request, pageSize: 1 })), 30_000);
    assert.equal(again.status, 200, again.body);
    assert.equal(again.json.variants[0].calls.length, SAMPLES);
  });
});

describe('slices', () => {
  /** Other work, one piece per turn of the event loop for `turns` turns, as other connections' would be. */
  function otherWork(order: string[], turns: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const tick = () => {
        order.push('other');
        if (--turns > 0) setImmediate(tick);
        else resolve();
      };
      setImmediate(tick);
    });
  }

  /**
   * Runs two streams of three writes each through yieldingSink beside other work; returns the order
   * of writes and turns.
   */
  async function interleave(piece: string, sliceMs: number): Promise<string[]> {
    const queue = new SliceQueue();
    const order: string[] = [];
    const stream = async (name: string) => {
      // The sink records when a piece is actually written; it never asks to wait.
      const sink = yieldingSink({ write: () => void order.push(name) }, sliceMs, queue);
      for (let i = 0; i < 3; i++) await sink.write(piece);
    };
    await Promise.all([stream('a'), stream('b'), otherWork(order, 8)]);
    assert.deepEqual(order.filter((o) => o !== 'other').sort(), ['a', 'a', 'a', 'b', 'b', 'b']);
    return order;
  }

  const twoInOneTurn = (order: string[]) => order.slice(1).some((o, i) => o !== 'other' && order[i] !== 'other');

  it('take turns one per turn of the event loop, with other work between any two', async () => {
    // Every write asks to yield (a slice of 0 ms): each turn holds at most one slice.
    const order = await interleave('x', 0);
    // A small piece is written at once, the yield comes after it: the first two writes share the first turn.
    assert.deepEqual(order.slice(0, 2).sort(), ['a', 'b']);
    const later = order.slice(2);
    assert.ok(!twoInOneTurn(later), `two slices in one turn: ${order.join(' ')}`);
  });

  it('let other work run at the pauses of a page held until complete, once its slice has run out', async () => {
    /** A page that builds three stretches (pausing after each) and then writes, beside a ticker of other work. */
    const run = async (sliceMs: number) => {
      const order: string[] = [];
      const sink = yieldingSink({ write: () => void order.push('write') }, sliceMs, new SliceQueue());
      const page = (async () => {
        for (let i = 0; i < 3; i++) {
          order.push('built');
          await sink.pause!();
        }
        await sink.write('x');
      })();
      await Promise.all([page, otherWork(order, 4)]);
      return order;
    };
    const yielding = await run(0);
    assert.equal(yielding[0], 'built');
    assert.ok(yielding.indexOf('other') < yielding.lastIndexOf('built'), `no other work between the stretches: ${yielding.join(' ')}`);
    // Within its slice, a page goes on building without waiting.
    assert.deepEqual((await run(60_000)).slice(0, 4), ['built', 'built', 'built', 'write']);
  });

  it('write each large piece in a turn of its own, however little time has passed', async () => {
    const order = await interleave('x'.repeat(LARGE_PIECE), 60_000);
    assert.ok(!twoInOneTurn(order), `two large pieces in one turn: ${order.join(' ')}`);
    // Small pieces within the time slice are written without waiting.
    const small = await interleave('x', 60_000);
    assert.deepEqual(small.slice(0, 6).sort(), ['a', 'a', 'a', 'b', 'b', 'b']);
  });
});
