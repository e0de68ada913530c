/**
 * H1 (issue 51): the tools of the field reading through this server's htsget URLs against the same
 * tools on the local files, in the same run: `samtools view -c` of the reads part's region of the
 * bench BAM, and `bcftools view -H | wc -l` of P1's region of the cohort VCF; and the time of a
 * one-region ticket beside the time of the same endpoint's service-info (the HTTP round trip alone).
 * Each answer is checked: the tool counts at least the region's records through the URL (a ticket
 * may hold more, never fewer).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { median, medianSeconds, type Context } from './parts.js';
import type { ReadsManifest } from './reads.js';
import { startRangeServer, type RunningServer } from './processes.js';
import { type Figure, judge } from './report.js';

/** Ticket requests timed, after as many to warm the caches (the parsed index, the file's layout). */
const TICKETS = 200;

/** A command's standard output. */
function output(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${err.trim()}`))));
  });
}

/** Milliseconds of each of `n` GETs of `pathOf(i)`, one at a time. */
async function latencies(ctx: Context, pathOf: (i: number) => string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const path = pathOf(i);
    const start = performance.now();
    const r = await ctx.client.send('GET', path);
    times.push(performance.now() - start);
    if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
  }
  return times;
}

/** One tool through the URL against the same tool on the file, each the median of the repetitions. */
async function againstLocal(
  ctx: Context,
  what: { name: string; records: number; remote: string; local: string; floor: string; count: (source: string) => string },
): Promise<Figure[]> {
  const counted = Number((await output('bash', ['-c', what.count(what.remote)])).trim());
  if (!(counted >= what.records)) throw new Error(`H1: ${what.name}: the htsget URL gave ${counted} records; the region holds ${what.records}`);
  ctx.log(`H1: ${what.name}, through htsget and on the local file (${ctx.options.repetitions} runs each)`);
  const remote = await medianSeconds(ctx.options.repetitions, 'bash', ['-c', what.count(what.remote)]);
  const local = await medianSeconds(ctx.options.repetitions, 'bash', ['-c', what.count(what.local)]);
  const floor = await medianSeconds(ctx.options.repetitions, 'bash', ['-c', what.count(what.floor)]);
  const value = what.records / remote.wall;
  const baseline = what.records / local.wall;
  const floorRate = what.records / floor.wall;
  const againstFloor = judge({
    part: 'H1',
    name: `${what.name}, the floor: the tool on the file served by a bare HTTP range server`,
    unit: 'records/s',
    value: floorRate,
    baselineName: 'the same tool on the local file',
    baseline,
    ratio: floorRate / baseline,
    detail: { seconds: floor.wall, cpuSeconds: floor.cpu, htsgetAgainstFloor: value / floorRate },
  });
  return [judge({
    part: 'H1',
    name: what.name,
    unit: 'records/s',
    value,
    baselineName: 'the same tool on the local file',
    baseline,
    ratio: value / baseline,
    detail: { records: what.records, countedThroughHtsget: counted, seconds: remote.wall, cpuSeconds: remote.cpu, localSeconds: local.wall, localCpuSeconds: local.cpu, floorSeconds: floor.wall },
  }), againstFloor];
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export async function measureHtsget(ctx: Context, reads: ReadsManifest | undefined): Promise<Figure[]> {
  const base = ctx.server.url.toString().replace(/\/$/, '');
  const figures: Figure[] = [];
  const floors: RunningServer[] = [];
  const rangeServerOf = async (file: string) => {
    const server = await startRangeServer(path.dirname(file), path.join(ctx.logDir, 'range-server.log'));
    floors.push(server);
    return `${server.url.toString().replace(/\/$/, '')}/${encodeURIComponent(path.basename(file))}`;
  };
  try {
    if (reads) {
      const { start, end } = reads.region;
      const ticket = `/htsget/reads/bench/bench-reads?referenceName=${encodeURIComponent(reads.contig)}&start=${start}&end=${end}`;
      const floor = await rangeServerOf(reads.bam);
      const regionText = `${reads.contig}:${start + 1}-${end}`;
      figures.push(
        ...(await againstLocal(ctx, {
          name: 'samtools view -c of the reads region',
          records: reads.region.reads,
          remote: base + ticket,
          local: reads.bam,
          floor,
          count: (source) => `samtools view -c ${quote(source)}${source === reads.bam || source === floor ? ` ${quote(regionText)}` : ''}`,
        })),
      );
      // One-region tickets of 10 kb windows, each window another (no block of one ticket is read for the
      // next), after as many to load the index; the round trip of the endpoint's service-info beside them.
      const window = (i: number) => start + ((i * 10_007) % Math.max(1, end - start - 10_000));
      const oneRegion = (i: number) => `/htsget/reads/bench/bench-reads?referenceName=${encodeURIComponent(reads.contig)}&start=${window(i)}&end=${window(i) + 10_000}`;
      await latencies(ctx, oneRegion, TICKETS);
      const ticketMs = median(await latencies(ctx, (i) => oneRegion(i + TICKETS), TICKETS));
      await latencies(ctx, () => '/htsget/reads/service-info', TICKETS);
      const roundTripMs = median(await latencies(ctx, () => '/htsget/reads/service-info', TICKETS));
      figures.push(
        judge({
          part: 'H1',
          name: 'a one-region BAM ticket (median latency)',
          unit: 'ms',
          value: ticketMs,
          baselineName: 'GET /htsget/reads/service-info',
          baseline: roundTripMs,
          ratio: ticketMs / roundTripMs,
          detail: { requests: TICKETS, beyondRoundTripMs: ticketMs - roundTripMs },
        }),
      );
    }
    if (ctx.ids.variantSetId) {
      const { contig, region, vcf } = ctx.data;
      const regionText = `${contig}:${region.start + 1}-${region.end}`;
      const floor = await rangeServerOf(vcf);
      figures.push(
        ...(await againstLocal(ctx, {
          name: 'bcftools view -H | wc -l of the P1 region',
          records: region.records,
          remote: `${base}/htsget/variants/bench/cohort?referenceName=${encodeURIComponent(contig)}&start=${region.start}&end=${region.end}`,
          local: vcf,
          floor,
          count: (source) => `bcftools view -H ${quote(source)}${source === vcf || source === floor ? ` -r ${quote(regionText)}` : ''} | wc -l`,
        })),
      );
    }
  } finally {
    await Promise.all(floors.map((f) => f.stop()));
  }
  return figures;
}
