/**
 * BGZF (blocked gzip) reading and writing, shared by everything that reads the block-compressed formats:
 * VCF text here, BAM records in the reads area (inflateBlocks), and the htsget tickets, which cut a
 * file at virtual offsets (recompressing the partial blocks at a cut).
 *
 * Reading: @gmod/tabix decompresses whole index chunks at once (a whole-chromosome chunk held ~210 MB
 * and blocked the event loop for over a second, DEPENDENCIES.md), so the variant search reads forward
 * from a virtual offset in bounded slices instead (lines of VCF text, or BCF records), and its caller
 * stops as soon as a page is full.
 *
 * Writing: a plain VCF is compressed into BGZF beside the original so it can be indexed (tabix-write.ts).
 */
import zlib, { deflateRawSync, gunzipSync } from 'node:zlib';
import type { GenericFilehandle } from 'generic-filehandle2';

/** A position in a BGZF file: the compressed offset of a block, and an offset inside its data. */
export interface VirtualOffset {
  blockPosition: number;
  dataPosition: number;
}

const HEADER_SIZE = 18;
const MAX_SLICE = 1 << 20;

/** The total size of the BGZF block at `at`, or undefined when its header is not all in `buf` (also read by the reads area). */
export function blockSizeAt(buf: Uint8Array, at: number, source: string): number | undefined {
  if (at + HEADER_SIZE > buf.length) return undefined;
  if (buf[at] !== 31 || buf[at + 1] !== 139 || (buf[at + 3] & 4) === 0) {
    throw new Error(`${source} is not a BGZF file (bad block header at byte ${at})`);
  }
  return (buf[at + 16] | (buf[at + 17] << 8)) + 1;
}

/** Uncompressed bytes wanted per inflate call: a few BGZF blocks (each holds at most 64 KB). */
const PIECE_BYTES = 256 * 1024;

/**
 * A piece of decompressed data, and where it begins: `origin` names the block to inflate from and how
 * many bytes of data to skip from there (possibly more than one block holds).
 */
export interface DataPiece {
  bytes: Buffer;
  origin: VirtualOffset;
}

/** Whole lines of decompressed text, and where they begin (as DataPiece). */
export type LinePiece = DataPiece;

/**
 * Decompressed data of a BGZF file from a virtual offset onward, in pieces of a few blocks each, as
 * they inflate (records of a binary format may span pieces). Reads at most about 1 MB of compressed
 * data at a time and inflates it a few blocks at a time, so a reader that stops early pays for
 * neither the rest of the file nor the rest of the slice. (A cohort VCF compresses ~30-50x: one 64 KB
 * slice inflated at once was ~2 MB of text for a page that needs ~300 KB.) `start.dataPosition` may
 * pass the end of its block: the data is skipped up to there, so any `origin` given out (or a place
 * inside a piece, counted from its origin) can be used to read again.
 */
export async function* readDataFrom(
  file: GenericFilehandle,
  start: VirtualOffset,
  source: string,
): AsyncGenerator<DataPiece> {
  let position = start.blockPosition;
  let skip = start.dataPosition;
  let sliceSize = 64 * 1024;
  // A reader that reaches the end of the file must have passed the end-of-file block (an empty block):
  // without it the file was cut, at a block boundary, and records the index promises are missing.
  let blocksSeen = 0;
  let lastBlockEmpty = false;
  const truncated = () =>
    new Error(
      blocksSeen === 0
        ? `${source} is truncated: the index points past its end (byte ${position})`
        : `${source} is truncated: it ends without the BGZF end-of-file block`,
    );
  for (;;) {
    const read = await file.read(sliceSize, position);
    const compressed = Buffer.from(read.buffer, read.byteOffset, read.length);
    // Keep whole blocks only; a block cut off by the slice is read again with the next slice.
    let used = 0;
    for (;;) {
      const size = blockSizeAt(compressed, used, source);
      if (size === undefined || used + size > compressed.length) break;
      used += size;
      blocksSeen++;
      lastBlockEmpty = compressed.readUInt32LE(used - 4) === 0;
    }
    if (used === 0) {
      if (compressed.length < sliceSize) {
        if (compressed.length > 0) throw new Error(`${source} is truncated: it ends in the middle of a BGZF block`);
        if (!lastBlockEmpty) throw truncated();
        return; // end of file
      }
      sliceSize = Math.min(sliceSize * 2, MAX_SLICE * 2);
      continue;
    }
    let groupStart = 0;
    while (groupStart < used) {
      // A run of whole blocks holding about PIECE_BYTES of data (ISIZE, the last 4 bytes of a block).
      let groupEnd = groupStart;
      let size = 0;
      while (groupEnd < used && size < PIECE_BYTES) {
        const next = groupEnd + blockSizeAt(compressed, groupEnd, source)!;
        size += compressed.readUInt32LE(next - 4);
        groupEnd = next;
      }
      const groupPosition = position + groupStart;
      if (skip >= size) {
        // Data before the start that fills the whole group: not inflated at all.
        skip -= size;
        groupStart = groupEnd;
        continue;
      }
      let data = inflateBlocks(compressed, groupStart, groupEnd, source);
      groupStart = groupEnd;
      const skipped = Math.min(skip, data.length);
      if (skipped) {
        data = data.subarray(skipped);
        skip -= skipped;
      }
      if (data.length) yield { bytes: data, origin: { blockPosition: groupPosition, dataPosition: skipped } };
    }
    position += used;
    if (compressed.length < sliceSize && used === compressed.length) {
      if (!lastBlockEmpty) throw truncated();
      return; // read to the end of the file
    }
    sliceSize = Math.min(sliceSize * 2, MAX_SLICE);
  }
}

/**
 * Decompressed text of a BGZF file from a virtual offset onward (readDataFrom), in pieces that end on
 * a line boundary: each piece holds whole lines only.
 */
export async function* readLinesFrom(
  file: GenericFilehandle,
  start: VirtualOffset,
  source: string,
): AsyncGenerator<LinePiece> {
  let carry: Buffer = Buffer.alloc(0);
  let carryOrigin: VirtualOffset = start;
  for await (const { bytes: data, origin } of readDataFrom(file, start, source)) {
    const lastNewline = data.lastIndexOf(10);
    if (lastNewline === -1) {
      if (carry.length === 0) carryOrigin = origin;
      carry = Buffer.concat([carry, data]);
      continue;
    }
    let from = 0;
    if (carry.length) {
      // Only the line cut by the previous piece is copied; the rest is yielded as it lies (copying
      // every piece into one buffer with the carry cost ~5% of a page).
      from = data.indexOf(10) + 1;
      yield { bytes: Buffer.concat([carry, data.subarray(0, from)]), origin: carryOrigin };
    }
    carry = Buffer.from(data.subarray(lastNewline + 1));
    carryOrigin = { blockPosition: origin.blockPosition, dataPosition: origin.dataPosition + lastNewline + 1 };
    if (from <= lastNewline) {
      yield { bytes: data.subarray(from, lastNewline + 1), origin: { blockPosition: origin.blockPosition, dataPosition: origin.dataPosition + from } };
    }
  }
  if (carry.length) yield { bytes: Buffer.concat([carry, Buffer.from('\n')]), origin: carryOrigin };
}

// ---------------------------------------------------------------------------------------------------
// Inflating

/**
 * The synchronous write of the zlib binding under Node's zlib streams, which inflates into a buffer
 * the caller gives; zlib.crc32 (Node 20.15 on). Where either is missing, blocks go through gunzipSync.
 */
interface ZlibBinding {
  reset(): void;
  writeSync(flush: number, input: Uint8Array, inputAt: number, inputLength: number, output: Uint8Array, outputAt: number, outputLength: number): void;
  onerror: (message: string) => void;
}
const zlibCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/**
 * One raw inflater for every block this thread inflates, reset between blocks. gunzipSync makes a new
 * zlib stream and a new output buffer per call: at the thousands of blocks a second that paging reads
 * or calls costs, those buffers (memory outside V8's heap, which counts towards starting a full
 * collection) made a page worker collect its whole heap several times a second.
 */
class BlockInflater {
  private readonly stream = zlib.createInflateRaw();
  private readonly binding = (this.stream as unknown as { _handle?: ZlibBinding })._handle;
  /** [output bytes left, input bytes left] after a write, as the binding reports them. */
  private readonly state = (this.stream as unknown as { _writeState?: Uint32Array })._writeState;
  private failure?: string;
  private readonly spare = new Uint8Array(1);
  readonly usable = typeof this.binding?.writeSync === 'function' && this.state instanceof Uint32Array && typeof zlibCrc32 === 'function';

  constructor() {
    // Errors come back through this callback during writeSync; the stream itself is never used.
    if (this.usable) this.binding!.onerror = (message) => (this.failure = message);
  }

  /**
   * Inflates the block `compressed[at, at + size)` into `out` at `outAt` (room for its ISIZE there);
   * checks its CRC and size; returns the bytes written.
   */
  inflate(compressed: Uint8Array, at: number, size: number, out: Uint8Array, outAt: number): number {
    const declared = readUInt32(compressed, at + size - 4);
    const dataAt = at + 12 + (compressed[at + 10] | (compressed[at + 11] << 8));
    this.failure = undefined;
    this.binding!.reset();
    // zlib needs room to write even when a block (the end-of-file block) holds nothing.
    const [target, targetAt, room] = declared > 0 ? [out, outAt, declared] : [this.spare, 0, 1];
    this.binding!.writeSync(zlib.constants.Z_FINISH, compressed, dataAt, at + size - 8 - dataAt, target, targetAt, room);
    if (this.failure !== undefined) throw new Error(`a BGZF block does not inflate (${this.failure})`);
    if (this.state![0] !== room - declared || this.state![1] !== 0) throw new Error('a BGZF block inflates to another size than it declares');
    if (zlibCrc32!(out.subarray(outAt, outAt + declared)) !== readUInt32(compressed, at + size - 8)) throw new Error('a BGZF block fails its CRC check');
    return declared;
  }
}

/**
 * The little-endian signed 32-bit integer at `at`, for a field its caller knows lies within `bytes`:
 * Buffer's readInt32LE checks its argument and the bounds again, which cost the alignment writer 6-9%
 * on its ~10 fields a record (performance pass 26). Also read by the reads area.
 */
export const int32At = (bytes: Uint8Array, at: number) => bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
const readUInt32 = (bytes: Uint8Array, at: number) => int32At(bytes, at) >>> 0;

let inflater: BlockInflater | undefined;

/**
 * Inflates the one BGZF block `compressed[at, at + size)` into `out` at `outAt` (room for its ISIZE
 * there), checked against its CRC and size; returns the bytes written.
 */
export function inflateBlockInto(compressed: Uint8Array, at: number, size: number, out: Uint8Array, outAt: number): number {
  inflater ??= new BlockInflater();
  if (inflater.usable) return inflater.inflate(compressed, at, size, out, outAt);
  const text = gunzipSync(compressed.subarray(at, at + size));
  out.set(text, outAt);
  return text.length;
}

/**
 * The text of the whole BGZF blocks `compressed[from, to)`, in one buffer, each block checked against
 * its CRC and size. The buffer is made on shared memory: V8 leaves shared memory out of the count of
 * memory outside its heap that starts a full collection (with a plain buffer, the worker paging reads
 * still ran ~20 full collections per four passes; with shared memory, 2), and frees it with the young
 * objects that hold it, at the next scavenge. Every caller allocates objects per line or per record,
 * so scavenges come often: ~11 MB of text awaited one while paging reads. (A caller that allocated
 * nothing would let ~280 MB build up between scavenges, measured.)
 *
 * With `kept`, for text its caller holds beyond a few turns of the event loop (the reads' cache of
 * recent blocks), the buffer is plain memory instead: such a buffer outlives two scavenges, moves to
 * the old generation, and is freed only by a full collection, which shared memory never starts (a
 * page worker paging reads 100 at a time grew by ~40 MB per 200,000 reads, without end, measured).
 */
export function inflateBlocks(compressed: Uint8Array, from: number, to: number, source: string, kept = false): Buffer {
  inflater ??= new BlockInflater();
  if (!inflater.usable) return gunzipSync(compressed.subarray(from, to));
  const sizes: number[] = [];
  let total = 0;
  for (let at = from; at < to; at += sizes[sizes.length - 1]) {
    sizes.push(blockSizeAt(compressed, at, source)!);
    total += readUInt32(compressed, at + sizes[sizes.length - 1] - 4); // ISIZE, the block's text length
  }
  const out = kept ? Buffer.allocUnsafeSlow(total) : Buffer.from(new SharedArrayBuffer(total));
  let written = 0;
  for (let i = 0, at = from; i < sizes.length; at += sizes[i++]) written += inflater.inflate(compressed, at, sizes[i], out, written);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Checking whole files

/** Why a file that should be BGZF is not (undefined when its first block header is a BGZF one). */
export function bgzfHeaderProblem(head: Uint8Array): string | undefined {
  if (head.length < 2 || head[0] !== 31 || head[1] !== 139) return 'is not compressed (no gzip header)';
  const xlen = head.length >= 12 ? head[10] | (head[11] << 8) : 0;
  if (head.length < 18 || (head[3] & 4) === 0 || xlen < 6 || head[12] !== 66 || head[13] !== 67) {
    return 'is gzip-compressed but not BGZF, so it cannot be read by index';
  }
  return undefined;
}

/** Whether a BGZF file ends with the end-of-file block, as bgzip and htslib write it. */
export async function hasEofBlock(file: GenericFilehandle): Promise<boolean> {
  const { size } = await file.stat();
  if (size < EOF_BLOCK.length) return false;
  const tail = await file.read(EOF_BLOCK.length, size - EOF_BLOCK.length);
  return Buffer.from(tail.buffer, tail.byteOffset, tail.length).equals(EOF_BLOCK);
}

/**
 * The last line of text of a BGZF file that ends with its end-of-file block, read from the end: the
 * blocks before the EOF block are found by their headers (a block is at most 64 KB, so its start lies
 * in the 64 KB before its end) and inflated until the last line is whole.
 */
export async function lastLineOf(file: GenericFilehandle, source: string): Promise<string> {
  const { size } = await file.stat();
  let end = size - EOF_BLOCK.length;
  let text: Buffer = Buffer.alloc(0);
  while (end > 0) {
    const from = Math.max(0, end - 65536);
    const read = await file.read(end - from, from);
    const tail = Buffer.from(read.buffer, read.byteOffset, read.length);
    let blockStart = -1;
    for (let at = tail.length - 28; at >= 0; at--) {
      if (tail[at] === 31 && tail[at + 1] === 139 && tail[at + 12] === 66 && tail[at + 13] === 67) {
        if (at + (tail[at + 16] | (tail[at + 17] << 8)) + 1 === tail.length) {
          blockStart = at;
          break;
        }
      }
    }
    if (blockStart === -1) throw new Error(`${source}: no BGZF block ends where the end-of-file block begins`);
    text = Buffer.concat([gunzipSync(tail.subarray(blockStart)), text]);
    end = from + blockStart;
    // Whole once a line end precedes the last line (a final line end of the file does not count).
    const body = text[text.length - 1] === 10 ? text.subarray(0, text.length - 1) : text;
    if (body.lastIndexOf(10) !== -1) break;
  }
  const body = text[text.length - 1] === 10 ? text.subarray(0, text.length - 1) : text;
  return body.toString('utf8', body.lastIndexOf(10) + 1).replace(/\r$/, '');
}

/**
 * Inflates every block of a BGZF file from the start (checking each block's CRC and size), handing
 * the text to `onText` and the bytes read so far to `onProgress`. Throws at the first damaged block,
 * naming its byte offset; a file cut short or without its end-of-file block is damaged too.
 */
export async function inflateAll(
  file: GenericFilehandle,
  source: string,
  onText: (text: Buffer) => void,
  onProgress?: (bytesRead: number, size: number) => void,
): Promise<void> {
  const { size } = await file.stat();
  let position = 0;
  let lastBlockEmpty = false;
  while (position < size) {
    const read = await file.read(Math.min(MAX_SLICE * 4, size - position), position);
    const slice = Buffer.from(read.buffer, read.byteOffset, read.length);
    let at = 0;
    for (;;) {
      let blockSize: number | undefined;
      try {
        blockSize = blockSizeAt(slice, at, source);
      } catch {
        throw new Error(`${source}: damaged BGZF block header at byte ${position + at}`);
      }
      if (blockSize === undefined || at + blockSize > slice.length) break;
      let text: Buffer;
      try {
        text = inflateBlocks(slice, at, at + blockSize, source);
      } catch (e) {
        throw new Error(`${source}: damaged BGZF block at byte ${position + at} (${(e as Error).message})`);
      }
      lastBlockEmpty = text.length === 0;
      if (text.length) onText(text);
      at += blockSize;
    }
    if (at === 0) throw new Error(`${source} is truncated: it ends in the middle of a BGZF block at byte ${position}`);
    position += at;
    onProgress?.(position, size);
  }
  if (!lastBlockEmpty) throw new Error(`${source} is truncated: it ends without the BGZF end-of-file block`);
}

/**
 * Inflates every block of a BGZF file as inflateAll does, handing each line to `onLine` as
 * `bytes[from, to)` without its line end (`\n` or `\r\n`); a last line without a newline counts too.
 */
export async function inflateLines(
  file: GenericFilehandle,
  source: string,
  onLine: (bytes: Buffer, from: number, to: number) => void,
  onProgress?: (bytesRead: number, size: number) => void,
): Promise<void> {
  const line = (bytes: Buffer, from: number, to: number) => onLine(bytes, from, to > from && bytes[to - 1] === 13 ? to - 1 : to);
  let carry: Buffer = Buffer.alloc(0);
  await inflateAll(
    file,
    source,
    (text) => {
      const data = carry.length ? Buffer.concat([carry, text]) : text;
      let start = 0;
      for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
        line(data, start, nl);
        start = nl + 1;
      }
      carry = Buffer.from(data.subarray(start));
    },
    onProgress,
  );
  if (carry.length) line(carry, 0, carry.length);
}

// ---------------------------------------------------------------------------------------------------
// Writing

const BLOCK_DATA = 0xff00; // uncompressed bytes per block, as bgzip uses

/** The empty block that ends every BGZF file. */
export const EOF_BLOCK = Buffer.from('1f8b08040000000000ff0600424302001b0003000000000000000000', 'hex');

function crc32Table(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}
const CRC_TABLE = crc32Table();

function crc32(data: Uint8Array): number {
  if (zlibCrc32) return zlibCrc32(data);
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The BGZF block around `deflated`, the raw deflate data of `data`. */
function wrapBlock(deflated: Uint8Array, data: Uint8Array): Buffer {
  const out = Buffer.alloc(HEADER_SIZE + deflated.length + 8);
  out.set([31, 139, 8, 4, 0, 0, 0, 0, 0, 255, 6, 0, 66, 67, 2, 0], 0);
  out.writeUInt16LE(out.length - 1, 16);
  out.set(deflated, HEADER_SIZE);
  out.writeUInt32LE(crc32(data), HEADER_SIZE + deflated.length);
  out.writeUInt32LE(data.length, HEADER_SIZE + deflated.length + 4);
  return out;
}

const block = (data: Uint8Array): Buffer => wrapBlock(deflateRawSync(data, { level: 6 }), data);

/** Deflate's stored form of `data` (at most 65,535 bytes): one final block holding it as it is. */
function stored(data: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + data.length);
  out[0] = 1; // BFINAL, BTYPE 00 (no compression)
  out.writeUInt16LE(data.length, 1);
  out.writeUInt16LE(~data.length & 0xffff, 3);
  out.set(data, 5);
  return out;
}

/** `data` in pieces of at most BLOCK_DATA bytes, each made into a block by `make`. */
function blocksOf(data: Uint8Array, make: (part: Uint8Array) => Buffer): Buffer[] {
  const blocks: Buffer[] = [];
  for (let at = 0; at < data.length; at += BLOCK_DATA) blocks.push(make(data.subarray(at, Math.min(at + BLOCK_DATA, data.length))));
  return blocks;
}

/**
 * `data` as BGZF blocks whose deflate data is stored, not compressed: a copy and a CRC, ~0.05 ms for a
 * whole block where deflating it cost 1-2 ms. For the partial blocks at the cuts of a ticket, made
 * while the client waits (cutBetween).
 */
export const storedBlocks = (data: Uint8Array): Buffer => Buffer.concat(blocksOf(data, (part) => wrapBlock(stored(part), part)));

/** `data` as compressed BGZF blocks, without the end-of-file block. */
export const deflatedBlocks = (data: Uint8Array): Buffer => Buffer.concat(blocksOf(data, block));

/**
 * Compresses `data` into BGZF and returns the file with a function that maps an uncompressed offset
 * to its virtual offset (for building the index).
 */
export function bgzfCompress(data: Buffer): { bytes: Buffer; virtualOffsetOf(offset: number): VirtualOffset } {
  const blocks = blocksOf(data, block);
  const blockStarts: number[] = [];
  let compressedSize = 0;
  for (const b of blocks) {
    blockStarts.push(compressedSize);
    compressedSize += b.length;
  }
  blocks.push(EOF_BLOCK);
  return {
    bytes: Buffer.concat(blocks),
    virtualOffsetOf(offset: number): VirtualOffset {
      const index = Math.floor(offset / BLOCK_DATA);
      if (index >= blockStarts.length) return { blockPosition: compressedSize, dataPosition: 0 };
      return { blockPosition: blockStarts[index], dataPosition: offset - index * BLOCK_DATA };
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Cutting a file at virtual offsets

/** A part of a file: a byte range of it as it is, or bytes given inline (blocks made anew at a cut). */
export type CutPiece = { kind: 'range'; start: number; end: number } | { kind: 'inline'; bytes: Buffer };

/** A BGZF block is at most 64 KB, header and trailer included (BSIZE is 16 bits). */
const MAX_BLOCK_SIZE = 65536;

/** An inflated block, and its size in the file. */
export interface Block {
  data: Buffer;
  size: number;
}

/**
 * The blocks of a file, each read and inflated once however often it is asked for: what a ticket
 * looks into (the first record of a chunk) and cuts, one reader per ticket.
 */
export class BlockReader {
  private readonly blocks = new Map<number, Promise<Block>>();

  constructor(
    readonly file: GenericFilehandle,
    readonly source: string,
  ) {}

  at(position: number): Promise<Block> {
    let block = this.blocks.get(position);
    if (!block) this.blocks.set(position, (block = this.read(position)));
    return block;
  }

  private async read(position: number): Promise<Block> {
    const read = await this.file.read(MAX_BLOCK_SIZE, position);
    const bytes = Buffer.from(read.buffer, read.byteOffset, read.length);
    const size = blockSizeAt(bytes, 0, this.source);
    if (size === undefined || size > bytes.length) throw new Error(`${this.source} ends in the middle of a BGZF block at byte ${position}`);
    return { data: inflateBlocks(bytes, 0, size, this.source), size };
  }
}

/**
 * The data of a BGZF file from virtual offset `begin` up to `end`, as a valid BGZF stream: the whole
 * blocks between the two as bytes of the file, and the parts of the blocks the offsets fall inside as
 * blocks made anew (stored), since a block is only readable from its start (an offset at the very end
 * of a block leaves that block whole). Reads at most the two blocks at the cuts.
 */
export async function cutBetween(blocks: BlockReader, begin: VirtualOffset, end: VirtualOffset): Promise<CutPiece[]> {
  const pieces: CutPiece[] = [];
  if (begin.blockPosition > end.blockPosition || (begin.blockPosition === end.blockPosition && begin.dataPosition >= end.dataPosition)) return pieces;
  const within = begin.blockPosition === end.blockPosition;
  // The blocks at the two cuts, read at once.
  const [first, last] = await Promise.all([
    begin.dataPosition > 0 || within ? blocks.at(begin.blockPosition) : undefined,
    end.dataPosition > 0 && !within ? blocks.at(end.blockPosition) : undefined,
  ]);
  /** The part [from, to) of the data of a block at a cut: the block as it is when that is all of it. */
  const part = (block: Block, position: number, from: number, to: number) => {
    if (from === 0 && to >= block.data.length) pieces.push({ kind: 'range', start: position, end: position + block.size });
    else if (to > from) pieces.push({ kind: 'inline', bytes: storedBlocks(block.data.subarray(from, to)) });
  };
  if (within) {
    part(first!, begin.blockPosition, begin.dataPosition, end.dataPosition);
    return pieces;
  }
  let wholeFrom = begin.blockPosition;
  if (first) {
    part(first, begin.blockPosition, begin.dataPosition, Infinity);
    wholeFrom += first.size;
  }
  if (wholeFrom < end.blockPosition) pieces.push({ kind: 'range', start: wholeFrom, end: end.blockPosition });
  if (last) part(last, end.blockPosition, 0, end.dataPosition);
  return pieces;
}
