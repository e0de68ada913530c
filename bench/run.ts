/**
 * `npm run bench`: generates deterministic data, loads it through the CLI, starts `ga4gh serve` in
 * its own process and measures P1–P6 of issues 6, 11 and 17, the reads part of issue 12, the
 * sequence-annotation parts of issue 13, htsget (H1) of issue 51 and Beacon (B1), each beside a baseline and each
 * in a process of its own
 * (bench/part.ts), then prints one table and writes the same as JSON. Options: bench/options.ts
 * (`npm run bench -- --help`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from './client.js';
import { featureLoadFigure, timeCli } from './annotations.js';
import { ensureBigWig } from './bigwig-data.js';
import { ensureData } from './data.js';
import { ensureFeatureData } from './features-data.js';
import { parseOptions, UsageError } from './options.js';
import type { PartInput } from './part.js';
import { discoverIds } from './parts.js';
import { runBenchScript, type RunningServer, startGa4ghServer } from './processes.js';
import { formatSummary, summarizeFile } from './profile-top.js';
import { ensureReadsData } from './reads.js';
import { type Figure, formatTable, type Part } from './report.js';
import { cli, ensureTools, freshRegistry, gitCommit } from './setup.js';

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/**
 * The profiles a server wrote (one per thread; tsx's module hooks run on a thread of their own),
 * busiest first, leaving out threads that were nearly idle.
 */
function threadProfiles(dir: string): string[] {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(dir, f));
  const busy = new Map(files.map((f) => [f, (({ totalMs, idleMs }) => totalMs - idleMs)(summarizeFile(f, 1))]));
  const most = Math.max(0, ...busy.values());
  return files.filter((f) => busy.get(f)! >= most * 0.05).sort((a, b) => busy.get(b)! - busy.get(a)!);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (options.audit !== undefined) return (await import('./audit.js')).runAudit(options, options.audit, log);
  const wants = (p: Part) => options.parts.has(p);
  const needVariants = wants('P1') || wants('P3') || wants('P5') || wants('P6') || wants('H1') || wants('B1');
  const needRna = wants('P4');
  const resultsDir = path.dirname(options.out);
  const profileDir = path.join(resultsDir, 'profiles');
  fs.mkdirSync(resultsDir, { recursive: true });
  const loadBefore = os.loadavg();

  await ensureTools(log);
  const data = await ensureData(options.scratch, options.data, log);
  const reads = wants('READS') || wants('H1') ? await ensureReadsData(data, options.reads, log) : undefined;

  // Loading through the CLI, as a user would, into a fresh registry.
  const { registry, loadSeconds } = await freshRegistry(data, { variants: needVariants, rna: needRna, reads, cram: true }, log);

  // Sequence annotations: a GENCODE-shaped GFF3 (F1 times its load) and a bigWig (C1).
  const figures: Figure[] = [];
  const needFeatures = wants('F1') || wants('F2');
  const featureData = needFeatures ? await ensureFeatureData(options.scratch, options.features, log) : undefined;
  if (featureData) {
    loadSeconds['repo add-referenceset (annotation contigs)'] = await cli(['repo', 'add-referenceset', registry, featureData.fasta, '--name', 'annotation-contigs']);
    log(`loading: ga4gh repo add-featureset (${options.features.toLocaleString('en')} features)`);
    const load = await timeCli(['repo', 'add-featureset', registry, 'bench', featureData.gff3, '--referenceset', 'annotation-contigs', '--name', 'annotation']);
    loadSeconds['repo add-featureset'] = load.wall;
    log(`  ${load.wall.toFixed(2)} s (${load.cpu.toFixed(1)} CPU s)`);
    if (wants('F1')) figures.push(featureLoadFigure(featureData, load));
  }
  const bigwig = wants('C1') ? await ensureBigWig(options.scratch, options.bigwigLength, log) : undefined;
  if (bigwig) {
    const contigs = path.join(path.dirname(bigwig.file), 'contigs.fa');
    fs.writeFileSync(contigs, `>${bigwig.contig}\n${'N'.repeat(60)}\n`);
    await cli(['repo', 'add-referenceset', registry, contigs, '--name', 'bigwig-contigs']);
    loadSeconds['repo add-continuousset'] = await cli(['repo', 'add-continuousset', registry, 'bench', bigwig.file, '--referenceset', 'bigwig-contigs', '--name', 'signal']);
  }

  // One server for the whole run, or with --profile one per part so each part has its own profile.
  let shared: RunningServer | undefined;
  const serverFor = async (part: string) => {
    const serve = { registry, logFile: path.join(resultsDir, 'server.log'), pageWorkers: options.pageWorkers, readAheadMb: options.readAheadMb };
    if (!options.profile) return (shared ??= await startGa4ghServer(serve));
    const dir = path.join(profileDir, part);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    return startGa4ghServer({ ...serve, profileDir: dir });
  };
  // The parts in order, each measured in a process of its own (bench/part.ts says why).
  const parts: Array<{ part: Part; when: boolean }> = [
    { part: 'P1', when: wants('P1') || wants('P5') },
    { part: 'P2', when: wants('P2') },
    { part: 'P3', when: wants('P3') },
    { part: 'P4', when: wants('P4') },
    { part: 'P6', when: wants('P6') },
    { part: 'READS', when: wants('READS') },
    { part: 'F2', when: wants('F2') },
    { part: 'C1', when: wants('C1') },
    { part: 'H1', when: wants('H1') },
    { part: 'B1', when: wants('B1') },
  ];
  const profiles: string[] = [];
  try {
    for (const { part } of parts.filter((p) => p.when)) {
      const server = await serverFor(part);
      const client = new Client(server.url);
      try {
        const ids = await discoverIds(client, needVariants, needRna);
        const input: PartInput = {
          part,
          argv: process.argv.slice(2),
          server: { url: server.url.toString(), pid: server.pid },
          data,
          ids,
          registryFile: registry,
          logDir: resultsDir,
          reads,
          featureData,
          bigwig,
        };
        figures.push(...(await runBenchScript<Figure[]>('part.ts', [], JSON.stringify(input))));
      } finally {
        client.close();
        if (options.profile) {
          await server.stop();
          profiles.push(...threadProfiles(path.join(profileDir, part)));
        }
      }
    }
  } finally {
    await shared?.stop();
  }

  if (!options.targets) {
    for (const f of figures) {
      delete f.target;
      delete f.pass;
    }
  }
  const result = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, loadAverage: { before: loadBefore, after: os.loadavg() } },
    parameters: { ...options.data, pageWorkers: options.pageWorkers, readAheadMb: options.readAheadMb, duration: options.duration, deepPages: options.deepPages, repetitions: options.repetitions, parts: [...options.parts] },
    generationSeconds: data.generationSeconds,
    loadSeconds,
    figures,
    profiles,
  };
  fs.writeFileSync(options.out, JSON.stringify(result, null, 2) + '\n');

  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(
    `\n${options.data.sites.toLocaleString('en')} sites × ${options.data.samples} samples, ` +
      `${options.data.referenceLength.toLocaleString('en')} bp reference, ${options.data.rnaRows.toLocaleString('en')} RNA rows; ` +
      `load average ${load(loadBefore)} before, ${load(result.machine.loadAverage.after)} after; ${result.machine.cpus} CPUs\n`,
  );
  console.log(`load times: ${Object.entries(loadSeconds).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}\n`);
  console.log(formatTable(figures, options.targets));
  console.log(`\nwritten to ${path.relative(process.cwd(), options.out) || options.out}`);
  for (const file of profiles) {
    console.log('\n' + formatSummary(summarizeFile(file, 12), path.relative(process.cwd(), file)));
  }
}

main().catch((e) => {
  if (e instanceof UsageError) process.stderr.write(`bench: ${e.message} (npm run bench -- --help)\n`);
  else process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
