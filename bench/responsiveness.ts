/**
 * P6: does one busy connection starve the others? `GET /info` on a fresh connection (connect, send,
 * read the whole answer, close), timed while 4 clients page through every call of the 2,504-sample
 * cohort, beside the same probe against the idle server. The loaders run in a process of their own
 * (bench/pager.ts) so that their work does not delay the probe's own event loop.
 *
 * Beside it, for reading: the same probes against the bare replay server (bench/replay-server.ts,
 * plain node:http) while the same 4 clients page through the server's own pages replayed from memory,
 * and against it idle: what any node:http server does under that load on this machine.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { variantPage } from './client.js';
import { RECORDED_BYTES, writeRecording } from './p1.js';
import { percentile, type Context } from './parts.js';
import { cpuSecondsOf, ROOT, startReplayServer } from './processes.js';
import { type Figure, judge } from './report.js';

const LOADERS = 4;
const PROBE_TIMEOUT_MS = 10_000;

interface Probe {
  /** From opening the connection to the end of the answer. */
  ms: number;
  /** From opening the connection to its establishment (done by the kernel; long only when the accept queue is full). */
  connectMs: number;
  /** From sending the request to the first byte of the answer. */
  firstByteMs: number;
  status: number;
}

/** One GET /info on a fresh connection. */
function probe(base: URL): Promise<Probe> {
  const start = performance.now();
  let connected = Number.POSITIVE_INFINITY;
  let firstByte = Number.POSITIVE_INFINITY;
  return new Promise((resolve) => {
    const req = http.get(new URL('/info', base), { agent: false, headers: { connection: 'close' } }, (res) => {
      res.once('data', () => (firstByte = performance.now()));
      res.resume();
      res.on('end', () => {
        const end = performance.now();
        resolve({ ms: end - start, connectMs: connected - start, firstByteMs: Math.min(firstByte, end) - connected, status: res.statusCode ?? 0 });
      });
    });
    req.once('socket', (socket) => socket.once('connect', () => (connected = performance.now())));
    req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
    // A refused or timed-out probe counts as infinitely slow.
    req.on('error', () => resolve({ ms: Number.POSITIVE_INFINITY, connectMs: connected - start, firstByteMs: Number.POSITIVE_INFINITY, status: 0 }));
  });
}

const sortedBy = (probes: Probe[], key: keyof Probe) => probes.map((p) => p[key]).sort((a, b) => a - b);
const round = (x: number) => Number(x.toFixed(2));

/** `count` probes, one after another with a short pause between them. */
async function probes(base: URL, count: number): Promise<Probe[]> {
  const made: Probe[] = [];
  for (let i = 0; i < count; i++) {
    made.push(await probe(base));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return made;
}

function summary(made: Probe[]) {
  const total = sortedBy(made, 'ms');
  const connect = sortedBy(made, 'connectMs');
  const firstByte = sortedBy(made, 'firstByteMs');
  return {
    p50Ms: round(percentile(total, 50)),
    p99Ms: round(percentile(total, 99)),
    maxMs: round(total[total.length - 1]),
    // Where the slow probes waited: for the connection, or for the answer once connected.
    connectP99Ms: round(percentile(connect, 99)),
    connectMaxMs: round(connect[connect.length - 1]),
    firstByteP99Ms: round(percentile(firstByte, 99)),
    failed: made.filter((p) => p.status !== 200).length,
  };
}

/** Idle probes, then the same probes while bench/pager.ts pages through `request` on LOADERS connections. */
async function probeIdleAndLoaded(server: { url: URL; pid: number }, request: Record<string, unknown>, count: number) {
  await probes(server.url, 20); // warm-up
  const idle = summary(await probes(server.url, count));
  const pager = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'pager.ts'), server.url.toString(), String(LOADERS), JSON.stringify(request)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  pager.stdout.on('data', (d) => (out += d));
  const exited = new Promise<number>((resolve) => pager.on('exit', (code) => resolve(code ?? -1)));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (out.includes('started')) {
        clearInterval(check);
        resolve();
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(check);
      reject(new Error(`bench/pager.ts exited (${code}) before its clients started`));
    });
  });
  const cpuBefore = cpuSecondsOf(server.pid);
  const loadStart = performance.now();
  const loaded = summary(await probes(server.url, count));
  const seconds = (performance.now() - loadStart) / 1000;
  const cpuSeconds = cpuSecondsOf(server.pid) - cpuBefore;
  pager.stdin.end();
  if ((await exited) !== 0) throw new Error('bench/pager.ts failed; see its message above');
  const load = JSON.parse(out.trim().split('\n').at(-1)!) as { pages: number; bytes: number; passes: number; shed: number };
  return {
    idle,
    loaded,
    load: {
      pagesPerSecond: round(load.pages / seconds),
      megabytesPerSecond: round(load.bytes / seconds / 1024 / 1024),
      pagesShed: load.shed,
      serverCpuSecondsPerSecond: round(cpuSeconds / seconds),
    },
  };
}

export async function measureResponsiveness(ctx: Context): Promise<Figure[]> {
  const count = Math.max(100, ctx.options.duration * 40);
  const request = { variantSetId: ctx.ids.variantSetId, referenceName: ctx.data.contig, start: 0, end: ctx.data.params.referenceLength, pageSize: 1000 };
  ctx.log(`P6: ${count} probes of GET /info on fresh connections, idle server, then while ${LOADERS} clients page through every call of the cohort`);
  const server = await probeIdleAndLoaded(ctx.server, request, count);

  // The bare replay: the first pages of the same query and the server's /info answer, from memory.
  const dir = path.join(ctx.options.scratch, 'p6-replay');
  const recorded: Array<{ body: Buffer }> = [];
  let pageToken: string | undefined;
  do {
    const page = await variantPage(ctx.client, pageToken ? { ...request, pageToken } : request, { countCalls: false, keepBody: true });
    if (page.status !== 200) throw new Error(`POST /variants/search answered ${page.status}: ${page.error}`);
    recorded.push({ body: page.body! });
    pageToken = page.nextPageToken;
  } while (pageToken && recorded.reduce((n, p) => n + p.body.length, 0) < RECORDED_BYTES);
  writeRecording(dir, recorded);
  const info = await ctx.client.send('GET', '/info');
  fs.writeFileSync(path.join(dir, 'info.json'), info.body);
  ctx.log(`P6 baseline: the same probes against the bare replay of ${recorded.length} of its pages, idle and under the same load`);
  const replayServer = await startReplayServer(dir, 'precompressed', path.join(ctx.logDir, 'replay.log'), path.join(dir, 'info.json'));
  let replay: Awaited<ReturnType<typeof probeIdleAndLoaded>>;
  try {
    replay = await probeIdleAndLoaded(replayServer, request, count);
  } finally {
    await replayServer.stop();
  }

  return [
    judge({
      part: 'P6',
      name: `GET /info p99 on a fresh connection while ${LOADERS} clients page through every call`,
      unit: 'ms',
      value: server.loaded.p99Ms,
      baselineName: 'idle server',
      baseline: server.idle.p99Ms,
      ratio: server.loaded.p99Ms / server.idle.p99Ms,
      detail: { probes: count, ...server, replay },
    }),
    judge({
      part: 'P6',
      name: `the same probe of the bare replay (node:http) while ${LOADERS} clients page through its pages`,
      unit: 'ms',
      value: replay.loaded.p99Ms,
      baselineName: 'idle bare replay',
      baseline: replay.idle.p99Ms,
      ratio: replay.loaded.p99Ms / replay.idle.p99Ms,
      detail: { probes: count, ...replay },
    }),
  ];
}
