/** SAM text read independently of the server, for the expected values of the reads tests. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export interface SamRecord {
  qname: string;
  flag: number;
  rname: string;
  pos: number;
  mapq: number;
  cigar: string;
  rnext: string;
  pnext: number;
  tlen: number;
  seq: string;
  qual: string;
  tags: string[];
}

/** SAM text (a file, or what `samtools view` printed): header lines and records, fields as written. */
export function parseSam(text: string): { header: string[]; records: SamRecord[] } {
  const header: string[] = [];
  const records: SamRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    if (line.startsWith('@')) {
      header.push(line);
      continue;
    }
    const c = line.split('\t');
    records.push({
      qname: c[0],
      flag: Number(c[1]),
      rname: c[2],
      pos: Number(c[3]),
      mapq: Number(c[4]),
      cigar: c[5],
      rnext: c[6],
      pnext: Number(c[7]),
      tlen: Number(c[8]),
      seq: c[9],
      qual: c[10],
      tags: c.slice(11),
    });
  }
  return { header, records };
}

export const readSam = (file: string) => parseSam(fs.readFileSync(file, 'utf8'));

/** The end of a record on the reference (0-based, exclusive), as samtools counts it: at least one base. */
export function samEnd(r: SamRecord): number {
  if (r.flag & 4 || r.cigar === '*') return r.pos; // pos - 1 + 1
  const span = [...r.cigar.matchAll(/(\d+)([MDN=X])/g)].reduce((n, m) => n + Number(m[1]), 0);
  return r.pos - 1 + Math.max(span, 1);
}

/** A number as the protocol carries it: int32Value, or int64Value beyond 32 signed bits. */
const integer = (text: string) => (Number(text) > 2147483647 ? { int64Value: Number(text) } : { int32Value: Number(text) });
/** A float tag as samtools prints it; NaN and the infinities are strings in JSON. */
const float = (text: string) => {
  const special: Record<string, string> = { nan: 'NaN', inf: 'Infinity', '-inf': '-Infinity' };
  return { doubleValue: special[text] ?? Number(text) };
};

/** The attributes the server should give for the tags of a SAM line, from their text alone. */
export function expectedAttributes(tags: string[]) {
  const attr: Record<string, { values: unknown[] }> = {};
  for (const tag of tags) {
    const [key, type, ...rest] = tag.split(':');
    const value = rest.join(':');
    let values: unknown[];
    if (type === 'i') values = [integer(value)];
    else if (type === 'f') values = [float(value)];
    else if (type === 'B') values = value.split(',').slice(1).map((v) => (value.startsWith('f') ? float(v) : integer(v)));
    else values = [{ stringValue: value }];
    if (values.length) attr[key] = { values };
  }
  return Object.keys(attr).length ? { attr } : undefined;
}

/** A seeded generator of numbers in [0, 1), so the files a suite writes are the same on every run. */
export function seededRandom(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** Why a suite that makes its files with samtools is skipped, or false when samtools is installed. */
export const withoutSamtools = spawnSync('sh', ['-c', 'command -v samtools']).status !== 0 ? 'needs samtools (apt-get install -y samtools)' : false;

/** Runs samtools (the test fails with what it printed when it fails) and returns its standard output. */
export function samtools(...args: string[]): string {
  const run = spawnSync('samtools', args, { encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}
