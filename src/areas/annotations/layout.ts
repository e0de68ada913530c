/**
 * What a VCF header says about its annotations: which INFO field carries them (VEP's `CSQ`, SnpEff's
 * `ANN`, or VEP writing `ANN` as some pipelines configure it), the columns of each entry as the field's
 * own Description lists them (`Format: Allele|Consequence|...`, so any VEP version or plugin set
 * works), and the analysis that produced them (`##VEP=...`, `##SnpEffVersion`, `##SnpEffCmd`).
 */
import type { MetadataEntry } from '../variants/vcf-header.js';
import type { AttributesRecord } from '../../protocol/common.js';
import type { AnalysisRecord } from './messages.js';

/** INFO fields that hold annotations, in the order they are looked for. */
export const ANNOTATION_FIELDS = ['CSQ', 'ANN'] as const;

export interface AnnotationLayout {
  /** The INFO field holding the entries. */
  field: string;
  /** The entry columns, as the header names them (trimmed). */
  columns: string[];
}

/**
 * The columns listed in an annotation field's Description: the `|`-separated list after its last `:`
 * (VEP: `... Format: Allele|Consequence|...`) or inside single quotes (SnpEff: `'Allele | Annotation | ...'`).
 */
export function columnsOf(description: string): string[] | undefined {
  const firstBar = description.indexOf('|');
  if (firstBar === -1) return undefined;
  const before = description.slice(0, firstBar);
  const begin = Math.max(before.lastIndexOf(':'), before.lastIndexOf("'")) + 1;
  let text = description.slice(begin);
  const quote = text.indexOf("'");
  if (quote !== -1) text = text.slice(0, quote);
  const columns = text.split('|').map((c) => c.trim());
  return columns.every((c) => c.length > 0) ? columns : undefined;
}

/** A column name compared without case or spaces: SnpEff writes `cDNA.pos / cDNA.length`. */
export const columnKey = (name: string) => name.replace(/\s+/g, '').toLowerCase();

/** The roles the server reads from entry columns, by the names VEP and SnpEff give them. */
export const COLUMN_ROLES = {
  allele: ['allele'],
  effects: ['consequence', 'annotation'],
  feature: ['feature', 'feature_id'],
  hgvsGenomic: ['hgvsg', 'hgvs.g'],
  hgvsTranscript: ['hgvsc', 'hgvs.c'],
  hgvsProtein: ['hgvsp', 'hgvs.p'],
  cdna: ['cdna_position', 'cdna.pos/cdna.length'],
  cds: ['cds_position', 'cds.pos/cds.length'],
  protein: ['protein_position', 'aa.pos/aa.length'],
  codons: ['codons'],
  aminoAcids: ['amino_acids'],
  sift: ['sift'],
  polyphen: ['polyphen'],
} as const;

export type ColumnRole = keyof typeof COLUMN_ROLES;

/** The annotation field of a header, or undefined when it declares none; a reason when it is unusable. */
export function layoutOf(metadata: readonly MetadataEntry[]): { layout?: AnnotationLayout; problem?: string } {
  for (const field of ANNOTATION_FIELDS) {
    const entry = metadata.find((m) => m.key === `INFO.${field}`);
    if (!entry) continue;
    const columns = columnsOf(entry.description ?? '');
    if (!columns) return { problem: `the Description of INFO field ${field} lists no '|'-separated entry columns` };
    const keys = columns.map(columnKey);
    for (const role of ['allele', 'effects'] as const) {
      if (!COLUMN_ROLES[role].some((name) => keys.includes(name))) {
        return { problem: `the entry columns of INFO field ${field} have no ${role === 'allele' ? 'Allele' : 'Consequence or Annotation'} column` };
      }
    }
    return { layout: { field, columns } };
  }
  return {};
}

/** `key=value key2=two words` pairs of a `##VEP=` line after its version: a value runs to the next `key=`. */
function wordPairs(text: string): Array<[string, string]> {
  return text
    .trim()
    .split(/\s+(?=[^\s=]+=)/)
    .filter((token) => token.includes('='))
    .map((token) => [token.slice(0, token.indexOf('=')), unquote(token.slice(token.indexOf('=') + 1))]);
}

/** The text inside double quotes (kept as it stands, spaces too), or the trimmed text. */
function unquote(value: string): string {
  const text = value.trim();
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}

/** `20140730` -> `2014-07-30`; other text as it stands. */
const isoDate = (v: string) => (/^\d{8}$/.test(v) ? `${v.slice(0, 4)}-${v.slice(4, 6)}-${v.slice(6)}` : v);

/**
 * The Analysis of an annotation set, from the header: the software and its version, its settings and
 * command line in attributes, and the creation date the file gives (`##created`, else `##fileDate`).
 */
export function analysisOf(metadata: readonly MetadataEntry[], name: string): AnalysisRecord {
  const value = (key: string) => metadata.find((m) => m.key === key && m.value !== undefined)?.value;
  const attr: AttributesRecord['attr'] = {};
  const software: string[] = [];
  const vep = value('VEP');
  if (vep !== undefined) {
    const text = vep.trim();
    const version = unquote(text.split(/\s+/)[0]);
    software.push(`VEP ${version}`);
    for (const [k, v] of wordPairs(text.slice(text.split(/\s+/)[0].length))) attr[k] = { values: [{ stringValue: v }] };
  }
  for (const m of metadata) {
    if (m.value !== undefined && m.key.startsWith('VEP-')) attr[m.key] = { values: [{ stringValue: unquote(m.value) }] };
  }
  const snpEff = value('SnpEffVersion');
  if (snpEff !== undefined) software.push(`SnpEff ${unquote(snpEff)}`);
  const snpEffCmd = value('SnpEffCmd');
  if (snpEffCmd !== undefined) attr.SnpEffCmd = { values: [{ stringValue: unquote(snpEffCmd) }] };
  const created = value('created') ?? value('fileDate');
  const description = value('description');
  return {
    name,
    description: description !== undefined ? unquote(description) : undefined,
    created: created !== undefined ? isoDate(unquote(created)) : undefined,
    type: 'variant annotation',
    software: software.length ? software : undefined,
    attributes: Object.keys(attr).length ? { attr } : undefined,
  };
}
