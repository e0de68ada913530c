/**
 * B1: Beacon sequence queries (`/beacon/g_variants?referenceName=&start=&referenceBases=&alternateBases=`)
 * for 1,000 alleles of the bench cohort drawn at random, one request at a time, at `boolean` and at
 * `count` granularity, beside the floor: the lookup of the same positions by the server's own VCF
 * reader (`recordsIn` of src/areas/variants/vcf-files.ts) in this process, in the same run, and one
 * HTTP round trip (the median of GET /beacon/service-info). Target: the median at most twice the
 * floor's plus the round trip. And `record` with the caseLevelData of every sample that carries the
 * allele, beside the 0.6.0a10 record of the same line with every call (`GET /variants/{id}`): the
 * same reading and writing of a cohort's line.
 * Each answer is checked: every allele drawn exists, and the count is at least one.
 */
import { execFileSync } from 'node:child_process';
import { alleleDigest } from '../src/areas/variants/variant-writer.js';
import { openVcf, recordsIn } from '../src/areas/variants/vcf-files.js';
import { prng } from './data.js';
import { median, percentile, type Context } from './parts.js';
import { type Figure, judge } from './report.js';

const QUERIES = 1000;
const RECORD_QUERIES = 100;

interface Allele {
  contig: string;
  /** 1-based, as the VCF. */
  pos: number;
  ref: string;
  alt: string;
  altColumn: string;
}

/** The value at percentile `p` of unsorted values. */
const percentileOf = (xs: number[], p: number) => percentile([...xs].sort((a, b) => a - b), p);

const round = (x: number) => Number(x.toFixed(3));

/** `n` alleles of the cohort drawn at random (the same ones every run), each a site's REF and one of its ALTs. */
function drawAlleles(vcf: string, n: number): Allele[] {
  const sites = execFileSync('bcftools', ['query', '-f', '%CHROM\t%POS\t%REF\t%ALT\n', vcf], { encoding: 'utf8', maxBuffer: 1 << 28 })
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));
  const random = prng(1001);
  return Array.from({ length: n }, () => {
    const [contig, pos, ref, altColumn] = sites[Math.floor(random() * sites.length)];
    const alts = altColumn.split(',');
    return { contig, pos: Number(pos), ref, alt: alts[Math.floor(random() * alts.length)], altColumn };
  });
}

/** Milliseconds of each GET, one at a time; `check` sees each answer. */
async function timed(ctx: Context, paths: string[], check: (body: any, i: number) => void): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < paths.length; i++) {
    const start = performance.now();
    const r = await ctx.client.send('GET', paths[i]);
    times.push(performance.now() - start);
    if (r.status !== 200) throw new Error(`GET ${paths[i]} answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
    check(JSON.parse(r.body.toString('utf8')), i);
  }
  return times;
}

export async function measureBeacon(ctx: Context): Promise<Figure[]> {
  const alleles = drawAlleles(ctx.data.vcf, QUERIES);
  const sequenceQuery = (a: Allele, granularity: string) =>
    `/beacon/g_variants?datasetIds=bench&referenceName=${encodeURIComponent(a.contig)}&start=${a.pos - 1}&referenceBases=${a.ref}&alternateBases=${a.alt}&requestedGranularity=${granularity}`;

  // The floor: the server's reader finding each position's lines, in this process, its index parsed once.
  const vcf = openVcf({ path: ctx.data.vcf, indexPath: `${ctx.data.vcf}.tbi`, indexKind: 'tbi' });
  const lookup = async (a: Allele) => {
    let found = 0;
    for await (const record of recordsIn(vcf, a.contig, a.pos - 1, a.pos)) if (record.start === a.pos - 1) found++;
    if (found === 0) throw new Error(`B1: the reader found no line at ${a.contig}:${a.pos}`);
  };
  for (const a of alleles) await lookup(a); // warm: the index, the blocks in the page cache
  const floor: number[] = [];
  for (const a of alleles) {
    const start = performance.now();
    await lookup(a);
    floor.push(performance.now() - start);
  }
  const floorMs = median(floor);

  await timed(ctx, Array(QUERIES).fill('/beacon/service-info'), () => {});
  const roundTripMs = median(await timed(ctx, Array(QUERIES).fill('/beacon/service-info'), () => {}));

  const figures: Figure[] = [];
  for (const granularity of ['boolean', 'count'] as const) {
    ctx.log(`B1: ${QUERIES} sequence queries at ${granularity} granularity`);
    const paths = alleles.map((a) => sequenceQuery(a, granularity));
    const check = (body: any, i: number) => {
      if (body.meta?.returnedGranularity !== granularity || body.responseSummary?.exists !== true) throw new Error(`B1: ${paths[i]} did not find the allele: ${JSON.stringify(body).slice(0, 300)}`);
      if (granularity === 'count' && !(body.responseSummary.numTotalResults >= 1)) throw new Error(`B1: ${paths[i]} counted ${body.responseSummary.numTotalResults}`);
    };
    await timed(ctx, paths.slice(0, 100), check); // warm: the registry's rows, the sets' contexts
    const times = await timed(ctx, paths, check);
    const value = median(times);
    figures.push(
      judge({
        part: 'B1',
        name: `sequence query, ${granularity} (median latency)`,
        unit: 'ms',
        value,
        baselineName: 'the reader in process (the floor)',
        baseline: floorMs,
        ratio: value / floorMs,
        detail: { queries: QUERIES, p50Ms: round(value), p99Ms: round(percentileOf(times, 99)), floorP99Ms: round(percentileOf(floor, 99)), roundTripMs: round(roundTripMs), samples: ctx.data.params.samples },
      }),
    );
  }

  // Records with their caseLevelData, beside the 0.6.0a10 record of the same line with every call.
  const some = alleles.slice(0, RECORD_QUERIES);
  let cases = 0;
  const recordPaths = some.map((a) => sequenceQuery(a, 'record'));
  const recordCheck = (body: any, i: number) => {
    const results = body.response?.resultSets?.[0]?.results;
    if (!results?.length) throw new Error(`B1: ${recordPaths[i]} gave no record`);
    cases += results.reduce((n: number, r: any) => n + (r.caseLevelData?.length ?? 0), 0);
  };
  await timed(ctx, recordPaths.slice(0, 10), recordCheck);
  cases = 0;
  const recordTimes = await timed(ctx, recordPaths, recordCheck);
  const variantPaths = some.map((a) => {
    const id = Buffer.from(JSON.stringify(['bench', 'vs', 'cohort', a.contig, String(a.pos - 1), alleleDigest(a.ref, a.altColumn)])).toString('base64url');
    return `/variants/${id}`;
  });
  const variantCheck = (body: any, i: number) => {
    if (body.calls?.length !== ctx.data.params.samples) throw new Error(`B1: ${variantPaths[i]} gave ${body.calls?.length} calls`);
  };
  await timed(ctx, variantPaths.slice(0, 10), variantCheck);
  const variantTimes = await timed(ctx, variantPaths, variantCheck);
  const recordMs = median(recordTimes);
  const variantMs = median(variantTimes);
  figures.push(
    judge({
      part: 'B1',
      name: 'sequence query, record with caseLevelData (median latency)',
      unit: 'ms',
      value: recordMs,
      baselineName: 'GET /variants/{id} of the same line, every call',
      baseline: variantMs,
      ratio: recordMs / variantMs,
      detail: { queries: RECORD_QUERIES, p50Ms: round(recordMs), p99Ms: round(percentileOf(recordTimes, 99)), baselineP99Ms: round(percentileOf(variantTimes, 99)), caseLevelDataPerRecord: round(cases / RECORD_QUERIES), samples: ctx.data.params.samples },
    }),
  );
  return figures;
}
