/**
 * The sequence-annotation parts of the benchmark (issue 13):
 * - F1: seconds to load the generated GFF3 through `ga4gh repo add-featureset` (target: under 120 s);
 * - F2: ms per page of 100 features in a region, by name and by gene symbol, against the floor of a
 *   server answering it over HTTP: the same query run directly on the registry file with better-sqlite3
 *   in this process, plus a bare server replaying the same bytes (target: at most 2x);
 * - C1: values per second of continuous data over HTTP (pages of 100 records followed to the end of a
 *   window), beside reading the same window with @gmod/bbi in this process (for reading; no target).
 * Every figure checks the answers it times against its baseline's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BigWig } from '@gmod/bbi';
import Database from 'better-sqlite3';
import { LocalFile } from 'generic-filehandle2';
import type { BigWigManifest } from './bigwig-data.js';
import { Client } from './client.js';
import type { FeatureDataManifest } from './features-data.js';
import { allMigrations } from '../src/areas/index.js';
import { SearchFeaturesResponse } from '../src/areas/features/messages.js';
import { featureService } from '../src/areas/features/service.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import { writeSearchPage, type SearchPage } from '../src/protocol/reply.js';
import { openRegistry } from '../src/registry/registry.js';
import { median, timeCommand } from './parts.js';
import { cpuSecondsOf, ROOT, startPageReplayServer } from './processes.js';
import { judge, type Figure } from './report.js';

/** Wall and CPU seconds (user + system, from bash's `times`) of `ga4gh ARGS`. */
export function timeCli(args: string[]): Promise<{ wall: number; cpu: number }> {
  return timeCommand(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), ...args]);
}

export function featureLoadFigure(data: FeatureDataManifest, load: { wall: number; cpu: number }): Figure {
  return judge({
    part: 'F1',
    name: `GFF3 of ${data.features.toLocaleString('en')} features through repo add-featureset (wall s)`,
    unit: 's',
    value: load.wall,
    baselineName: 'CPU s of the same load',
    baseline: load.cpu,
    ratio: load.wall / load.cpu,
    detail: { features: data.features, cpuSeconds: load.cpu },
  });
}

interface SetIds {
  datasetId: string;
  featureSetId: string;
}

/** Repetitions of each timed request, per --repetitions: a page costs about a millisecond. */
const F2_REQUESTS_PER_REPETITION = 40;

/**
 * F2: a page of 100 features in a region, by name and by gene symbol. Three timings of each page,
 * interleaved request by request so that a busy machine slows them alike:
 * - the server over HTTP;
 * - the floor any server answering that page over HTTP has: the same query run directly on the registry
 *   file with better-sqlite3 in this process (the P4 method), plus a bare node:http server replaying the
 *   very bytes of the page to the same client (bench/page-replay-server.ts);
 * - the service in this process (no HTTP), building the same JSON text the route sends.
 * The target is on the first against the sum of the floor's two parts; the CPU the server and the
 * replay spent per request is kept beside them (the steadier figure on a shared machine).
 */
export async function measureFeaturePages(
  client: Client,
  server: { pid: number },
  registryFile: string,
  data: FeatureDataManifest,
  ids: SetIds,
  repetitions: number,
  logDir: string,
): Promise<Figure[]> {
  const reps = repetitions * F2_REQUESTS_PER_REPETITION;
  const db = new Database(registryFile, { readonly: true, fileMustExist: true });
  const registry = await openRegistry(registryFile, allMigrations());
  const service = featureService(registry, defaultPagingLimits, 2000);
  const figures: Figure[] = [];
  try {
    const set = db.prepare(`SELECT id, longest FROM feature_set WHERE name = 'annotation'`).get() as { id: number; longest: string };
    const { referenceName, start, end } = data.region;
    const longest = (JSON.parse(set.longest) as Record<string, number>)[referenceName] ?? 0;
    const cases: Array<{ name: string; body: Record<string, unknown>; sql: string; params: unknown[] }> = [
      {
        name: `features in ${referenceName}:${start}-${end}, first page of 100`,
        body: { referenceName, start, end },
        sql: `SELECT * FROM feature WHERE set_id = ? AND reference_name = ? AND start >= ? AND start < ? AND "end" > ? ORDER BY start, seq LIMIT 101`,
        params: [set.id, referenceName, Math.max(0, start - longest), end, start],
      },
      { name: `features named ${data.name}`, body: { name: data.name }, sql: `SELECT * FROM feature WHERE set_id = ? AND name = ? ORDER BY start, seq LIMIT 101`, params: [set.id, data.name] },
      {
        name: `features of gene symbol ${data.geneSymbol}`,
        body: { geneSymbol: data.geneSymbol },
        sql: `SELECT * FROM feature WHERE set_id = ? AND gene_symbol = ? ORDER BY start, seq LIMIT 101`,
        params: [set.id, data.geneSymbol],
      },
    ];
    const requestOf = (c: (typeof cases)[number]) => ({ featureSetId: ids.featureSetId, pageSize: 100, ...c.body });
    const post = async (via: Client, request: object) => {
      const r = await via.send('POST', '/features/search', request);
      if (r.status !== 200) throw new Error(`POST /features/search answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
      return r.body;
    };
    const keysOf = (body: Buffer) =>
      (JSON.parse(body.toString('utf8')).features as Array<{ id: string }>).map((f) => (JSON.parse(Buffer.from(f.id, 'base64url').toString('utf8')) as string[])[3]);

    // The pages as the server sends them, checked against SQLite's rows, recorded for the replay.
    const recorded: Record<string, string> = {};
    for (const c of cases) {
      const body = await post(client, requestOf(c));
      const sqlKeys = (db.prepare(c.sql).all(...c.params) as Array<{ key: string }>).slice(0, 100).map((r) => r.key);
      const keys = keysOf(body);
      if (keys.join('\n') !== sqlKeys.join('\n') || keys.length === 0) {
        throw new Error(`F2 ${c.name}: the server's page (${keys.length} features) differs from SQLite's (${sqlKeys.length})`);
      }
      recorded[JSON.stringify(requestOf(c))] = body.toString('base64');
    }
    const pagesFile = path.join(logDir, 'features-replay.json');
    fs.writeFileSync(pagesFile, JSON.stringify(recorded));
    const replay = await startPageReplayServer(pagesFile, path.join(logDir, 'features-replay-server.log'));
    const replayClient = new Client(replay.url);
    try {
      for (const c of cases) {
        const request = requestOf(c);
        const statement = db.prepare(c.sql);
        const expected = Buffer.from(recorded[JSON.stringify(request)], 'base64');
        for (let i = 0; i < 20; i++) {
          await post(client, request);
          if (!(await post(replayClient, request)).equals(expected)) throw new Error(`F2 ${c.name}: the replay's page differs from the recorded one`);
          statement.all(...c.params);
        }
        const times = { server: [] as number[], replay: [] as number[], sql: [] as number[] };
        const cpu = { server: 0, replay: 0 };
        for (let i = 0; i < reps; i++) {
          let cpuBefore = cpuSecondsOf(server.pid);
          let t0 = performance.now();
          await post(client, request);
          times.server.push(performance.now() - t0);
          cpu.server += cpuSecondsOf(server.pid) - cpuBefore;
          cpuBefore = cpuSecondsOf(replay.pid);
          t0 = performance.now();
          await post(replayClient, request);
          times.replay.push(performance.now() - t0);
          cpu.replay += cpuSecondsOf(replay.pid) - cpuBefore;
          t0 = performance.now();
          statement.all(...c.params);
          times.sql.push(performance.now() - t0);
        }
        const [serverMs, replayMs, sqlMs] = [median(times.server), median(times.replay), median(times.sql)];
        const bytes = expected.length;
        figures.push(
          judge({
            part: 'F2',
            name: `${c.name}, over HTTP`,
            unit: 'ms',
            value: serverMs,
            baselineName: 'SQLite + bare replay',
            baseline: sqlMs + replayMs,
            ratio: serverMs / (sqlMs + replayMs),
            detail: {
              rows: keysOf(expected).length,
              bytes,
              sqliteMs: sqlMs,
              replayMs,
              ratioToSqlite: serverMs / sqlMs,
              serverCpuMsPerRequest: (cpu.server * 1000) / reps,
              replayCpuMsPerRequest: (cpu.replay * 1000) / reps,
              repetitions: reps,
            },
          }),
        );

        // The service in this process: the search and the page's JSON text, as the route sends it.
        const inProcess = async () => {
          const page = await service.searchFeatures(request);
          return writeSearchPage(SearchFeaturesResponse, page as SearchPage<object>, 'camel', defaultPagingLimits);
        };
        for (let i = 0; i < 20; i++) await inProcess();
        const runs: number[] = [];
        for (let i = 0; i < reps; i++) {
          const t0 = performance.now();
          const text = await inProcess();
          runs.push(performance.now() - t0);
          if (Buffer.byteLength(text) !== bytes) throw new Error(`F2 ${c.name}: the service in process wrote ${Buffer.byteLength(text)} bytes, the server ${bytes}`);
        }
        figures.push(
          judge({
            part: 'F2',
            name: `${c.name}, the service in process (no HTTP)`,
            unit: 'ms',
            value: median(runs),
            baselineName: 'SQLite direct',
            baseline: sqlMs,
            ratio: median(runs) / sqlMs,
            detail: { repetitions: reps },
          }),
        );
      }
    } finally {
      replayClient.close();
      await replay.stop();
    }
  } finally {
    db.close();
    await registry.close();
  }
  return figures;
}

/** C1: the whole bigWig contig through POST /continuous/search, pages of 100 records, against @gmod/bbi. */
export async function measureContinuous(client: Client, data: BigWigManifest, continuousSetId: string, repetitions: number): Promise<Figure[]> {
  const window = { referenceName: data.contig, start: 0, end: data.length };
  const overHttp = async () => {
    const start = performance.now();
    let values = 0;
    let pageToken: string | undefined;
    do {
      const r = await client.send('POST', '/continuous/search', { continuousSetId, ...window, pageSize: 100, ...(pageToken ? { pageToken } : {}) });
      if (r.status !== 200) throw new Error(`POST /continuous/search answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
      const page = JSON.parse(r.body.toString('utf8')) as { continuous: Array<{ values: number[] }>; nextPageToken?: string };
      for (const record of page.continuous) values += record.values.length;
      pageToken = page.nextPageToken;
    } while (pageToken);
    return { seconds: (performance.now() - start) / 1000, values };
  };
  const inProcess = async () => {
    const start = performance.now();
    const bigwig = new BigWig({ filehandle: new LocalFile(data.file) });
    const { starts, ends, scores } = (await bigwig.getFeaturesAsArrays(data.contig, window.start, window.end)) as { starts: Int32Array; ends: Int32Array; scores: Float32Array };
    // The same work of expanding intervals to one value per base.
    let values = 0;
    const expanded: number[] = [];
    for (let i = 0; i < starts.length; i++) {
      for (let b = starts[i]; b < ends[i]; b++) expanded.push(scores[i]);
      values += ends[i] - starts[i];
      if (expanded.length > 1_000_000) expanded.length = 0;
    }
    return { seconds: (performance.now() - start) / 1000, values };
  };
  await overHttp(); // warm-up
  const http = [];
  const local = [];
  for (let i = 0; i < repetitions; i++) {
    http.push(await overHttp());
    local.push(await inProcess());
  }
  for (const run of [...http, ...local]) {
    if (run.values !== data.basesWithValues) throw new Error(`C1: ${run.values} values read, the file holds ${data.basesWithValues}`);
  }
  const serverRate = data.basesWithValues / median(http.map((r) => r.seconds));
  const localRate = data.basesWithValues / median(local.map((r) => r.seconds));
  return [
    judge({
      part: 'C1',
      name: `continuous values over HTTP, ${data.length.toLocaleString('en')}-base window, pages of 100 records`,
      unit: 'values/s',
      value: serverRate,
      baselineName: '@gmod/bbi in process',
      baseline: localRate,
      ratio: serverRate / localRate,
      detail: { values: data.basesWithValues, repetitions },
    }),
  ];
}
