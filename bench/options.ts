/** `npm run bench` options: flags, or the BENCH_* environment variables they mirror. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DataParams } from './data.js';
import { ROOT } from './processes.js';
import { PARTS, type Part } from './report.js';

export interface BenchOptions {
  data: DataParams;
  /** Reads of the generated BAM of the reads part. */
  reads: number;
  /** Seconds of each autocannon run of P3. */
  duration: number;
  /** Pages of 100 followed to reach P4's deep page. */
  deepPages: number;
  /** Repetitions of each timed single request (P4) and of each baseline command (P1, P2). */
  repetitions: number;
  parts: Set<Part>;
  /** Features of the generated GFF3 (F1, F2). */
  features: number;
  /** Bases of the generated bigWig's contig (C1). */
  bigwigLength: number;
  /** The codings P1 measures against the replay (and with several clients, of those it measures so). */
  codings: Array<'identity' | 'gzip' | 'br'>;
  /** `serve --page-workers`, when given (else the server's default). */
  pageWorkers?: number;
  /** `serve --read-ahead-mb`, when given (else the server's default). */
  readAheadMb?: number;
  profile: boolean;
  targets: boolean;
  scratch: string;
  out: string;
}

export const USAGE = `npm run bench -- [options]   (each option also reads from the environment variable shown)
  --sites N             VCF sites (BENCH_SITES, default 5000)
  --samples N           samples of the cohort (BENCH_SAMPLES, default 2504)
  --reference-length N  bases of the reference contig (BENCH_REFERENCE_LENGTH, default 20M)
  --rna-rows N          rows of the RNA quantification (BENCH_RNA_ROWS, default 1M)
  --reads N             reads of the generated BAM of the READS and H1 parts (BENCH_READS, default 1M)
  --duration S          seconds of each autocannon run in P3, and P6 makes 40 probes a second of it
                        (BENCH_DURATION, default 5)
  --deep-pages N        pages of 100 followed to reach P4's deep page (BENCH_DEEP_PAGES, default 2000)
  --repetitions N       timed repetitions of single requests and baseline commands (BENCH_REPETITIONS, default 5)
  --features N          features of the generated GFF3 for F1, F2 (BENCH_FEATURES, default 2.5M)
  --bigwig-length N     bases of the generated bigWig for C1 (BENCH_BIGWIG_LENGTH, default 10M)
  --only P1,P5          run only these parts (BENCH_ONLY; P5 is measured during P1's pageSize 1000 pass;
                        P6 is GET /info on fresh connections while 4 clients page through every call;
                        F1, F2 and C1 are the sequence-annotation parts; H1 is samtools and bcftools
                        through htsget URLs; B1 is Beacon sequence queries)
  --codings LIST        P1's codings against the replay and with several clients: identity, gzip, br
                        (BENCH_CODINGS, default all three; 'identity' alone makes P1 a minute or two)
  --page-workers N      start the server with --page-workers N (BENCH_PAGE_WORKERS; default: the server's)
  --read-ahead-mb N     start the server with --read-ahead-mb N (BENCH_READ_AHEAD_MB; 0: no read-ahead;
                        default: the server's)
  --profile             run the server under node --cpu-prof, one server per part; profiles (one per
                        thread) go to bench/results/profiles/<part>/ (BENCH_PROFILE=1)
  --no-targets          print no target column and no pass/fail (BENCH_NO_TARGETS=1)
  --scratch DIR         where generated data and the registry go (BENCH_SCRATCH, default bench/scratch)
  --out FILE            the JSON results (BENCH_OUT, default bench/results/latest.json)
Numbers take k and M suffixes: 20M, 1M, 200k.`;

const CODINGS = ['identity', 'gzip', 'br'] as const;

/** A mistake in the options: reported in one line, with a pointer to --help. */
export class UsageError extends Error {}

function count(text: string, label: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.replace(/[_,]/g, ''));
  const scale: Record<string, number> = { '': 1, k: 1e3, m: 1e6 };
  const n = m ? Number(m[1]) * scale[m[2].toLowerCase()] : NaN;
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${label} must be a positive number, not '${text}'`);
  return Math.round(n);
}

function wholeNumber(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number, not '${text}'`);
  return n;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const spec = {
    sites: { type: 'string' },
    samples: { type: 'string' },
    'reference-length': { type: 'string' },
    'rna-rows': { type: 'string' },
    reads: { type: 'string' },
    duration: { type: 'string' },
    'deep-pages': { type: 'string' },
    repetitions: { type: 'string' },
    only: { type: 'string' },
    features: { type: 'string' },
    'bigwig-length': { type: 'string' },
    codings: { type: 'string' },
    'page-workers': { type: 'string' },
    'read-ahead-mb': { type: 'string' },
    profile: { type: 'boolean' },
    'no-targets': { type: 'boolean' },
    scratch: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const pick = (flag: keyof typeof values, variable: string, fallback: string) => String(values[flag] ?? env[variable] ?? fallback);
  const only = pick('only', 'BENCH_ONLY', PARTS.join(','))
    .split(',')
    .map((p) => p.trim().toUpperCase())
    .filter(Boolean);
  for (const p of only) if (!PARTS.includes(p as Part)) throw new UsageError(`--only takes ${PARTS.join(', ')}, not '${p}'`);
  const codings = pick('codings', 'BENCH_CODINGS', CODINGS.join(','))
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter(Boolean);
  for (const c of codings) if (!(CODINGS as readonly string[]).includes(c)) throw new UsageError(`--codings takes ${CODINGS.join(', ')}, not '${c}'`);
  const pageWorkersText = values['page-workers'] ?? env.BENCH_PAGE_WORKERS;
  const readAheadText = values['read-ahead-mb'] ?? env.BENCH_READ_AHEAD_MB;
  const flag = (v: boolean | undefined, variable: string) => v ?? /^(1|true|yes)$/i.test(env[variable] ?? '');
  return {
    data: {
      sites: count(pick('sites', 'BENCH_SITES', '5000'), '--sites'),
      samples: count(pick('samples', 'BENCH_SAMPLES', '2504'), '--samples'),
      referenceLength: count(pick('reference-length', 'BENCH_REFERENCE_LENGTH', '20M'), '--reference-length'),
      rnaRows: count(pick('rna-rows', 'BENCH_RNA_ROWS', '1M'), '--rna-rows'),
    },
    reads: count(pick('reads', 'BENCH_READS', '1M'), '--reads'),
    duration: count(pick('duration', 'BENCH_DURATION', '5'), '--duration'),
    deepPages: count(pick('deep-pages', 'BENCH_DEEP_PAGES', '2000'), '--deep-pages'),
    repetitions: count(pick('repetitions', 'BENCH_REPETITIONS', '5'), '--repetitions'),
    parts: new Set(only as Part[]),
    features: count(pick('features', 'BENCH_FEATURES', '2.5M'), '--features'),
    bigwigLength: count(pick('bigwig-length', 'BENCH_BIGWIG_LENGTH', '10M'), '--bigwig-length'),
    codings: codings as BenchOptions['codings'],
    pageWorkers: pageWorkersText === undefined ? undefined : wholeNumber(pageWorkersText, '--page-workers'),
    readAheadMb: readAheadText === undefined ? undefined : wholeNumber(readAheadText, '--read-ahead-mb'),
    profile: flag(values.profile, 'BENCH_PROFILE'),
    targets: !flag(values['no-targets'], 'BENCH_NO_TARGETS'),
    scratch: path.resolve(pick('scratch', 'BENCH_SCRATCH', path.join(ROOT, 'bench', 'scratch'))),
    out: path.resolve(pick('out', 'BENCH_OUT', path.join(ROOT, 'bench', 'results', 'latest.json'))),
  };
}
