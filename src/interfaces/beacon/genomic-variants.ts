/**
 * Genomic variants: the alleles of a dataset's variant sets that answer a query, read through the
 * variants area's own reader (the index finds where the window begins, the lines are read from
 * there as bytes, `vcf-files.ts`), each line's first eight columns decoded and its sample columns
 * only when the calls are needed (record granularity, or a query limited to some samples).
 *
 * A dataset granted `boolean` stops at its first hit; `count` reads every line of the window;
 * `record` reads them all too (its count is of every hit) and writes the records of the page asked.
 */
import { alleleDigest } from '../../areas/variants/variant-writer.js';
import { recordsInOrder, VariantFileCache, type VariantRecord, type SetFile } from '../../areas/variants/vcf-files.js';
import { GAException } from '../../protocol/errors.js';
import { allelesOf, perAllele, type Allele, type VcfLine } from './alleles.js';
import type { AnnotationReader } from '../../areas/annotations/entries.js';
import { effectsOf, type AlleleEffects, type VariantAnnotations } from './annotations.js';
import type { DatasetAnswer } from './envelope.js';
import { variantKeyOf, type VariantKey } from './ids.js';
import type { Genes } from './genes.js';
import { matches, windowOf, type Place, type VariantQuery } from './variant-query.js';
import type { VariantSetContext, VariantSets } from './variant-sets.js';
import type { BeaconGranularity } from '../../areas/datasets/store.js';

const TAB = 9;

/** A data line: its first eight columns decoded, its sample columns left as bytes. */
export interface LineView {
  line: VcfLine;
  /** The line's ALT column as written (the 0.6.0a10 id's digest is of REF and ALT). */
  altColumn: string;
  record: VariantRecord;
  /** Where the FORMAT column begins in `record.bytes`, or -1 when the line has none. */
  formatStart: number;
}

export function viewOf(record: VariantRecord): LineView {
  const { bytes, lineStart, lineEnd } = record;
  const tabs: number[] = [];
  for (let at = lineStart; tabs.length < 8; ) {
    const tab = bytes.indexOf(TAB, at);
    if (tab === -1 || tab >= lineEnd) break;
    tabs.push(tab);
    at = tab + 1;
  }
  if (tabs.length < 4) throw new Error('a data line has fewer than 5 columns');
  const fixedEnd = tabs.length >= 8 ? tabs[7] : lineEnd;
  const columns = bytes.toString('utf8', lineStart, fixedEnd).split('\t');
  const altColumn = columns[4];
  return {
    line: { chrom: columns[0], start: record.start, id: columns[2], ref: columns[3], alts: altColumn.split(','), info: columns[7] ?? '.' },
    altColumn,
    record,
    formatStart: tabs.length >= 8 ? tabs[7] + 1 : -1,
  };
}

/** Each sample's alleles by its GT (-1 for a missing one), or undefined when the line has no GT. */
export function genotypesOf(view: LineView, samples: number): Array<number[] | undefined> | undefined {
  const { bytes, lineEnd } = view.record;
  if (view.formatStart < 0 || bytes[view.formatStart] !== 71 /* G */ || bytes[view.formatStart + 1] !== 84 /* T */) return undefined;
  const afterGt = bytes[view.formatStart + 2];
  if (afterGt !== TAB && afterGt !== 58 /* : */) return undefined;
  const out: Array<number[] | undefined> = new Array(samples);
  let at = bytes.indexOf(TAB, view.formatStart);
  for (let s = 0; s < samples && at !== -1 && at < lineEnd; s++) {
    const alleles: number[] = [];
    let value = -2; // -2: no digit yet
    let i = at + 1;
    for (; i < lineEnd; i++) {
      const c = bytes[i];
      if (c >= 48 && c <= 57) value = (value < 0 ? 0 : value * 10) + c - 48;
      else if (c === 46 /* . */) value = -1;
      else if (c === 47 || c === 124 /* / | */) {
        alleles.push(value === -2 ? -1 : value);
        value = -2;
      } else break; // ':' or the tab that ends the column
    }
    if (value !== -2) alleles.push(value);
    out[s] = alleles.length ? alleles : undefined;
    at = bytes.indexOf(TAB, i);
  }
  return out;
}

const GENO = {
  hemizygous: { id: 'GENO:0000134', label: 'hemizygous' },
  heterozygous: { id: 'GENO:0000135', label: 'heterozygous' },
  homozygous: { id: 'GENO:0000136', label: 'homozygous' },
  compoundHeterozygous: { id: 'GENO:0000402', label: 'compound heterozygous' },
} as const;

/** The zygosity of a call for allele `k`, or undefined when the call does not carry it. */
export function zygosityOf(alleles: number[], k: number): (typeof GENO)[keyof typeof GENO] | undefined {
  if (!alleles.includes(k)) return undefined;
  if (alleles.length === 1) return GENO.hemizygous;
  if (alleles.every((a) => a === k)) return GENO.homozygous;
  return alleles.every((a) => a > 0) ? GENO.compoundHeterozygous : GENO.heterozygous;
}

/** One allele that answers, with where it was read. */
export interface Hit {
  set: VariantSetContext;
  view: LineView;
  allele: Allele;
  /** The sample columns that carry it, when they were read. */
  carriers?: Array<{ sample: number; alleles: number[] }>;
  /** What the set's annotations say of it, when they were read (null: the set has none). */
  effects?: AlleleEffects | null;
  key: VariantKey;
}

/** Which sample columns a set's variants must be carried in: undefined for no such limit. */
export type SampleLimit = (set: VariantSetContext) => Set<number> | undefined;

export interface HitOptions {
  /** Read the calls of every hit (for its caseLevelData). */
  calls: boolean;
  samples?: SampleLimit;
}

/** Record of a hit, as JSON text, by whoever writes records (variant-records.ts). */
export type RecordWriter = (hit: Hit) => string;

/** Where a query's alleles may be on a set: a reference (every one when undefined) and the place there. */
interface Region {
  contig?: string;
  place: Place;
}

export class GenomicVariants {
  private readonly files = new VariantFileCache();

  constructor(
    private readonly sets: VariantSets,
    private readonly genes: Genes,
    private readonly annotations: VariantAnnotations,
  ) {}

  /** The regions of a set a query reads: its gene's places, its reference, or every reference. */
  private async regionsOf(set: VariantSetContext, query: VariantQuery): Promise<Region[]> {
    if (query.geneId !== undefined) {
      const places = await this.genes.placesOf(set.row.reference_set_name, query.geneId);
      return places.flatMap((p) => {
        const contig = set.contigOf(p.referenceName);
        return contig === undefined ? [] : [{ contig, place: { kind: 'range', start: p.start, end: p.end } as Place }];
      });
    }
    if (query.referenceName === undefined) return [{ place: query.place }];
    const contig = set.contigOf(query.referenceName);
    return contig === undefined ? [] : [{ contig, place: query.place }];
  }

  /** A failure to read a set's files is the server's (503), named by set; the cause is for the log. */
  private unreadable(set: VariantSetContext, error: unknown): GAException {
    return GAException.unreadable('the VCF files', `variant set '${set.name}'`, error);
  }

  /** The lines of a set overlapping a window of one contig, or of every contig when none is given. */
  private async *lines(set: VariantSetContext, contig: string | undefined, window: { start: number; end: number }): AsyncGenerator<VariantRecord> {
    if (contig !== undefined) {
      for await (const { record } of recordsInOrder(this.files, set.files, set.generation, contig, window.start, window.end)) yield record;
      return;
    }
    for (const file of set.files) {
      for (const name of file.contigs) {
        for await (const { record } of recordsInOrder(this.files, [file], set.generation, name, window.start, window.end)) yield record;
      }
    }
  }

  /** The hits of a set for a query, in file order (the gene's places in order, each allele once). */
  async *hitsIn(set: VariantSetContext, query: VariantQuery, options: HitOptions): AsyncGenerator<Hit> {
    if (query.assemblyId !== undefined && !(await this.sets.sameAssembly(set, query.assemblyId))) return;
    const limit = options.samples?.(set);
    if (limit && limit.size === 0) return;
    const reader = query.aminoacidChange !== undefined ? await this.annotations.of(set) : undefined;
    if (reader === null) return; // no annotations: no amino acid changes to match
    const regions = await this.regionsOf(set, query);
    const seen = regions.length > 1 ? new Set<string>() : undefined;
    try {
      for (const region of regions) {
        const within = { ...query, place: region.place };
        for await (const record of this.lines(set, region.contig, windowOf(region.place))) {
          const view = viewOf(record);
          for (const hit of this.hitsOfLine(set, view, within, options, limit, reader)) {
            if (seen) {
              const id = `${view.line.chrom}\t${view.line.start}\t${hit.key.digest}\t${hit.allele.index}`;
              if (seen.has(id)) continue;
              seen.add(id);
            }
            yield hit;
          }
        }
      }
    } catch (e) {
      throw this.unreadable(set, e);
    }
  }

  /** The alleles of one line that answer a query (and its amino acid change, read by `reader`). */
  private *hitsOfLine(set: VariantSetContext, view: LineView, query: VariantQuery, options: HitOptions, limit: Set<number> | undefined, reader?: AnnotationReader): Generator<Hit> {
    let genotypes: Array<number[] | undefined> | undefined | null = null;
    for (const allele of allelesOf(view.line)) {
      if (!matches(query, allele)) continue;
      let effects: AlleleEffects | undefined;
      if (reader) {
        effects = effectsOf(reader, view, allele);
        if (!effects.aminoacidChanges.includes(query.aminoacidChange!)) continue;
      }
      let carriers: Hit['carriers'];
      if (options.calls || limit) {
        if (genotypes === null) genotypes = genotypesOf(view, set.samples.length);
        carriers = [];
        for (let s = 0; s < set.samples.length; s++) {
          const alleles = genotypes?.[s];
          if (alleles && alleles.includes(allele.index) && (!limit || limit.has(s))) carriers.push({ sample: s, alleles });
        }
        if (limit && carriers.length === 0) continue;
      }
      const { chrom, start, ref } = view.line;
      const key = { datasetName: set.datasetName, setName: set.name, referenceName: chrom, start, digest: alleleDigest(ref, view.altColumn), allele: allele.index };
      yield { set, view, allele, carriers, effects, key };
    }
  }

  /**
   * A dataset's answer at the granularity granted: whether any allele answers, how many, and the
   * records of the page (`skip` pages of `limit`) written by `write`.
   */
  async answer(
    datasetName: string,
    granted: BeaconGranularity,
    query: VariantQuery,
    page: { skip: number; limit: number },
    write: RecordWriter,
    samples?: SampleLimit,
  ): Promise<DatasetAnswer> {
    const from = page.skip * page.limit;
    const to = from + page.limit;
    const records: string[] = [];
    let count = 0;
    const options: HitOptions = { calls: false, samples };
    for (const set of await this.sets.of(datasetName)) {
      for await (const hit of this.hitsIn(set, query, options)) {
        if (granted === 'boolean') return { id: datasetName, granted, exists: true, count: 1, records };
        if (granted === 'record' && count >= from && count < to) records.push(write(await this.completed(hit)));
        count++;
      }
    }
    return { id: datasetName, granted, exists: count > 0, count, records };
  }

  /**
   * A hit with what its record tells: the calls of every sample that carries it (those already read
   * when the query limited them) and what its set's annotations say of it.
   */
  private async completed(hit: Hit): Promise<Hit> {
    let { carriers, effects } = hit;
    if (!carriers) {
      carriers = [];
      genotypesOf(hit.view, hit.set.samples.length)?.forEach((alleles, sample) => {
        if (alleles && alleles.includes(hit.allele.index)) carriers!.push({ sample, alleles });
      });
    }
    if (effects === undefined) {
      const reader = await this.annotations.of(hit.set);
      effects = reader && effectsOf(reader, hit.view, hit.allele);
    }
    return { ...hit, carriers, effects };
  }

  /** The hit a variantInternalId names, with its calls, or undefined when it names none (any more). */
  async byId(id: string, samples?: SampleLimit): Promise<Hit | undefined> {
    const key = variantKeyOf(id);
    if (!key) return undefined;
    const set = (await this.sets.of(key.datasetName)).find((s) => s.name === key.setName);
    if (!set || !set.files.some((f: SetFile) => f.contigs.has(key.referenceName))) return undefined;
    const query: VariantQuery = { referenceName: key.referenceName, place: { kind: 'range', start: key.start, end: key.start + 1 } };
    for await (const hit of this.hitsIn(set, query, { calls: true, samples })) {
      if (hit.view.line.start === key.start && hit.key.digest === key.digest && hit.allele.index === key.allele) return this.completed(hit);
    }
    return undefined;
  }
}

/** The value of a set's frequency field for an allele, as a number, when the line has one. */
export function frequencyOf(hit: Hit, field: string): number | undefined {
  const text = perAllele(hit.view.line.info, field, hit.allele.index);
  const n = text === undefined ? NaN : Number(text);
  return Number.isFinite(n) ? n : undefined;
}
