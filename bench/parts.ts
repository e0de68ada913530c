/**
 * The measurements of issue 6 but P1 (bench/p1.ts), each beside its baseline on the same data in the same run.
 * Every part checks the answers it times (counts of calls, bases and rows against what the generator
 * wrote), so a fast wrong answer cannot pass for a figure.
 */
import { spawn } from 'node:child_process';
import type autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { basesIn, type Client, tokenIn } from './client.js';
import type { DataManifest } from './data.js';
import type { BenchOptions } from './options.js';
import { cpuSecondsOf, runBenchScript, startBareServer } from './processes.js';
import { type Figure, judge } from './report.js';

export interface Ids {
  referenceId: string;
  referenceLength: number;
  variantSetId?: string;
  callSetId?: string;
  rnaQuantificationId?: string;
}

export interface Context {
  client: Client;
  /** The server the part measures (run.ts starts and stops it). */
  server: { url: URL; pid: number };
  data: DataManifest;
  options: BenchOptions;
  ids: Ids;
  registryFile: string;
  logDir: string;
  log: (line: string) => void;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** The value at percentile `p` of values sorted in ascending order. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The item of median `key` (the lower of the two middle ones for an even count). */
export const medianBy = <T>(items: T[], key: (item: T) => number): T => [...items].sort((a, b) => key(a) - key(b))[(items.length - 1) >> 1];

/**
 * Wall seconds of a command with its standard output sent to /dev/null, and the CPU seconds (user +
 * system) it used, read from bash's `times` (Node does not report a child's resource usage).
 */
export function timeCommand(command: string, args: string[]): Promise<{ wall: number; cpu: number }> {
  const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn('bash', ['-c', `${quoted} > /dev/null && times`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - start) / 1000;
      if (code !== 0) return reject(new Error(`${command} failed (${code}): ${stderr.trim()}`));
      // `times` prints the shell's user/system times, then its children's: "0m0.123s 0m0.010s".
      const children = stdout.trim().split('\n').at(-1)!.match(/(\d+)m([\d.]+)s/g) ?? [];
      const cpu = children.reduce((sum, t) => {
        const [, m, sec] = /(\d+)m([\d.]+)s/.exec(t)!;
        return sum + Number(m) * 60 + Number(sec);
      }, 0);
      resolve({ wall, cpu });
    });
  });
}

/** Median wall and CPU seconds of `times` runs of a command. */
export async function medianSeconds(times: number, command: string, args: string[]): Promise<{ wall: number; cpu: number }> {
  const runs: Array<{ wall: number; cpu: number }> = [];
  for (let i = 0; i < times; i++) runs.push(await timeCommand(command, args));
  return { wall: median(runs.map((r) => r.wall)), cpu: median(runs.map((r) => r.cpu)) };
}

/** Looks up the ids the parts need, through the API like any client. */
export async function discoverIds(client: Client, needVariants: boolean, needRna: boolean): Promise<Ids> {
  const { datasets } = await client.json('POST', '/datasets/search', {});
  const datasetId = datasets.find((d: any) => d.name === 'bench').id;
  const { referenceSets } = await client.json('POST', '/referencesets/search', {});
  const referenceSetId = referenceSets.find((s: any) => s.name === 'bench-ref').id;
  const { references } = await client.json('POST', '/references/search', { referenceSetId });
  const ids: Ids = { referenceId: references[0].id, referenceLength: Number(references[0].length) };
  if (needVariants) {
    const { variantSets } = await client.json('POST', '/variantsets/search', { datasetId });
    ids.variantSetId = variantSets[0].id;
    const { callSets } = await client.json('POST', '/callsets/search', { variantSetId: ids.variantSetId, pageSize: 1 });
    ids.callSetId = callSets[0].id;
  }
  if (needRna) {
    const { rnaQuantificationSets } = await client.json('POST', '/rnaquantificationsets/search', { datasetId });
    const { rnaQuantifications } = await client.json('POST', '/rnaquantifications/search', {
      rnaQuantificationSetId: rnaQuantificationSets[0].id,
    });
    ids.rnaQuantificationId = rnaQuantifications[0].id;
  }
  return ids;
}

/** P2: the whole contig's bases, paged, against samtools faidx on the same page ranges. */
export async function measureBases(ctx: Context): Promise<Figure[]> {
  const { referenceId, referenceLength } = ctx.ids;
  const path = `/references/${referenceId}/bases`;
  const pass = async () => {
    const ranges: Array<[number, number]> = [];
    let offset = 0;
    let pageToken: string | undefined;
    const start = performance.now();
    do {
      const query = `?start=0&end=${referenceLength}${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
      const r = await ctx.client.send('GET', path + query);
      if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
      const n = basesIn(r.body);
      ranges.push([offset, offset + n]);
      offset += n;
      pageToken = tokenIn(r.body.subarray(-200));
    } while (pageToken);
    const seconds = (performance.now() - start) / 1000;
    if (offset !== referenceLength) throw new Error(`P2 read ${offset} bases of a ${referenceLength} bp reference`);
    return { seconds, ranges };
  };
  ctx.log(`P2: ${referenceLength.toLocaleString('en')} bases, paged (${ctx.options.repetitions} passes)`);
  await pass(); // warm-up
  const runs: number[] = [];
  let ranges: Array<[number, number]> = [];
  for (let i = 0; i < ctx.options.repetitions; i++) {
    const p = await pass();
    runs.push(p.seconds);
    ranges = p.ranges;
  }
  const seconds = median(runs);
  const regions = ranges.map(([a, b]) => `${ctx.data.contig}:${a + 1}-${b}`);
  ctx.log(`P2 baseline: samtools faidx with the ${regions.length} page ranges`);
  const samtools = await medianSeconds(ctx.options.repetitions, 'samtools', ['faidx', ctx.data.fasta, ...regions]);
  const value = referenceLength / seconds;
  const baseline = referenceLength / samtools.wall;
  return [
    judge({
      part: 'P2',
      name: 'reference bases, whole contig paged',
      unit: 'bases/s',
      value,
      baselineName: 'samtools faidx',
      baseline,
      ratio: value / baseline,
      detail: { seconds, samtoolsSeconds: samtools.wall, samtoolsCpuSeconds: samtools.cpu, pages: ranges.length, bases: referenceLength },
    }),
  ];
}

interface Load {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

async function cannon(base: URL, load: Load, duration: number, pid: number) {
  const cpu = cpuSecondsOf(pid);
  const options: autocannon.Options = {
    url: new URL(load.path, base).toString(),
    method: load.method,
    body: load.body === undefined ? undefined : JSON.stringify(load.body),
    headers: load.body === undefined ? {} : { 'content-type': 'application/json' },
    connections: 64,
    duration,
  };
  // In a process of its own: bench/cannon.ts says why.
  const result = await runBenchScript<autocannon.Result>('cannon.ts', [JSON.stringify(options)]);
  if (result.errors || result.non2xx || !result.requests.total) {
    throw new Error(`${load.name}: ${result.requests.total} requests, ${result.errors} errors, ${result.non2xx} not 2xx (${JSON.stringify(result.statusCodeStats)})`);
  }
  return {
    perSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    /** The server's CPU per request: its cost, whatever else the machine is doing. */
    cpuMicrosecondsPerRequest: ((cpuSecondsOf(pid) - cpu) * 1e6) / result.requests.total,
  };
}

/** P3: get-by-id and small searches at 64 connections, against a bare node:http server. */
export async function measureSmallRequests(ctx: Context): Promise<Figure[]> {
  const { ids, options } = ctx;
  const loads: Load[] = [{ name: 'GET /references/{id}', method: 'GET', path: `/references/${ids.referenceId}` }];
  if (ids.variantSetId) {
    loads.push({ name: 'GET /variantsets/{id}', method: 'GET', path: `/variantsets/${ids.variantSetId}` });
    loads.push({ name: 'GET /callsets/{id}', method: 'GET', path: `/callsets/${ids.callSetId}` });
  }
  loads.push({ name: 'POST /referencesets/search', method: 'POST', path: '/referencesets/search', body: {} });
  if (ids.variantSetId) {
    loads.push({ name: 'POST /callsets/search, pageSize 10', method: 'POST', path: '/callsets/search', body: { variantSetId: ids.variantSetId, pageSize: 10 } });
  }
  const bare = await startBareServer(`${ctx.logDir}/bare-server.log`);
  let baseline;
  try {
    ctx.log(`P3 baseline: bare node:http server, 64 connections, ${options.duration} s`);
    await cannon(bare.url, { name: 'warm-up', method: 'GET', path: '/' }, 1, bare.pid);
    baseline = await cannon(bare.url, { name: 'bare node:http', method: 'GET', path: '/' }, options.duration, bare.pid);
  } finally {
    await bare.stop();
  }
  await cannon(ctx.server.url, { ...loads[0], name: 'warm-up' }, 1, ctx.server.pid);
  const figures: Figure[] = [];
  for (const load of loads) {
    ctx.log(`P3: ${load.name}, 64 connections, ${options.duration} s`);
    const r = await cannon(ctx.server.url, load, options.duration, ctx.server.pid);
    figures.push(
      judge({
        part: 'P3',
        name: load.name,
        unit: 'req/s',
        value: r.perSecond,
        baselineName: 'bare node:http',
        baseline: baseline.perSecond,
        ratio: r.perSecond / baseline.perSecond,
        detail: {
          p50Ms: r.p50Ms,
          p99Ms: r.p99Ms,
          requests: r.requests,
          cpuMicrosecondsPerRequest: r.cpuMicrosecondsPerRequest,
          baselineP50Ms: baseline.p50Ms,
          baselineP99Ms: baseline.p99Ms,
          baselineCpuMicrosecondsPerRequest: baseline.cpuMicrosecondsPerRequest,
        },
      }),
    );
  }
  return figures;
}

/**
 * P4: pages of 100 expression levels on the big quantification, against the same query done directly
 * on the registry file with better-sqlite3 in this process (the floor: no HTTP, no JSON). Every search
 * carries the server's default threshold (expression > 0) unless it sets one; each page's names must
 * equal the floor's.
 */
export async function measureExpression(ctx: Context): Promise<Figure[]> {
  const { client, options, data } = ctx;
  const rnaQuantificationId = ctx.ids.rnaQuantificationId!;
  // Single requests of a few ms: more repetitions than the baseline commands get, for a stable median.
  const reps = options.repetitions * 3;
  const search = async (body: Record<string, unknown>) => {
    const start = performance.now();
    const r = await client.send('POST', '/expressionlevels/search', { rnaQuantificationId, pageSize: 100, ...body });
    const ms = performance.now() - start;
    if (r.status !== 200) throw new Error(`POST /expressionlevels/search answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
    return { ms, body: r.body };
  };
  const timed = async (body: Record<string, unknown>) => {
    await search(body); // warm-up
    const runs: number[] = [];
    let last!: Buffer;
    for (let i = 0; i < reps; i++) {
      const r = await search(body);
      runs.push(r.ms);
      last = r.body;
    }
    const names: string[] = (JSON.parse(last.toString('utf8')).expressionLevels ?? []).map((l: { name: string }) => l.name);
    return { ms: median(runs), names };
  };

  const db = new Database(ctx.registryFile, { readonly: true, fileMustExist: true });
  const figures: Figure[] = [];
  try {
    const { id: quantificationKey } = db.prepare(`SELECT id FROM rna_quantification WHERE name = 'bench-sample'`).get() as { id: number };
    /** Median ms of one plain query, and the names it returns; a plan slower than 50 ms is run once. */
    const plan = (sql: string, params: unknown[]) => {
      const statement = db.prepare(sql);
      let start = performance.now();
      const rows = statement.all(...params) as Array<{ name: string }>;
      const runs = [performance.now() - start];
      for (let i = 0; i < reps && runs[0] < 50; i++) {
        start = performance.now();
        statement.all(...params);
        runs.push(performance.now() - start);
      }
      return { ms: median(runs.slice(runs.length > 1 ? 1 : 0)), names: rows.slice(0, 100).map((r) => r.name) };
    };
    /**
     * The floor of a page: the better of the two plain plans, a name-order scan skipping rows at or
     * under the threshold (`+ 0` keeps SQLite on the name index), or the rows above the threshold
     * taken through the value index (it holds the rows above 0) and sorted by name. With names, their
     * primary-key lookups.
     */
    const floor = (threshold: number, after?: string, names?: string[]) => {
      const where = [`quantification_id = ?`, ...(after !== undefined ? ['name > ?'] : []), ...(names ? [`name IN (${names.map(() => '?').join(',')})`] : [])];
      const params = [quantificationKey, ...(after !== undefined ? [after] : []), ...(names ?? [])];
      const plans = [plan(`SELECT * FROM rna_expression WHERE ${where.join(' AND ')} AND expression + 0 > ? ORDER BY name LIMIT 101`, [...params, threshold])];
      if (!names && threshold >= 0) {
        plans.push(
          plan(`SELECT * FROM rna_expression WHERE ${where.join(' AND ')} AND expression > ? AND expression > 0 ORDER BY name LIMIT 101`, [...params, threshold]),
        );
      }
      return plans.sort((a, b) => a.ms - b.ms)[0];
    };
    const add = (name: string, server: { ms: number; names: string[] }, base: { ms: number; names: string[] }, detail: Record<string, unknown> = {}) => {
      if (server.names.join() !== base.names.join()) {
        throw new Error(`P4 ${name}: the server's page (${server.names.length} rows) differs from SQLite's (${base.names.length} rows)`);
      }
      figures.push(
        judge({
          part: 'P4',
          name,
          unit: 'ms',
          value: server.ms,
          baselineName: 'SQLite direct',
          baseline: base.ms,
          ratio: server.ms / base.ms,
          detail: { rows: server.names.length, repetitions: reps, ...detail },
        }),
      );
    };

    ctx.log('P4: first page');
    for (let i = 0; i < 50; i++) await search({}); // the server's JIT warms up on its first requests
    add('expression levels, first page', await timed({}), floor(0));

    const deep = Math.min(options.deepPages, Math.floor((data.params.rnaRows / 2 / 100) * 0.9));
    ctx.log(`P4: following ${deep} pages of 100 to a deep page`);
    let pageToken: string | undefined;
    let lastName = '';
    for (let i = 0; i < deep; i++) {
      const r = await search(pageToken ? { pageToken } : {});
      const page = JSON.parse(r.body.toString('utf8'));
      lastName = page.expressionLevels.at(-1).name;
      pageToken = page.nextPageToken;
    }
    add(`expression levels, page ${deep + 1} (by token)`, await timed({ pageToken }), floor(0, lastName), { rowsBefore: deep * 100 });

    const names = data.filterNames;
    ctx.log(`P4: names filter (${names.length} names)`);
    add(`expression levels, names filter (${names.length} names)`, await timed({ names }), floor(0, undefined, names));

    for (const { threshold, rowsAbove } of data.thresholds) {
      ctx.log(`P4: threshold ${threshold} (${rowsAbove.toLocaleString('en')} rows pass)`);
      add(`expression levels, threshold ${threshold}`, await timed({ threshold }), floor(threshold), {
        rowsAbove,
        sharePassing: rowsAbove / data.params.rnaRows,
      });
    }
  } finally {
    db.close();
  }
  return figures;
}
