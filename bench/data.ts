/**
 * Deterministic benchmark data: a one-contig reference, a phased GT-only cohort VCF shaped like a
 * 1000 Genomes phase 3 chromosome extract, and a kallisto abundance table. Everything comes from one
 * seeded generator, so the same parameters always give the same bytes; a finished data folder is
 * reused when the parameters match (its manifest is written last).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';

/** Bump when the generator changes, so old scratch folders are not reused. */
const GENERATOR_VERSION = 1;
const SEED = 0x6a4a6e;

export interface DataParams {
  sites: number;
  samples: number;
  referenceLength: number;
  rnaRows: number;
}

export interface DataManifest {
  params: DataParams;
  dir: string;
  fasta: string;
  vcf: string;
  rna: string;
  contig: string;
  /** P1's window, 0-based half-open, and the VCF records whose POS lies in it. */
  region: { start: number; end: number; records: number };
  sampleNames: { first: string; last: string };
  /** Feature names for the names filter of P4, spread over the table. */
  filterNames: string[];
  /** Rows whose TPM is strictly above each threshold (what the server must return in total). */
  thresholds: Array<{ threshold: number; rowsAbove: number }>;
  /** Seconds each file took to generate (0 when reused). */
  generationSeconds: number;
}

/** sfc32 seeded through splitmix32: fast, good enough for synthetic data, identical on every platform. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(), b = split(), c = split(), d = split();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
}

const CONTIG = '20';
/** Telomeric run of N at the start of the contig, as in real assemblies. */
const LEADING_N = 10_000;
const LINE = 60;
/** 1000 Genomes phase 3 sample names: HG00096... then NA06984... */
export function sampleName(i: number, samples: number): string {
  const half = Math.ceil(samples / 2);
  return i < half ? `HG${String(96 + i).padStart(5, '0')}` : `NA${String(6984 + i - half).padStart(5, '0')}`;
}
const POPULATIONS = ['EAS', 'AMR', 'AFR', 'EUR', 'SAS'];

export function dataDir(scratch: string, p: DataParams): string {
  return path.join(scratch, `data-v${GENERATOR_VERSION}-${p.sites}x${p.samples}-ref${p.referenceLength}-rna${p.rnaRows}`);
}

/**
 * Generated data, made once and then reused: the manifest at `manifestPath` is written last, so data
 * whose generation was interrupted has none and is made again. With `dir`, the data has that folder to
 * itself, emptied before it is made. The manifest says how long the generation took (0 when reused).
 */
export async function generatedOnce<M extends object>(
  manifestPath: string,
  options: { dir?: string; log: (line: string) => void },
  generate: () => M | Promise<M>,
): Promise<M & { generationSeconds: number }> {
  if (fs.existsSync(manifestPath)) {
    options.log(`reusing generated data in ${path.relative(process.cwd(), options.dir ?? manifestPath)}`);
    return { ...(JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as M), generationSeconds: 0 };
  }
  if (options.dir) {
    fs.rmSync(options.dir, { recursive: true, force: true });
    fs.mkdirSync(options.dir, { recursive: true });
  }
  const t0 = performance.now();
  const manifest = { ...(await generate()), generationSeconds: (performance.now() - t0) / 1000 };
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  return manifest;
}

/** Returns the manifest of the data for `params`, generating the files first when missing. */
export function ensureData(scratch: string, params: DataParams, log: (line: string) => void): Promise<DataManifest> {
  const dir = dataDir(scratch, params);
  return generatedOnce(path.join(dir, 'manifest.json'), { dir, log }, () => generateData(dir, params, log));
}

async function generateData(dir: string, params: DataParams, log: (line: string) => void): Promise<Omit<DataManifest, 'generationSeconds'>> {
  const random = prng(SEED);
  const fasta = path.join(dir, 'bench-ref.fa');
  log(`generating a ${params.referenceLength.toLocaleString('en')} bp reference`);
  const sequence = writeReference(fasta, params.referenceLength, random);
  const vcf = path.join(dir, 'cohort.vcf.gz');
  log(`generating a VCF of ${params.sites.toLocaleString('en')} sites × ${params.samples.toLocaleString('en')} samples (bgzip, tabix)`);
  const region = await writeCohortVcf(vcf, sequence, params, random);
  const rna = path.join(dir, 'bench-sample', 'abundance.tsv');
  log(`generating a kallisto table of ${params.rnaRows.toLocaleString('en')} rows`);
  const { filterNames, thresholds } = await writeKallisto(rna, params.rnaRows, random);
  return {
    params,
    dir,
    fasta,
    vcf,
    rna,
    contig: CONTIG,
    region,
    sampleNames: { first: sampleName(0, params.samples), last: sampleName(params.samples - 1, params.samples) },
    filterNames,
    thresholds,
  };
}

/**
 * A plain FASTA of one contig, 60 bases a line: a leading run of N, then random bases with
 * soft-masked (lower-case) stretches covering about half of it, like a repeat-masked assembly.
 * Returns the upper-case sequence so the VCF can use the real reference base.
 */
function writeReference(file: string, length: number, random: () => number): Uint8Array {
  const upper = new Uint8Array(length);
  const ACGT = [65, 67, 71, 84];
  const leading = Math.min(LEADING_N, Math.floor(length / 10));
  upper.fill(78, 0, leading);
  const text = Buffer.alloc(length + Math.ceil(length / LINE));
  let at = 0;
  let masked = false;
  let segmentLeft = 0;
  for (let i = 0; i < length; i++) {
    if (i >= leading) {
      if (segmentLeft-- <= 0) {
        masked = random() < 0.5;
        segmentLeft = Math.floor(-Math.log(1 - random()) * 300);
      }
      upper[i] = ACGT[(random() * 4) | 0];
    }
    text[at++] = masked && i >= leading ? upper[i] | 0x20 : upper[i];
    if ((i + 1) % LINE === 0 || i === length - 1) text[at++] = 10;
  }
  fs.writeFileSync(file, Buffer.concat([Buffer.from(`>${CONTIG}\n`), text.subarray(0, at)]));
  return upper;
}

/** Runs a command to completion; rejects with its standard error when it fails. */
export function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${stderr.trim()}`))));
  });
}

const fmt = (x: number) => (x === 0 ? '0' : String(Number(x.toPrecision(6))));

/**
 * The cohort VCF, written through `bgzip -c` and indexed with `tabix -p vcf`. Sites are SNPs (1% with
 * two alternate alleles) at sorted random positions after the leading N run; allele frequencies are
 * log-uniform between 1/(2·samples) and 1 (the neutral site-frequency spectrum: most sites rare, so
 * most genotypes are 0|0); each haplotype draws its allele independently. INFO carries what a phase 3
 * extract carries: AC, AF, AN, NS, DP, the five super-population AFs and VT.
 */
async function writeCohortVcf(
  file: string,
  reference: Uint8Array,
  p: DataParams,
  random: () => number,
): Promise<DataManifest['region']> {
  const length = reference.length;
  const first = Math.min(LEADING_N, Math.floor(length / 10)) + 1;
  if (length - first < p.sites) throw new Error(`a reference of ${length} bp cannot hold ${p.sites} sites`);
  const positions = new Float64Array(p.sites);
  for (let i = 0; i < p.sites; i++) positions[i] = first + Math.floor(random() * (length - first - p.sites));
  positions.sort();
  for (let i = 1; i < p.sites; i++) if (positions[i] <= positions[i - 1]) positions[i] = positions[i - 1] + 1;

  const bgzip = spawn('bgzip', ['-c'], { stdio: ['pipe', fs.openSync(file, 'w'), 'inherit'] });
  const done = once(bgzip, 'close');
  const stdin = bgzip.stdin!;
  const write = async (chunk: string | Buffer) => {
    if (!stdin.write(chunk)) await once(stdin, 'drain');
  };
  const names = Array.from({ length: p.samples }, (_, i) => sampleName(i, p.samples));
  const header = [
    '##fileformat=VCFv4.1',
    '##FILTER=<ID=PASS,Description="All filters passed">',
    '##fileDate=20150218',
    '##reference=bench-ref.fa (generated by bench/data.ts)',
    '##source=ga4gh-server bench: synthetic 1000 Genomes phase 3 shaped cohort',
    `##contig=<ID=${CONTIG},assembly=bench,length=${length}>`,
    '##INFO=<ID=AC,Number=A,Type=Integer,Description="Total number of alternate alleles in called genotypes">',
    '##INFO=<ID=AF,Number=A,Type=Float,Description="Estimated allele frequency in the range (0,1)">',
    '##INFO=<ID=AN,Number=1,Type=Integer,Description="Total number of alleles in called genotypes">',
    '##INFO=<ID=NS,Number=1,Type=Integer,Description="Number of samples with data">',
    '##INFO=<ID=DP,Number=1,Type=Integer,Description="Total read depth; only low coverage data were counted towards the DP">',
    ...POPULATIONS.map((pop) => `##INFO=<ID=${pop}_AF,Number=A,Type=Float,Description="Allele frequency in the ${pop} populations">`),
    '##INFO=<ID=MULTI_ALLELIC,Number=0,Type=Flag,Description="Indicates whether a site is multi-allelic">',
    '##INFO=<ID=VT,Number=.,Type=String,Description="indicates what type of variant the line represents">',
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
    ['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', 'FORMAT', ...names].join('\t'),
  ];
  await write(header.join('\n') + '\n');

  const regionStart = Math.floor(length * 0.1);
  const regionEnd = Math.floor(length * 0.9);
  let inRegion = 0;
  const gts = Buffer.alloc(p.samples * 4);
  const alleles = new Uint8Array(p.samples * 2);
  const minAf = Math.log(1 / (2 * p.samples));
  const popOf = (sample: number) => Math.min(POPULATIONS.length - 1, Math.floor((sample * POPULATIONS.length) / p.samples));
  for (let s = 0; s < p.sites; s++) {
    const pos = positions[s];
    if (pos - 1 >= regionStart && pos - 1 < regionEnd) inRegion++;
    const ref = String.fromCharCode(reference[pos - 1] === 78 ? 65 : reference[pos - 1]);
    const others = 'ACGT'.replace(ref, '');
    const altCount = random() < 0.01 ? 2 : 1;
    const alts = altCount === 1 ? [others[(random() * 3) | 0]] : [others[0], others[1 + ((random() * 2) | 0)]];
    const afs = alts.map(() => Math.exp(minAf * random()));
    if (altCount === 2) afs[1] = Math.min(afs[1], (1 - afs[0]) / 2);
    const ac = new Array<number>(altCount).fill(0);
    const popAc = POPULATIONS.map(() => new Array<number>(altCount).fill(0));
    const popN = POPULATIONS.map(() => 0);
    for (let h = 0; h < alleles.length; h++) {
      const r = random();
      const allele = r < afs[0] ? 1 : altCount === 2 && r < afs[0] + afs[1] ? 2 : 0;
      alleles[h] = allele;
      const pop = popOf(h >> 1);
      popN[pop]++;
      if (allele) {
        ac[allele - 1]++;
        popAc[pop][allele - 1]++;
      }
    }
    for (let i = 0; i < p.samples; i++) {
      gts[i * 4] = 48 + alleles[2 * i];
      gts[i * 4 + 1] = 124; // '|'
      gts[i * 4 + 2] = 48 + alleles[2 * i + 1];
      gts[i * 4 + 3] = 9;
    }
    gts[p.samples * 4 - 1] = 10;
    const an = 2 * p.samples;
    const info = [
      `AC=${ac.join(',')}`,
      `AF=${ac.map((c) => fmt(c / an)).join(',')}`,
      `AN=${an}`,
      `NS=${p.samples}`,
      `DP=${Math.floor(p.samples * (6 + random() * 4))}`,
      ...POPULATIONS.map((pop, i) => `${pop}_AF=${popAc[i].map((c) => fmt(popN[i] ? c / popN[i] : 0)).join(',')}`),
      altCount === 2 ? 'MULTI_ALLELIC;VT=SNP' : 'VT=SNP',
    ].join(';');
    const id = random() < 0.9 ? `rs${100_000_000 + s * 7}` : '.';
    await write(`${CONTIG}\t${pos}\t${id}\t${ref}\t${alts.join(',')}\t100\tPASS\t${info}\tGT\t`);
    await write(Buffer.from(gts));
  }
  stdin.end();
  const [code] = await done;
  if (code !== 0) throw new Error(`bgzip failed (${code})`);
  await run('tabix', ['-f', '-p', 'vcf', file]);
  return { start: regionStart, end: regionEnd, records: inRegion };
}

/**
 * A kallisto abundance.tsv: target_id, length, eff_length, est_counts, tpm. Half the rows have TPM 0
 * (unexpressed transcripts); the rest are log-uniform between 0.02 and 3000 TPM.
 */
async function writeKallisto(file: string, rows: number, random: () => number) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const out = fs.createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('target_id\tlength\teff_length\test_counts\ttpm\n');
  const thresholds = [0, 10, 2000, 2900].map((threshold) => ({ threshold, rowsAbove: 0 }));
  const filterNames: string[] = [];
  const every = Math.max(1, Math.floor(rows / 20));
  let id = 0;
  let block = '';
  for (let i = 0; i < rows; i++) {
    id += 1 + Math.floor(random() * 20);
    const name = `ENST${String(id).padStart(11, '0')}.${1 + Math.floor(random() * 5)}`;
    if (i % every === every >> 1 && filterNames.length < 20) filterNames.push(name);
    const len = 200 + Math.floor(random() * 9800);
    const eff = Math.max(1, len - 180);
    const expressed = random() < 0.5;
    const tpm = expressed ? Number((0.02 * Math.exp(random() * Math.log(3000 / 0.02))).toFixed(6)) : 0;
    const counts = expressed ? ((tpm * eff) / 1000) * (0.5 + random()) : 0;
    for (const t of thresholds) if (tpm > t.threshold) t.rowsAbove++;
    block += `${name}\t${len}\t${eff.toFixed(1)}\t${counts.toFixed(3)}\t${tpm}\n`;
    if (block.length > 1 << 16) {
      await write(block);
      block = '';
    }
  }
  await write(block);
  out.end();
  await once(out, 'finish');
  return { filterNames, thresholds };
}
