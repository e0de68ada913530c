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

const ISO_DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$/;

/**
 * A header's date as an ISO 8601 date-time: a day (`2015-11-18` or `20151118`) is its midnight UTC
 * (`2015-11-18T00:00:00Z`, as the reference server wrote it), a date-time stands as written; anything
 * else is no date.
 */
function isoDateTime(text: string): string | undefined {
  if (ISO_DATE_TIME.test(text) && !Number.isNaN(Date.parse(text))) return text;
  const day = /^(\d{4})(-?)(\d\d)\2(\d\d)$/.exec(text);
  if (!day) return undefined;
  const midnight = `${day[1]}-${day[3]}-${day[4]}T00:00:00Z`;
  // Date reads 2015-02-30 as March 2nd and 2015-13-01 as nothing: a day of the calendar reads back the same.
  const read = Date.parse(midnight);
  return !Number.isNaN(read) && new Date(read).toISOString() === midnight.replace('Z', '.000Z') ? midnight : undefined;
}

/**
 * The Analysis of an annotation set, from the header, as the reference server read it: `name`,
 * `description` and `software` from the header's own `##name`, `##description` and `##software` lines
 * (software from the annotator's version line, `##VEP` or `##SnpEffVersion`, when there is none), the
 * creation date the file gives (`##created`, else `##fileDate`), and the annotator's settings and
 * command line in attributes. Without `##name` the analysis is named after the set (`setName`).
 */
export function analysisOf(metadata: readonly MetadataEntry[], setName: string): AnalysisRecord {
  const lines = (key: string) => metadata.filter((m) => m.key === key && m.value !== undefined).map((m) => m.value!);
  const value = (key: string): string | undefined => {
    const [first] = lines(key);
    return first !== undefined ? unquote(first) : undefined;
  };
  const attr: AttributesRecord['attr'] = {};
  const annotators: string[] = [];
  // Pairs of the VEP line may be quoted one by one (`##VEP="v88" time="..."`): read from the raw text.
  const [vep] = lines('VEP');
  if (vep !== undefined) {
    const text = vep.trim();
    const version = text.split(/\s+/)[0];
    annotators.push(`VEP ${unquote(version)}`);
    for (const [k, v] of wordPairs(text.slice(version.length))) attr[k] = { values: [{ stringValue: v }] };
  }
  for (const m of metadata) {
    if (m.value !== undefined && m.key.startsWith('VEP-')) attr[m.key] = { values: [{ stringValue: unquote(m.value) }] };
  }
  const snpEff = value('SnpEffVersion');
  if (snpEff !== undefined) annotators.push(`SnpEff ${snpEff}`);
  const snpEffCmd = value('SnpEffCmd');
  if (snpEffCmd !== undefined) attr.SnpEffCmd = { values: [{ stringValue: snpEffCmd }] };
  const listed = lines('software').map(unquote).filter(Boolean);
  const software = listed.length ? listed : annotators;
  const created = value('created') ?? value('fileDate');
  return {
    name: value('name') || setName,
    description: value('description'),
    created: created !== undefined ? isoDateTime(created) : undefined,
    type: 'variant annotation',
    software: software.length ? software : undefined,
    attributes: Object.keys(attr).length ? { attr } : undefined,
  };
}
