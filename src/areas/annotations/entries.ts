/**
 * Turns a VCF data line into a VariantAnnotation: one TranscriptEffect per entry of the annotation
 * field (`CSQ=` / `ANN=`, entries separated by `,`, columns by `|`), each column read by the role its
 * header name gives it (layout.ts) and every other non-empty column kept in the effect's attributes.
 */
import type { AttributesRecord } from '../../protocol/common.js';
import { hashText } from '../../protocol/hash.js';
import { encodeId } from '../../protocol/ids.js';
import { alleleDigest } from '../variants/variant-writer.js';
import { COLUMN_ROLES, columnKey, type AnnotationLayout, type ColumnRole } from './layout.js';
import type { AlleleLocationRecord, OntologyTermRecord, TranscriptEffectRecord, VariantAnnotationRecord } from './messages.js';

/** The first 8 columns of a data line (up to INFO), without decoding the sample columns. */
export function fixedColumns(bytes: Buffer, lineStart: number, lineEnd: number): string[] {
  let end = lineStart - 1;
  for (let tabs = 0; tabs < 8; tabs++) {
    const next = bytes.indexOf(9, end + 1);
    if (next === -1 || next >= lineEnd) {
      end = lineEnd;
      break;
    }
    end = next; // after 8 tabs: the tab that ends INFO
  }
  return bytes.toString('utf8', lineStart, end).split('\t');
}

/**
 * A relative position as VEP (`134`, `1-2`, `?-5`) or SnpEff (`502/1234`: position / length) write it,
 * 1-based and inclusive, as an AlleleLocation's 0-based start and exclusive end.
 */
export function locationOf(text: string | undefined): AlleleLocationRecord | undefined {
  if (!text) return undefined;
  const position = text.split('/')[0].trim();
  const m = /^(\d+|\?)(?:-(\d+|\?))?$/.exec(position);
  if (!m) return undefined;
  const first = m[1] === '?' ? undefined : Number(m[1]);
  const last = m[2] === undefined ? first : m[2] === '?' ? undefined : Number(m[2]);
  if (first === undefined && last === undefined) return undefined;
  return { start: first !== undefined ? first - 1 : undefined, end: last };
}

/** `gAc/gTc` or `D/V` as reference and alternate sequences; a single `L` (synonymous) as the reference. */
function sequencesOf(text: string | undefined): Pick<AlleleLocationRecord, 'referenceSequence' | 'alternateSequence'> {
  if (!text) return {};
  const [ref, alt] = text.split('/');
  return { referenceSequence: ref || undefined, alternateSequence: alt || undefined };
}

/** A location with its sequences, or undefined when the entry gives neither. */
function withSequences(location: AlleleLocationRecord | undefined, sequences: string | undefined): AlleleLocationRecord | undefined {
  const seqs = sequencesOf(sequences);
  if (!location && !seqs.referenceSequence && !seqs.alternateSequence) return undefined;
  return { ...location, ...seqs };
}

/**
 * SIFT or PolyPhen output: `tolerated(0.05)` is the result `tolerated` with the score 0.05. The score
 * field is an integer, so it carries the score in thousandths (50), which keeps every digit SIFT (two
 * decimals) and PolyPhen (three) write.
 */
export function analysisResultOf(analysisId: string, text: string | undefined): { analysisId: string; result?: string; score?: number } | undefined {
  if (!text) return undefined;
  const m = /^([^()]*?)\s*(?:\(([-+\d.eE]+)\))?$/.exec(text.trim());
  if (!m) return { analysisId, result: text };
  const bare = m[2] === undefined && /^[-+\d.eE]+$/.test(m[1]) && Number.isFinite(Number(m[1]));
  const scoreText = bare ? m[1] : m[2];
  const score = scoreText !== undefined && Number.isFinite(Number(scoreText)) ? Math.round(Number(scoreText) * 1000) : undefined;
  const result = bare ? undefined : m[1] || undefined;
  return { analysisId, result, score };
}

/** The ontology term of an effect name (e.g. `missense_variant`), as served. */
export type TermOf = (name: string) => OntologyTermRecord;

/** Whether a transcript effect's effects satisfy a search's `effects` filter. */
export type EffectFilter = (effects: readonly OntologyTermRecord[]) => boolean;

export interface AnnotationSetNames {
  datasetName: string;
  setName: string;
  /** Ids as served. */
  annotationSetId: string;
  created?: string;
}

export class AnnotationReader {
  private readonly roles = new Map<ColumnRole, number>();
  /** Columns left to attributes: [index, name]. */
  private readonly rest: Array<[number, string]> = [];
  private readonly terms = new Map<string, OntologyTermRecord>();
  private readonly fieldPrefix: string;

  constructor(
    layout: AnnotationLayout,
    private readonly names: AnnotationSetNames,
    private readonly termOf: TermOf,
  ) {
    this.fieldPrefix = layout.field + '=';
    const keys = layout.columns.map(columnKey);
    for (const [role, names] of Object.entries(COLUMN_ROLES) as Array<[ColumnRole, readonly string[]]>) {
      const index = keys.findIndex((k) => names.includes(k));
      if (index !== -1) this.roles.set(role, index);
    }
    const used = new Set(this.roles.values());
    layout.columns.forEach((name, i) => {
      if (!used.has(i)) this.rest.push([i, name]);
    });
  }

  private term(name: string): OntologyTermRecord {
    let term = this.terms.get(name);
    if (!term) this.terms.set(name, (term = this.termOf(name)));
    return term;
  }

  /**
   * The annotation of one data line (its first 8 columns), with only the transcript effects the filter
   * accepts; undefined when a filter is given and no effect passes it.
   */
  read(columns: string[], filter?: EffectFilter): VariantAnnotationRecord | undefined {
    const [chrom, pos, , ref, alt, , , info = ''] = columns;
    const start = String(Number(pos) - 1);
    const digest = alleleDigest(ref, alt);
    const { datasetName, setName } = this.names;
    const id = encodeId([datasetName, 'vas', setName, chrom, start, digest]);
    const { entries, genomic } = this.entriesOf(info);
    const alts = alt.split(',');
    const effects: TranscriptEffectRecord[] = [];
    entries.forEach((cells, index) => {
      const effect = this.effectOf(cells, `${id}\t${index}`, alts, genomic);
      if (!filter || filter(effect.effects ?? [])) effects.push(effect);
    });
    if (filter && effects.length === 0) return undefined;
    return {
      id,
      variantId: encodeId([datasetName, 'vs', setName, chrom, start, digest]),
      variantAnnotationSetId: this.names.annotationSetId,
      created: this.names.created,
      transcriptEffects: effects.length ? effects : undefined,
    };
  }

  /**
   * The effect names of one data line (its first 8 columns), entry by entry, as the file writes them:
   * what `repo check --deep` matches to terms without building the annotation.
   */
  effectNames(columns: string[]): string[] {
    return this.entriesOf(columns[7] ?? '').entries.flatMap((cells) => this.effectNamesOf(cells));
  }

  /** The entries of an INFO column's annotation field, each split into its cells, and its `HGVS.g` values. */
  private entriesOf(info: string): { entries: string[][]; genomic?: string[] } {
    let entriesText: string | undefined;
    let genomic: string[] | undefined;
    for (const item of info.split(';')) {
      if (item.startsWith(this.fieldPrefix)) entriesText = item.slice(this.fieldPrefix.length);
      else if (item.startsWith('HGVS.g=')) genomic = item.slice(7).split(',');
    }
    return { entries: entriesText ? entriesText.split(',').map((entry) => entry.split('|')) : [], genomic };
  }

  /** The cell of an entry that holds `role`; undefined when the layout has no such column or it is empty. */
  private cellOf(cells: string[], role: ColumnRole): string | undefined {
    const i = this.roles.get(role);
    const v = i === undefined ? undefined : cells[i];
    return v === undefined || v === '' ? undefined : v;
  }

  /** An entry's effect names: its effects column, `&`-separated. */
  private effectNamesOf(cells: string[]): string[] {
    return (this.cellOf(cells, 'effects') ?? '').split('&').filter(Boolean);
  }

  private effectOf(cells: string[], idText: string, alts: string[], genomic: string[] | undefined): TranscriptEffectRecord {
    const cell = (role: ColumnRole) => this.cellOf(cells, role);
    const allele = cell('allele');
    const effectNames = this.effectNamesOf(cells);
    // SnpEff writes the genomic HGVS once per ALT allele in INFO HGVS.g, in ALT order.
    const genomicHgvs =
      cell('hgvsGenomic') ??
      (genomic && (genomic.length === alts.length && allele !== undefined && alts.includes(allele) ? genomic[alts.indexOf(allele)] : genomic.length === 1 ? genomic[0] : undefined));
    const hgvs = { genomic: genomicHgvs || undefined, transcript: cell('hgvsTranscript'), protein: cell('hgvsProtein') };
    const analysisResults = [analysisResultOf('SIFT', cell('sift')), analysisResultOf('PolyPhen', cell('polyphen'))].filter(
      (r): r is NonNullable<typeof r> => r !== undefined,
    );
    const attr: AttributesRecord['attr'] = {};
    for (const [i, name] of this.rest) {
      const value = cells[i];
      if (value) attr[name] = { values: [{ stringValue: value }] };
    }
    return {
      id: hashText('sha1', idText, 'hex').slice(0, 16),
      featureId: cell('feature'),
      alternateBases: allele,
      effects: effectNames.length ? effectNames.map((n) => this.term(n)) : undefined,
      hgvsAnnotation: hgvs.genomic || hgvs.transcript || hgvs.protein ? hgvs : undefined,
      cdnaLocation: locationOf(cell('cdna')),
      cdsLocation: withSequences(locationOf(cell('cds')), cell('codons')),
      proteinLocation: withSequences(locationOf(cell('protein')), cell('aminoAcids')),
      analysisResults: analysisResults.length ? analysisResults : undefined,
      attributes: Object.keys(attr).length ? { attr } : undefined,
    };
  }
}
