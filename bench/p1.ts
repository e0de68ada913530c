/**
 * P1, variants with every call paged to the end, and P5, the server's peak memory meanwhile. Beside
 * `bcftools`, P1's limit is measured in the same run: a bare server (bench/replay-server.ts) replaying
 * pages this server answered, to the same client, as they are and compressed (compressing as it sends,
 * the baseline; and sending bytes compressed ahead of time, the limit of the bytes alone). The
 * project's passes and the replay's alternate, so that both see the same machine load; the ratio
 * between them is the figure that counts on a shared machine. Then 2 and 4 clients at once.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { brotliParams, defaultCompression } from '../src/content-coding.js';
import { Client, variantPage } from './client.js';
import { type Context, medianBy, medianSeconds } from './parts.js';
import { cpuSecondsOf, memoryOf, startReplayServer, threadCpuSecondsOf, threadSplit, trackPeakMemory } from './processes.js';
import { type Figure, judge } from './report.js';

export type Coding = 'identity' | 'gzip' | 'br';
/** The codings measured with several clients: none, and what R's and Python's clients ask for. */
const CONCURRENT_CODINGS: Coding[] = ['identity', 'gzip'];
const CLIENT_COUNTS = [2, 4];
/**
 * Rounds of project and replay passes per coding; the round of median ratio is shown. Five: with a
 * client that only reads, the rounds of one run spread 0.48-0.79 (pass 25), and three let one stray
 * round move the median.
 */
const ROUNDS = 5;
/** Pages kept for the replay: enough to be representative, few enough to sit in memory. */
export const RECORDED_BYTES = 64 * 1024 * 1024;
const MB = 1024 * 1024;

export interface Pass {
  seconds: number;
  pages: number;
  variants: number;
  calls: number;
  /** Bytes of JSON received (after decompression). */
  bytes: number;
  /** Bytes that came over the wire. */
  wireBytes: number;
  /** CPU the client's process (this part's) spent over the pass, as a share of its wall time. */
  clientCpuShare: number;
  /** CPU seconds the measured server used over the pass, all its threads. */
  serverCpuSeconds: number;
  /** The same, split between its main thread, its busiest other thread (the page worker) and the rest. */
  serverThreads: ReturnType<typeof threadSplit>;
}

interface RecordedPage {
  body: Buffer;
  calls: number;
  variants: number;
}

/** The server answered without the coding asked for (a server started with compression off, or an older one). */
class NotOffered extends Error {}

const acceptOf = (coding: Coding) => (coding === 'identity' ? undefined : coding);

/** Runs `clients` copies of `walk` at once, each with its own connection; sums what they read. */
async function together(
  url: URL,
  pid: number,
  clients: number,
  walk: (client: Client) => Promise<Omit<Pass, 'seconds' | 'clientCpuShare' | 'serverCpuSeconds' | 'serverThreads'>>,
): Promise<Pass> {
  const connections = Array.from({ length: clients }, () => new Client(url));
  const cpu = process.cpuUsage();
  const serverCpu = cpuSecondsOf(pid);
  const serverThreads = threadCpuSecondsOf(pid);
  const start = performance.now();
  try {
    const parts = await Promise.all(connections.map(walk));
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    const sum = (key: keyof (typeof parts)[number]) => parts.reduce((n, p) => n + p[key], 0);
    return {
      seconds,
      pages: sum('pages'),
      variants: sum('variants'),
      calls: sum('calls'),
      bytes: sum('bytes'),
      wireBytes: sum('wireBytes'),
      clientCpuShare: (used.user + used.system) / 1e6 / seconds,
      serverCpuSeconds: cpuSecondsOf(pid) - serverCpu,
      serverThreads: threadSplit(pid, serverThreads, threadCpuSecondsOf(pid)),
    };
  } finally {
    for (const c of connections) c.close();
  }
}

function p1Request(ctx: Context, pageSize: number | undefined): Record<string, unknown> {
  const { region, contig } = ctx.data;
  const request: Record<string, unknown> = { variantSetId: ctx.ids.variantSetId, referenceName: contig, start: region.start, end: region.end };
  if (pageSize !== undefined) request.pageSize = pageSize;
  return request;
}

/**
 * Pages through P1's region with every call, following nextPageToken to the end, on each of
 * `clients` connections at once. The calls are counted exactly (one by one) in a verification pass,
 * which can also record the pages it read. A timed pass given `expectBytes` (the JSON the verification
 * pass read at the same page size) only reads the bytes, as the replay's passes do, and fails unless
 * each client read exactly that many; without it, it counts the variants of every page.
 */
export async function projectPass(
  ctx: Context,
  o: { pageSize?: number; verify?: boolean; coding?: Coding; clients?: number; record?: RecordedPage[]; expectBytes?: number },
): Promise<Pass> {
  const { region } = ctx.data;
  const request = p1Request(ctx, o.pageSize);
  const pass = await together(ctx.server.url, ctx.server.pid, o.clients ?? 1, async (client) => {
    const sums = { pages: 0, variants: 0, calls: 0, bytes: 0, wireBytes: 0 };
    let recorded = 0;
    let pageToken: string | undefined;
    do {
      const keepBody = o.record !== undefined && recorded < RECORDED_BYTES;
      const page = await variantPage(client, pageToken ? { ...request, pageToken } : request, {
        countCalls: o.verify ?? false,
        countVariants: o.expectBytes === undefined,
        acceptEncoding: acceptOf(o.coding ?? 'identity'),
        keepBody,
      });
      if (page.status !== 200) throw new Error(`POST /variants/search answered ${page.status}: ${page.error}`);
      if ((page.coding ?? 'identity') !== (o.coding ?? 'identity')) throw new NotOffered(`asked for ${o.coding}, answered ${page.coding ?? 'identity'}`);
      if (keepBody) {
        o.record!.push({ body: page.body!, calls: page.calls, variants: page.variants });
        recorded += page.bytes;
      }
      sums.pages++;
      sums.variants += page.variants;
      sums.calls += page.calls;
      sums.bytes += page.bytes;
      sums.wireBytes += page.wireBytes;
      pageToken = page.nextPageToken;
    } while (pageToken);
    const expected = region.records * ctx.data.params.samples;
    // A pass that counted no variants is held to the verification pass's bytes instead.
    const counted = o.expectBytes === undefined;
    if (!counted && sums.bytes !== o.expectBytes) throw new Error(`P1 read ${sums.bytes} bytes of JSON; its verification pass read ${o.expectBytes}`);
    if ((counted && sums.variants !== region.records) || (o.verify && sums.calls !== expected)) {
      throw new Error(`P1 read ${sums.variants} variants and ${sums.calls} calls; the region holds ${region.records} and ${expected}`);
    }
    return { ...sums, variants: region.records, calls: expected };
  });
  return pass;
}

/** The same number of pages as a project pass, from the replay server, on each of `clients` connections. */
function replayPass(ctx: Context, replay: { url: URL; pid: number }, recorded: RecordedPage[], pages: number, coding: Coding, clients = 1): Promise<Pass> {
  const request = p1Request(ctx, 1000);
  return together(replay.url, replay.pid, clients, async (client) => {
    const sums = { pages: 0, variants: 0, calls: 0, bytes: 0, wireBytes: 0 };
    for (let i = 0; i < pages; i++) {
      const page = await variantPage(client, i ? { ...request, pageToken: 'replay' } : request, { countCalls: false, countVariants: false, acceptEncoding: acceptOf(coding) });
      const expected = recorded[i % recorded.length];
      if (page.status !== 200 || page.bytes !== expected.body.length) throw new Error(`the replay answered ${page.status} with ${page.bytes} bytes of JSON`);
      sums.pages++;
      sums.variants += expected.variants;
      sums.calls += expected.calls;
      sums.bytes += page.bytes;
      sums.wireBytes += page.wireBytes;
    }
    return sums;
  });
}

/**
 * The bare replay beside the replay with the least work of a server reading the VCF (floor.ts),
 * uncompressed, ROUNDS rounds alternated, the round of median ratio: the best ratio to the replay
 * this machine allows a server of these pages. No target: it tells what bounds the uncompressed figure.
 */
async function againstFloor(ctx: Context, dir: string, replay: { url: URL; pid: number }, recorded: RecordedPage[], pages: number): Promise<Figure> {
  const { data } = ctx;
  // The region's blocks, as the share of the file's records before it and in it (-G: no genotypes, -H: no header).
  const before = execFileSync('bcftools', ['view', '-H', '-G', '-r', `${data.contig}:1-${data.region.start}`, data.vcf], { maxBuffer: 256 << 20 })
    .toString('latin1')
    .split('\n')
    .filter(Boolean).length;
  const sites = data.params.sites;
  const spec = { file: data.vcf, from: before / sites, to: (before + data.region.records) / sites, pages };
  ctx.log(`P1: pageSize 1000, uncompressed: the bare replay and the replay with the least work of a server reading the VCF, ${ROUNDS} rounds`);
  const floorServer = await startReplayServer(dir, 'precompressed', path.join(ctx.logDir, 'replay-floor.log'), undefined, spec);
  const rounds: Array<{ floored: Pass; replayed: Pass }> = [];
  try {
    await replayPass(ctx, floorServer, recorded, pages, 'identity'); // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      const replayed = await replayPass(ctx, replay, recorded, pages, 'identity');
      const floored = await replayPass(ctx, floorServer, recorded, pages, 'identity');
      rounds.push({ floored, replayed });
    }
  } finally {
    await floorServer.stop();
  }
  const ratioOf = (r: (typeof rounds)[number]) => rate(r.floored) / rate(r.replayed);
  const chosen = medianBy(rounds, ratioOf);
  return judge({
    part: 'P1',
    name: 'the least work of a server reading the VCF (inflating, one write, ahead), pageSize 1000, uncompressed',
    unit: 'calls/s',
    value: rate(chosen.floored),
    baselineName: 'bare replay',
    baseline: rate(chosen.replayed),
    ratio: ratioOf(chosen),
    detail: { leastWork: true, ...passDetail(chosen.floored), ratios: rounds.map(ratioOf), replay: passDetail(chosen.replayed), regionBlocks: { from: spec.from, to: spec.to } },
  });
}

/** Writes the recorded pages, as they are and compressed with the server's default settings, for the replay server. */
export function writeRecording(dir: string, recorded: Array<{ body: Buffer }>): void {
  const settings = defaultCompression();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  recorded.forEach((page, i) => {
    const file = path.join(dir, `page-${i}.json`);
    fs.writeFileSync(file, page.body);
    fs.writeFileSync(file + '.gz', zlib.gzipSync(page.body, { level: settings.gzipLevel }));
    fs.writeFileSync(
      file + '.br',
      zlib.brotliCompressSync(page.body, { params: brotliParams(settings) }),
    );
  });
}

const rate = (p: Pass) => p.calls / p.seconds;

/** One round of a coding: the project, the replay as the baseline, the replay of precompressed bytes. */
interface Round {
  project: Pass;
  replay: Pass;
  limit: Pass;
}

function passDetail(p: Pass) {
  return {
    seconds: p.seconds,
    pages: p.pages,
    variants: p.variants,
    calls: p.calls,
    megabytes: p.bytes / MB,
    bytesPerCall: p.bytes / p.calls,
    wireBytesPerCall: p.wireBytes / p.calls,
    clientCpuShare: p.clientCpuShare,
    // CPU seconds are less sensitive than wall time to other work on a shared machine.
    serverCpuSeconds: p.serverCpuSeconds,
    // Where the server's CPU went: on two cores, the page worker's share is what the sending cannot overlap (pass 25).
    serverThreadCpuSeconds: p.serverThreads,
    callsPerCpuSecond: p.calls / p.serverCpuSeconds,
  };
}

/** P1 (calls per second, against the replay and bcftools; bytes per call; several clients) and P5. */
export async function measureVariants(ctx: Context, wantP1: boolean, wantP5: boolean): Promise<Figure[]> {
  const { data, options } = ctx;
  const samples = data.params.samples;
  const restRss = memoryOf(ctx.server.pid).rss;
  const figures: Figure[] = [];

  const regionText = `${data.contig}:${data.region.start + 1}-${data.region.end}`;
  let bcftoolsCallsPerSecond = 0;
  let bcftools = { wall: 0, cpu: 0 };
  if (wantP1) {
    ctx.log(`P1 baseline: bcftools view -H -r ${regionText} (${options.repetitions} runs)`);
    bcftools = await medianSeconds(options.repetitions, 'bcftools', ['view', '-H', '-r', regionText, data.vcf]);
    bcftoolsCallsPerSecond = (data.region.records * samples) / bcftools.wall;
  }
  // An untimed pass first, counting every call: it checks the answers, records pages for the
  // replay, and warms the JIT and the page cache, as the bcftools runs did for bcftools.
  ctx.log(`P1: verification pass, counting every call of ${data.region.records.toLocaleString('en')} variants × ${samples} samples`);
  const recorded: RecordedPage[] = [];
  const verified = await projectPass(ctx, { pageSize: 1000, verify: true, record: recorded });

  ctx.log('P1: timed pass, pageSize 1000');
  const peak = trackPeakMemory(ctx.server.pid);
  const exact = { pageSize: 1000, expectBytes: verified.bytes };
  const big = await projectPass(ctx, exact);
  const memory = peak();
  if (wantP1) {
    // Compressed answers decompress to the same calls: checked once per coding, untimed (after
    // P5's pass, which thus measures what it always did). Only the codings asked for (--codings).
    const codings: Coding[] = options.codings.includes('identity') ? ['identity'] : [];
    for (const coding of (['gzip', 'br'] as const).filter((c) => options.codings.includes(c))) {
      try {
        await projectPass(ctx, { ...exact, verify: true, coding });
        codings.push(coding);
      } catch (e) {
        if (!(e instanceof NotOffered)) throw e;
        ctx.log(`P1: the server does not answer in ${coding}; no ${coding} figures`);
      }
    }

    // At the default page size too, the timed pass reads bytes only, held to an untimed pass that
    // counted every call: a count of variants in the timed pass scanned every byte in the client.
    ctx.log('P1: verification pass, default pageSize');
    const verifiedDefault = await projectPass(ctx, { verify: true });
    ctx.log('P1: timed pass, default pageSize');
    const passes: Array<[string, Pass, Pass]> = [
      ['pageSize 1000', big, verified],
      ['default pageSize', await projectPass(ctx, { expectBytes: verifiedDefault.bytes }), verifiedDefault],
    ];
    for (const [label, pass, verification] of passes) {
      figures.push(
        judge({
          part: 'P1',
          name: `variants with every call, ${label}`,
          unit: 'calls/s',
          value: rate(pass),
          baselineName: 'bcftools view -H -r',
          baseline: bcftoolsCallsPerSecond,
          ratio: rate(pass) / bcftoolsCallsPerSecond,
          detail: {
            ...passDetail(pass),
            bcftoolsSeconds: bcftools.wall,
            bcftoolsCpuSeconds: bcftools.cpu,
            bcftoolsCallsPerCpuSecond: pass.calls / bcftools.cpu,
            verifiedCalls: verification.calls,
            region: regionText,
          },
        }),
      );
    }
    // The same work per CPU second: on a shared machine the server's wall time includes waiting for
    // a core. Given when the pass used enough CPU to count (the kernel counts in 10 ms ticks).
    if (big.serverCpuSeconds >= 1 && bcftools.cpu > 0) {
      figures.push(
        judge({
          part: 'P1',
          name: 'calls per CPU second, pageSize 1000 (server process only)',
          unit: 'calls/CPU s',
          value: big.calls / big.serverCpuSeconds,
          baselineName: 'bcftools',
          baseline: big.calls / bcftools.cpu,
          ratio: bcftools.cpu / big.serverCpuSeconds,
          detail: { serverCpuSeconds: big.serverCpuSeconds, bcftoolsCpuSeconds: bcftools.cpu, wallSeconds: big.seconds },
        }),
      );
    }
    figures.push(...(await againstReplay(ctx, recorded, big, codings, exact)));
  }
  if (wantP5) {
    figures.push(
      judge({
        part: 'P5',
        name: 'server peak RSS during P1, pageSize 1000',
        unit: 'MB',
        value: memory.peak / MB,
        baselineName: 'at rest',
        baseline: restRss / MB,
        ratio: memory.peak / restRss,
        detail: { method: memory.method },
      }),
    );
  }
  return figures;
}

/**
 * The project against the replay of its own pages, per coding: a project pass, then the replay
 * compressing as it sends, then the replay of bytes compressed ahead of time (uncompressed: the one
 * replay), in ROUNDS rounds, keeping the round of median ratio. Then the bytes on the wire per call, and
 * 2 and 4 clients at once against one.
 */
async function againstReplay(
  ctx: Context,
  recorded: RecordedPage[],
  identityPass: Pass,
  codings: Coding[],
  exact: { pageSize: number; expectBytes: number },
): Promise<Figure[]> {
  const dir = path.join(ctx.logDir, 'replay-pages');
  writeRecording(dir, recorded);
  // One page kept for bench/id-sizes.ts.
  fs.writeFileSync(path.join(ctx.logDir, 'p1-page.json'), recorded[0].body);
  const log = path.join(ctx.logDir, 'replay-server.log');
  const precompressed = await startReplayServer(dir, 'precompressed', log);
  const compressing = await startReplayServer(dir, 'compressing', log).catch(async (e) => {
    await precompressed.stop();
    throw e;
  });
  const figures: Figure[] = [];
  const single = new Map<Coding, Round>();
  try {
    const pages = identityPass.pages;
    for (const replay of [precompressed, compressing]) await replayPass(ctx, replay, recorded, Math.min(pages, 2), 'gzip'); // warm-up
    for (const coding of codings) {
      ctx.log(`P1: pageSize 1000, ${coding}: the project and the replay of its pages, ${ROUNDS} rounds`);
      const rounds: Round[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const project = coding === 'identity' && i === 0 ? identityPass : await projectPass(ctx, { ...exact, coding });
        const replay = await replayPass(ctx, coding === 'identity' ? precompressed : compressing, recorded, pages, coding);
        const limit = coding === 'identity' ? replay : await replayPass(ctx, precompressed, recorded, pages, coding);
        rounds.push({ project, replay, limit });
      }
      const ratioOf = (r: Round) => rate(r.project) / rate(r.replay);
      const chosen = medianBy(rounds, ratioOf);
      single.set(coding, chosen);
      figures.push(
        judge({
          part: 'P1',
          name: `pageSize 1000, ${coding === 'identity' ? 'uncompressed' : coding}`,
          unit: 'calls/s',
          value: rate(chosen.project),
          baselineName: 'bare replay',
          baseline: rate(chosen.replay),
          ratio: ratioOf(chosen),
          detail: {
            coding,
            ...passDetail(chosen.project),
            ratios: rounds.map(ratioOf),
            replay: { mode: coding === 'identity' ? 'as recorded' : 'compressing as it sends', ...passDetail(chosen.replay) },
            ...(coding === 'identity'
              ? {}
              : { precompressedReplayCallsPerSecond: rate(chosen.limit), ratioToPrecompressed: rate(chosen.project) / rate(chosen.limit) }),
            recordedPages: recorded.length,
          },
        }),
      );
    }
    if (codings.includes('identity')) figures.push(await againstFloor(ctx, dir, precompressed, recorded, pages));
    const plain = single.get('identity')?.project ?? identityPass;
    for (const coding of codings.filter((c) => c !== 'identity')) {
      const p = single.get(coding)!.project;
      figures.push(
        judge({
          part: 'P1',
          name: `bytes on the wire per call, ${coding}`,
          unit: 'B/call',
          value: p.wireBytes / p.calls,
          baselineName: 'uncompressed',
          baseline: plain.wireBytes / plain.calls,
          ratio: p.wireBytes / plain.wireBytes,
          detail: { wireMegabytes: p.wireBytes / MB, jsonMegabytes: p.bytes / MB },
        }),
      );
    }
    for (const coding of CONCURRENT_CODINGS.filter((c) => codings.includes(c))) {
      // One client again just before, so that the scaling compares passes minutes apart at most.
      ctx.log(`P1: 1 client, ${coding}`);
      const replayOf = coding === 'identity' ? precompressed : compressing;
      const one = { project: await projectPass(ctx, { ...exact, coding }), replay: await replayPass(ctx, replayOf, recorded, pages, coding) };
      for (const clients of CLIENT_COUNTS) {
        ctx.log(`P1: ${clients} clients at once, ${coding}`);
        const peak = trackPeakMemory(ctx.server.pid);
        const project = await projectPass(ctx, { ...exact, coding, clients });
        const memory = peak();
        const replayed = await replayPass(ctx, replayOf, recorded, pages, coding, clients);
        figures.push(
          judge({
            part: 'P1',
            name: `${clients} clients at once, ${coding === 'identity' ? 'uncompressed' : coding}, all their calls`,
            unit: 'calls/s',
            value: rate(project),
            baselineName: '1 client just before',
            baseline: rate(one.project),
            ratio: rate(project) / rate(one.project),
            detail: {
              ...passDetail(project),
              clients,
              replayCallsPerSecond: rate(replayed),
              replayScaling: rate(replayed) / rate(one.replay),
              ratioToReplay: rate(project) / rate(replayed),
              serverPeakRssMegabytes: memory.peak / MB,
            },
          }),
        );
      }
    }
  } finally {
    await Promise.all([precompressed.stop(), compressing.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
