/**
 * `npm run bench -- --audit MECHANISM`: what one mechanism of the server buys, measured on and off in
 * the same run. The bench's data and one registry are made once; two servers are started on it, one
 * as it is and one without the mechanism; then rounds alternate between them (on, off, on, off ...),
 * each round a P1 pass (the default pageSize, uncompressed or in the one coding --codings names: calls/s), a READS pass (pageSize 1000:
 * reads/s), P6's probes under its four pagers (p99) and the server's peak RSS over the three. The
 * medians of each side, their ratio and the verdict are printed; every round is kept in the JSON.
 *
 * The verdict: a mechanism is worth keeping when it makes one of the four figures better by at least
 * KEEP_GAIN (a change a user would notice). Both servers must read exactly the same bytes, or the
 * audit stops: a switch that changed the answers would measure something else.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from './client.js';
import { ensureData } from './data.js';
import type { BenchOptions } from './options.js';
import { UsageError } from './options.js';
import { type Coding, projectPass, type Pass } from './p1.js';
import { discoverIds, median, type Context } from './parts.js';
import { memoryOf, type RunningServer, startGa4ghServer, trackPeakMemory } from './processes.js';
import { ensureReadsData, readsPass, readsRequest, type ReadsPass } from './reads.js';
import { pagerRequest, probeCount, probeUnderLoad } from './responsiveness.js';
import { ensureTools, freshRegistry, gitCommit } from './setup.js';

/**
 * How each mechanism is switched off: a serve option or an environment variable the server reads.
 * The other mechanisms were compared with temporary switches (docs/performance.md, "How large pages
 * are built").
 */
export const MECHANISMS: Record<string, { off: { env?: Record<string, string>; readAheadMb?: number }; what: string }> = {
  'read-ahead': { off: { readAheadMb: 0 }, what: "the page workers' next pages built ahead (--read-ahead-mb 0 without)" },
  'native-writer': { off: { env: { GA4GH_NATIVE_WRITER: '0' } }, what: 'the alignment writer in C' },
  'native-scan': { off: { env: { GA4GH_NATIVE_SCAN: '0' } }, what: 'the column scan of cohort lines in C' },
};

/** The least a mechanism must make one figure better by to be kept. */
const KEEP_GAIN = 1.1;

const MB = 1024 * 1024;

/** One side's figures in one round. */
interface Side {
  p1CallsPerSecond: number;
  readsPerSecond: number;
  p6P99Ms: number;
  peakRssMegabytes: number;
  p1: { seconds: number; serverCpuSeconds: number };
  reads: { seconds: number; serverCpuSeconds: number };
  p6: Awaited<ReturnType<typeof probeUnderLoad>>;
  peakMethod: string;
  loadAverage: number[];
}

/** The four figures, and which way is better. */
const FIGURES: Array<{ key: 'p1CallsPerSecond' | 'readsPerSecond' | 'p6P99Ms' | 'peakRssMegabytes'; label: string; unit: string; higherIsBetter: boolean }> = [
  { key: 'p1CallsPerSecond', label: 'P1 calls/s, default pageSize', unit: 'calls/s', higherIsBetter: true },
  { key: 'readsPerSecond', label: 'READS reads/s, pageSize 1000', unit: 'reads/s', higherIsBetter: true },
  { key: 'p6P99Ms', label: 'P6 GET /info p99 under 4 pagers', unit: 'ms', higherIsBetter: false },
  { key: 'peakRssMegabytes', label: 'peak RSS over a round', unit: 'MB', higherIsBetter: false },
];

const loadText = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

/** The medians, the ratio on/off, what the mechanism gains (≥ 1: better with it) and the verdict. */
export function summarize(rounds: Array<{ on: Side; off: Side }>) {
  const rows = FIGURES.map((f) => {
    const on = median(rounds.map((r) => r.on[f.key]));
    const off = median(rounds.map((r) => r.off[f.key]));
    const ratio = on / off;
    return { ...f, on, off, ratio, gain: f.higherIsBetter ? ratio : 1 / ratio };
  });
  const moved = rows.filter((r) => r.gain >= KEEP_GAIN);
  const verdict = moved.length
    ? `keep: ${moved.map((r) => `${r.label} ${r.gain.toFixed(2)}x better with it`).join('; ')}`
    : `remove: no figure ${Math.round((KEEP_GAIN - 1) * 100)}% better with it`;
  return { rows, keep: moved.length > 0, verdict };
}

const number = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M` : x >= 1e4 ? `${(x / 1e3).toFixed(1)} k` : x.toFixed(x >= 100 ? 0 : 2));

export function formatAudit(mechanism: string, coding: Coding, summary: ReturnType<typeof summarize>, loads: { before: number[]; after: number[] }): string {
  const header = ['figure', 'on (median)', 'off (median)', 'on/off', 'better with it'];
  const rows = summary.rows.map((r) => [r.label, `${number(r.on)} ${r.unit}`, `${number(r.off)} ${r.unit}`, `${r.ratio.toFixed(3)}`, `${r.gain.toFixed(2)}x`]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [
    `${mechanism} (${MECHANISMS[mechanism].what}); P1 ${coding === 'identity' ? 'uncompressed' : coding}; load average ${loadText(loads.before)} before, ${loadText(loads.after)} after`,
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    `verdict: ${summary.verdict}`,
  ].join('\n');
}

/** A P1 pass, a READS pass and P6's loaded probes on one server, its peak memory over them. */
async function round(
  ctx: Context,
  readsClient: Client,
  readsQuery: Record<string, unknown>,
  expected: { p1Bytes: number; reads: ReadsPass },
  coding: Coding,
): Promise<Side> {
  const peak = trackPeakMemory(ctx.server.pid);
  const p1: Pass = await projectPass(ctx, { expectBytes: expected.p1Bytes, coding });
  const reads = await readsPass(readsClient, readsQuery, ctx.server.pid, { expected: expected.reads });
  const p6 = await probeUnderLoad(ctx.server, pagerRequest(ctx), probeCount(ctx));
  const memory = peak();
  return {
    p1CallsPerSecond: p1.calls / p1.seconds,
    readsPerSecond: reads.alignments / reads.seconds,
    p6P99Ms: p6.loaded.p99Ms,
    peakRssMegabytes: memory.peak / MB,
    p1: { seconds: p1.seconds, serverCpuSeconds: p1.serverCpuSeconds },
    reads: { seconds: reads.seconds, serverCpuSeconds: reads.serverCpuSeconds },
    p6,
    peakMethod: memory.method,
    loadAverage: os.loadavg(),
  };
}

export async function runAudit(options: BenchOptions, mechanism: string, log: (line: string) => void): Promise<void> {
  const { rounds } = options;
  // P1 in the one coding asked for, else uncompressed.
  const coding: Coding = options.codings.length === 1 ? options.codings[0] : 'identity';
  const switched = MECHANISMS[mechanism];
  if (!switched) throw new UsageError(`--audit takes ${Object.keys(MECHANISMS).join(', ')}, not '${mechanism}'`);
  const loadBefore = os.loadavg();
  await ensureTools(log);
  const data = await ensureData(options.scratch, options.data, log);
  const readsData = await ensureReadsData(data, options.reads, log);
  const { registry } = await freshRegistry(data, { variants: true, rna: false, reads: readsData }, log);
  const out = options.out;
  fs.mkdirSync(path.dirname(out), { recursive: true });

  const logFile = path.join(path.dirname(out), `audit-${mechanism}-server.log`);
  const serve = { registry, logFile, pageWorkers: options.pageWorkers, readAheadMb: options.readAheadMb };
  const servers: { on?: RunningServer; off?: RunningServer } = {};
  const clients: Client[] = [];
  try {
    [servers.on, servers.off] = await Promise.all([startGa4ghServer(serve), startGa4ghServer({ ...serve, ...switched.off })]);
    const sides = await Promise.all(
      (['on', 'off'] as const).map(async (side) => {
        const server = servers[side]!;
        const client = new Client(server.url);
        const readsClient = new Client(server.url);
        clients.push(client, readsClient);
        const ids = await discoverIds(client, true, false);
        const ctx: Context = { client, server, data, options, ids, registryFile: registry, logDir: path.dirname(out), log };
        return { side, ctx, readsClient, readsQuery: (await readsRequest(ctx, readsData)).request, restRss: memoryOf(server.pid).rss };
      }),
    );
    // Untimed passes: every call and every read counted, the JIT and the page cache warmed; the timed
    // passes are held to their bytes, the same on both sides.
    const expected = [];
    for (const s of sides) {
      log(`audit ${mechanism}, ${s.side}: verification passes (P1 every call, READS every read), warm-up probes`);
      const p1 = await projectPass(s.ctx, { verify: true, coding });
      const reads = await readsPass(s.readsClient, s.readsQuery, s.ctx.server.pid);
      if (reads.alignments !== readsData.region.reads) throw new Error(`the reads search gave ${reads.alignments} alignments; samtools view -c counts ${readsData.region.reads}`);
      await probeUnderLoad(s.ctx.server, pagerRequest(s.ctx), 20);
      expected.push({ p1Bytes: p1.bytes, p1Calls: p1.calls, reads });
    }
    const [on, off] = expected;
    if (on.p1Bytes !== off.p1Bytes || on.reads.bytes !== off.reads.bytes) {
      throw new Error(`without ${mechanism} the server answered other bytes: P1 ${off.p1Bytes} against ${on.p1Bytes}, READS ${off.reads.bytes} against ${on.reads.bytes}`);
    }
    const measured: Array<{ on: Side; off: Side }> = [];
    for (let i = 0; i < rounds; i++) {
      log(`audit ${mechanism}: round ${i + 1} of ${rounds} (on, then off); load average ${loadText(os.loadavg())}`);
      const [onSide, offSide] = sides;
      const withIt = await round(onSide.ctx, onSide.readsClient, onSide.readsQuery, on, coding);
      const withoutIt = await round(offSide.ctx, offSide.readsClient, offSide.readsQuery, off, coding);
      measured.push({ on: withIt, off: withoutIt });
    }
    const summary = summarize(measured);
    const loads = { before: loadBefore, after: os.loadavg() };
    const result = {
      date: new Date().toISOString(),
      commit: gitCommit(),
      mechanism,
      what: switched.what,
      off: switched.off,
      machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, loadAverage: loads },
      parameters: { ...options.data, reads: options.reads, rounds, p1Coding: coding, probes: probeCount(sides[0].ctx), pageWorkers: options.pageWorkers, readAheadMb: options.readAheadMb },
      restRssMegabytes: { on: sides[0].restRss / MB, off: sides[1].restRss / MB },
      p1Region: `${data.contig}:${data.region.start + 1}-${data.region.end}`,
      readsRegion: `${readsData.contig}:${readsData.region.start + 1}-${readsData.region.end}`,
      // What both sides' verification passes read, each call and read counted.
      verified: { p1Bytes: on.p1Bytes, p1Calls: on.p1Calls, readsBytes: on.reads.bytes, alignments: on.reads.alignments },
      summary,
      rounds: measured,
    };
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    console.log('\n' + formatAudit(mechanism, coding, summary, loads));
    console.log(`\nwritten to ${path.relative(process.cwd(), out) || out}`);
  } finally {
    for (const client of clients) client.close();
    await Promise.all([servers.on?.stop(), servers.off?.stop()]);
  }
}
