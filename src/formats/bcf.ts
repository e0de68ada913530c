/**
 * BCF2, the binary encoding of VCF (section 6 of the VCF 4.3 specification): the header, which is VCF
 * header text behind a magic number and its length; the dictionaries the records name FILTER, INFO and
 * FORMAT keys and contigs by; and the records, each decoded to the VCF data line `bcftools view`
 * prints for it (htslib's rendering: floats with six significant digits, missing values as `.`,
 * trailing missing FORMAT values kept), so that a BCF is served exactly as the VCF bcftools converts
 * it to.
 *
 * A record is two lengths, then its shared part (CHROM, POS, rlen, QUAL, counts, ID, alleles,
 * FILTER, INFO) and its individual part (for each FORMAT field, the values of every sample, one
 * sample after another at a fixed size). Values are typed: a descriptor byte gives the type (int8,
 * int16, int32, float, char) and the count; integers reserve their smallest value for "missing" and
 * the next for "end of vector", floats two NaN patterns. Only the samples asked for are decoded: each
 * one's values lie at a fixed place in its field.
 */
import type { GenericFilehandle } from 'generic-filehandle2';
import { int32At, readDataFrom, type VirtualOffset } from './bgzf.js';

const MAGIC = 'BCF\x02';
/** The magic number with its minor version byte, then the header text's length. */
const PREFIX = 9;

export interface BcfHeaderBytes {
  /** The VCF header text, up to its #CHROM line. */
  text: string;
  /** Where the first record begins (the data position may pass the first block). */
  recordsStart: VirtualOffset;
}

/** The header of a BGZF-compressed BCF file, read from its first blocks. */
export async function readBcfHeader(file: GenericFilehandle, source: string): Promise<BcfHeaderBytes> {
  const parts: Buffer[] = [];
  let length = 0;
  for await (const { bytes: piece } of readDataFrom(file, { blockPosition: 0, dataPosition: 0 }, source)) {
    parts.push(piece);
    length += piece.length;
    if (length < PREFIX) continue;
    const bytes = parts.length === 1 ? piece : Buffer.concat(parts);
    if (bytes.toString('latin1', 0, 4) !== MAGIC) throw new Error(`${source} is not a BCF file (no BCF2 magic number)`);
    const textLength = bytes.readUInt32LE(5);
    if (bytes.length >= PREFIX + textLength) {
      return {
        text: bytes.toString('utf8', PREFIX, PREFIX + textLength).replace(/\0+$/, ''),
        recordsStart: { blockPosition: 0, dataPosition: PREFIX + textLength },
      };
    }
    parts.splice(0, parts.length, bytes);
  }
  throw new Error(`${source} ends inside its BCF header`);
}

/** The VCF header text of a BGZF-compressed BCF file (up to its #CHROM line). */
export async function readBcfHeaderText(file: GenericFilehandle, source: string): Promise<string> {
  return (await readBcfHeader(file, source)).text;
}

/**
 * The contig (its number in the dictionary) and 0-based position of the BCF record at `at`, when its
 * first fields are all in `bytes` (the two lengths, CHROM, POS: section 6.3.1).
 */
export function bcfRecordAt(bytes: Uint8Array, at: number): { reference: number; start: number } | undefined {
  return at + 16 <= bytes.length ? { reference: int32At(bytes, at + 8), start: int32At(bytes, at + 12) } : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Dictionaries

/** A structured header line as the dictionaries need it: its kind (FILTER, INFO, FORMAT, contig), ID and IDX. */
export interface DictionaryLine {
  kind: string;
  id: string;
  idx?: number;
}

export interface BcfDictionaries {
  /** FILTER, INFO and FORMAT IDs by the number records give them: one dictionary for the three. */
  strings: string[];
  /** Contig names by the number records and the index give them. */
  contigs: string[];
}

/**
 * The dictionaries of a header (section 6.2.1): each ID gets the number its line's IDX gives, else the
 * next one in header order, an ID of several kinds (INFO and FORMAT DP) one number; PASS is 0 even
 * when the header does not declare it. Contigs are numbered apart, in the order of their lines.
 */
export function bcfDictionaries(lines: DictionaryLine[]): BcfDictionaries {
  const strings: string[] = ['PASS'];
  const numbered = new Set(['PASS']);
  const contigs: string[] = [];
  for (const { kind, id, idx } of lines) {
    if (kind === 'contig') contigs[idx ?? contigs.length] = id;
    else if (kind === 'FILTER' || kind === 'INFO' || kind === 'FORMAT') {
      if (idx !== undefined) strings[idx] = id;
      else if (!numbered.has(id)) strings.push(id);
      numbered.add(id);
    }
  }
  return { strings, contigs };
}

// ---------------------------------------------------------------------------------------------------
// Records from a virtual offset

/** One record: `bytes[at, end)`, beginning at `offset` in the file. */
export interface BcfRawRecord {
  bytes: Buffer;
  at: number;
  end: number;
  offset: VirtualOffset;
}

/** No record of a real file comes near this; a damaged length is refused before it is gathered. */
const MAX_RECORD = 1 << 30;

const recordLength = (bytes: Uint8Array, at: number, source: string): number => {
  const shared = int32At(bytes, at) >>> 0;
  const individual = int32At(bytes, at + 4) >>> 0;
  if (shared < 24 || shared + individual > MAX_RECORD) throw damaged(source, `a record declares ${shared} + ${individual} bytes`);
  return 8 + shared + individual;
};

/**
 * The records of a BCF from a virtual offset where one begins, in file order. A record that spans
 * pieces of inflated data is gathered into a buffer of its own; the others are given as they lie.
 */
export async function* bcfRecordsFrom(file: GenericFilehandle, start: VirtualOffset, source: string): AsyncGenerator<BcfRawRecord> {
  // A record begun in earlier pieces: its parts so far, their length, where it begins, its length once known.
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let pendingOrigin: VirtualOffset = start;
  let needed = 0;
  for await (const { bytes, origin } of readDataFrom(file, start, source)) {
    let at = 0;
    if (pendingLength > 0) {
      if (pendingLength < 8) {
        const n = Math.min(8 - pendingLength, bytes.length);
        pending.push(bytes.subarray(0, n));
        pendingLength += n;
        at = n;
        if (pendingLength < 8) continue;
        needed = recordLength(Buffer.concat(pending), 0, source);
      }
      const n = Math.min(needed - pendingLength, bytes.length - at);
      pending.push(bytes.subarray(at, at + n));
      pendingLength += n;
      at += n;
      if (pendingLength < needed) continue;
      yield { bytes: Buffer.concat(pending), at: 0, end: needed, offset: pendingOrigin };
      pending = [];
      pendingLength = 0;
    }
    while (at + 8 <= bytes.length) {
      const length = recordLength(bytes, at, source);
      if (at + length > bytes.length) break;
      yield { bytes, at, end: at + length, offset: { blockPosition: origin.blockPosition, dataPosition: origin.dataPosition + at } };
      at += length;
    }
    if (at < bytes.length) {
      pending = [bytes.subarray(at)];
      pendingLength = bytes.length - at;
      pendingOrigin = { blockPosition: origin.blockPosition, dataPosition: origin.dataPosition + at };
      needed = pendingLength >= 8 ? recordLength(bytes, at, source) : 0;
    }
  }
  if (pendingLength > 0) throw damaged(source, 'it ends inside a record');
}

// ---------------------------------------------------------------------------------------------------
// Decoding records to VCF text

const damaged = (source: string, why: string) => new Error(`${source}: damaged BCF record (${why})`);

/** Typed value types (section 6.3.3). */
const MISSING = 0;
const INT8 = 1;
const INT16 = 2;
const INT32 = 3;
const FLOAT = 5;
const CHAR = 7;
/** Bytes per value of each type; 0 for types that are not BCF2's. */
const SIZE = [0, 1, 2, 4, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];

const FLOAT_MISSING = 0x7f800001;
const FLOAT_END = 0x7f800002;
const STRING_MISSING = 0x07;

const TAB = 9;
const COLON = 58;
const SEMICOLON = 59;
const COMMA = 44;
const DOT = 46;
const EQUALS = 61;

const float32 = new Float32Array(1);
const float32Bits = new Uint32Array(float32.buffer);


/** C's `%g` (six significant digits, exponent of at least two digits, trailing zeros dropped), for a finite positive value. */
function percentG(d: number): string {
  // The digits of the exact value, well past the sixth, to round halves to even as glibc does.
  const exact = d.toExponential(30);
  const e = exact.indexOf('e');
  const digits = exact.slice(0, 1) + exact.slice(2, e);
  let exponent = Number(exact.slice(e + 1));
  let head = Number(digits.slice(0, 6));
  const rest = digits.slice(6);
  if (rest[0] > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || head % 2 === 1))) head++;
  if (head === 1000000) {
    head = 100000;
    exponent++;
  }
  const mantissa = String(head);
  if (exponent < -4 || exponent >= 6) {
    const fraction = mantissa.slice(1).replace(/0+$/, '');
    return mantissa[0] + (fraction ? '.' + fraction : '') + 'e' + (exponent < 0 ? '-' : '+') + String(Math.abs(exponent)).padStart(2, '0');
  }
  // Fixed: the six digits with the point after digit exponent + 1.
  const point = exponent + 1;
  if (point >= mantissa.length) return mantissa + '0'.repeat(point - mantissa.length);
  const text = point <= 0 ? '0.' + '0'.repeat(-point) + mantissa : mantissa.slice(0, point) + '.' + mantissa.slice(point);
  return text.replace(/0+$/, '').replace(/\.$/, '');
}

/** The decades htslib's kputd rounds in directly, by the scale that gives six digits. */
const KPUTD_DECADES: Array<[number, number]> = [
  [0.001, 1e9],
  [0.01, 1e8],
  [0.1, 1e7],
  [1, 1e6],
  [10, 1e5],
  [100, 1e4],
  [1000, 1e3],
  [10000, 1e2],
  [100000, 1e1],
  [Infinity, 1],
];

/**
 * A float as htslib (1.16, as Debian ships it) writes it in VCF text (kputd): `%g`, computed directly
 * between 0.0001 and 999999 by rounding the value scaled to six digits halves up, where `%g` rounds
 * the exact value halves to even (64.28125 is 64.2813, not 64.2812). Checked against the library's
 * own kputd over 700,000 values (random bit patterns, decimals of 1-8 digits, exact halves).
 */
export function htslibFloatText(bits: number): string {
  const exponentBits = (bits >>> 23) & 0xff;
  const negative = bits >>> 31 === 1;
  if (exponentBits === 0xff) {
    if ((bits & 0x7fffff) !== 0) return negative ? '-nan' : 'nan';
    return negative ? '-inf' : 'inf';
  }
  float32Bits[0] = bits;
  const d = Math.abs(float32[0]);
  const sign = negative ? '-' : '';
  if (d === 0) return sign + '0';
  if (!(d >= 0.0001 && d <= 999999)) return sign + percentG(d);
  let scale = 1;
  for (const [below, by] of KPUTD_DECADES) {
    if (d < below) {
      scale = by;
      break;
    }
  }
  const places = Math.round(Math.log10(scale));
  const digits = String(Math.floor(d * scale + 0.5)).padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const fraction = digits.slice(digits.length - places).replace(/0+$/, '');
  return sign + whole + (fraction ? '.' + fraction : '');
}

const FLOAT_CACHE_LIMIT = 8192;

/**
 * Growing buffers the decoded lines are written into, one after another: a line never moves once
 * written, so a record can keep pointing into the buffer it was written in, as a VCF record points
 * into the inflated text it lies in.
 */
const LINE_BUFFER_BYTES = 256 * 1024;

class LineBuffer {
  bytes: Buffer = Buffer.allocUnsafe(LINE_BUFFER_BYTES);
  at = 0;
  lineStart = 0;

  begin(): void {
    if (this.bytes.length - this.at < 1024) this.renew(0);
    this.lineStart = this.at;
  }

  /** Room for `n` more bytes of the current line; the line so far moves to a new buffer when needed. */
  room(n: number): void {
    if (this.at + n > this.bytes.length) this.renew(n);
  }

  private renew(n: number): void {
    const begun = this.at - this.lineStart;
    const next = Buffer.allocUnsafe(Math.max(LINE_BUFFER_BYTES, 2 * (begun + n)));
    this.bytes.copy(next, 0, this.lineStart, this.at);
    this.bytes = next;
    this.lineStart = 0;
    this.at = begun;
  }

  byte(b: number): void {
    this.room(1);
    this.bytes[this.at++] = b;
  }

  /** Copies `source` into the current line. */
  copy(source: Uint8Array): void {
    this.room(source.length);
    this.bytes.set(source, this.at);
    this.at += source.length;
  }

  ascii(text: string): void {
    this.room(text.length);
    for (let i = 0; i < text.length; i++) this.bytes[this.at++] = text.charCodeAt(i);
  }

  int(v: number): void {
    this.room(11);
    if (v < 0) {
      this.bytes[this.at++] = 45; // -
      v = -v;
    }
    if (v < 10) {
      this.bytes[this.at++] = 48 + v;
      return;
    }
    let digits = 1;
    for (let t = v; t >= 10; t = Math.floor(t / 10)) digits++;
    let at = (this.at += digits);
    do {
      this.bytes[--at] = 48 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
  }
}

/** A decoded record: its VCF line is `bytes[lineStart, lineEnd)`. */
export interface BcfLine {
  contig: number;
  /** 0-based. */
  start: number;
  bytes: Buffer;
  lineStart: number;
  lineEnd: number;
}

/** Which samples to decode: every one, or those listed (ascending column numbers). */
export type SampleChoice = 'all' | number[];

/**
 * Decodes the records of one BCF file (its dictionaries and sample count) to VCF lines: one decoder
 * per reading of the file, since it holds the record it is reading and the buffers it writes into.
 */
export class BcfDecoder {
  private readonly names: Buffer[];
  private readonly contigNames: Buffer[];
  private readonly gtKey: number;
  private readonly endKey: number;
  private readonly floats = new Map<number, Buffer>();
  private readonly out = new LineBuffer();
  /** The bytes of the record being read, where it is read, and where its current part ends. */
  private b: Buffer = Buffer.alloc(0);
  private p = 0;
  private limit = 0;
  /** The last typed descriptor read. */
  private type = 0;
  private count = 0;
  /** The fixed fields of the last record placed. */
  contig = 0;
  start = 0;
  private nAllele = 0;
  private nInfo = 0;
  private nFormat = 0;
  private nSample = 0;
  private recordAt = 0;
  private sharedEnd = 0;
  private recordEnd = 0;
  /** The FORMAT fields of the placed record: key, type, values per sample and where the first sample's begin. */
  private readonly keys: number[] = [];
  private readonly types: number[] = [];
  private readonly counts: number[] = [];
  private readonly starts: number[] = [];
  /** Whether each sample's column is written (1) or left empty. */
  private readonly wanted: Uint8Array;

  constructor(
    dictionaries: BcfDictionaries,
    private readonly sampleCount: number,
    private readonly source: string,
  ) {
    this.names = dictionaries.strings.map((s) => Buffer.from(s ?? '', 'utf8'));
    this.contigNames = dictionaries.contigs.map((s) => Buffer.from(s ?? '', 'utf8'));
    this.gtKey = dictionaries.strings.indexOf('GT');
    this.endKey = dictionaries.strings.indexOf('END');
    this.wanted = new Uint8Array(sampleCount);
  }

  private fail(why: string): Error {
    return damaged(this.source, why);
  }

  private need(n: number): void {
    if (this.p + n > this.limit) throw this.fail('a value runs past the end of its part of the record');
  }

  /** Reads a typed descriptor (and a long count after it) into `type` and `count`. */
  private descriptor(): void {
    this.need(1);
    const d = this.b[this.p++];
    const type = d & 15;
    let count = d >> 4;
    if (count === 15) {
      count = this.typedInt();
      if (count < 0) throw this.fail(`a typed value declares ${count} values`);
    }
    if (type !== MISSING && SIZE[type] === 0) throw this.fail(`a typed value has type ${type}, not one of BCF2's`);
    if (type === MISSING && count > 0) throw this.fail('a typed value of no type declares values');
    this.type = type;
    this.count = count;
  }

  private intAt(type: number, at: number): number {
    const b = this.b;
    if (type === INT8) return (b[at] << 24) >> 24;
    if (type === INT16) return ((b[at] | (b[at + 1] << 8)) << 16) >> 16;
    return int32At(b, at);
  }

  /** A single typed integer (a key, a long count). */
  private typedInt(): number {
    this.need(1);
    const d = this.b[this.p++];
    const type = d & 15;
    if (d >> 4 !== 1 || (type !== INT8 && type !== INT16 && type !== INT32)) throw this.fail('a key or count is not one typed integer');
    this.need(SIZE[type]);
    const v = this.intAt(type, this.p);
    this.p += SIZE[type];
    return v;
  }

  /**
   * Reads the fixed fields of the record `bytes[at, end)` (contig, start and counts), checking its
   * lengths: what a scan needs to place a record before deciding to decode it.
   */
  place(bytes: Buffer, at: number, end: number): void {
    this.b = bytes;
    this.recordAt = at;
    const shared = int32At(bytes, at) >>> 0;
    this.sharedEnd = at + 8 + shared;
    this.recordEnd = end;
    this.contig = int32At(bytes, at + 8);
    this.start = int32At(bytes, at + 12);
    const alleleInfo = int32At(bytes, at + 24) >>> 0;
    const formatSample = int32At(bytes, at + 28) >>> 0;
    this.nAllele = alleleInfo >>> 16;
    this.nInfo = alleleInfo & 0xffff;
    this.nFormat = formatSample >>> 24;
    this.nSample = formatSample & 0xffffff;
    if (this.contig < 0 || this.contig >= this.contigNames.length || this.contigNames[this.contig].length === 0) {
      throw this.fail(`contig number ${this.contig} is not in the header's dictionary`);
    }
    if (this.start < 0) throw this.fail(`a position of ${this.start + 1}`);
    if (this.nSample !== this.sampleCount) throw this.fail(`${this.nSample} samples where the header has ${this.sampleCount}`);
    this.p = at + 32;
    this.limit = this.sharedEnd;
  }

  /** Skips the typed value at the read place, after its descriptor. */
  private skipValues(): void {
    const n = this.count * SIZE[this.type];
    this.need(n);
    this.p += n;
  }

  /** The length of the placed record's REF as its VCF line writes it (`.` for none). */
  refLength(): number {
    this.p = this.recordAt + 32;
    this.limit = this.sharedEnd;
    this.descriptor();
    this.skipValues();
    if (this.nAllele === 0) return 1;
    this.descriptor();
    if (this.count === 0) return 1;
    if (this.type !== CHAR) throw this.fail('a string is not of type char');
    this.need(this.count);
    // As chars() writes it: up to its first NUL.
    let n = 0;
    while (n < this.count && this.b[this.p + n] !== 0) n++;
    return n;
  }

  /**
   * INFO END of the placed record as a VCF reader takes it (the digits of its one value), or 0: a
   * record that ends before a window by its REF may still reach into it by END.
   */
  infoEnd(): number {
    if (this.endKey < 0) return 0;
    this.skipToInfo();
    for (let i = 0; i < this.nInfo; i++) {
      const key = this.typedInt();
      this.descriptor();
      if (key !== this.endKey) {
        this.skipValues();
        continue;
      }
      this.out.begin();
      const from = this.out.at;
      this.infoValue();
      const text = this.out.bytes.toString('latin1', from, this.out.at);
      this.out.at = from;
      return /^\d+$/.test(text) ? Number(text) : 0;
    }
    return 0;
  }

  private skipToInfo(): void {
    this.p = this.recordAt + 32;
    this.limit = this.sharedEnd;
    this.descriptor();
    this.skipValues();
    for (let i = 0; i < this.nAllele; i++) {
      this.descriptor();
      this.skipValues();
    }
    this.descriptor(); // FILTER
    this.skipValues();
  }

  /**
   * The VCF line of the placed record, with the sample columns of `samples` decoded (the others
   * left empty); with `[]`, the first 8 columns only.
   */
  line(samples: SampleChoice): BcfLine {
    const out = this.out;
    out.begin();
    this.p = this.recordAt + 32;
    this.limit = this.sharedEnd;
    out.copy(this.contigNames[this.contig]);
    out.byte(TAB);
    out.int(this.start + 1);
    out.byte(TAB);
    this.descriptor();
    this.chars(); // ID
    out.byte(TAB);
    // REF, then the ALT alleles joined by commas.
    if (this.nAllele === 0) out.byte(DOT);
    for (let i = 0; i < this.nAllele; i++) {
      if (i === 1) out.byte(TAB);
      else if (i > 1) out.byte(COMMA);
      this.descriptor();
      this.chars();
    }
    if (this.nAllele <= 1) {
      out.byte(TAB);
      out.byte(DOT);
    }
    out.byte(TAB);
    const qualBits = int32At(this.b, this.recordAt + 20) >>> 0;
    if (qualBits === FLOAT_MISSING) out.byte(DOT);
    else this.float(qualBits);
    out.byte(TAB);
    this.filters();
    out.byte(TAB);
    this.info();
    if (this.p !== this.sharedEnd) throw this.fail('its shared part is longer than its fields');
    // The layout of the individual part is read even when no sample is written: a few bytes, and a
    // record whose FORMAT fields do not fill it is damaged whichever samples are asked for.
    this.formatLayout();
    if (this.sampleCount > 0 && (samples === 'all' || samples.length > 0)) this.formatColumns(samples);
    return { contig: this.contig, start: this.start, bytes: out.bytes, lineStart: out.lineStart, lineEnd: out.at };
  }

  /** A character vector as htslib writes it: up to its first NUL, the missing character as `.`; `.` when empty. */
  private chars(): void {
    const n = this.count;
    if (this.type !== CHAR && n > 0) throw this.fail('a string is not of type char');
    this.need(n);
    const out = this.out;
    if (n === 0) {
      out.byte(DOT);
      return;
    }
    out.room(n);
    const b = this.b;
    const end = this.p + n;
    for (let i = this.p; i < end && b[i] !== 0; i++) out.bytes[out.at++] = b[i] === STRING_MISSING ? DOT : b[i];
    this.p = end;
  }

  private float(bits: number): void {
    let text = this.floats.get(bits);
    if (text === undefined) {
      text = Buffer.from(htslibFloatText(bits), 'latin1');
      if (this.floats.size >= FLOAT_CACHE_LIMIT) this.floats.clear();
      this.floats.set(bits, text);
    }
    this.out.copy(text);
  }

  private name(key: number): Buffer {
    const name = this.names[key];
    if (name === undefined || name.length === 0) throw this.fail(`key number ${key} is not in the header's dictionary`);
    return name;
  }

  private filters(): void {
    this.descriptor();
    const { type, count } = this;
    if (count === 0) {
      this.out.byte(DOT);
      return;
    }
    if (type !== INT8 && type !== INT16 && type !== INT32) throw this.fail('FILTER is not a vector of integers');
    this.need(count * SIZE[type]);
    for (let i = 0; i < count; i++) {
      if (i) this.out.byte(SEMICOLON);
      this.out.copy(this.name(this.intAt(type, this.p)));
      this.p += SIZE[type];
    }
  }

  private info(): void {
    const out = this.out;
    if (this.nInfo === 0) {
      out.byte(DOT);
      return;
    }
    for (let i = 0; i < this.nInfo; i++) {
      if (i) out.byte(SEMICOLON);
      out.copy(this.name(this.typedInt()));
      this.descriptor();
      if (this.count === 0) continue; // a Flag
      out.byte(EQUALS);
      this.infoValue();
    }
  }

  /** An INFO value after its descriptor: one value as htslib writes a single one, else a vector. */
  private infoValue(): void {
    const { type, count } = this;
    if (count !== 1) {
      this.vector(this.p, type, count);
      this.p += count * SIZE[type];
      return;
    }
    this.need(SIZE[type]);
    if (type === FLOAT) {
      const bits = int32At(this.b, this.p) >>> 0;
      if (bits === FLOAT_MISSING) this.out.byte(DOT);
      else this.float(bits);
    } else if (type === CHAR) {
      if (this.b[this.p] !== 0) this.out.byte(this.b[this.p]);
    } else {
      const v = this.intAt(type, this.p);
      if (v === missingOf(type)) this.out.byte(DOT);
      else this.out.int(v);
    }
    this.p += SIZE[type];
  }

  /** `count` values of `type` at `at` as htslib writes a vector: comma-separated, missing as `.`, up to an end-of-vector value. */
  private vector(at: number, type: number, count: number): void {
    const out = this.out;
    const size = SIZE[type];
    if (at + count * size > this.limit) throw this.fail('a value runs past the end of its part of the record');
    if (count === 0) {
      out.byte(DOT);
      return;
    }
    const b = this.b;
    if (type === CHAR) {
      out.room(count);
      for (let i = at, end = at + count; i < end && b[i] !== 0; i++) out.bytes[out.at++] = b[i] === STRING_MISSING ? DOT : b[i];
      return;
    }
    if (type === FLOAT) {
      for (let i = 0; i < count; i++, at += 4) {
        const bits = int32At(b, at) >>> 0;
        if (bits === FLOAT_END) break;
        if (i) out.byte(COMMA);
        if (bits === FLOAT_MISSING) out.byte(DOT);
        else this.float(bits);
      }
      return;
    }
    const missing = missingOf(type);
    for (let i = 0; i < count; i++, at += size) {
      const v = this.intAt(type, at);
      if (v === missing + 1) break; // end of vector
      if (i) out.byte(COMMA);
      if (v === missing) out.byte(DOT);
      else out.int(v);
    }
  }

  /** Reads the layout of the individual part into keys, types, counts and starts, checking it fills the part. */
  private formatLayout(): void {
    const { keys, types, counts, starts } = this;
    keys.length = types.length = counts.length = starts.length = 0;
    this.p = this.sharedEnd;
    this.limit = this.recordEnd;
    for (let i = 0; i < this.nFormat; i++) {
      const key = this.typedInt();
      this.name(key);
      keys.push(key);
      this.descriptor();
      types.push(this.type);
      counts.push(this.count);
      starts.push(this.p);
      const size = this.count * SIZE[this.type] * this.nSample;
      this.need(size);
      this.p += size;
    }
    if (this.p !== this.recordEnd) throw this.fail('its individual part is longer than its fields');
  }

  /** FORMAT and the sample columns (the layout read by formatLayout), each wanted sample's values decoded. */
  private formatColumns(samples: SampleChoice): void {
    const out = this.out;
    const n = this.nFormat;
    const { keys, types, counts, starts } = this;
    out.byte(TAB);
    if (n === 0) out.byte(DOT);
    for (let i = 0; i < n; i++) {
      if (i) out.byte(COLON);
      out.copy(this.name(keys[i]));
    }
    const wanted = this.wanted;
    if (samples === 'all') wanted.fill(1);
    else {
      wanted.fill(0);
      for (const s of samples) wanted[s] = 1;
    }
    if (n === 1 && keys[0] === this.gtKey && types[0] === INT8 && counts[0] === 2) {
      this.diploidGenotypes(starts[0]);
      return;
    }
    for (let j = 0; j < this.nSample; j++) {
      out.byte(TAB);
      if (!wanted[j]) continue;
      if (n === 0) out.byte(DOT);
      for (let i = 0; i < n; i++) {
        if (i) out.byte(COLON);
        const size = counts[i] * SIZE[types[i]];
        if (keys[i] === this.gtKey) this.genotype(starts[i] + j * size, types[i], counts[i]);
        else this.vector(starts[i] + j * size, types[i], counts[i]);
      }
    }
  }

  /**
   * The sample columns of a GT-only record of diploid int8 genotypes (a cohort's usual layout), each
   * written straight from its two bytes while both are alleles 0-9 or missing; any other value (a
   * haploid call's end of vector) goes through genotype(). Writing each call through the general path
   * cost a 2,504-sample page about as much again as the rest of its decoding.
   */
  private diploidGenotypes(start: number): void {
    const out = this.out;
    const b = this.b;
    const wanted = this.wanted;
    for (let j = 0, at = start; j < this.nSample; j++, at += 2) {
      out.room(4);
      const bytes = out.bytes;
      bytes[out.at++] = TAB;
      if (!wanted[j]) continue;
      const first = b[at];
      const second = b[at + 1];
      if (first <= 21 && second <= 21) {
        bytes[out.at] = first >> 1 === 0 ? DOT : 47 + (first >> 1);
        bytes[out.at + 1] = second & 1 ? 124 /* | */ : 47 /* / */;
        bytes[out.at + 2] = second >> 1 === 0 ? DOT : 47 + (second >> 1);
        out.at += 3;
      } else this.genotype(at, INT8, 2);
    }
  }

  /** A GT value: alleles `(index + 1) << 1 | phased`, 0 for missing; the separator before an allele is its own phasing. */
  private genotype(at: number, type: number, count: number): void {
    if (type !== INT8 && type !== INT16 && type !== INT32) throw this.fail('GT is not a vector of integers');
    const out = this.out;
    const size = SIZE[type];
    const end = missingOf(type) + 1;
    let i = 0;
    for (; i < count; i++, at += size) {
      const v = this.intAt(type, at);
      if (v === end) break;
      if (i) out.byte(v & 1 ? 124 /* | */ : 47 /* / */);
      const allele = v >> 1;
      if (allele === 0) out.byte(DOT);
      else out.int(allele - 1);
    }
    if (i === 0) out.byte(DOT);
  }
}

/** The "missing" value of an integer type (its "end of vector" is the next). */
function missingOf(type: number): number {
  return type === INT8 ? -128 : type === INT16 ? -32768 : -2147483648;
}
