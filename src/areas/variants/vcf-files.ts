/**
 * Reading records from bgzipped, indexed VCF files: the index (tabix .tbi or .csi, parsed by
 * @gmod/tabix) finds where a region starts; the records are then read forward from there in bounded
 * slices (src/formats/bgzf.ts) and the caller stops once it has what it needs. A set's files may be
 * BCF instead (bcf-files.ts): their records come decoded to the same lines.
 */
import { CSI, TBI } from '@gmod/tabix';
import type { GenericFilehandle } from 'generic-filehandle2';
import { openFile } from '../../files.js';
import { isNonNegativeInteger } from '../../protocol/paging.js';
import { readLinesFrom, type VirtualOffset } from '../../formats/bgzf.js';
import type { SampleChoice } from '../../formats/bcf.js';
import { bcfRecordsIn, OpenBcf } from './bcf-files.js';
import type { VariantSetFileRow } from './store.js';

type IndexReader = TBI | CSI;

export interface VcfFileRef {
  path: string;
  indexPath: string;
  indexKind: string;
}

/** How a set's file encodes its records. */
export type VariantFormat = 'VCF' | 'BCF';

export interface OpenVcf {
  source: string;
  file: GenericFilehandle;
  index: IndexReader;
}

export function openVcf(ref: VcfFileRef): OpenVcf {
  const indexHandle = openFile(ref.indexPath);
  return {
    source: ref.path,
    file: openFile(ref.path),
    index: ref.indexKind === 'csi' ? new CSI({ filehandle: indexHandle }) : new TBI({ filehandle: indexHandle }),
  };
}

const OPEN_FILES = 256;

/** Open files (VCF or BCF) and their parsed indexes, the least recently used dropped beyond OPEN_FILES. */
export class VariantFileCache {
  private readonly open = new Map<string, OpenVcf | OpenBcf>();

  /** `generation` tells registrations of one path apart: a copy rebuilt in place is opened afresh. */
  get(ref: VcfFileRef & { format?: VariantFormat }, generation = ''): OpenVcf | OpenBcf {
    const key = `${ref.path}\0${ref.indexPath}\0${generation}`;
    let entry = this.open.get(key);
    if (entry) this.open.delete(key);
    else entry = ref.format === 'BCF' ? new OpenBcf(ref) : openVcf(ref);
    this.open.set(key, entry);
    if (this.open.size > OPEN_FILES) this.open.delete(this.open.keys().next().value!);
    return entry;
  }
}

/**
 * A data line of a set's file as the writers take it: `bytes[lineStart, lineEnd)`, without its line
 * end; VCF text as it lies in the file, or a BCF record decoded to the line bcftools prints.
 */
export interface VariantRecord {
  /** 0-based start (VCF POS - 1). */
  readonly start: number;
  readonly bytes: Buffer;
  readonly lineStart: number;
  readonly lineEnd: number;
  /** Where the record begins in the file: reading from there gives this record first. */
  readonly offset: VirtualOffset;
  /** The line as text. */
  readonly line: string;
}

/**
 * A data line of a VCF, with the fields the scan itself needs parsed from its bytes. The line stays
 * as bytes (`bytes[lineStart, lineEnd)`): the variant writer reads the sample columns from there
 * without decoding a 10 KB line of a 2,504-sample cohort into a string (part of the step from ~1.7
 * to ~10 M calls/s in docs/performance.md, "Variant pages").
 */
export class RawRecord implements VariantRecord {
  constructor(
    /** 0-based start (VCF POS - 1). */
    readonly start: number,
    readonly bytes: Buffer,
    readonly lineStart: number,
    readonly lineEnd: number,
    /** Where `bytes` begins in the file. */
    private readonly origin: VirtualOffset,
  ) {}

  /** Where the line begins in the file: reading from there gives this line first. */
  get offset(): VirtualOffset {
    return { blockPosition: this.origin.blockPosition, dataPosition: this.origin.dataPosition + this.lineStart };
  }

  /** The line as text, without its line end. */
  get line(): string {
    return this.bytes.toString('utf8', this.lineStart, this.lineEnd);
  }
}

const TAB = 9;
const NEWLINE = 10;

const INFO_END = /(?:^|;)END=(\d+)(?:;|$)/;

/** The INFO END of a data line whose ALT column begins after `altTab`, or 0 when it has none. */
function infoEndOf(piece: Buffer, altTab: number, contentEnd: number): number {
  let infoStart = altTab;
  for (let column = 0; column < 3; column++) {
    infoStart = piece.indexOf(TAB, infoStart + 1);
    if (infoStart === -1 || infoStart >= contentEnd) return 0;
  }
  let infoEnd = piece.indexOf(TAB, infoStart + 1);
  if (infoEnd === -1 || infoEnd > contentEnd) infoEnd = contentEnd;
  const match = INFO_END.exec(piece.toString('latin1', infoStart + 1, infoEnd));
  return match ? Number(match[1]) : 0;
}

/**
 * Records of `refName` overlapping [start, end) (end = start + length of REF), in file order, beginning
 * with those at `from` or later when given (for continuing a page). Reading stops at the first record
 * at or past `end`, or at the next reference. `at`, the offset of a record of `refName` seen before
 * (RawRecord.offset), starts reading there instead of where the index points.
 */
export async function* recordsIn(
  vcf: OpenVcf,
  refName: string,
  start: number,
  end: number,
  from?: number,
  at?: VirtualOffset,
): AsyncGenerator<RawRecord> {
  let readFrom = at;
  if (readFrom === undefined) {
    const seekAt = from ?? start;
    const { maxRefLength } = await vcf.index.getMetadata();
    if (seekAt >= maxRefLength) return;
    const chunks = await vcf.index.blocksForRange(refName, seekAt, Math.min(end, maxRefLength), {});
    if (chunks.length === 0) return;
    readFrom = chunks[0].minv;
  }
  const refBytes = Buffer.from(refName, 'utf8');
  let seenRef = false;
  for await (const { bytes: piece, origin } of readLinesFrom(vcf.file, readFrom, vcf.source)) {
    let lineStart = 0;
    while (lineStart < piece.length) {
      let lineEnd = piece.indexOf(NEWLINE, lineStart);
      if (lineEnd === -1) lineEnd = piece.length;
      const next = lineEnd + 1;
      let contentEnd = lineEnd;
      if (contentEnd > lineStart && piece[contentEnd - 1] === 13) contentEnd--; // CRLF files
      if (contentEnd === lineStart || piece[lineStart] === 35 /* # */) {
        lineStart = next;
        continue;
      }
      const tab1 = piece.indexOf(TAB, lineStart);
      if (tab1 === -1 || tab1 > contentEnd) throw new Error(`${vcf.source}: a data line has no tab`);
      const sameRef = tab1 - lineStart === refBytes.length && piece.compare(refBytes, 0, refBytes.length, lineStart, tab1) === 0;
      if (!sameRef) {
        if (seenRef) return; // sorted files: the next reference has begun
        lineStart = next;
        continue;
      }
      seenRef = true;
      const tab2 = piece.indexOf(TAB, tab1 + 1);
      const tab3 = tab2 === -1 ? -1 : piece.indexOf(TAB, tab2 + 1);
      const tab4 = tab3 === -1 ? -1 : piece.indexOf(TAB, tab3 + 1);
      if (tab4 === -1 || tab4 > contentEnd) throw new Error(`${vcf.source}: a data line has fewer than 5 columns`);
      let pos = 0;
      for (let i = tab1 + 1; i < tab2; i++) {
        const digit = piece[i] - 48;
        if (digit < 0 || digit > 9) throw new Error(`${vcf.source}: POS is not a number on a ${refName} line`);
        pos = pos * 10 + digit;
      }
      const recordStart = pos - 1;
      if (recordStart >= end) return;
      let recordEnd = recordStart + (tab4 - tab3 - 1);
      // A record that ends before the window by its REF may still reach into it by INFO END (a <DEL>);
      // the index places such records by END too, so they are among the lines read here.
      if (recordEnd <= start) recordEnd = Math.max(recordEnd, infoEndOf(piece, tab4, contentEnd));
      // Overlap, including a record that begins before the window and reaches into it (a deletion).
      if (recordEnd > start && (from === undefined || recordStart >= from)) {
        yield new RawRecord(recordStart, piece, lineStart, contentEnd, origin);
      }
      lineStart = next;
    }
  }
}

/** A registered file of a set: its place among the set's files, its encoding, and the contigs it holds. */
export type SetFile = VcfFileRef & { ordinal: number; format: VariantFormat; contigs: Set<string> };

/** A set's file as the registry keeps it, as the readers take it. */
export const setFileOf = (row: VariantSetFileRow): SetFile => ({
  ordinal: row.ordinal,
  format: row.format === 'BCF' ? 'BCF' : 'VCF',
  path: row.path,
  indexPath: row.index_path,
  indexKind: row.index_kind,
  contigs: new Set(JSON.parse(row.contigs) as string[]),
});

/** A place in the results over a set's files: [file ordinal, 0-based start, records at that start so far]. */
export type RecordPosition = [number, number, number];
export const isRecordPosition = (p: unknown): p is RecordPosition =>
  Array.isArray(p) && p.length === 3 && p.every(isNonNegativeInteger) && (p[2] as number) >= 1;

/** Where a record seen before lies: its offset in the file, its start and its count at that start. */
export interface RecordPlace {
  offset: VirtualOffset;
  start: number;
  atStart: number;
}

/** The records of one file of a set overlapping [start, end), as recordsIn and bcfRecordsIn give them. */
function recordsOfFile(
  cache: VariantFileCache,
  file: SetFile,
  generation: string,
  referenceName: string,
  start: number,
  end: number,
  from: number | undefined,
  at: VirtualOffset | undefined,
  samples: SampleChoice,
): AsyncGenerator<VariantRecord> {
  const open = cache.get(file, generation);
  return open instanceof OpenBcf
    ? bcfRecordsIn(open, referenceName, start, end, from, at, samples)
    : recordsIn(open, referenceName, start, end, from, at);
}

/**
 * The records of a set's files that overlap [start, end) of one reference, in the order searches
 * answer them (file by file, then as the file has them), each with its position; only those after
 * `after` when given. `point`, where the record after `after` was seen, starts reading there when it
 * still holds that record; else the index is asked. `generation` tells registrations apart
 * (VariantFileCache). `samples` are the sample columns the caller writes: a BCF decodes only those
 * (a VCF line holds them all as text anyway).
 */
export async function* recordsInOrder(
  cache: VariantFileCache,
  files: SetFile[],
  generation: string,
  referenceName: string,
  start: number,
  end: number,
  after?: RecordPosition,
  point?: RecordPlace,
  samples: SampleChoice = 'all',
): AsyncGenerator<{ record: VariantRecord; position: RecordPosition }> {
  for (const file of files) {
    if (after && file.ordinal < after[0]) continue;
    if (!file.contigs.has(referenceName)) continue;
    const resume = after && file.ordinal === after[0] ? after : undefined;
    const from = resume ? point : undefined;
    let records = recordsOfFile(cache, file, generation, referenceName, start, end, resume?.[1], from?.offset, samples);
    let lastStart = -1;
    let atStart = 0;
    let pending: VariantRecord | undefined;
    if (from) {
      const first = await records.next();
      // Only a record found where it was seen before is trusted; else the index is asked after all.
      if (!first.done && first.value.start === from.start) {
        pending = first.value;
        lastStart = from.start;
        atStart = from.atStart - 1;
      } else {
        await records.return(undefined);
        records = recordsOfFile(cache, file, generation, referenceName, start, end, resume?.[1], undefined, samples);
      }
    }
    try {
      for (;;) {
        let record = pending;
        pending = undefined;
        if (record === undefined) {
          const next = await records.next();
          if (next.done) break;
          record = next.value;
        }
        if (record.start === lastStart) atStart++;
        else {
          lastStart = record.start;
          atStart = 1;
        }
        if (resume && record.start === resume[1] && atStart <= resume[2]) continue;
        yield { record, position: [file.ordinal, record.start, atStart] };
      }
    } finally {
      await records.return(undefined);
    }
  }
}

/** The first data line at or after a virtual offset (header lines skipped), or undefined at the end. */
export async function firstDataLineAt(vcf: OpenVcf, at: VirtualOffset): Promise<string | undefined> {
  for await (const { bytes } of readLinesFrom(vcf.file, at, vcf.source)) {
    let lineStart = 0;
    while (lineStart < bytes.length) {
      let lineEnd = bytes.indexOf(NEWLINE, lineStart);
      if (lineEnd === -1) lineEnd = bytes.length;
      if (lineEnd > lineStart && bytes[lineStart] !== 35 /* # */) return bytes.toString('utf8', lineStart, lineEnd).replace(/\r$/, '');
      lineStart = lineEnd + 1;
    }
  }
  return undefined;
}

/** The header text of a bgzipped VCF: every line from the start of the file up to #CHROM. */
export async function readHeaderText(file: GenericFilehandle, source: string): Promise<string> {
  const parts: string[] = [];
  for await (const { bytes } of readLinesFrom(file, { blockPosition: 0, dataPosition: 0 }, source)) {
    const text = bytes.toString('utf8');
    const chrom = text.startsWith('#CHROM') ? 0 : text.indexOf('\n#CHROM');
    if (chrom !== -1) {
      const lineEnd = text.indexOf('\n', chrom + 1);
      parts.push(text.slice(0, lineEnd === -1 ? text.length : lineEnd + 1));
      return parts.join('');
    }
    if (parts.length === 0 && !text.startsWith('#')) break;
    parts.push(text);
  }
  throw new Error(`${source} has no #CHROM header line; is it a VCF file?`);
}

/** The CHROM and 0-based start (POS - 1) of the data line at `at`, when its first two columns are all in `bytes`. */
export function vcfRecordAt(bytes: Buffer, at: number): { reference: string; start: number } | undefined {
  const tab1 = bytes.indexOf(TAB, at);
  const tab2 = tab1 === -1 ? -1 : bytes.indexOf(TAB, tab1 + 1);
  const lineEnd = bytes.indexOf(NEWLINE, at);
  if (tab2 === -1 || (lineEnd !== -1 && tab2 > lineEnd)) return undefined;
  const pos = Number(bytes.toString('latin1', tab1 + 1, tab2));
  return Number.isSafeInteger(pos) ? { reference: bytes.toString('utf8', at, tab1), start: pos - 1 } : undefined;
}
