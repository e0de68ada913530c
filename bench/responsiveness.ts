/**
 * P6: does one busy connection starve the others? `GET /info` on a fresh connection (connect, send,
 * read the whole answer, close), timed while 4 clients page through every call of the 2,504-sample
 * cohort, beside the same probe against the idle server. The loaders run in a process of their own
 * (bench/pager.ts) so that their work does not delay the probe's own event loop.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { Context } from './parts.js';
import { ROOT } from './processes.js';
import { type Figure, judge } from './report.js';

const LOADERS = 4;
const PROBE_TIMEOUT_MS = 10_000;

/** Milliseconds from opening a connection to the end of the answer to GET /info on it. */
function probe(base: URL): Promise<{ ms: number; status: number }> {
  const start = performance.now();
  return new Promise((resolve) => {
    const req = http.get(new URL('/info', base), { agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - start, status: res.statusCode ?? 0 }));
    });
    req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
    // A refused or timed-out probe counts as infinitely slow.
    req.on('error', () => resolve({ ms: Number.POSITIVE_INFINITY, status: 0 }));
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** `count` probes, one after another with a short pause between them; their times, sorted. */
async function probes(base: URL, count: number): Promise<{ sorted: number[]; failed: number }> {
  const times: number[] = [];
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const { ms, status } = await probe(base);
    if (status !== 200) failed++;
    times.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { sorted: times.sort((a, b) => a - b), failed };
}

const summary = (sorted: number[]) => ({
  p50Ms: Number(percentile(sorted, 50).toFixed(2)),
  p99Ms: Number(percentile(sorted, 99).toFixed(2)),
  maxMs: Number(sorted[sorted.length - 1].toFixed(2)),
});

export async function measureResponsiveness(ctx: Context): Promise<Figure[]> {
  const base = ctx.server.url;
  const count = Math.max(100, ctx.options.duration * 40);
  await probes(base, 20); // warm-up
  ctx.log(`P6 baseline: ${count} probes of GET /info on fresh connections, idle server`);
  const idle = await probes(base, count);

  const request = { variantSetId: ctx.ids.variantSetId, referenceName: ctx.data.contig, start: 0, end: ctx.data.params.referenceLength, pageSize: 1000 };
  ctx.log(`P6: the same probes while ${LOADERS} clients page through every call of the cohort`);
  const pager = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'pager.ts'), base.toString(), String(LOADERS), JSON.stringify(request)], {
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
  const loadStart = performance.now();
  const loaded = await probes(base, count);
  const loadSeconds = (performance.now() - loadStart) / 1000;
  pager.stdin.end();
  if ((await exited) !== 0) throw new Error('bench/pager.ts failed; see its message above');
  const load = JSON.parse(out.trim().split('\n').at(-1)!) as { pages: number; bytes: number; passes: number; shed: number };

  const idleP99 = percentile(idle.sorted, 99);
  const loadedP99 = percentile(loaded.sorted, 99);
  return [
    judge({
      part: 'P6',
      name: `GET /info p99 on a fresh connection while ${LOADERS} clients page through every call`,
      unit: 'ms',
      value: loadedP99,
      baselineName: 'idle server',
      baseline: idleP99,
      ratio: loadedP99 / idleP99,
      detail: {
        probes: count,
        loaded: summary(loaded.sorted),
        idle: summary(idle.sorted),
        failedProbes: loaded.failed + idle.failed,
        loadPagesPerSecond: Number((load.pages / loadSeconds).toFixed(1)),
        loadMegabytesPerSecond: Number((load.bytes / loadSeconds / 1024 / 1024).toFixed(1)),
        loadPagesShed: load.shed,
      },
    }),
  ];
}
