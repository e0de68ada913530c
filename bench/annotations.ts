/**
 * The sequence-annotation parts of the benchmark (issue 13):
 * - F1: seconds to load the generated GFF3 through `ga4gh repo add-featureset` (target: under 120 s);
 * - F2: ms per page of 100 features in a region, by name and by gene symbol, against the same query run
 *   directly on the registry file with better-sqlite3 in this process (target: at most 2x);
 * - C1: values per second of continuous data over HTTP (pages of 100 records followed to the end of a
 *   window), beside reading the same window with @gmod/bbi in this process (for reading; no target).
 * Every figure checks the answers it times against its baseline's.
 */
import path from 'node:path';
import { BigWig } from '@gmod/bbi';
import Database from 'better-sqlite3';
import { LocalFile } from 'generic-filehandle2';
import type { BigWigManifest } from './bigwig-data.js';
import type { Client } from './client.js';
import type { FeatureDataManifest } from './features-data.js';
import { allMigrations } from '../src/areas/index.js';
import { featureService } from '../src/areas/features/service.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import { openRegistry } from '../src/registry/registry.js';
import { median, timeCommand } from './parts.js';
import { ROOT } from './processes.js';
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

export async function measureFeaturePages(client: Client, registryFile: string, data: FeatureDataManifest, ids: SetIds, repetitions: number): Promise<Figure[]> {
  const reps = repetitions * 3;
  const db = new Database(registryFile, { readonly: true, fileMustExist: true });
  // The same search through the service in this process: what the store and the records cost, no HTTP.
  const registry = await openRegistry(registryFile, allMigrations());
  const service = featureService(registry, defaultPagingLimits, 2000);
  const figures: Figure[] = [];
  try {
    const set = db.prepare(`SELECT id, longest FROM feature_set WHERE name = 'annotation'`).get() as { id: number; longest: string };
    const plain = (sql: string, params: unknown[]) => {
      const statement = db.prepare(sql);
      const rows = statement.all(...params) as Array<{ key: string }>;
      const runs: number[] = [];
      for (let i = 0; i < reps; i++) {
        const start = performance.now();
        statement.all(...params);
        runs.push(performance.now() - start);
      }
      return { ms: median(runs), keys: rows.slice(0, 100).map((r) => r.key) };
    };
    const served = async (body: Record<string, unknown>) => {
      const request = { featureSetId: ids.featureSetId, pageSize: 100, ...body };
      for (let i = 0; i < 20; i++) await client.send('POST', '/features/search', request); // warm-up
      const runs: number[] = [];
      let last!: Buffer;
      for (let i = 0; i < reps; i++) {
        const start = performance.now();
        const r = await client.send('POST', '/features/search', request);
        runs.push(performance.now() - start);
        if (r.status !== 200) throw new Error(`POST /features/search answered ${r.status}: ${r.body.toString('utf8', 0, 300)}`);
        last = r.body;
      }
      const keys = (JSON.parse(last.toString('utf8')).features as Array<{ id: string }>).map((f) => (JSON.parse(Buffer.from(f.id, 'base64url').toString('utf8')) as string[])[3]);
      return { ms: median(runs), keys };
    };
    const { referenceName, start, end } = data.region;
    const longest = (JSON.parse(set.longest) as Record<string, number>)[referenceName] ?? 0;
    const cases: Array<[string, Record<string, unknown>, string, unknown[]]> = [
      [
        `features in ${referenceName}:${start}-${end}, first page of 100`,
        { referenceName, start, end },
        `SELECT * FROM feature WHERE set_id = ? AND reference_name = ? AND start >= ? AND start < ? AND "end" > ? ORDER BY start, seq LIMIT 101`,
        [set.id, referenceName, Math.max(0, start - longest), end, start],
      ],
      [`features named ${data.name}`, { name: data.name }, `SELECT * FROM feature WHERE set_id = ? AND name = ? ORDER BY start, seq LIMIT 101`, [set.id, data.name]],
      [
        `features of gene symbol ${data.geneSymbol}`,
        { geneSymbol: data.geneSymbol },
        `SELECT * FROM feature WHERE set_id = ? AND gene_symbol = ? ORDER BY start, seq LIMIT 101`,
        [set.id, data.geneSymbol],
      ],
    ];
    for (const [name, body, sql, params] of cases) {
      const base = plain(sql, params);
      const server = await served(body);
      if (server.keys.join('\n') !== base.keys.join('\n') || server.keys.length === 0) {
        throw new Error(`F2 ${name}: the server's page (${server.keys.length} features) differs from SQLite's (${base.keys.length})`);
      }
      figures.push(
        judge({ part: 'F2', name, unit: 'ms', value: server.ms, baselineName: 'SQLite direct', baseline: base.ms, ratio: server.ms / base.ms, detail: { rows: server.keys.length, repetitions: reps } }),
      );
      const request = { featureSetId: ids.featureSetId, pageSize: 100, ...body };
      for (let i = 0; i < 20; i++) await service.searchFeatures(request);
      const runs: number[] = [];
      for (let i = 0; i < reps; i++) {
        const start = performance.now();
        const page = await service.searchFeatures(request);
        runs.push(performance.now() - start);
        if (page.records.length !== server.keys.length) throw new Error(`F2 ${name}: the service in process found ${page.records.length} features`);
      }
      figures.push(
        judge({ part: 'F2', name: `${name} (service in process, no HTTP)`, unit: 'ms', value: median(runs), baselineName: 'SQLite direct', baseline: base.ms, ratio: median(runs) / base.ms, detail: { rows: server.keys.length, repetitions: reps } }),
      );
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
