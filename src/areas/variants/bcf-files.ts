/**
 * The BCF files of variant sets, read by index on each request as the VCF files are (vcf-files.ts):
 * the header gives the call sets and the metadata a VCF's would give, and the dictionaries the records
 * name keys and contigs by; the records, decoded to the VCF lines bcftools prints for them
 * (src/formats/bcf.ts), go to the same writers as a VCF's lines, so a BCF set answers what the VCF
 * bcftools converts it to answers.
 */
import type { GenericFilehandle } from 'generic-filehandle2';
import { openFile } from '../../files.js';
import { bcfDictionaries, BcfDecoder, bcfRecordsFrom, readBcfHeader, type BcfDictionaries, type SampleChoice } from '../../formats/bcf.js';
import type { VirtualOffset } from '../../formats/bgzf.js';
import { BinningIndex, unpackOffset } from '../../formats/binning-index.js';
import { parseHeader, type VcfHeader } from './vcf-header.js';
import type { VariantRecord, VcfFileRef } from './vcf-files.js';

export interface BcfHeader {
  /** The header as a VCF's: its lines without the IDX attributes BCF adds (bcftools prints none). */
  header: VcfHeader;
  dictionaries: BcfDictionaries;
  /** Where the first record begins. */
  recordsStart: VirtualOffset;
}

/** Reads and parses the header of a BCF file. */
export async function readBcfFileHeader(file: GenericFilehandle, source: string): Promise<BcfHeader> {
  const { text, recordsStart } = await readBcfHeader(file, source);
  const header = parseHeader(text, source);
  const lines = [];
  for (const entry of header.metadata) {
    if (entry.id === undefined || !entry.key.endsWith(`.${entry.id}`)) continue;
    const idx = entry.extra?.find(([key]) => key === 'IDX')?.[1];
    lines.push({ kind: entry.key.slice(0, -entry.id.length - 1), id: entry.id, idx: idx === undefined ? undefined : Number(idx) });
    if (idx !== undefined) {
      entry.extra = entry.extra!.filter(([key]) => key !== 'IDX');
      if (entry.extra.length === 0) delete entry.extra;
    }
  }
  return { header, dictionaries: bcfDictionaries(lines), recordsStart };
}

/** A BCF record decoded to its VCF line (the line's bytes are the decoder's, never rewritten). */
class BcfRecord implements VariantRecord {
  constructor(
    readonly start: number,
    readonly bytes: Buffer,
    readonly lineStart: number,
    readonly lineEnd: number,
    readonly offset: VirtualOffset,
  ) {}

  get line(): string {
    return this.bytes.toString('utf8', this.lineStart, this.lineEnd);
  }
}

/** A BCF file with its .csi, opened once: the index and the header are read when first needed. */
export class OpenBcf {
  readonly file: GenericFilehandle;
  private index?: Promise<BinningIndex>;
  private header?: Promise<BcfHeader>;

  constructor(
    private readonly ref: VcfFileRef,
    readonly source = ref.path,
  ) {
    this.file = openFile(ref.path);
  }

  indexOf(): Promise<BinningIndex> {
    // A failure is not kept: the file may be readable again next time.
    this.index ??= BinningIndex.open(openFile(this.ref.indexPath), 'csi', this.ref.indexPath).catch((e) => {
      this.index = undefined;
      throw e;
    });
    return this.index;
  }

  headerOf(): Promise<BcfHeader> {
    this.header ??= readBcfFileHeader(this.file, this.source).catch((e) => {
      this.header = undefined;
      throw e;
    });
    return this.header;
  }
}

/**
 * Records of `refName` overlapping [start, end), as recordsIn (vcf-files.ts) gives a VCF's: in file
 * order, from `from` on when given, or from `at` (a record's offset seen before). Records are placed
 * by their fixed fields and only those given are decoded, with the sample columns of `samples`.
 */
export async function* bcfRecordsIn(
  bcf: OpenBcf,
  refName: string,
  start: number,
  end: number,
  from: number | undefined,
  at: VirtualOffset | undefined,
  samples: SampleChoice,
): AsyncGenerator<VariantRecord> {
  const { dictionaries, header } = await bcf.headerOf();
  const refId = dictionaries.contigs.indexOf(refName);
  if (refId < 0) return;
  let readFrom = at;
  if (readFrom === undefined) {
    const offset = (await bcf.indexOf()).startOf(refId, from ?? start, end);
    if (offset === undefined) return;
    readFrom = unpackOffset(offset);
  }
  const decoder = new BcfDecoder(dictionaries, header.samples.length, bcf.source);
  let seenRef = false;
  for await (const { bytes, at: recordAt, end: recordEnd, offset } of bcfRecordsFrom(bcf.file, readFrom, bcf.source)) {
    decoder.place(bytes, recordAt, recordEnd);
    if (decoder.contig !== refId) {
      if (seenRef) return; // sorted files: the next reference has begun
      continue;
    }
    seenRef = true;
    const recordStart = decoder.start;
    if (recordStart >= end) return;
    // As for a VCF line: the end by REF, or by INFO END for a record that ends before the window by its REF.
    let reach = recordStart + decoder.refLength();
    if (reach <= start) reach = Math.max(reach, decoder.infoEnd());
    if (reach > start && (from === undefined || recordStart >= from)) {
      const line = decoder.line(samples);
      yield new BcfRecord(recordStart, line.bytes, line.lineStart, line.lineEnd, offset);
    }
  }
}

/** The first record at or after a virtual offset, placed: its contig number, or undefined at the end. */
export async function firstBcfRecordAt(bcf: OpenBcf, at: VirtualOffset): Promise<number | undefined> {
  const { dictionaries, header } = await bcf.headerOf();
  const decoder = new BcfDecoder(dictionaries, header.samples.length, bcf.source);
  for await (const { bytes, at: recordAt, end } of bcfRecordsFrom(bcf.file, at, bcf.source)) {
    decoder.place(bytes, recordAt, end);
    return decoder.contig;
  }
  return undefined;
}

/**
 * Every record of a BCF decoded to its VCF line (with the sample columns of `samples`), handed to
 * `onLine` as `bytes[from, to)` with its contig number and 0-based start; `onProgress` hears how far
 * into the file the reading is. For the deep checks, which read every record.
 */
export async function everyBcfLine(
  bcf: OpenBcf,
  samples: SampleChoice,
  onLine: (bytes: Buffer, from: number, to: number, contig: number, start: number) => void,
  onProgress?: (bytesRead: number, size: number) => void,
): Promise<void> {
  const { dictionaries, header, recordsStart } = await bcf.headerOf();
  const { size } = await bcf.file.stat();
  const decoder = new BcfDecoder(dictionaries, header.samples.length, bcf.source);
  let reported = 0;
  for await (const { bytes, at, end, offset } of bcfRecordsFrom(bcf.file, recordsStart, bcf.source)) {
    decoder.place(bytes, at, end);
    const line = decoder.line(samples);
    onLine(line.bytes, line.lineStart, line.lineEnd, line.contig, line.start);
    if (onProgress && offset.blockPosition - reported >= 1 << 20) {
      reported = offset.blockPosition;
      onProgress(reported, size);
    }
  }
  onProgress?.(size, size);
}
