/**
 * One part of the benchmark in a process of its own: run.ts starts one per part, hands it the part's
 * context as JSON on standard input, and reads its figures, as JSON, from the last line of standard
 * output (progress goes to standard error, as in run.ts).
 *
 * Why a process per part: the clients the parts time are JavaScript, and what else their process has
 * loaded changes what they cost. In the one bench process, which had loaded every part's modules
 * (the registry's kysely and pg, @gmod/bbi, autocannon), the reads client ran a full collection of
 * its heap every ~40 ms while paging (111 in the READS rounds; 5 in a process that loaded only the
 * READS part) and spent 3.7 µs of CPU per read paging the replay instead of ~1.3: the baselines it
 * read (the replays above all) were measured through a client three times heavier than a real one.
 * Here each part loads only its own modules.
 */
import { Client } from './client.js';
import type { BigWigManifest } from './bigwig-data.js';
import type { DataManifest } from './data.js';
import type { FeatureDataManifest } from './features-data.js';
import { parseOptions } from './options.js';
import type { Context, Ids } from './parts.js';
import type { ReadsManifest } from './reads.js';
import type { Figure, Part } from './report.js';

/** What run.ts hands a part. */
export interface PartInput {
  part: Part;
  /** The bench's own arguments: the part reads its options from them. */
  argv: string[];
  server: { url: string; pid: number };
  data: DataManifest;
  ids: Ids;
  registryFile: string;
  logDir: string;
  reads?: ReadsManifest;
  featureData?: FeatureDataManifest;
  bigwig?: BigWigManifest;
}

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function readInput(): Promise<PartInput> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as PartInput;
}

const input = await readInput();
const options = parseOptions(input.argv, process.env);
const server = { url: new URL(input.server.url), pid: input.server.pid };
const client = new Client(server.url);
const ctx: Context = { client, server, data: input.data, options, ids: input.ids, registryFile: input.registryFile, logDir: input.logDir, log };
const wants = (p: Part) => options.parts.has(p);
const datasetId = async () => (await client.json('POST', '/datasets/search', {})).datasets.find((d: { name: string }) => d.name === 'bench').id as string;

/** Each part's module is imported only in its own process. */
const parts: Partial<Record<Part, () => Promise<Figure[]>>> = {
  P1: async () => (await import('./p1.js')).measureVariants(ctx, wants('P1'), wants('P5')),
  P2: async () => (await import('./parts.js')).measureBases(ctx),
  P3: async () => (await import('./parts.js')).measureSmallRequests(ctx),
  P4: async () => (await import('./parts.js')).measureExpression(ctx),
  P6: async () => (await import('./responsiveness.js')).measureResponsiveness(ctx),
  READS: async () => (await import('./reads.js')).measureReads(ctx, input.reads!),
  H1: async () => (await import('./htsget.js')).measureHtsget(ctx, input.reads),
  B1: async () => (await import('./beacon.js')).measureBeacon(ctx),
  F2: async () => {
    const id = await datasetId();
    const sets = (await client.json('POST', '/featuresets/search', { datasetId: id })).featureSets;
    const featureSetId = sets.find((s: { name: string }) => s.name === 'annotation').id;
    const { measureFeaturePages } = await import('./annotations.js');
    return measureFeaturePages(client, server, input.registryFile, input.featureData!, { datasetId: id, featureSetId }, options.repetitions, input.logDir);
  },
  C1: async () => {
    const id = await datasetId();
    const sets = (await client.json('POST', '/continuoussets/search', { datasetId: id })).continuousSets;
    const { measureContinuous } = await import('./annotations.js');
    return measureContinuous(client, input.bigwig!, sets.find((s: { name: string }) => s.name === 'signal').id, options.repetitions);
  },
};

try {
  const run = parts[input.part];
  if (!run) throw new Error(`bench/part.ts measures no part named ${input.part}`);
  const figures = await run();
  process.stdout.write(JSON.stringify(figures) + '\n');
} finally {
  client.close();
}
