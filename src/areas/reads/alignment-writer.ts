/**
 * Writes a BAM alignment record, as it lies in the inflated file, as the JSON bytes of a ReadAlignment
 * in either naming form, without building an object per read: keys are precomputed bytes, numbers are
 * written digit by digit, bases decoded two at a time from a table, and qualities from a table of
 * their texts. Records read from CRAM are first encoded as BAM records (cram-file.ts), so both formats
 * answer through this one writer.
 *
 * What is written, from the record's fields (SAM specification, section 4.2):
 * - id: base64url of the JSON array [dataset, "rgs", set, read group, reference name or "*", 0-based
 *   position, read name, flag] (stable, and decodable by any replica; no request takes it back);
 * - the flags as booleans (improperPlacement is the inverse of 0x2, as the schema says), numberReads 2
 *   for a paired read else 1, readNumber 0 or 1 from 0x40/0x80 (0 for an unpaired read);
 * - alignment (absent for an unmapped read): position with strand (0x10), mapping quality, CIGAR;
 * - nextMatePosition when the record names a mate position, with the mate's strand (0x20);
 * - alignedSequence unless SEQ is `*`; alignedQuality unless the record has no qualities;
 * - every tag in attributes: integers as int32Value (int64Value above 2^31 - 1), floats as
 *   doubleValue (the shortest text that reads back as the same 32-bit float), A, Z and H as
 *   stringValue, B arrays as one value per element.
 */
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import { AttributeValue, AttributeValueList, Attributes } from '../../protocol/common.js';
import type { ByteChunks } from '../variants/variant-writer.js';
import { CigarUnit, LinearAlignment, Position, ReadAlignment } from './messages.js';

const CIGAR_OPERATIONS = [
  'ALIGNMENT_MATCH',
  'INSERT',
  'DELETE',
  'SKIP',
  'CLIP_SOFT',
  'CLIP_HARD',
  'PAD',
  'SEQUENCE_MATCH',
  'SEQUENCE_MISMATCH',
];
const BASES = '=ACMGRSVTWYHKDBN';

function keysFor(form: NamingForm) {
  const r = (f: string) => keyOf(ReadAlignment, f, form);
  const l = (f: string) => keyOf(LinearAlignment, f, form);
  const p = (f: string) => keyOf(Position, f, form);
  const text = {
    id: '{' + r('id') + '"',
    readGroupId: '",' + r('readGroupId'),
    fragmentName: ',' + r('fragmentName'),
    improperPlacement: ',' + r('improperPlacement'),
    duplicateFragment: ',' + r('duplicateFragment'),
    numberReads: ',' + r('numberReads'),
    fragmentLength: ',' + r('fragmentLength'),
    readNumber: ',' + r('readNumber'),
    failedVendorQualityChecks: ',' + r('failedVendorQualityChecks'),
    alignment: ',' + r('alignment') + '{' + l('position') + '{' + p('referenceName'),
    position: ',' + p('position'),
    strandPlus: ',' + p('strand') + '"POS_STRAND"}',
    strandMinus: ',' + p('strand') + '"NEG_STRAND"}',
    mappingQuality: ',' + l('mappingQuality'),
    cigar: ',' + l('cigar') + '[',
    cigarEnd: ']}',
    secondaryAlignment: ',' + r('secondaryAlignment'),
    supplementaryAlignment: ',' + r('supplementaryAlignment'),
    alignedSequence: ',' + r('alignedSequence') + '"',
    alignedQuality: '",' + r('alignedQuality') + '[',
    nextMatePosition: ',' + r('nextMatePosition') + '{' + p('referenceName'),
    attributes: ',' + r('attributes') + '{' + keyOf(Attributes, 'attr', form) + '{',
    values: ':{' + keyOf(AttributeValueList, 'values', form) + '[',
    int32Value: '{' + keyOf(AttributeValue, 'int32Value', form),
    int64Value: '{' + keyOf(AttributeValue, 'int64Value', form),
    doubleValue: '{' + keyOf(AttributeValue, 'doubleValue', form),
    stringValue: '{' + keyOf(AttributeValue, 'stringValue', form),
    true: 'true',
    false: 'false',
  };
  const bytes = Object.fromEntries(Object.entries(text).map(([k, v]) => [k, Buffer.from(v, 'latin1')])) as Record<keyof typeof text, Buffer>;
  const cigarOps = CIGAR_OPERATIONS.map((op) =>
    Buffer.from('{' + keyOf(CigarUnit, 'operation', form) + JSON.stringify(op) + ',' + keyOf(CigarUnit, 'operationLength', form)),
  );
  return { ...bytes, cigarOps };
}
type Keys = ReturnType<typeof keysFor>;
const KEYS: Record<NamingForm, Keys> = { camel: keysFor('camel'), snake: keysFor('snake') };

/** Two bases per byte of SEQ, as the two characters' codes in one 16-bit number. */
const BASE_PAIRS = new Uint16Array(256);
for (let i = 0; i < 256; i++) BASE_PAIRS[i] = BASES.charCodeAt(i >> 4) | (BASES.charCodeAt(i & 15) << 8);

/** The shortest decimal text that reads back as the same 32-bit float. */
function float32Text(value: number): string {
  if (!Number.isFinite(value)) return JSON.stringify(String(value));
  for (let digits = 1; digits < 10; digits++) {
    const text = value.toPrecision(digits);
    if (Math.fround(Number(text)) === value) return String(Number(text));
  }
  return String(value);
}

const BASE64URL = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');

const TAG_SIZES: Record<number, number> = { 65: 1, 99: 1, 67: 1, 115: 2, 83: 2, 105: 4, 73: 4, 102: 4 }; // A c C s S i I f

/** Names and ids of one read group set, computed once and reused for every record. */
export interface WriterContext {
  datasetName: string;
  setName: string;
  /** Read group names (the @RG IDs, or the default group), in header order. */
  readGroupNames: string[];
  readGroupIds: string[];
  /** Reference names by the file's reference index. */
  referenceNames: string[];
}

export class AlignmentWriter {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  private readonly groupIndex = new Map<string, number>();
  private readonly groupIdBytes: Buffer[];
  private readonly referenceNameBytes: Buffer[];
  /** The JSON text of an alignment id up to its position: `["ds","rgs","set","group","reference","`, per group and reference (+1: none). */
  private readonly idPrefixes: Buffer[][];
  /** The id's JSON text is assembled here, then written in base64url (no string made per read). */
  private idText = Buffer.allocUnsafe(1024);

  constructor(context: WriterContext) {
    context.readGroupNames.forEach((name, i) => this.groupIndex.set(name, i));
    this.groupIdBytes = context.readGroupIds.map((id) => Buffer.from(JSON.stringify(id)));
    this.referenceNameBytes = context.referenceNames.map((name) => Buffer.from(JSON.stringify(name)));
    this.idPrefixes = context.readGroupNames.map((group) =>
      [...context.referenceNames, '*'].map((reference) => {
        const text = JSON.stringify([context.datasetName, 'rgs', context.setName, group, reference, '']);
        return Buffer.from(text.slice(0, -2)); // up to the opening quote of the position
      }),
    );
  }

  /**
   * Writes the id of the record at `at` as base64url of the JSON array
   * [dataset, "rgs", set, group, reference or "*", position, read name, flag], the text encodeId gives.
   */
  private id(bytes: Buffer, group: number, refId: number, position: number, nameStart: number, nameEnd: number, flag: number): void {
    const prefixes = this.idPrefixes[group];
    const prefix = prefixes[refId >= 0 && refId < prefixes.length - 1 ? refId : prefixes.length - 1];
    let plainName = true;
    for (let i = nameStart; i < nameEnd; i++) {
      const b = bytes[i];
      if (b < 32 || b === 34 || b === 92 || b > 126) {
        plainName = false;
        break;
      }
    }
    const name = plainName ? undefined : Buffer.from(JSON.stringify(bytes.toString('latin1', nameStart, nameEnd)));
    const size = prefix.length + 40 + (name ? name.length : nameEnd - nameStart + 2);
    if (this.idText.length < size) this.idText = Buffer.allocUnsafe(size * 2);
    const text = this.idText;
    prefix.copy(text, 0);
    let n = prefix.length;
    n += text.write(String(position), n, 'latin1');
    text[n++] = 34; // "
    text[n++] = 44; // ,
    if (name) n += name.copy(text, n);
    else {
      text[n++] = 34;
      n += bytes.copy(text, n, nameStart, nameEnd);
      text[n++] = 34;
    }
    text[n++] = 44;
    text[n++] = 34;
    n += text.write(String(flag), n, 'latin1');
    text[n++] = 34;
    text[n++] = 93; // ]
    // base64url, no padding
    this.ensure(Math.ceil((n * 4) / 3) + 4);
    const out = this.buffer;
    let o = this.used;
    let i = 0;
    for (; i + 3 <= n; i += 3) {
      const v = (text[i] << 16) | (text[i + 1] << 8) | text[i + 2];
      out[o++] = BASE64URL[v >> 18];
      out[o++] = BASE64URL[(v >> 12) & 63];
      out[o++] = BASE64URL[(v >> 6) & 63];
      out[o++] = BASE64URL[v & 63];
    }
    if (n - i === 1) {
      const v = text[i] << 16;
      out[o++] = BASE64URL[v >> 18];
      out[o++] = BASE64URL[(v >> 12) & 63];
    } else if (n - i === 2) {
      const v = (text[i] << 16) | (text[i + 1] << 8);
      out[o++] = BASE64URL[v >> 18];
      out[o++] = BASE64URL[(v >> 12) & 63];
      out[o++] = BASE64URL[(v >> 6) & 63];
    }
    this.used = o;
  }

  private byte(b: number): void {
    this.ensure(1);
    this.buffer[this.used++] = b;
  }

  /**
   * The read group of a record (by its position in readGroupNames): the one its RG tag names, else the
   * first (a record without an RG tag, or with one the header does not declare, belongs to the first).
   */
  groupOf(bytes: Buffer, at: number, end: number): number {
    for (let tag = tagsStart(bytes, at); tag + 3 <= end; ) {
      const type = bytes[tag + 2];
      if (type === 90 /* Z */ && bytes[tag] === 82 /* R */ && bytes[tag + 1] === 71 /* G */) {
        const stop = bytes.indexOf(0, tag + 3);
        return this.groupIndex.get(bytes.toString('utf8', tag + 3, stop === -1 || stop > end ? end : stop)) ?? 0;
      }
      tag = skipTag(bytes, tag, end);
    }
    return 0;
  }

  private ensure(n: number): void {
    if (this.used + n <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.used + n));
    this.buffer.copy(bigger, 0, 0, this.used);
    this.buffer = bigger;
  }

  private put(piece: Buffer): void {
    const n = piece.length;
    this.ensure(n);
    // Keys are short: a byte loop costs less than Buffer.copy's call (which made a subarray per key).
    if (n < 64) {
      const buffer = this.buffer;
      let o = this.used;
      for (let i = 0; i < n; i++) buffer[o++] = piece[i];
      this.used = o;
    } else {
      this.buffer.set(piece, this.used);
      this.used += n;
    }
  }

  private text(text: string): void {
    this.ensure(text.length * 3);
    this.used += this.buffer.write(text, this.used);
  }

  private int(n: number): void {
    this.ensure(24);
    if (n < 0) {
      this.buffer[this.used++] = 45;
      n = -n;
    }
    if (n < 10) {
      this.buffer[this.used++] = 48 + n;
      return;
    }
    const digits = n < 100 ? 2 : n < 1000 ? 3 : Math.floor(Math.log10(n)) + 1;
    let at = this.used + digits;
    this.used = at;
    while (n >= 10) {
      const q = Math.floor(n / 10);
      this.buffer[--at] = 48 + (n - q * 10);
      n = q;
    }
    this.buffer[--at] = 48 + n;
  }

  private bool(k: Keys, value: boolean): void {
    this.put(value ? k.true : k.false);
  }

  /** A JSON string from `bytes[from, to)`, copied as it is unless it needs escaping. */
  private stringFrom(bytes: Buffer, from: number, to: number): void {
    let plain = true;
    for (let i = from; i < to; i++) {
      const b = bytes[i];
      if (b < 32 || b === 34 || b === 92 || b > 126) {
        plain = false;
        break;
      }
    }
    if (plain) {
      this.ensure(to - from + 2);
      this.buffer[this.used++] = 34;
      bytes.copy(this.buffer, this.used, from, to);
      this.used += to - from;
      this.buffer[this.used++] = 34;
    } else this.text(JSON.stringify(bytes.toString('utf8', from, to)));
  }

  /** Writes the record `bytes[at, end)` (its length field first), of read group `group`, to `out`. */
  write(bytes: Buffer, at: number, end: number, group: number, form: NamingForm, out: ByteChunks): void {
    const k = KEYS[form];
    this.used = 0;
    const refId = bytes.readInt32LE(at + 4);
    const position = bytes.readInt32LE(at + 8);
    const nameLength = bytes[at + 12];
    const mappingQuality = bytes[at + 13];
    const cigarCount = bytes.readUInt16LE(at + 16);
    const flag = bytes.readUInt16LE(at + 18);
    const sequenceLength = bytes.readInt32LE(at + 20);
    const mateRefId = bytes.readInt32LE(at + 24);
    const matePosition = bytes.readInt32LE(at + 28);
    const templateLength = bytes.readInt32LE(at + 32);
    const nameStart = at + 36;
    const nameEnd = nameStart + nameLength - 1; // without its NUL

    this.put(k.id);
    this.id(bytes, group, refId, position, nameStart, nameEnd, flag);
    this.put(k.readGroupId);
    this.put(this.groupIdBytes[group]);
    this.put(k.fragmentName);
    this.stringFrom(bytes, nameStart, nameEnd);
    this.put(k.improperPlacement);
    this.bool(k, (flag & 2) === 0);
    this.put(k.duplicateFragment);
    this.bool(k, (flag & 1024) !== 0);
    this.put(k.numberReads);
    this.int(flag & 1 ? 2 : 1);
    this.put(k.fragmentLength);
    this.int(templateLength);
    if (!(flag & 1) || (flag & 192) === 64 || (flag & 192) === 128) {
      this.put(k.readNumber);
      this.int(flag & 128 ? 1 : 0);
    }
    this.put(k.failedVendorQualityChecks);
    this.bool(k, (flag & 512) !== 0);

    let cursor = nameStart + nameLength;
    if (!(flag & 4) && refId >= 0 && this.referenceNameBytes[refId]) {
      this.put(k.alignment);
      this.put(this.referenceNameBytes[refId]);
      this.put(k.position);
      this.int(position);
      this.put(flag & 16 ? k.strandMinus : k.strandPlus);
      this.put(k.mappingQuality);
      this.int(mappingQuality);
      if (cigarCount > 0) {
        this.put(k.cigar);
        for (let i = 0; i < cigarCount; i++) {
          const unit = bytes.readUInt32LE(cursor + i * 4);
          const op = k.cigarOps[unit & 15];
          if (!op) throw new Error(`a CIGAR operation of read ${bytes.toString('latin1', nameStart, nameEnd)} is not one of MIDNSHP=X`);
          if (i) this.byte(44);
          this.put(op);
          this.int(unit >>> 4);
          this.byte(125);
        }
        this.byte(93);
      }
      this.byte(125);
    }
    cursor += cigarCount * 4;
    this.put(k.secondaryAlignment);
    this.bool(k, (flag & 256) !== 0);
    this.put(k.supplementaryAlignment);
    this.bool(k, (flag & 2048) !== 0);

    const sequenceStart = cursor;
    const qualityStart = sequenceStart + ((sequenceLength + 1) >> 1);
    const tagStart = qualityStart + sequenceLength;
    if (sequenceLength > 0) {
      this.put(k.alignedSequence);
      this.ensure(sequenceLength + 1);
      let buffer = this.buffer;
      let o = this.used;
      for (let i = sequenceStart; i < qualityStart; i++) {
        const pair = BASE_PAIRS[bytes[i]];
        buffer[o++] = pair & 255;
        buffer[o++] = pair >> 8;
      }
      this.used += sequenceLength; // an odd length leaves the last half-byte's padding out
      if (bytes[qualityStart] !== 255) {
        this.put(k.alignedQuality);
        this.ensure(sequenceLength * 4);
        buffer = this.buffer;
        let q = this.used;
        for (let i = qualityStart; i < tagStart; i++) {
          const v = bytes[i];
          if (v >= 100) {
            buffer[q++] = 48 + Math.floor(v / 100);
            buffer[q++] = 48 + (Math.floor(v / 10) % 10);
          } else if (v >= 10) buffer[q++] = 48 + Math.floor(v / 10);
          buffer[q++] = 48 + (v % 10);
          buffer[q++] = 44;
        }
        this.used = q - 1;
        this.byte(93);
      } else this.byte(34);
    }

    if (mateRefId >= 0 && matePosition >= 0 && this.referenceNameBytes[mateRefId]) {
      this.put(k.nextMatePosition);
      this.put(this.referenceNameBytes[mateRefId]);
      this.put(k.position);
      this.int(matePosition);
      this.put(flag & 32 ? k.strandMinus : k.strandPlus);
    }
    if (tagStart < end) this.attributes(bytes, tagStart, end, k);
    this.byte(125);
    out.bytes(this.buffer, 0, this.used);
  }

  private attributes(bytes: Buffer, from: number, end: number, k: Keys): void {
    let first = true;
    for (let tag = from; tag + 3 <= end; ) {
      const type = bytes[tag + 2];
      const next = skipTag(bytes, tag, end);
      const values = tag + 3;
      if (type === 66 /* B */ && bytes.readInt32LE(values + 1) === 0) {
        tag = next; // an empty array: no values to give
        continue;
      }
      this.put(first ? k.attributes : COMMA);
      first = false;
      this.ensure(4);
      this.buffer[this.used++] = 34;
      this.buffer[this.used++] = bytes[tag];
      this.buffer[this.used++] = bytes[tag + 1];
      this.buffer[this.used++] = 34;
      this.put(k.values);
      switch (type) {
        case 65: // A
          this.put(k.stringValue);
          this.text(JSON.stringify(String.fromCharCode(bytes[values])) + '}');
          break;
        case 90: // Z
        case 72: // H
          this.put(k.stringValue);
          this.stringFrom(bytes, values, next - 1);
          this.byte(125);
          break;
        case 66: {
          const subtype = bytes[values];
          const count = bytes.readInt32LE(values + 1);
          const size = TAG_SIZES[subtype];
          for (let i = 0; i < count; i++) {
            if (i) this.put(COMMA);
            this.number(subtype, bytes, values + 5 + i * size, k);
          }
          break;
        }
        default:
          this.number(type, bytes, values, k);
      }
      this.byte(93);
      this.byte(125);
      tag = next;
    }
    if (!first) this.text('}}');
  }

  private number(type: number, bytes: Buffer, at: number, k: Keys): void {
    let value: number;
    switch (type) {
      case 99: value = bytes.readInt8(at); break; // c
      case 67: value = bytes[at]; break; // C
      case 115: value = bytes.readInt16LE(at); break; // s
      case 83: value = bytes.readUInt16LE(at); break; // S
      case 105: value = bytes.readInt32LE(at); break; // i
      case 73: value = bytes.readUInt32LE(at); break; // I
      case 102: // f
        this.put(k.doubleValue);
        this.text(float32Text(bytes.readFloatLE(at)) + '}');
        return;
      default:
        throw new Error(`a tag has the unknown type '${String.fromCharCode(type)}'`);
    }
    this.put(value > 2147483647 ? k.int64Value : k.int32Value);
    this.int(value);
    this.byte(125);
  }
}

const COMMA = Buffer.from(',');

/** Where the tags of the record at `at` begin. */
function tagsStart(bytes: Buffer, at: number): number {
  const sequenceLength = bytes.readInt32LE(at + 20);
  return at + 36 + bytes[at + 12] + bytes.readUInt16LE(at + 16) * 4 + ((sequenceLength + 1) >> 1) + sequenceLength;
}

/** The offset after the tag at `tag`. */
function skipTag(bytes: Buffer, tag: number, end: number): number {
  const type = bytes[tag + 2];
  const size = TAG_SIZES[type];
  if (size !== undefined) return tag + 3 + size;
  if (type === 90 || type === 72) {
    const stop = bytes.indexOf(0, tag + 3);
    if (stop === -1 || stop >= end) throw new Error('a string tag of an alignment record has no end');
    return stop + 1;
  }
  if (type === 66) {
    const elementSize = TAG_SIZES[bytes[tag + 3]];
    if (elementSize === undefined) throw new Error(`an array tag has the unknown element type '${String.fromCharCode(bytes[tag + 3])}'`);
    return tag + 8 + bytes.readInt32LE(tag + 4) * elementSize;
  }
  throw new Error(`a tag has the unknown type '${String.fromCharCode(type)}'`);
}
