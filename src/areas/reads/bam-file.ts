/**
 * Reading BAM files: the header, and the alignment records from a virtual offset onward, kept as the
 * bytes of the file (the alignment writer reads its fields from there). The BGZF blocks are read in
 * bounded slices and inflated a few at a time, so a page that stops early pays for neither the rest of
 * the file nor a whole index chunk (@gmod/bam inflates and decodes every record of every chunk of a
 * region before the first can be used; see docs/performance.md, "Read pages").
 */
import type { GenericFilehandle } from 'generic-filehandle2';
import { blockSizeAt, inflateBlocks, int32At, type VirtualOffset } from '../../formats/bgzf.js';

/** Inflated data, with where each of its blocks begins in it (the first may begin before it). */
interface InflatedPiece {
  bytes: Buffer;
  blockStarts: number[];
  blockPositions: number[];
}

/** A page of 1000 reads of 100 bases is ~75 KB of BAM: one read of the file, with the block it starts in kept from the page before. */
const FIRST_SLICE = 128 * 1024;
const MAX_SLICE = 1 << 20;

/** An inflated BGZF block, and its compressed size. */
interface InflatedBlock {
  bytes: Buffer;
  size: number;
}

/**
 * The blocks inflated last, by file and position: a page stops inside a block, and the next page
 * starts in that same block, so it is inflated once instead of twice. At most 32 blocks (2 MB).
 */
const recentBlocks = new Map<string, InflatedBlock>();
const RECENT_BLOCKS = 32;

/**
 * The compressed bytes read last from each file (`at`: their file position; `ended`: they reach the
 * end of the file), by file key: a page of a hundred reads uses ~10 KB of a 128 KB slice and the next
 * page starts in it, so it is read from the file once instead of once a page (every read also opened
 * and closed the file, and a new buffer per page kept the collector busy). At most 8 files (16 MB).
 */
const lastReads = new Map<number, { at: number; bytes: Buffer; ended: boolean }>();
const LAST_READ_FILES = 8;

/** Keeps `value` as the newest entry of `kept`, dropping the oldest beyond `limit`. */
function keepNewest<K, V>(kept: Map<K, V>, key: K, value: V, limit: number): void {
  kept.delete(key);
  kept.set(key, value);
  if (kept.size > limit) kept.delete(kept.keys().next().value!);
}

let fileKeys = 0;
/** A key for the blocks of one opened file (a file added again gets a new one, so no block outlives its file). */
export const newFileKey = () => ++fileKeys;

/**
 * Inflated BGZF data from `start` onward, one block at a time (a page that stops early inflates at
 * most one block it does not use), read from the file in slices that grow from 128 KB to 1 MB. With
 * `fileKey`, blocks inflated recently are taken from memory instead of inflated again, and the slice
 * read last from the file is read from again.
 */
async function* inflateFrom(file: GenericFilehandle, start: VirtualOffset, source: string, fileKey?: number): AsyncGenerator<InflatedPiece> {
  let position = start.blockPosition;
  let skip = start.dataPosition;
  const recent = fileKey === undefined ? undefined : lastReads.get(fileKey);
  let slice: Buffer = recent?.bytes ?? EMPTY;
  let sliceAt = recent?.at ?? 0; // the file position of slice[0]
  let sliceSize = FIRST_SLICE;
  let fileEnded = recent?.ended ?? false; // the slice reaches the end of the file
  for (;;) {
    const key = fileKey === undefined ? undefined : `${fileKey}:${position}`;
    let block = key === undefined ? undefined : recentBlocks.get(key);
    if (!block) {
      let at = position - sliceAt;
      let size = at >= 0 && at < slice.length ? blockSizeAt(slice, at, source) : undefined;
      if (size === undefined || at + size > slice.length) {
        if (fileEnded && at >= slice.length) return;
        for (;;) {
          const read = await file.read(sliceSize, position);
          slice = Buffer.from(read.buffer, read.byteOffset, read.length);
          sliceAt = position;
          at = 0;
          fileEnded = slice.length < sliceSize;
          if (fileKey !== undefined) keepNewest(lastReads, fileKey, { at: sliceAt, bytes: slice, ended: fileEnded }, LAST_READ_FILES);
          size = blockSizeAt(slice, 0, source);
          if (size !== undefined && size <= slice.length) break;
          if (fileEnded) {
            if (slice.length > 0) throw new Error(`${source} ends in the middle of a BGZF block`);
            return;
          }
          sliceSize = Math.min(sliceSize * 2, MAX_SLICE * 2);
        }
        sliceSize = Math.min(sliceSize * 2, MAX_SLICE);
      }
      const declared = slice.readUInt32LE(at + size - 4);
      if (skip >= declared && skip > 0) {
        // Wholly before the start: not inflated at all.
        skip -= declared;
        position += size;
        continue;
      }
      block = { bytes: inflateBlocks(slice, at, at + size, source, key !== undefined), size };
      if (key !== undefined) keepNewest(recentBlocks, key, block, RECENT_BLOCKS);
    } else if (skip >= block.bytes.length && skip > 0) {
      skip -= block.bytes.length;
      position += block.size;
      continue;
    }
    const piece: InflatedPiece = { bytes: skip ? block.bytes.subarray(skip) : block.bytes, blockStarts: [-skip], blockPositions: [position] };
    skip = 0;
    position += block.size;
    if (piece.bytes.length) yield piece;
  }
}

const EMPTY = Buffer.alloc(0);

/** The virtual offset of byte `at` of inflated data whose blocks begin at `blockStarts` (file positions `blockPositions`). */
function offsetIn(blockStarts: number[], blockPositions: number[], at: number): VirtualOffset {
  let i = blockStarts.length - 1;
  while (i > 0 && blockStarts[i] > at) i--;
  return { blockPosition: blockPositions[i], dataPosition: at - blockStarts[i] };
}

/**
 * Alignment records one at a time, as BAM record bytes: `bytes[at, end)` is the current record (its
 * 4-byte length first). `step()` moves within the data already at hand and answers false when more
 * must be read first (`fill()`), so the common step costs no promise.
 */
export abstract class RecordCursor {
  bytes: Buffer = EMPTY;
  at = 0;
  end = 0;

  constructor(protected readonly source: string) {}

  /** Moves to the next record when it is already at hand. */
  step(): boolean {
    const at = this.end;
    if (at + 4 > this.bytes.length) return false;
    const end = at + 4 + this.bytes.readInt32LE(at);
    if (end > this.bytes.length) return false;
    if (end < at + 36) throw new Error(`${this.source}: an alignment record is too short to be one`);
    this.at = at;
    this.end = end;
    return true;
  }

  /** Reads more of the file; false at its end. */
  abstract fill(): Promise<boolean>;

  /** Where the current record begins in the file (reading from there gives it first), when known. */
  abstract offset(): VirtualOffset | undefined;

  abstract close(): Promise<void>;

  /** Moves to the next record, reading more of the file when needed; false at its end. */
  async next(): Promise<boolean> {
    while (!this.step()) if (!(await this.fill())) return false;
    return true;
  }

  // Fields of the current record (SAM specification, section 4.2).
  get refId(): number {
    return this.bytes.readInt32LE(this.at + 4);
  }
  get position(): number {
    return this.bytes.readInt32LE(this.at + 8);
  }
  get flag(): number {
    return this.bytes.readUInt16LE(this.at + 18);
  }

  /** The end of the current record on the reference: its start plus the bases its CIGAR covers (at least 1). */
  referenceEnd(): number {
    const { bytes, at } = this;
    const start = bytes.readInt32LE(at + 8);
    if (bytes.readUInt16LE(at + 18) & 4) return start + 1;
    const cigarCount = bytes.readUInt16LE(at + 16);
    let cigar = at + 36 + bytes[at + 12];
    let span = 0;
    for (let i = 0; i < cigarCount; i++, cigar += 4) {
      const unit = bytes.readUInt32LE(cigar);
      const op = unit & 15;
      // M, D, N, =, X consume the reference.
      if (op === 0 || op === 2 || op === 3 || op === 7 || op === 8) span += unit >>> 4;
    }
    return start + Math.max(span, 1);
  }
}

/** The records of a BAM file from a virtual offset onward. */
export class BamRecords extends RecordCursor {
  private blockStarts: number[] = [];
  private blockPositions: number[] = [];
  private done = false;
  private readonly pieces: AsyncGenerator<InflatedPiece>;
  /**
   * A record that began in one piece and ends in the next is copied alone into a buffer of its own;
   * meanwhile the next piece waits here, with where its first whole record begins.
   */
  private waiting?: { piece: InflatedPiece; from: number };
  /** The virtual offset of that copied record. */
  private joinedOffset?: VirtualOffset;

  constructor(file: GenericFilehandle, start: VirtualOffset, source: string, fileKey?: number) {
    super(source);
    this.pieces = inflateFrom(file, start, source, fileKey);
  }

  async fill(): Promise<boolean> {
    this.joinedOffset = undefined;
    if (this.waiting) {
      const { piece, from } = this.waiting;
      this.waiting = undefined;
      this.use(piece);
      this.at = this.end = from;
      return true;
    }
    if (this.done) return false;
    const next = await this.pieces.next();
    const from = this.end;
    const carry = this.bytes.length - from;
    if (next.done) {
      this.done = true;
      if (carry > 0) throw new Error(`${this.source} ends in the middle of an alignment record`);
      return false;
    }
    const piece = next.value;
    if (carry > 0) {
      const head = carry >= 4 ? this.bytes.subarray(from, from + 4) : Buffer.concat([this.bytes.subarray(from), piece.bytes.subarray(0, 4 - carry)]);
      const rest = head.length === 4 ? 4 + head.readInt32LE(0) - carry : -1;
      if (rest > 0 && rest <= piece.bytes.length) {
        // The usual case: copy that one record, not the whole piece.
        this.joinedOffset = offsetIn(this.blockStarts, this.blockPositions, from);
        this.bytes = Buffer.concat([this.bytes.subarray(from), piece.bytes.subarray(0, rest)]);
        this.at = this.end = 0;
        this.waiting = { piece, from: rest };
        return true;
      }
      // A record longer than the piece (or a damaged length): join the pieces.
      const starts: number[] = [];
      const positions: number[] = [];
      // The blocks of the carried bytes, then the new ones.
      for (let i = 0; i < this.blockStarts.length; i++) {
        if (i + 1 < this.blockStarts.length && this.blockStarts[i + 1] <= from) continue;
        starts.push(this.blockStarts[i] - from);
        positions.push(this.blockPositions[i]);
      }
      for (let i = 0; i < piece.blockStarts.length; i++) {
        starts.push(piece.blockStarts[i] + carry);
        positions.push(piece.blockPositions[i]);
      }
      this.use({ bytes: Buffer.concat([this.bytes.subarray(from), piece.bytes]), blockStarts: starts, blockPositions: positions });
    } else this.use(piece);
    this.at = this.end = 0;
    return true;
  }

  private use(piece: InflatedPiece): void {
    this.bytes = piece.bytes;
    this.blockStarts = piece.blockStarts;
    this.blockPositions = piece.blockPositions;
  }

  offset(): VirtualOffset {
    return this.joinedOffset ?? offsetIn(this.blockStarts, this.blockPositions, this.at);
  }

  async close(): Promise<void> {
    await this.pieces.return(undefined);
  }
}

/** The reference (its index in the header) and 0-based position of the BAM record at `at`, when its fixed fields are all in `bytes`. */
export function bamRecordAt(bytes: Uint8Array, at: number): { reference: number; start: number } | undefined {
  return at + 12 <= bytes.length ? { reference: int32At(bytes, at + 4), start: int32At(bytes, at + 8) } : undefined;
}

export interface BamHeader {
  text: string;
  references: Array<{ name: string; length: number }>;
  /** Where the first alignment record begins. */
  firstRecord: VirtualOffset;
}

/** The header of a BAM file: its SAM text and its reference list. */
export async function readBamHeader(file: GenericFilehandle, source: string): Promise<BamHeader> {
  const pieces = inflateFrom(file, { blockPosition: 0, dataPosition: 0 }, source);
  let bytes: Buffer = EMPTY;
  const starts: number[] = [];
  const positions: number[] = [];
  const need = async (n: number) => {
    while (bytes.length < n) {
      const next = await pieces.next();
      if (next.done) throw new Error(`${source} ends inside its BAM header`);
      for (let i = 0; i < next.value.blockStarts.length; i++) {
        starts.push(next.value.blockStarts[i] + bytes.length);
        positions.push(next.value.blockPositions[i]);
      }
      bytes = bytes.length ? Buffer.concat([bytes, next.value.bytes]) : next.value.bytes;
    }
  };
  try {
    await need(8);
    if (bytes.toString('latin1', 0, 4) !== 'BAM\x01') throw new Error(`${source} is not a BAM file (no BAM magic number)`);
    const textLength = bytes.readInt32LE(4);
    await need(8 + textLength + 4);
    const text = bytes.toString('utf8', 8, 8 + textLength).replace(/\0+$/, '');
    let at = 8 + textLength;
    const count = bytes.readInt32LE(at);
    at += 4;
    const references: BamHeader['references'] = [];
    for (let i = 0; i < count; i++) {
      await need(at + 4);
      const nameLength = bytes.readInt32LE(at);
      await need(at + 4 + nameLength + 4);
      references.push({
        name: bytes.toString('utf8', at + 4, at + 4 + nameLength - 1),
        length: bytes.readInt32LE(at + 4 + nameLength),
      });
      at += 4 + nameLength + 4;
    }
    return { text, references, firstRecord: offsetIn(starts, positions, at) };
  } finally {
    await pieces.return(undefined);
  }
}
