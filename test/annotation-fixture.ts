/**
 * What the sequence-annotation tests read independently of the code under test: GFF3 lines and
 * Sequence Ontology `is_a` links parsed here in a few lines each, wiggle text expanded to per-base
 * values, and the FASTA of contig names the reference server's annotation files need.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface GffLine {
  seqid: string;
  type: string;
  /** 0-based half-open. */
  start: number;
  end: number;
  strand: string;
  score: string;
  phase: string;
  attrs: Record<string, string[]>;
}

export function readGffLines(file: string): GffLine[] {
  const out: GffLine[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('##FASTA')) break;
    if (!line.trim() || line.startsWith('#')) continue;
    const c = line.split('\t');
    const attrs: Record<string, string[]> = {};
    for (const part of c[8].split(';')) {
      const [k, v = ''] = part.split('=');
      if (k.trim()) attrs[k.trim()] = v === '' ? [] : v.split(',').map((x) => decodeURIComponent(x));
    }
    out.push({ seqid: decodeURIComponent(c[0]), type: c[2], start: Number(c[3]) - 1, end: Number(c[4]), strand: c[6], score: c[5], phase: c[7], attrs });
  }
  return out;
}

/** term id -> its id and every id below it by is_a, from the OBO text. */
export function oboSubclasses(file: string): { byName: Map<string, string>; below: (id: string) => Set<string> } {
  const children = new Map<string, string[]>();
  const byName = new Map<string, string>();
  let id = '';
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('[')) id = '';
    else if (line.startsWith('id: ')) id = line.slice(4).trim();
    else if (line.startsWith('name: ') && id) byName.set(line.slice(6).trim(), id);
    else if (line.startsWith('is_a: ') && id) {
      const parent = line.slice(6).split('!')[0].trim();
      children.set(parent, [...(children.get(parent) ?? []), id]);
    }
  }
  const below = (root: string) => {
    const found = new Set([root]);
    const todo = [root];
    while (todo.length) for (const c of children.get(todo.pop()!) ?? []) if (!found.has(c)) found.add(c), todo.push(c);
    return found;
  };
  return { byName, below };
}

/** 0-based base -> value, from variableStep and fixedStep wiggle text. */
export function wiggleValues(file: string): Map<number, number> {
  const values = new Map<number, number>();
  let mode: { kind: 'variable' | 'fixed'; span: number; start: number; step: number } | undefined;
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith('track')) continue;
    const field = (name: string) => Number(new RegExp(`\\b${name}=(\\S+)`).exec(line)?.[1]);
    if (line.startsWith('variableStep')) mode = { kind: 'variable', span: field('span') || 1, start: 0, step: 0 };
    else if (line.startsWith('fixedStep')) mode = { kind: 'fixed', span: field('span') || 1, start: field('start'), step: field('step') };
    else if (mode?.kind === 'variable') {
      const [pos, value] = line.split(/\s+/).map(Number);
      for (let k = 0; k < mode.span; k++) values.set(pos - 1 + k, value);
    } else if (mode?.kind === 'fixed') {
      for (let k = 0; k < mode.span; k++) values.set(mode.start - 1 + k, Number(line));
      mode.start += mode.step;
    }
  }
  return values;
}

/**
 * A FASTA with one short sequence (60 N) per name. The reference server's annotation files name
 * contigs of several assemblies (GRCh38 chr1/chrX/chrY, yeast chrI, Plasmodium, fly 2L, RefSeq
 * accessions); the feature and continuous loaders check that each is in the reference set, by name.
 * Real lengths would make a file of hundreds of megabases for a few hundred features.
 */
export function writeContigFasta(file: string, names: Iterable<string>): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, [...new Set(names)].map((n) => `>${n}\n${'N'.repeat(60)}\n`).join(''));
  return file;
}

/** Runs of consecutive bases with values in [start, end): what a continuous search returns for it. */
export function expectedRuns(values: Map<number, number>, start: number, end: number): Array<{ start: number; values: number[] }> {
  const runs: Array<{ start: number; values: number[] }> = [];
  for (const base of [...values.keys()].sort((a, b) => a - b)) {
    if (base < start || base >= end) continue;
    const last = runs.at(-1);
    if (last && last.start + last.values.length === base) last.values.push(values.get(base)!);
    else runs.push({ start: base, values: [values.get(base)!] });
  }
  return runs;
}
