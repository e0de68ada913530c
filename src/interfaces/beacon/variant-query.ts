/**
 * A genomic variation query (variant-queries.md) read from its parameters, and the test of one
 * allele against it. Coordinates are Beacon's: 0-based, `end` exclusive.
 *
 * - Sequence query: one `start`, `alternateBases` (and `referenceBases`): the alleles beginning there
 *   with those bases, `N` matching any base (and the other IUPAC codes their bases). An allele also
 *   matches given without the padding base the VCF writes before an indel (an empty
 *   `alternateBases` for a deletion, from the base after the padding one): alleles are compared as
 *   written, never realigned.
 * - Range query: one `start` and one `end`: the alleles overlapping [start, end).
 * - Bracket query: two of each: the alleles starting in [start[0], start[1]) and ending in
 *   [end[0], end[1]) (so start[1] = start[0] + 1 asks for one start).
 * - `referenceName` alone: every allele of that reference; no position at all: every allele.
 * Each may be narrowed by `variantType`, `variantMinLength`/`variantMaxLength`, and the bases.
 */
import type { Allele } from './alleles.js';
import { oneLetterChange } from './annotations.js';
import { badRequest } from './errors.js';

/** The parameters a g_variants request takes (`geneid` is the name the specification's OpenAPI document gives `geneId`). */
export const VARIANT_PARAMETERS = [
  'referenceName',
  'start',
  'end',
  'referenceBases',
  'alternateBases',
  'variantType',
  'variantMinLength',
  'variantMaxLength',
  'geneId',
  'geneid',
  'aminoacidChange',
  'assemblyId',
  'mateName',
  'genomicAlleleShortForm',
] as const;

export type Place =
  | { kind: 'sequence'; start: number }
  | { kind: 'range'; start: number; end: number }
  | { kind: 'bracket'; start: [number, number]; end: [number, number] }
  | { kind: 'everywhere' };

export interface VariantQuery {
  referenceName?: string;
  place: Place;
  referenceBases?: string;
  alternateBases?: string;
  /** The variant types the asked `variantType` stands for (DEL for EFO:0030067, ...). */
  variantTypes?: Set<string>;
  minLength?: number;
  maxLength?: number;
  assemblyId?: string;
  geneId?: string;
  aminoacidChange?: string;
}

/** Terms other vocabularies give the types read from VCFs (variant-queries.md, "CNV Term Use Comparison"). */
const TYPE_TERMS: Record<string, string> = {
  'EFO:0030067': 'DEL',
  'EFO:0030068': 'DEL',
  'EFO:0020073': 'DEL',
  'EFO:0030069': 'DEL',
  'EFO:0030070': 'DUP',
  'EFO:0030071': 'DUP',
  'EFO:0030072': 'DUP',
  'EFO:0030073': 'DUP',
  'SO:0001742': 'DUP',
  'SO:0001743': 'DEL',
  'SO:0001483': 'SNP',
  SNV: 'SNP',
  'SO:0002007': 'MNP',
  'SO:1000032': 'INDEL',
  'SO:0000667': 'INS',
  'SO:0000159': 'DEL',
  'SO:1000036': 'INV',
  'SO:0001019': 'CNV',
};

/** IUPAC nucleotide codes and the bases each stands for. */
const IUPAC: Record<string, string> = {
  A: 'A', C: 'C', G: 'G', T: 'T', U: 'T', N: 'ACGTN', R: 'AG', Y: 'CT', S: 'CG', W: 'AT', K: 'GT', M: 'AC', B: 'CGT', D: 'AGT', H: 'ACT', V: 'ACG',
};
const BASES_PATTERN = /^[ACGTUNRYSWKMBDHV]*$/;

const describe = (value: unknown) => JSON.stringify(value) ?? String(value);

type Form = 'query' | 'body';

/** A number from a POST body, or the digits of a GET query's text. */
function integer(value: unknown, form: Form): number | undefined {
  const n = form === 'query' && typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** A list of 1 or 2 non-negative integers: `[100]`, `[100, 200]` (or a bare `100`) in a body, `100,200` in a query. */
function positions(name: string, value: unknown, form: Form): number[] {
  const list = form === 'query' && typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : [value];
  if (list.length < 1 || list.length > 2) throw badRequest(`${name} takes one or two positions, not ${describe(value)}`);
  return list.map((v) => {
    const n = integer(v, form);
    if (n === undefined) throw badRequest(`${name} must hold non-negative integers, not ${describe(value)}`);
    return n;
  });
}

function length(name: string, value: unknown, form: Form): number {
  const n = integer(value, form);
  if (n === undefined) throw badRequest(`${name} must be a non-negative integer, not ${describe(value)}`);
  return n;
}

function text(name: string, value: unknown): string {
  if (typeof value !== 'string') throw badRequest(`${name} must be a string, not ${describe(value)}`);
  return value;
}

function bases(name: string, value: unknown): string {
  const upper = text(name, value).toUpperCase();
  if (!BASES_PATTERN.test(upper)) throw badRequest(`${name} must be bases (IUPAC codes, N for any base), not ${describe(value)}`);
  return upper;
}

/** Reads a g_variants query; every mistake is a 400 naming the parameter. */
export function variantQueryOf(parameters: Record<string, unknown>, form: Form): VariantQuery {
  const p = parameters;
  for (const unsupported of ['mateName', 'genomicAlleleShortForm'] as const) {
    if (p[unsupported] !== undefined) throw badRequest(`${unsupported} is not supported by this beacon: ask by referenceName and start, or by geneId`);
  }
  if (p.geneId !== undefined && p.geneid !== undefined) throw badRequest('geneId is given twice (as geneId and geneid)');
  const query: VariantQuery = { place: { kind: 'everywhere' } };
  const geneId = p.geneId ?? p.geneid;
  if (geneId !== undefined) query.geneId = text('geneId', geneId);
  if (p.referenceName !== undefined) query.referenceName = text('referenceName', p.referenceName);
  if (p.assemblyId !== undefined) query.assemblyId = text('assemblyId', p.assemblyId);
  if (p.aminoacidChange !== undefined) {
    const change = oneLetterChange(text('aminoacidChange', p.aminoacidChange));
    if (change === undefined) throw badRequest(`aminoacidChange must be a change of one amino acid, as V600E or Val600Glu, not ${describe(p.aminoacidChange)}`);
    query.aminoacidChange = change;
  }
  if (p.referenceBases !== undefined) query.referenceBases = bases('referenceBases', p.referenceBases);
  if (p.alternateBases !== undefined) query.alternateBases = bases('alternateBases', p.alternateBases);
  if (p.variantType !== undefined) {
    const asked = text('variantType', p.variantType).trim().toUpperCase();
    if (asked === '') throw badRequest('variantType must not be empty');
    query.variantTypes = new Set([TYPE_TERMS[asked] ?? asked]);
  }
  if (p.variantMinLength !== undefined) query.minLength = length('variantMinLength', p.variantMinLength, form);
  if (p.variantMaxLength !== undefined) query.maxLength = length('variantMaxLength', p.variantMaxLength, form);
  if (query.minLength !== undefined && query.maxLength !== undefined && query.minLength > query.maxLength) {
    throw badRequest(`variantMinLength (${query.minLength}) is greater than variantMaxLength (${query.maxLength})`);
  }

  const start = p.start === undefined ? undefined : positions('start', p.start, form);
  const end = p.end === undefined ? undefined : positions('end', p.end, form);
  if (query.geneId !== undefined && (query.referenceName !== undefined || start || end)) {
    throw badRequest('geneId takes the place of referenceName, start and end: give one or the other');
  }
  if ((start || end) && query.referenceName === undefined) throw badRequest(`referenceName is required with ${start ? 'start' : 'end'}`);
  if (end && !start) throw badRequest('end needs a start: give start and end for a range, two of each for a bracket');
  if (start && end) {
    if (start.length !== end.length) throw badRequest(`start and end take one value each (a range) or two each (a bracket), not ${start.length} and ${end.length}`);
    if (start.length === 1) {
      if (start[0] >= end[0]) throw badRequest(`end (${end[0]}) must be greater than start (${start[0]})`);
      query.place = { kind: 'range', start: start[0], end: end[0] };
    } else {
      if (start[0] > start[1]) throw badRequest(`start brackets [${start}] are inverted: start[0] must not be greater than start[1]`);
      if (end[0] > end[1]) throw badRequest(`end brackets [${end}] are inverted: end[0] must not be greater than end[1]`);
      query.place = { kind: 'bracket', start: [start[0], start[1]], end: [end[0], end[1]] };
    }
  } else if (start) {
    if (start.length !== 1) throw badRequest('start has two values (a bracket) but end is missing');
    if (query.alternateBases === undefined) throw badRequest('alternateBases is required with a single start and no end (a sequence query); give an end for a range');
    query.place = { kind: 'sequence', start: start[0] };
  }
  return query;
}

/** Where a query's alleles may lie, to read: the sequence query's one base widened to the padding base before it. */
export function windowOf(place: Place): { start: number; end: number } {
  switch (place.kind) {
    case 'sequence':
      return { start: Math.max(0, place.start - 1), end: place.start + 1 };
    case 'range':
      return place;
    case 'bracket':
      return { start: place.start[0], end: Math.max(place.start[1], place.start[0] + 1) };
    case 'everywhere':
      return { start: 0, end: Number.MAX_SAFE_INTEGER };
  }
}

/** Whether asked bases (IUPAC codes) match bases of the file, one for one. */
function basesMatch(asked: string, actual: string): boolean {
  if (asked.length !== actual.length) return false;
  for (let i = 0; i < asked.length; i++) {
    const allowed = IUPAC[asked[i]];
    if (!allowed || !allowed.includes(actual[i].toUpperCase())) return false;
  }
  return true;
}

/** The allele without the bases its REF and ALT begin with in common (the VCF's padding base), and where it then starts. */
function trimmed(allele: Allele): { start: number; ref: string; alt: string } | undefined {
  const { referenceBases: ref, alternate: alt } = allele;
  let n = 0;
  while (n < ref.length && n < alt.length && ref[n].toUpperCase() === alt[n].toUpperCase()) n++;
  return n === 0 ? undefined : { start: allele.start + n, ref: ref.slice(n), alt: alt.slice(n) };
}

function sequenceMatches(query: VariantQuery, allele: Allele, start: number): boolean {
  if (!allele.sequence) return false;
  const asWritten = (at: number, ref: string, alt: string) =>
    at === start && basesMatch(query.alternateBases!, alt) && (query.referenceBases === undefined || basesMatch(query.referenceBases, ref));
  if (asWritten(allele.start, allele.referenceBases, allele.alternate)) return true;
  const short = trimmed(allele);
  return short !== undefined && asWritten(short.start, short.ref, short.alt);
}

/** Whether an allele answers the query (its reference aside, which is where it was read). */
export function matches(query: VariantQuery, allele: Allele): boolean {
  const { place } = query;
  if (query.variantTypes && !query.variantTypes.has(allele.variantType)) return false;
  if (query.minLength !== undefined && (allele.length === undefined || allele.length < query.minLength)) return false;
  if (query.maxLength !== undefined && (allele.length === undefined || allele.length > query.maxLength)) return false;
  if (place.kind === 'sequence') return sequenceMatches(query, allele, place.start);
  if (place.kind === 'range' && !(allele.start < place.end && allele.end > place.start)) return false;
  if (place.kind === 'bracket') {
    const [s0, s1] = place.start;
    const [e0, e1] = place.end;
    if (!(allele.start >= s0 && allele.start < s1 && allele.end >= e0 && allele.end < e1)) return false;
  }
  if (query.alternateBases !== undefined && !(allele.sequence && basesMatch(query.alternateBases, allele.alternate))) return false;
  if (query.referenceBases !== undefined && !basesMatch(query.referenceBases, allele.referenceBases)) return false;
  return true;
}
