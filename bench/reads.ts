/**
 * The reads part of the bench: a generated, coordinate-sorted BAM of at least a million 100 bp reads on
 * the bench contig (written as SAM by a seeded generator, compressed with `samtools view -b` and
 * indexed with `samtools index`), and every read of a region paged to the end over HTTP, measured
 * beside `samtools view REGION > /dev/null` on the same file and beside a bare node:http server
 * replaying the very bytes the server sent, page by page (what HTTP alone costs for those pages).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import { Client, tokenIn } from './client.js';
import { prng, run, type DataManifest } from './data.js';
import { cpuSecondsOf, memoryOf, trackPeakMemory } from './processes.js';
import type { Context } from './parts.js';
import { type Figure, judge } from './report.js';

/** Bump when the generator changes, so an old BAM is not reused. */
const READS_GENERATOR_VERSION = 1;
const READ_LENGTH = 100;
const READ_GROUPS = ['bench-rg1', 'bench-rg2'];

export interface ReadsManifest {
  bam: string;
  reads: number;
  contig: string;
  /** The measured window, 0-based half-open, and the reads overlapping it (samtools view -c). */
  region: { start: number; end: number; reads: number };
}

async function output(command: string, args: string[]): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'close');
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${code}): ${err.trim()}`);
  return out;
}

/** The BAM for `reads` reads over the data's contig, generated once and then reused. */
export async function ensureReadsData(data: DataManifest, reads: number, log: (line: string) => void): Promise<ReadsManifest> {
  const bam = path.join(data.dir, `reads-v${READS_GENERATOR_VERSION}-${reads}.bam`);
  const manifestPath = `${bam}.json`;
  if (fs.existsSync(manifestPath)) return JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as ReadsManifest;
  const length = data.params.referenceLength;
  const random = prng(0x7ead5 + reads);
  log(`generating a BAM of ${reads.toLocaleString('en')} reads (samtools view -b, samtools index)`);
  const first = Math.min(10_000, Math.floor(length / 10));
  const positions = new Float64Array(reads);
  for (let i = 0; i < reads; i++) positions[i] = first + Math.floor(random() * (length - first - 2 * READ_LENGTH));
  positions.sort();

  const samtools = spawn('samtools', ['view', '-b', '-o', bam, '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
  const finished = once(samtools, 'close');
  const stdin = samtools.stdin!;
  const write = async (text: string) => {
    if (!stdin.write(text)) await once(stdin, 'drain');
  };
  const header = [
    '@HD\tVN:1.6\tSO:coordinate',
    `@SQ\tSN:${data.contig}\tLN:${length}`,
    ...READ_GROUPS.map((rg, i) => `@RG\tID:${rg}\tSM:BENCH${i + 1}\tLB:lib${i + 1}\tPL:ILLUMINA\tPI:350`),
    '@PG\tID:bench\tPN:bench-reads\tVN:1',
  ];
  await write(header.join('\n') + '\n');
  // A pool of quality strings (Phred 2..41), so the generator spends its time on the reads themselves.
  const qualities = Array.from({ length: 64 }, () => {
    let q = '';
    for (let i = 0; i < READ_LENGTH; i++) q += String.fromCharCode(35 + Math.floor(random() * 40));
    return q;
  });
  const ACGT = 'ACGT';
  let block = '';
  for (let i = 0; i < reads; i++) {
    const pos = positions[i] + 1;
    const r = random();
    const cigar = r < 0.9 ? '100M' : r < 0.95 ? '5S95M' : r < 0.975 ? '50M2I48M' : '60M3D40M';
    const reverse = random() < 0.5;
    const first = random() < 0.5;
    const flag = 1 | 2 | (reverse ? 16 : 32) | (first ? 64 : 128) | (random() < 0.02 ? 1024 : 0);
    const insert = 250 + Math.floor(random() * 200);
    const mate = reverse ? Math.max(1, pos - insert + READ_LENGTH) : pos + insert - READ_LENGTH;
    const tlen = reverse ? -insert : insert;
    let seq = '';
    for (let j = 0; j < READ_LENGTH; j++) seq += ACGT[(random() * 4) | 0];
    const nm = Math.floor(random() * 4);
    block +=
      `read${String(i).padStart(8, '0')}\t${flag}\t${data.contig}\t${pos}\t${20 + Math.floor(random() * 41)}\t${cigar}\t=\t${mate}\t${tlen}\t` +
      `${seq}\t${qualities[(random() * qualities.length) | 0]}\tNM:i:${nm}\tAS:i:${100 - 5 * nm}\tRG:Z:${READ_GROUPS[i % 2]}\n`;
    if (block.length > 1 << 16) {
      await write(block);
      block = '';
    }
  }
  await write(block);
  stdin.end();
  const [code] = await finished;
  if (code !== 0) throw new Error(`samtools view -b failed (${code})`);
  await run('samtools', ['index', bam]);
  const region = { start: Math.floor(length * 0.4), end: Math.floor(length * 0.6), reads: 0 };
  region.reads = Number((await output('samtools', ['view', '-c', bam, `${data.contig}:${region.start + 1}-${region.end}`])).trim());
  const manifest: ReadsManifest = { bam, reads, contig: data.contig, region };
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  return manifest;
}
