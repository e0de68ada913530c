/**
 * Reading CRAM files with @gmod/cram, decoded against the registered reference set's FASTA. Each
 * decoded record is encoded as a BAM record, so CRAM answers through the same cursor and writer as BAM
 * (one writer, one set of rules for every field). Slices are decoded one at a time, in file order, so
 * memory holds one slice whatever the region.
 *
 * A slice holds thousands of records (samtools writes 10,000 a slice) and a page may want a hundred:
 * the slices decoded last are kept as their BAM records (recentSlices), and a page ends with the
 * place of its next record in them (`offset`: the slice's position in the file, and the record's
 * byte in its BAM records), so the next page starts there instead of decoding the slice again and
 * walking it from its first record.
 *
 * CRAM writers leave MD and NM out by default (they can be computed from the reference), and
 * `samtools view` computes them again when it decodes: so are they here, for every mapped read with
 * bases that has none stored, after its stored tags, with the rules samtools follows (mdAndNm).
 */
import { CraiIndex, IndexedCramFile, type CramRecord } from '@gmod/cram';
import type { GenericFilehandle } from 'generic-filehandle2';
import type { VirtualOffset } from '../../formats/bgzf.js';
import { newFileKey, RecordCursor } from './bam-file.js';

/** Bases [start, end] (1-based, inclusive) of the file's reference `seqId`, as text. */
export type SequenceFetch = (seqId: number, start: number, end: number) => Promise<string>;

interface Slice {
  start: number;
  span: number;
  containerStart: number;
  sliceStart: number;
  sliceBytes: number;
}

/** Where a slice begins in the file: what a resume offset names it by. */
const slicePosition = (slice: Slice) => slice.containerStart + slice.sliceStart;

/**
 * The BAM records of the slices decoded last, by file, reference and slice position, at most
 * RECENT_SLICE_BYTES in all (a slice of 10,000 reads of 100 bases is ~2.3 MB; a slice of more than a
 * quarter of that is decoded again when asked for again). Decoding a slice and encoding its records
 * cost 15-80 µs a record (reads that match their reference, to random bases); a page of 100 reads in
 * the middle of a slice paid that for the whole slice, every page.
 */
const recentSlices = new Map<string, Buffer>();
const RECENT_SLICE_BYTES = 32 * 1024 * 1024;
/** Slices kept at most, whatever their size (a slice may hold no record of the reference asked for). */
const RECENT_SLICES = 1024;
let recentSliceBytes = 0;
/** The slices being decoded, by the same key. */
const slicesDecoding = new Map<string, Promise<Buffer>>();

function rememberSlice(key: string, records: Buffer): void {
  if (records.length > RECENT_SLICE_BYTES / 4) return;
  recentSlices.set(key, records);
  recentSliceBytes += records.length;
  while (recentSliceBytes > RECENT_SLICE_BYTES || recentSlices.size > RECENT_SLICES) {
    const [oldest, bytes] = recentSlices.entries().next().value!;
    recentSlices.delete(oldest);
    recentSliceBytes -= bytes.length;
  }
}

export class CramFile {
  readonly cram: IndexedCramFile;
  private readonly index: CraiIndex;
  /** A key for this opened file's slices in recentSlices (a file added again gets a new one). */
  readonly key = newFileKey();
  /** Each reference's slices in file order, by reference index. */
  private readonly inFileOrder = new Map<number, Slice[]>();

  constructor(
    file: GenericFilehandle,
    indexFile: GenericFilehandle,
    /** The reference's bases, for the decoder and for MD and NM. */
    readonly fetch: SequenceFetch,
  ) {
    this.index = new CraiIndex({ filehandle: indexFile });
    // The library keeps 20,000 decoded slices by default, each as thousands of objects; the slices
    // are kept here as BAM records instead (recentSlices), so it needs only the one being decoded.
    this.cram = new IndexedCramFile({ cramFilehandle: file, index: this.index, seqFetch: fetch, cacheSize: 1 });
  }

  async headerText(): Promise<string> {
    return (await this.cram.cram.getHeaderText()) ?? '';
  }

  /** The SAM header text of a CRAM file, read without its index or its reference (the header needs neither). */
  static readHeaderText(file: GenericFilehandle): Promise<string> {
    return new CramFile(file, file, async () => '').headerText();
  }

  /** Where each container of records begins, in file order: every container the index lists, of any reference. */
  async containerStarts(): Promise<number[]> {
    const entries = Object.values((await this.index.getIndex()) as Record<string, Slice[] | undefined>).flatMap((list) => list ?? []);
    return [...new Set(entries.map((e) => e.containerStart))].sort((a, b) => a - b);
  }

  /** Where the container at `position` ends: after its header and the bytes its header says it holds. */
  async containerEnd(position: number): Promise<number> {
    const header = await this.cram.cram.getContainerAtPosition(position).getHeader();
    return position + header._size + header.length;
  }

  /** The slices holding records of `seqId` (-1: reads without a position) that may overlap [start, end), in file order. */
  async slicesOf(seqId: number, start: number, end: number): Promise<Slice[]> {
    // Asked for on every page: each reference's slices are put in file order once.
    let entries = this.inFileOrder.get(seqId);
    if (!entries) {
      entries = [...(((await this.index.getIndex()) as Record<string, Slice[] | undefined>)[seqId] ?? [])].sort(
        (a, b) => a.containerStart - b.containerStart || a.sliceStart - b.sliceStart,
      );
      this.inFileOrder.set(seqId, entries);
    }
    return seqId < 0 ? entries : entries.filter((e) => e.start - 1 < end && e.start - 1 + e.span > start);
  }
}

/** The records of one reference (or the unplaced reads) of a CRAM file, as BAM records, slice by slice. */
export class CramRecords extends RecordCursor {
  private slices: Slice[] | undefined;
  private next_ = 0;
  /** The position of the slice whose records are at hand. */
  private slicePosition = -1;

  constructor(
    private readonly file: CramFile,
    private readonly seqId: number,
    private readonly windowStart: number,
    private readonly windowEnd: number,
    private readonly readGroupNames: string[],
    source: string,
    /** Where to start: a record's offset seen before (`offset`); the first slice of the window when absent or not found. */
    private resume?: VirtualOffset,
  ) {
    super(source);
  }

  async fill(): Promise<boolean> {
    if (!this.slices) {
      this.slices = await this.file.slicesOf(this.seqId, this.windowStart, this.windowEnd);
      const resume = this.resume;
      const from = resume ? this.slices.findIndex((s) => slicePosition(s) === resume.blockPosition) : -1;
      if (from >= 0) this.next_ = from;
      else this.resume = undefined;
    }
    while (this.next_ < this.slices.length) {
      const slice = this.slices[this.next_++];
      const records = await this.recordsOf(slice);
      // A resume offset outside the slice's records (not one this file gave): from the slice's start.
      const skip = this.resume && this.resume.dataPosition < records.length ? this.resume.dataPosition : 0;
      this.resume = undefined;
      if (!records.length) continue;
      this.bytes = records;
      this.slicePosition = slicePosition(slice);
      this.at = this.end = skip;
      return true;
    }
    return false;
  }

  /** The slice's records of this cursor's reference as BAM records, from recentSlices or decoded. */
  private recordsOf(slice: Slice): Promise<Buffer> {
    const key = `${this.file.key}:${this.seqId}:${slicePosition(slice)}`;
    const kept = recentSlices.get(key);
    if (kept) return Promise.resolve(kept);
    // Clients paging the same region at once (a browser's users on one locus) share one decoding.
    let decoding = slicesDecoding.get(key);
    if (!decoding) {
      decoding = this.decode(slice).then((bytes) => {
        rememberSlice(key, bytes);
        return bytes;
      });
      slicesDecoding.set(key, decoding);
      void decoding.then(
        () => slicesDecoding.delete(key),
        () => slicesDecoding.delete(key),
      );
    }
    return decoding;
  }

  private async decode(slice: Slice): Promise<Buffer> {
    const records = await this.file.cram.getRecordsInSlice(slice, (r) => r.sequenceId === this.seqId);
    const lengths = templateLengths(records);
    const reference = this.seqId >= 0 && records.length ? await this.referenceUnder(records) : undefined;
    return encodeBamRecords(records, this.readGroupNames, lengths, reference);
  }

  offset(): VirtualOffset | undefined {
    return this.slicePosition >= 0 ? { blockPosition: this.slicePosition, dataPosition: this.at } : undefined;
  }

  /** The reference's bases under the mapped records of a slice, when any of them needs MD or NM computed. */
  private async referenceUnder(records: CramRecord[]): Promise<ReferenceBases | undefined> {
    let start = Number.POSITIVE_INFINITY;
    let end = 0;
    for (const r of records) {
      if (!lacksMdOrNm(r)) continue;
      start = Math.min(start, r.alignmentStart);
      end = Math.max(end, r.alignmentStart + Math.max(r.lengthOnRef ?? 1, 1) - 1);
    }
    if (end === 0) return undefined;
    return { start: start - 1, bases: await this.file.fetch(this.seqId, start, end) };
  }

  async close(): Promise<void> {}
}

/**
 * TLEN of records whose mate lies in the same slice (CRAM leaves it to the decoder): from the leftmost
 * start to the rightmost end on the reference, counting each read's CIGAR as htslib does, positive for
 * the leftmost read (the first of the pair when both start together) and negative for the other.
 * @gmod/cram estimates it from read lengths instead, which is wrong for clipped reads, and unsigned.
 */
function templateLengths(records: CramRecord[]): Array<number | undefined> {
  const byId = new Map(records.map((r) => [r.uniqueId, r]));
  const endOf = (r: CramRecord) => r.alignmentStart + Math.max(r.lengthOnRef ?? 1, 1) - 1;
  return records.map((r) => {
    const mate = r.mate?.uniqueId !== undefined ? byId.get(r.mate.uniqueId) : undefined;
    if (!mate || r.templateSize !== undefined || (r.flags & 4) || (mate.flags & 4) || mate.sequenceId !== r.sequenceId) return undefined;
    const length = Math.max(endOf(r), endOf(mate)) - Math.min(r.alignmentStart, mate.alignmentStart) + 1;
    const leftmost = r.alignmentStart < mate.alignmentStart || (r.alignmentStart === mate.alignmentStart && (r.flags & 64) !== 0);
    return leftmost ? length : -length;
  });
}

const CIGAR_CODES: Record<string, number> = { M: 0, I: 1, D: 2, N: 3, S: 4, H: 5, P: 6 };
const NIBBLES: Record<string, number> = Object.fromEntries([...'=ACMGRSVTWYHKDBN'].map((c, i) => [c, i]));

/** The CIGAR of a CRAM record, from its read features (positions are 1-based in the read). */
function cigarOf(record: CramRecord): Array<[number, number]> {
  const ops: Array<[number, number]> = [];
  const push = (op: string, length: number) => {
    if (length <= 0) return;
    const last = ops[ops.length - 1];
    if (last && last[0] === CIGAR_CODES[op]) last[1] += length;
    else ops.push([CIGAR_CODES[op], length]);
  };
  let readPosition = 1;
  for (const feature of record.readFeatures ?? []) {
    push('M', feature.pos - readPosition);
    readPosition = Math.max(readPosition, feature.pos);
    switch (feature.code) {
      case 'S':
      case 'I':
        push(feature.code, feature.data.length);
        readPosition += feature.data.length;
        break;
      case 'i':
        push('I', 1);
        readPosition += 1;
        break;
      case 'D':
      case 'N':
      case 'H':
      case 'P':
        push(feature.code, feature.data);
        break;
      default: // substitutions, bases and qualities lie inside a match
        break;
    }
  }
  push('M', record.readLength - readPosition + 1);
  return ops;
}

/**
 * BAM records written one after another into one buffer, grown by doubling: a slice's records were
 * built as a buffer per record and per tag, then joined, and the allocations cost as much as the
 * library's decoding (~15 µs a record each, real reads of the compliance data set).
 */
class BamRecordWriter {
  bytes = Buffer.allocUnsafe(1 << 16);
  at = 0;

  /** Room for `n` more bytes. */
  room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.at + n));
    this.bytes.copy(grown, 0, 0, this.at);
    this.bytes = grown;
  }

  int32(value: number): void {
    this.bytes.writeInt32LE(value, this.at);
    this.at += 4;
  }

  /** A tag's two-letter key and its type letter (room made by the caller). */
  private tagKey(name: string, type: number): void {
    this.at += this.bytes.write(name.slice(0, 2), this.at, 'latin1');
    this.bytes[this.at++] = type;
  }

  /** A tag of the record (SAM specification, section 4.2.4); a value of no BAM type is left out. */
  tag(name: string, value: unknown): void {
    if (typeof value === 'string') {
      this.room(4 + value.length * 3);
      this.tagKey(name, 90); // Z
      this.at += this.bytes.write(value, this.at, 'utf8');
      this.bytes[this.at++] = 0;
    } else if (typeof value === 'number') {
      this.room(7);
      if (Number.isInteger(value) && value >= -2147483648 && value <= 2147483647) {
        this.tagKey(name, 105); // i
        this.int32(value);
      } else if (Number.isInteger(value) && value >= 0 && value <= 4294967295) {
        this.tagKey(name, 73); // I
        this.bytes.writeUInt32LE(value, this.at);
        this.at += 4;
      } else {
        this.tagKey(name, 102); // f
        this.bytes.writeFloatLE(value, this.at);
        this.at += 4;
      }
    } else if (value && typeof value === 'object' && 'length' in value) {
      const items = value as ArrayLike<number>;
      let integers = true;
      for (let i = 0; i < items.length; i++) if (!Number.isInteger(items[i])) integers = false;
      this.room(8 + items.length * 4);
      this.tagKey(name, 66); // B
      this.bytes[this.at++] = integers ? 105 : 102;
      this.int32(items.length);
      for (let i = 0; i < items.length; i++) {
        if (integers) this.bytes.writeInt32LE(items[i], this.at);
        else this.bytes.writeFloatLE(items[i], this.at);
        this.at += 4;
      }
    }
  }

  /** The records written, in a buffer of their own size. */
  take(): Buffer {
    return Buffer.from(this.bytes.subarray(0, this.at));
  }
}

/** Bases of a reference from the 0-based position `start` on. */
export interface ReferenceBases {
  start: number;
  bases: string;
}

/** Whether a record is mapped and lacks MD or NM: samtools computes them then, if it has bases. */
const lacksMdOrNm = (record: CramRecord) => !(record.flags & 4) && record.sequenceId >= 0 && (!('MD' in record.tags) || !('NM' in record.tags));

/** The 4-bit code of a base by its character code, either case (SAM specification, section 4.2.3); anything else is N (15). */
const BASE_CODES = (() => {
  const codes = new Uint8Array(256).fill(15);
  for (const [base, code] of Object.entries(NIBBLES)) {
    codes[base.charCodeAt(0)] = code;
    codes[base.toLowerCase().charCodeAt(0)] = code;
  }
  return codes;
})();
function baseCode(text: string, at: number): number {
  const c = at < text.length ? text.charCodeAt(at) : 0;
  return c > 0 && c < 256 ? BASE_CODES[c] : 15;
}

/**
 * MD and NM of a mapped read, as `samtools view` computes them for a CRAM that left them out (and as
 * `samtools calmd` does): within M, = and X, a base matches when its code equals the reference's and
 * neither is N (so N against N is a mismatch); a mismatch writes the count of matches before it and
 * the reference base; a deletion writes ^ and the deleted reference bases (upper case, as mismatches);
 * NM counts mismatches, inserted and deleted bases; soft clips and skipped regions (N) count for
 * neither. The reads' own '=' is not taken as a match (samtools does not either, decoding CRAM).
 */
export function mdAndNm(cigar: Array<[number, number]>, sequence: string, alignmentStart: number, reference: ReferenceBases): { md: string; nm: number } {
  let md = '';
  let nm = 0;
  let matches = 0;
  let x = alignmentStart - reference.start; // in the reference's bases
  let y = 0; // in the read's
  const bases = reference.bases;
  for (const [op, length] of cigar) {
    if (op === 0 || op === 7 || op === 8) {
      for (let j = 0; j < length; j++) {
        if (x + j >= bases.length) break;
        const read = baseCode(sequence, y + j);
        const ref = baseCode(bases, x + j);
        if (read === ref && read !== 15) matches++;
        else {
          md += matches + bases[x + j].toUpperCase();
          matches = 0;
          nm++;
        }
      }
      x += length;
      y += length;
    } else if (op === 2) {
      md += matches + '^' + bases.slice(Math.max(0, x), x + length).toUpperCase();
      matches = 0;
      nm += length;
      x += length;
    } else if (op === 1) {
      nm += length;
      y += length;
    } else if (op === 4) y += length;
    else if (op === 3) x += length;
  }
  return { md: md + matches, nm };
}

/** Decoded CRAM records as the bytes of BAM records, one after another (SAM specification, section 4.2). */
export function encodeBamRecords(
  records: CramRecord[],
  readGroupNames: string[],
  templateLengths: Array<number | undefined> = [],
  reference?: ReferenceBases,
): Buffer {
  const out = new BamRecordWriter();
  records.forEach((record, i) => writeBamRecord(out, record, readGroupNames, templateLengths[i], reference));
  return out.take();
}

function writeBamRecord(out: BamRecordWriter, record: CramRecord, readGroupNames: string[], templateLength?: number, reference?: ReferenceBases): void {
  const name = record.readName ?? '*';
  const unmapped = (record.flags & 4) !== 0;
  const cigar = unmapped ? [] : cigarOf(record);
  const bases = record.getReadBases();
  const sequence = bases && bases !== '*' ? bases : '';
  const qualities = record.qualityScores;
  out.room(36 + name.length * 3 + 1 + cigar.length * 4 + sequence.length * 2);
  const start = out.at;
  const bytes = out.bytes;
  out.at += 36;
  const nameLength = bytes.write(name, out.at, 'utf8') + 1;
  out.at += nameLength;
  bytes[out.at - 1] = 0;
  for (const [op, length] of cigar) {
    bytes.writeUInt32LE(((length << 4) | op) >>> 0, out.at);
    out.at += 4;
  }
  for (let i = 0; i < sequence.length; i += 2) {
    const low = i + 1 < sequence.length ? baseCode(sequence, i + 1) : 0;
    bytes[out.at++] = (baseCode(sequence, i) << 4) | low;
  }
  if (sequence.length) {
    if (qualities && qualities.length >= sequence.length) bytes.set(qualities.subarray(0, sequence.length), out.at);
    else bytes.fill(255, out.at, out.at + sequence.length);
    out.at += sequence.length;
  }
  for (const key in record.tags) {
    const value = record.tags[key];
    if (value !== undefined) out.tag(key, value);
  }
  if (reference && sequence && lacksMdOrNm(record)) {
    const { md, nm } = mdAndNm(cigar, sequence, record.alignmentStart - 1, reference);
    if (!('MD' in record.tags)) out.tag('MD', md);
    if (!('NM' in record.tags)) out.tag('NM', nm);
  }
  if (!('RG' in record.tags) && record.readGroupId >= 0 && readGroupNames[record.readGroupId] !== undefined) {
    out.tag('RG', readGroupNames[record.readGroupId]);
  }
  // The fixed fields, now that the sizes are known (tags may have grown the buffer).
  const fixed = out.bytes;
  fixed.writeInt32LE(out.at - start - 4, start);
  fixed.writeInt32LE(record.sequenceId, start + 4);
  fixed.writeInt32LE(record.alignmentStart - 1, start + 8);
  fixed[start + 12] = nameLength;
  fixed[start + 13] = record.mappingQuality ?? 255;
  fixed.writeUInt16LE(0, start + 14);
  fixed.writeUInt16LE(cigar.length, start + 16);
  fixed.writeUInt16LE(record.flags, start + 18);
  fixed.writeInt32LE(sequence.length, start + 20);
  fixed.writeInt32LE(record.mate ? record.mate.sequenceId : -1, start + 24);
  fixed.writeInt32LE(record.mate ? record.mate.alignmentStart - 1 : -1, start + 28);
  fixed.writeInt32LE(templateLength ?? record.templateSize ?? record.templateLength ?? 0, start + 32);
}
