/**
 * The reads part of the bench: a generated, coordinate-sorted BAM of at least a million 100 bp reads on
 * the bench contig (written as SAM by a seeded generator, compressed with `samtools view -b` and
 * indexed with `samtools index`), and every read of a region paged to the end over HTTP, measured
 * beside `samtools view REGION > /dev/null` on the same file and beside a bare node:http server
 * replaying the very bytes the server sent, page by page (what HTTP alone costs for those pages).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { Client, tokenIn } from './client.js';
import { generatedOnce, prng, run, type DataManifest } from './data.js';
import { medianBy, medianSeconds, type Context } from './parts.js';
import type { FloorSpec } from './floor.js';
import { cpuSecondsOf, startReadsReplayServer, threadCpuSecondsOf, threadSplit, trackPeakMemory } from './processes.js';
import { type Figure, judge } from './report.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';

/** Bump when the generator changes, so an old BAM is not reused (2: bases from the reference, and a CRAM). */
const READS_GENERATOR_VERSION = 2;
const READ_LENGTH = 100;
const READ_GROUPS = ['bench-rg1', 'bench-rg2'];
/** Rounds of a server pass then a replay pass: five, as P1's, so that one stray round does not move the median. */
const ROUNDS = 5;
/** The server's page size when a request gives none (src/protocol/paging.ts). */
const DEFAULT_PAGE_SIZE = defaultPagingLimits.defaultPageSize;

export interface ReadsManifest {
  bam: string;
  /** The same reads as CRAM (`samtools view -C` against the bench reference, its default slices of 10,000 reads). */
  cram: string;
  reads: number;
  contig: string;
  /** The measured window, 0-based half-open, and the reads overlapping it (samtools view -c). */
  region: { start: number; end: number; reads: number };
}

async function output(command: string, args: string[]): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'close');
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${code}): ${err.trim()}`);
  return out;
}

/** The BAM for `reads` reads over the data's contig, generated once and then reused. */
export function ensureReadsData(data: DataManifest, reads: number, log: (line: string) => void): Promise<ReadsManifest> {
  const bam = path.join(data.dir, `reads-v${READS_GENERATOR_VERSION}-${reads}.bam`);
  return generatedOnce(`${bam}.json`, { log }, () => generateReads(data, bam, reads, log));
}

async function generateReads(data: DataManifest, bam: string, reads: number, log: (line: string) => void): Promise<ReadsManifest> {
  const length = data.params.referenceLength;
  const random = prng(0x7ead5 + reads);
  log(`generating a BAM of ${reads.toLocaleString('en')} reads (samtools view -b, samtools index)`);
  const first = Math.min(10_000, Math.floor(length / 10));
  const positions = new Float64Array(reads);
  for (let i = 0; i < reads; i++) positions[i] = first + Math.floor(random() * (length - first - 2 * READ_LENGTH));
  positions.sort();

  // Reads copy the reference with 1% of their bases changed, as an aligner's reads differ from it
  // (random bases made every base a CRAM substitution).
  const reference = fs.readFileSync(data.fasta, 'latin1').split('\n').slice(1).join('').toUpperCase();
  const samtools = spawn('samtools', ['view', '-b', '-o', bam, '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
  const finished = once(samtools, 'close');
  const stdin = samtools.stdin!;
  const write = async (text: string) => {
    if (!stdin.write(text)) await once(stdin, 'drain');
  };
  const header = [
    '@HD\tVN:1.6\tSO:coordinate',
    `@SQ\tSN:${data.contig}\tLN:${length}`,
    ...READ_GROUPS.map((rg, i) => `@RG\tID:${rg}\tSM:BENCH${i + 1}\tLB:lib${i + 1}\tPL:ILLUMINA\tPI:350`),
    '@PG\tID:bench\tPN:bench-reads\tVN:1',
  ];
  await write(header.join('\n') + '\n');
  // A pool of quality strings (Phred 2..41), so the generator spends its time on the reads themselves.
  const qualities = Array.from({ length: 64 }, () => {
    let q = '';
    for (let i = 0; i < READ_LENGTH; i++) q += String.fromCharCode(35 + Math.floor(random() * 40));
    return q;
  });
  const ACGT = 'ACGT';
  let block = '';
  for (let i = 0; i < reads; i++) {
    const pos = positions[i] + 1;
    const r = random();
    const cigar = r < 0.9 ? '100M' : r < 0.95 ? '5S95M' : r < 0.975 ? '50M2I48M' : '60M3D40M';
    const reverse = random() < 0.5;
    const first = random() < 0.5;
    const flag = 1 | 2 | (reverse ? 16 : 32) | (first ? 64 : 128) | (random() < 0.02 ? 1024 : 0);
    const insert = 250 + Math.floor(random() * 200);
    const mate = reverse ? Math.max(1, pos - insert + READ_LENGTH) : pos + insert - READ_LENGTH;
    const tlen = reverse ? -insert : insert;
    const from = pos - 1;
    const copied =
      cigar === '100M' ? reference.slice(from, from + 100)
      : cigar === '5S95M' ? 'NNNNN' + reference.slice(from, from + 95)
      : cigar === '50M2I48M' ? reference.slice(from, from + 50) + 'NN' + reference.slice(from + 50, from + 98)
      : reference.slice(from, from + 60) + reference.slice(from + 63, from + 103);
    let seq = '';
    for (let j = 0; j < READ_LENGTH; j++) seq += copied[j] === 'N' || random() < 0.01 ? ACGT[(random() * 4) | 0] : copied[j];
    const nm = Math.floor(random() * 4);
    block +=
      `read${String(i).padStart(8, '0')}\t${flag}\t${data.contig}\t${pos}\t${20 + Math.floor(random() * 41)}\t${cigar}\t=\t${mate}\t${tlen}\t` +
      `${seq}\t${qualities[(random() * qualities.length) | 0]}\tNM:i:${nm}\tAS:i:${100 - 5 * nm}\tRG:Z:${READ_GROUPS[i % 2]}\n`;
    if (block.length > 1 << 16) {
      await write(block);
      block = '';
    }
  }
  await write(block);
  stdin.end();
  const [code] = await finished;
  if (code !== 0) throw new Error(`samtools view -b failed (${code})`);
  await run('samtools', ['index', bam]);
  const cram = bam.replace(/\.bam$/, '.cram');
  await run('samtools', ['view', '-C', '-T', data.fasta, '-o', cram, bam]);
  await run('samtools', ['index', cram]);
  const region = { start: Math.floor(length * 0.4), end: Math.floor(length * 0.6), reads: 0 };
  region.reads = Number((await output('samtools', ['view', '-c', bam, `${data.contig}:${region.start + 1}-${region.end}`])).trim());
  return { bam, cram, reads, contig: data.contig, region };
}

const ALIGNMENT_KEY = Buffer.from('"readGroupId"');

/** Counts the alignments of a page as its chunks arrive: every alignment has one readGroupId key. */
function countAlignments(): { add(chunk: Buffer): void; count(): number } {
  let n = 0;
  let carry: Buffer = Buffer.alloc(0);
  const keep = ALIGNMENT_KEY.length - 1;
  const countIn = (b: Buffer) => {
    let c = 0;
    for (let at = b.indexOf(ALIGNMENT_KEY); at !== -1; at = b.indexOf(ALIGNMENT_KEY, at + ALIGNMENT_KEY.length)) c++;
    return c;
  };
  return {
    add(chunk) {
      n += countIn(chunk);
      if (carry.length) n += countIn(Buffer.concat([carry, chunk.subarray(0, keep)]));
      carry = Buffer.from(chunk.subarray(Math.max(0, chunk.length - keep)));
    },
    count: () => n,
  };
}

export interface ReadsPass {
  seconds: number;
  pages: number;
  alignments: number;
  bytes: number;
  serverCpuSeconds: number;
  /** The same, split between the server's main thread, its busiest other thread (the page worker) and the rest. */
  serverThreads: ReturnType<typeof threadSplit>;
  /** CPU seconds this process (the client's) spent over the pass, every thread. */
  clientCpuSeconds: number;
}

/**
 * Pages through the region with `client` to the end. With `record`, each page's bytes are appended to
 * that file and indexed by the pageToken of the request that asked for it (for the replay baseline).
 * Given `expected` (what the verification pass read), a pass only reads the bytes: it counts no
 * alignments (a scan of every byte, which made the client the limit of the replay) and fails unless
 * it read the same bytes in the same pages.
 */
export async function readsPass(
  client: Client,
  request: Record<string, unknown>,
  pid: number,
  o: { record?: { file: number; index: Record<string, [number, number]>; at: number }; expected?: ReadsPass } = {},
): Promise<ReadsPass> {
  const { record, expected } = o;
  let pages = 0;
  let alignments = 0;
  let bytes = 0;
  const cpu = cpuSecondsOf(pid);
  const threads = threadCpuSecondsOf(pid);
  const clientCpu = process.cpuUsage();
  const start = performance.now();
  let pageToken: string | undefined;
  do {
    const counter = expected ? undefined : countAlignments();
    const chunks: Buffer[] = [];
    let tail: Buffer = Buffer.alloc(0);
    const { status } = await client.stream('POST', '/reads/search', pageToken ? { ...request, pageToken } : request, (chunk) => {
      counter?.add(chunk);
      bytes += chunk.length;
      if (record) chunks.push(chunk);
      tail = chunk.length >= 4096 ? chunk : Buffer.concat([tail, chunk]).subarray(-4096);
    });
    if (status !== 200) throw new Error(`POST /reads/search answered ${status}: ${tail.toString('utf8', 0, 300)}`);
    if (record) {
      const body = Buffer.concat(chunks);
      fs.writeSync(record.file, body);
      record.index[pageToken ?? ''] = [record.at, body.length];
      record.at += body.length;
    }
    pages++;
    alignments += counter?.count() ?? 0;
    pageToken = tokenIn(tail);
  } while (pageToken);
  const seconds = (performance.now() - start) / 1000;
  if (expected) {
    if (bytes !== expected.bytes || pages !== expected.pages) {
      throw new Error(`a reads pass read ${bytes} bytes in ${pages} pages; the verification pass ${expected.bytes} in ${expected.pages}`);
    }
    alignments = expected.alignments;
  }
  const serverCpuSeconds = cpuSecondsOf(pid) - cpu;
  const serverThreads = threadSplit(pid, threads, threadCpuSecondsOf(pid));
  const used = process.cpuUsage(clientCpu);
  return { seconds, pages, alignments, bytes, serverCpuSeconds, serverThreads, clientCpuSeconds: (used.user + used.system) / 1e6 };
}

/** The server's passes over the region beside the replay's of the same pages, alternated. */
interface AgainstReplay {
  timed: ReadsPass;
  replayed: ReadsPass;
  ratios: number[];
  peakRss: number;
  /** The replay beside the replay with the least work of a server (floor.ts), when asked for. */
  floor?: { floored: ReadsPass; replayed: ReadsPass; ratios: number[] };
}

/** The BAM's blocks that hold a region, as fractions of the file's blocks (FloorSpec without its pages). */
type RegionBlocks = Omit<FloorSpec, 'pages'>;

/**
 * An untimed pass of the server that checks the count, warms it and records its pages, then ROUNDS
 * rounds of a server pass and a pass of a bare server replaying those pages; the round of median
 * ratio is returned. The replay of one page size is its own process: page tokens hold positions, not
 * page sizes, so pages of two sizes can share a token.
 */
async function againstReplay(ctx: Context, request: Record<string, unknown>, reads: ReadsManifest, regionText: string, floorBlocks?: RegionBlocks): Promise<AgainstReplay> {
  const { client, log } = ctx;
  const tag = `reads-replay-${request.pageSize}`;
  log(`reads: pageSize ${request.pageSize}, verification pass over ${reads.region.reads.toLocaleString('en')} reads, recording the pages`);
  const bodies = path.join(ctx.logDir, `${tag}.bin`);
  const record = { file: fs.openSync(bodies, 'w'), index: {} as Record<string, [number, number]>, at: 0 };
  let verified: ReadsPass;
  try {
    verified = await readsPass(client, request, ctx.server.pid, { record });
  } finally {
    fs.closeSync(record.file);
  }
  if (verified.alignments !== reads.region.reads) {
    throw new Error(`the reads search gave ${verified.alignments} alignments; samtools view -c counts ${reads.region.reads} in ${regionText}`);
  }
  const indexFile = path.join(ctx.logDir, `${tag}.json`);
  fs.writeFileSync(indexFile, JSON.stringify(record.index));

  // Passes of the server and of the replay alternate, so that both see the same machine load.
  log(`reads: pageSize ${request.pageSize}, the server and a bare server replaying the same pages, ${ROUNDS} rounds`);
  const replay = await startReadsReplayServer(bodies, indexFile, path.join(ctx.logDir, `${tag}-server.log`));
  const replayClient = new Client(replay.url);
  const rounds: Array<{ timed: ReadsPass; replayed: ReadsPass; peakRss: number }> = [];
  let floor: AgainstReplay['floor'];
  try {
    // The warm-up counts the replay's alignments; the timed passes of both only read bytes, checked against the verification pass.
    const warm = await readsPass(replayClient, request, replay.pid);
    if (warm.alignments !== verified.alignments) throw new Error(`the replay gave ${warm.alignments} alignments, the server ${verified.alignments}`);
    for (let i = 0; i < ROUNDS; i++) {
      const peak = trackPeakMemory(ctx.server.pid);
      const timed = await readsPass(client, request, ctx.server.pid, { expected: verified });
      const peakRss = peak().peak;
      const replayed = await readsPass(replayClient, request, replay.pid, { expected: verified });
      rounds.push({ timed, replayed, peakRss });
    }
    if (floorBlocks) floor = await replayAgainstFloor(ctx, request, { bodies, indexFile, tag }, { ...floorBlocks, pages: verified.pages }, replayClient, replay.pid, verified);
  } finally {
    replayClient.close();
    await replay.stop();
    fs.rmSync(bodies, { force: true });
  }
  // The same reads each pass: the ratio of the rates is that of the times.
  const ratioOf = (r: (typeof rounds)[number]) => r.replayed.seconds / r.timed.seconds;
  const { timed, replayed } = medianBy(rounds, ratioOf);
  return { timed, replayed, ratios: rounds.map(ratioOf), peakRss: Math.max(...rounds.map((r) => r.peakRss)), floor };
}

/**
 * ROUNDS rounds of a pass of the bare replay and a pass of the replay with the least work of a
 * server reading the BAM (floor.ts), alternated; the round of median ratio.
 */
async function replayAgainstFloor(
  ctx: Context,
  request: Record<string, unknown>,
  recording: { bodies: string; indexFile: string; tag: string },
  spec: FloorSpec,
  replayClient: Client,
  replayPid: number,
  verified: ReadsPass,
): Promise<NonNullable<AgainstReplay['floor']>> {
  ctx.log(`reads: pageSize ${request.pageSize}, the bare replay and the replay with the least work of a server reading the BAM, ${ROUNDS} rounds`);
  const floorServer = await startReadsReplayServer(recording.bodies, recording.indexFile, path.join(ctx.logDir, `${recording.tag}-floor.log`), spec);
  const floorClient = new Client(floorServer.url);
  const rounds: Array<{ floored: ReadsPass; replayed: ReadsPass }> = [];
  try {
    await readsPass(floorClient, request, floorServer.pid, { expected: verified });
    for (let i = 0; i < ROUNDS; i++) {
      const replayed = await readsPass(replayClient, request, replayPid, { expected: verified });
      const floored = await readsPass(floorClient, request, floorServer.pid, { expected: verified });
      rounds.push({ floored, replayed });
    }
  } finally {
    floorClient.close();
    await floorServer.stop();
  }
  const ratioOf = (r: (typeof rounds)[number]) => r.replayed.seconds / r.floored.seconds;
  const median = medianBy(rounds, ratioOf);
  return { ...median, ratios: rounds.map(ratioOf) };
}

/** What a server pass says beyond its rate. */
function passDetail(timed: ReadsPass, replayed: ReadsPass) {
  return {
    seconds: timed.seconds,
    pages: timed.pages,
    alignments: timed.alignments,
    megabytes: timed.bytes / (1024 * 1024),
    bytesPerAlignment: timed.bytes / timed.alignments,
    serverCpuSeconds: timed.serverCpuSeconds,
    // Where it went: the page worker's share is what sets the pace of reads (pass 25).
    serverThreadCpuSeconds: timed.serverThreads,
    // CPU seconds are less sensitive than wall time to other work on a shared machine.
    readsPerServerCpuSecond: timed.alignments / timed.serverCpuSeconds,
    // What the ratio to the replay turns on: the server's CPU (all its threads) per read served.
    serverCpuMicrosecondsPerAlignment: (timed.serverCpuSeconds * 1e6) / timed.alignments,
    // The client's too, paging the server and the replay: a client made heavier by its process (a
    // module loaded beside it) shows here first (bench/part.ts).
    clientCpuMicrosecondsPerAlignment: (timed.clientCpuSeconds * 1e6) / timed.alignments,
    clientCpuMicrosecondsPerReplayedAlignment: (replayed.clientCpuSeconds * 1e6) / replayed.alignments,
  };
}

/** The rounds against the replay, and the replay's own pass of the round shown. */
function replayDetail(r: AgainstReplay) {
  return { ratios: r.ratios, replaySeconds: r.replayed.seconds, replayCpuSeconds: r.replayed.serverCpuSeconds };
}

/** READS' request: both read groups of the BAM's set over the region, pageSize 1000; and the bench dataset's id. */
export async function readsRequest(ctx: Pick<Context, 'client' | 'ids'>, reads: ReadsManifest) {
  const { datasets } = await ctx.client.json('POST', '/datasets/search', {});
  const datasetId: string = datasets.find((d: { name: string }) => d.name === 'bench').id;
  const { readGroupSets } = await ctx.client.json('POST', '/readgroupsets/search', { datasetId, name: 'bench-reads' });
  const request = {
    readGroupIds: readGroupSets[0].readGroups.map((g: { id: string }) => g.id) as string[],
    referenceId: ctx.ids.referenceId,
    start: reads.region.start,
    end: reads.region.end,
    pageSize: 1000,
  };
  return { datasetId, request };
}

/**
 * Reads per second over HTTP, every read of the region paged to the end with pageSize 1000, beside
 * `samtools view REGION > /dev/null` and beside a bare server replaying the same pages; then with the
 * default pageSize (100, what clients get unless they ask), beside its own replay: there the cost of
 * each page, not of each read, shows.
 */
export async function measureReads(ctx: Context, reads: ReadsManifest): Promise<Figure[]> {
  const { options, log } = ctx;
  const { datasetId, request } = await readsRequest(ctx, reads);
  const regionText = `${reads.contig}:${reads.region.start + 1}-${reads.region.end}`;
  log(`reads baseline: samtools view ${regionText} > /dev/null (${options.repetitions} runs)`);
  const samtools = await medianSeconds(options.repetitions, 'samtools', ['view', reads.bam, regionText]);

  // The least work of a server reading the region from the BAM, beside the replay (floor.ts): the
  // region's blocks as the share of the file's reads before it and in it.
  const readsBefore = Number((await output('samtools', ['view', '-c', reads.bam, `${reads.contig}:1-${reads.region.start}`])).trim());
  const regionBlocks = { file: reads.bam, from: readsBefore / reads.reads, to: (readsBefore + reads.region.reads) / reads.reads };
  const large = await againstReplay(ctx, request, reads, regionText, regionBlocks);
  const { timed, replayed } = large;
  const value = timed.alignments / timed.seconds;
  const detail = { ...passDetail(timed, replayed), pageSize: request.pageSize, serverPeakRssMegabytes: large.peakRss / (1024 * 1024), region: regionText, bamReads: reads.reads };
  const samtoolsRate = reads.region.reads / samtools.wall;
  const replayRate = replayed.alignments / replayed.seconds;

  const small = await againstReplay(ctx, { ...request, pageSize: DEFAULT_PAGE_SIZE }, reads, regionText);
  const cram = await measureCram(ctx, reads, datasetId);
  const smallValue = small.timed.alignments / small.timed.seconds;
  const smallReplayRate = small.replayed.alignments / small.replayed.seconds;
  return [
    judge({
      part: 'READS',
      name: 'reads of a region, pageSize 1000',
      unit: 'reads/s',
      value,
      baselineName: 'samtools view REGION',
      baseline: samtoolsRate,
      ratio: value / samtoolsRate,
      detail: { ...detail, samtoolsSeconds: samtools.wall, samtoolsCpuSeconds: samtools.cpu },
    }),
    judge({
      part: 'READS',
      name: 'reads of a region, pageSize 1000, beside the same bytes replayed',
      unit: 'reads/s',
      value,
      baselineName: 'bare replay',
      baseline: replayRate,
      ratio: value / replayRate,
      detail: { ...detail, ...replayDetail(large) },
    }),
    floorFigure(large.floor!, request.pageSize),
    judge({
      part: 'READS',
      name: `reads of a region, pageSize ${DEFAULT_PAGE_SIZE} (the default), beside the same bytes replayed`,
      unit: 'reads/s',
      value: smallValue,
      baselineName: 'bare replay',
      baseline: smallReplayRate,
      ratio: smallValue / smallReplayRate,
      detail: {
        ...passDetail(small.timed, small.replayed),
        pageSize: DEFAULT_PAGE_SIZE,
        serverCpuMicrosecondsPerPage: (small.timed.serverCpuSeconds * 1e6) / small.timed.pages,
        // After the pages of 1000: memory that grows with the pages read shows here first.
        serverPeakRssMegabytes: small.peakRss / (1024 * 1024),
        ...replayDetail(small),
      },
    }),
    cram,
  ];
}

/**
 * The replay with the least work of a server reading the BAM (floor.ts) beside the bare replay: the
 * best ratio to the replay this machine allows a server of these pages. No target: it tells what
 * bounds the reads figures.
 */
function floorFigure(floor: NonNullable<AgainstReplay['floor']>, pageSize: number): Figure {
  const { floored, replayed } = floor;
  const value = floored.alignments / floored.seconds;
  const baseline = replayed.alignments / replayed.seconds;
  return judge({
    part: 'READS',
    name: `the least work of a server reading the BAM (inflating, one write, ahead), pageSize ${pageSize}, beside the same bytes replayed`,
    unit: 'reads/s',
    value,
    baselineName: 'bare replay',
    baseline,
    ratio: value / baseline,
    detail: {
      leastWork: true,
      seconds: floored.seconds,
      replaySeconds: replayed.seconds,
      ratios: floor.ratios,
      floorServerCpuSeconds: floored.serverCpuSeconds,
      floorServerThreadCpuSeconds: floored.serverThreads,
      replayServerCpuSeconds: replayed.serverCpuSeconds,
      clientCpuSeconds: floored.clientCpuSeconds,
      replayClientCpuSeconds: replayed.clientCpuSeconds,
    },
  });
}

/**
 * CRAM, for reading (issue 12 sets no target for it): a tenth of the region from the CRAM of the same
 * reads, in pages of the default size, first with every slice still to decode (no part before this
 * one asks for the CRAM), then again with the slices kept; beside `samtools view` of the same window.
 */
async function measureCram(ctx: Context, reads: ReadsManifest, datasetId: string): Promise<Figure> {
  const { client, options, log } = ctx;
  const { readGroupSets } = await client.json('POST', '/readgroupsets/search', { datasetId, name: 'bench-cram' });
  const start = reads.region.start;
  const end = start + Math.floor((reads.region.end - reads.region.start) / 10);
  const regionText = `${reads.contig}:${start + 1}-${end}`;
  const expected = Number((await output('samtools', ['view', '-c', '-T', ctx.data.fasta, reads.cram, regionText])).trim());
  const request = {
    readGroupIds: readGroupSets[0].readGroups.map((g: { id: string }) => g.id),
    referenceId: ctx.ids.referenceId,
    start,
    end,
    pageSize: DEFAULT_PAGE_SIZE,
  };
  log(`reads from CRAM: samtools view ${regionText} (${options.repetitions} runs), then the server twice over the same window`);
  const samtools = await medianSeconds(options.repetitions, 'samtools', ['view', '-T', ctx.data.fasta, reads.cram, regionText]);
  const first = await readsPass(client, request, ctx.server.pid);
  const kept = await readsPass(client, request, ctx.server.pid);
  for (const pass of [first, kept]) {
    if (pass.alignments !== expected) throw new Error(`the reads search of the CRAM gave ${pass.alignments} alignments; samtools view -c counts ${expected} in ${regionText}`);
  }
  const value = kept.alignments / kept.seconds;
  const baseline = expected / samtools.wall;
  return judge({
    part: 'READS',
    name: `reads of a tenth of the region from CRAM, pageSize ${DEFAULT_PAGE_SIZE}, its slices kept (the pass before decoded them)`,
    unit: 'reads/s',
    value,
    baselineName: 'samtools view REGION of the CRAM',
    baseline,
    ratio: value / baseline,
    detail: {
      pageSize: DEFAULT_PAGE_SIZE,
      region: regionText,
      alignments: expected,
      seconds: kept.seconds,
      serverCpuSeconds: kept.serverCpuSeconds,
      firstPassSeconds: first.seconds,
      firstPassReadsPerSecond: first.alignments / first.seconds,
      firstPassServerCpuSeconds: first.serverCpuSeconds,
      samtoolsSeconds: samtools.wall,
      samtoolsCpuSeconds: samtools.cpu,
    },
  });
}
