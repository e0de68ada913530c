/**
 * One pass over a FASTA file at load time: the MD5 and length of every sequence (spec 2.3: MD5 of the
 * upper-cased sequence without whitespace), its refget digest (SHA-512 of the upper-cased letters,
 * truncated to 24 bytes), the `.fai` entries, and for BGZF files the `.gzi` block table. Plain and
 * BGZF-compressed files are read in large slices, never whole.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { isUrl } from '../../files.js';
import { UserError } from '../../user-error.js';

export interface FaiEntry {
  name: string;
  length: number;
  /** Offset of the first base in the uncompressed file. */
  offset: number;
  lineBases: number;
  lineWidth: number;
}

export interface ScannedSequence extends FaiEntry {
  md5checksum: string;
  /** The first 24 bytes of the SHA-512 of the sequence's letters, upper-cased, in base64url (refget's `SQ.` digest). */
  sha512t24u: string;
}

export interface FastaScan {
  compression: 'none' | 'bgzf';
  sequences: ScannedSequence[];
  /** BGZF only: [compressed offset, uncompressed offset] of every block after the first. */
  gzi?: Array<[number, number]>;
}

const READ_SLICE = 4 * 1024 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;

/** Consumes the uncompressed text of a FASTA file slice by slice. */
class FastaScanner {
  readonly sequences: ScannedSequence[] = [];
  private carry: Buffer = Buffer.alloc(0);
  private position = 0; // uncompressed offset of the start of `carry`
  private current?: {
    entry: ScannedSequence;
    md5: Hash;
    sha512: Hash;
    lines: number;
    shortLineSeen: boolean;
    blankSeen: boolean;
  };
  private lineNumber = 0;
  private upper = Buffer.alloc(64 * 1024);

  constructor(private readonly file: string) {}

  push(chunk: Buffer): void {
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.line(data, start, nl, nl + 1 - start);
      start = nl + 1;
    }
    this.position += start;
    this.carry = Buffer.from(data.subarray(start));
  }

  finish(): ScannedSequence[] {
    if (this.carry.length) {
      // A last line without a line end (`>a\nACGT\nACGT`): samtools faidx indexes it, as if it had one.
      this.line(this.carry, 0, this.carry.length, undefined);
      this.position += this.carry.length;
      this.carry = Buffer.alloc(0);
    }
    this.closeRecord();
    if (!this.sequences.length) throw new UserError(`${this.file} holds no FASTA records (no line starts with '>')`);
    return this.sequences;
  }

  private fail(why: string): UserError {
    return new UserError(`${this.file} line ${this.lineNumber}: ${why}`);
  }

  /**
   * One line: bytes [from, to) without the newline; `width` counts the newline too, and is undefined
   * for a last line without one (its width is then taken as the other lines' width).
   */
  private line(data: Buffer, from: number, to: number, givenWidth: number | undefined): void {
    this.lineNumber++;
    let end = to;
    if (end > from && data[end - 1] === CR) end--;
    const lineStart = this.position + from;
    const record = this.current;
    const terminator = record && record.lines > 0 ? record.entry.lineWidth - record.entry.lineBases : 1;
    const width = givenWidth ?? end - from + terminator;
    if (data[from] === 0x3e /* > */) {
      this.closeRecord();
      const header = data.toString('latin1', from + 1, end);
      const name = header.split(/\s/, 1)[0];
      if (!name) throw this.fail('a FASTA header without a sequence name');
      if (this.sequences.some((s) => s.name === name)) throw this.fail(`sequence name '${name}' appears twice`);
      this.current = {
        entry: { name, length: 0, offset: lineStart + width, lineBases: 0, lineWidth: 0, md5checksum: '', sha512t24u: '' },
        md5: createHash('md5'),
        sha512: createHash('sha512'),
        lines: 0,
        shortLineSeen: false,
        blankSeen: false,
      };
      return;
    }
    const bases = end - from;
    if (!record) {
      if (bases === 0) return;
      throw this.fail('sequence data before the first FASTA header');
    }
    if (bases === 0) {
      record.blankSeen = true;
      return;
    }
    // faidx can only index records whose lines all have one length, but for a shorter last line.
    if (record.blankSeen) throw this.fail(`blank line inside sequence '${record.entry.name}'; faidx cannot index it`);
    if (record.lines === 0) {
      record.entry.lineBases = bases;
      record.entry.lineWidth = width;
    } else if (record.shortLineSeen || bases > record.entry.lineBases || width - bases !== record.entry.lineWidth - record.entry.lineBases) {
      throw this.fail(`sequence '${record.entry.name}' has lines of different lengths; faidx cannot index it`);
    }
    if (bases < record.entry.lineBases) record.shortLineSeen = true;
    record.lines++;
    record.entry.length += this.hashUpper(record.md5, record.sha512, data, from, end);
  }

  /**
   * Feeds the upper-cased bases to the MD5, and their letters to the SHA-512, and returns how many
   * bases there were (whitespace excluded). The two digests differ only for sequences holding other
   * symbols (`*`, `-`): SAM's M5 keeps them, refget's digest takes letters only.
   */
  private hashUpper(md5: Hash, sha512: Hash, data: Buffer, from: number, to: number): number {
    const n = to - from;
    if (this.upper.length < n) this.upper = Buffer.alloc(n);
    let k = 0;
    let letters = true;
    for (let i = from; i < to; i++) {
      const c = data[i];
      if (c === 0x20 || c === 0x09) continue;
      const u = c >= 0x61 && c <= 0x7a ? c - 32 : c;
      if (u < 0x41 || u > 0x5a) letters = false;
      this.upper[k++] = u;
    }
    const bases = this.upper.subarray(0, k);
    md5.update(bases);
    sha512.update(letters ? bases : bases.filter((c) => c >= 0x41 && c <= 0x5a));
    return k;
  }

  private closeRecord(): void {
    if (!this.current) return;
    this.current.entry.md5checksum = this.current.md5.digest('hex');
    this.current.entry.sha512t24u = this.current.sha512.digest().subarray(0, 24).toString('base64url');
    this.sequences.push(this.current.entry);
    this.current = undefined;
  }
}

function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** BGZF blocks are gzip members whose extra field holds a 'BC' subfield with the block size. */
function bgzfBlockSize(buf: Buffer, at: number): number | undefined {
  if (buf.length - at < 18) return undefined;
  if (buf[at] !== 0x1f || buf[at + 1] !== 0x8b || buf[at + 2] !== 8 || !(buf[at + 3] & 4)) return undefined;
  const xlen = buf.readUInt16LE(at + 10);
  let p = at + 12;
  const end = p + xlen;
  while (p + 4 <= end) {
    const si1 = buf[p];
    const si2 = buf[p + 1];
    const slen = buf.readUInt16LE(p + 2);
    if (si1 === 66 && si2 === 67 && slen === 2) return buf.readUInt16LE(p + 4) + 1;
    p += 4 + slen;
  }
  return undefined;
}

/** Reads a local file or an http(s) URL as a sequence of large chunks. */
async function* chunksOf(location: string): AsyncGenerator<Buffer> {
  if (isUrl(location)) {
    let res: Response;
    try {
      res = await fetch(location);
    } catch (e) {
      throw new UserError(`cannot fetch FASTA ${location}: ${(e as Error).message}`);
    }
    if (!res.ok || !res.body) throw new UserError(`cannot fetch FASTA ${location}: HTTP ${res.status}`);
    for await (const chunk of Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>)) yield chunk as Buffer;
    return;
  }
  let stream: fs.ReadStream;
  try {
    fs.accessSync(location, fs.constants.R_OK);
    stream = fs.createReadStream(location, { highWaterMark: READ_SLICE });
  } catch (e) {
    throw new UserError(`cannot open FASTA ${location}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  for await (const chunk of stream) yield chunk as Buffer;
}

/**
 * Reads the whole FASTA once. `onProgress` hears how many bytes of the file were read so far, and its
 * size when known (0 otherwise).
 */
export async function scanFasta(location: string, onProgress?: (bytesRead: number, size: number) => void): Promise<FastaScan> {
  const scanner = new FastaScanner(location);
  let lastBlockEmpty = false;
  let bytesRead = 0;
  const size = !isUrl(location) && fs.existsSync(location) ? fs.statSync(location).size : 0;
  let compression: FastaScan['compression'] | undefined;
  const gzi: Array<[number, number]> = [];
  let pending: Buffer = Buffer.alloc(0);
  let compressedAt = 0; // file offset of pending[0]
  let uncompressedAt = 0;
  for await (const chunk of chunksOf(location)) {
    bytesRead += chunk.length;
    onProgress?.(bytesRead, size);
    if (compression === undefined) {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 18 && isGzip(pending)) continue;
      if (!isGzip(pending)) {
        compression = 'none';
        scanner.push(pending);
        continue;
      }
      if (bgzfBlockSize(pending, 0) === undefined) {
        throw new UserError(`${location} is gzip-compressed but not BGZF, so it cannot be read by index; recompress it with: bgzip`);
      }
      compression = 'bgzf';
    } else if (compression === 'none') {
      scanner.push(chunk);
      continue;
    } else {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    }
    let p = 0;
    for (;;) {
      if (pending.length - p < 18) break;
      const size = bgzfBlockSize(pending, p);
      if (size === undefined) throw new UserError(`${location}: not a valid BGZF block at byte ${compressedAt + p}`);
      if (pending.length - p < size) break;
      let data: Buffer;
      try {
        // The whole gzip member, so its CRC and size are checked too: a damaged block may still inflate.
        data = zlib.gunzipSync(pending.subarray(p, p + size));
      } catch {
        throw new UserError(`${location}: corrupt BGZF block at byte ${compressedAt + p}`);
      }
      lastBlockEmpty = data.length === 0;
      if (compressedAt + p > 0) gzi.push([compressedAt + p, uncompressedAt]);
      scanner.push(data);
      uncompressedAt += data.length;
      p += size;
    }
    pending = Buffer.from(pending.subarray(p));
    compressedAt += p;
  }
  if (compression === 'bgzf' && pending.length) throw new UserError(`${location}: truncated BGZF block at byte ${compressedAt}`);
  if (compression === 'bgzf' && !lastBlockEmpty) {
    throw new UserError(`${location} has no BGZF end-of-file block, so it was cut short (truncated copy or download?)`);
  }
  if (compression === undefined && pending.length) scanner.push(pending);
  const sequences = scanner.finish();
  return compression === 'bgzf' ? { compression, sequences, gzi } : { compression: 'none', sequences };
}

export function faiText(sequences: FaiEntry[]): string {
  return sequences.map((s) => `${s.name}\t${s.length}\t${s.offset}\t${s.lineBases}\t${s.lineWidth}\n`).join('');
}

export function parseFai(text: string, file: string): FaiEntry[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const cols = line.split('\t');
      const nums = cols.slice(1, 5).map(Number);
      if (cols.length < 5 || nums.some((n) => !Number.isSafeInteger(n) || n < 0)) {
        throw new UserError(`${file} line ${i + 1} is not a valid .fai line`);
      }
      return { name: cols[0], length: nums[0], offset: nums[1], lineBases: nums[2], lineWidth: nums[3] };
    });
}

/** The `.gzi` layout: a little-endian uint64 count, then (compressed, uncompressed) uint64 pairs. */
export function gziBytes(entries: Array<[number, number]>): Buffer {
  const buf = Buffer.alloc(8 + entries.length * 16);
  buf.writeBigUInt64LE(BigInt(entries.length), 0);
  entries.forEach(([c, u], i) => {
    buf.writeBigUInt64LE(BigInt(c), 8 + i * 16);
    buf.writeBigUInt64LE(BigInt(u), 16 + i * 16);
  });
  return buf;
}

export function parseGzi(buf: Buffer): Array<[number, number]> | undefined {
  if (buf.length < 8) return undefined;
  const count = Number(buf.readBigUInt64LE(0));
  if (buf.length !== 8 + count * 16) return undefined;
  const out: Array<[number, number]> = [];
  for (let i = 0; i < count; i++) {
    out.push([Number(buf.readBigUInt64LE(8 + i * 16)), Number(buf.readBigUInt64LE(16 + i * 16))]);
  }
  return out;
}
