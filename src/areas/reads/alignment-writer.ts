/**
 * Writes a BAM alignment record, as it lies in the inflated file, as the JSON bytes of a ReadAlignment
 * in either naming form, without building an object per read: each record is written in place in the
 * page's buffer (room for the most it can need is taken once), keys come as precomputed runs (those
 * the flag decides, per flag), numbers are written two digits at a time, bases two at a time and
 * qualities from tables, and the id's constant start is kept in base64 already. Records read from CRAM
 * are first encoded as BAM records (cram-file.ts), so both formats answer through this one writer.
 * Where it was compiled, native/alignment-json.c writes the common case byte for byte as this file
 * does, and hands every other record back to it: this file stays the reference.
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
import { nativeModule } from '../../native.js';
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import { AttributeValue, AttributeValueList, Attributes } from '../../protocol/common.js';
import { int32At } from '../../formats/bgzf.js';
import type { ByteChunks } from '../variants/variant-writer.js';
import { CigarUnit, LinearAlignment, Position, ReadAlignment } from './messages.js';

/**
 * The CigarUnit operations by BAM operation code (0 M, 1 I, 2 D, 3 N, 4 S, 5 H, 6 P, 7 =, 8 X): the
 * schema's enum in the same order, after its OPERATION_UNSPECIFIED.
 */
const CIGAR_OPERATIONS = (() => {
  const type = CigarUnit.fields.find((f) => f.camel === 'operation')!.type;
  return type.kind === 'enum' ? type.values.slice(1) : [];
})();
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
  };
  const bytes = (t: string) => Buffer.from(t, 'latin1');
  return {
    text,
    // The strand closes the position; the mapping quality's key follows it in every alignment.
    strandPlusQuality: bytes(text.strandPlus + text.mappingQuality),
    strandMinusQuality: bytes(text.strandMinus + text.mappingQuality),
    strandPlus: bytes(text.strandPlus),
    strandMinus: bytes(text.strandMinus),
    cigar: bytes(text.cigar),
    alignedQuality: bytes(text.alignedQuality),
    int32Value: bytes(text.int32Value),
    int64Value: bytes(text.int64Value),
    doubleValue: bytes(text.doubleValue),
    cigarOps: CIGAR_OPERATIONS.map((op) =>
      Buffer.from('{' + keyOf(CigarUnit, 'operation', form) + JSON.stringify(op) + ',' + keyOf(CigarUnit, 'operationLength', form)),
    ),
    /** The texts that depend on the flag alone, by flag (bits above 0x800 mean nothing), made when first met. */
    flagTexts: new Array<FlagTexts | undefined>(4096),
    /** The text of a tag up to its value, by tag name, kind of value and whether it is the first (tagHeadOf), made when first met. */
    tagHeads: new Map<number, Buffer>(),
  };
}
type Keys = ReturnType<typeof keysFor>;

/** How a tag's value is written: one int32Value, int64Value, doubleValue or stringValue, or an array of values. */
const enum TagKind {
  int32,
  int64,
  double,
  string,
  array,
}

/**
 * The text of a tag before its value, e.g. `,"NM":{"values":[{"int32Value":` (the first tag of a record
 * opens attributes first), for the key `((name's two bytes) * 8 + kind) * 2 + first`.
 */
function tagHeadOf(k: Keys, headKey: number): Buffer {
  const first = headKey & 1;
  const kind = (headKey >> 1) & 7;
  const name = headKey >> 4;
  const t = k.text;
  const valueKey = [t.int32Value, t.int64Value, t.doubleValue, t.stringValue, ''][kind];
  // Tag names are two characters; read as latin1 and quoted, so that no byte can break the JSON.
  const text = (first ? t.attributes : ',') + JSON.stringify(String.fromCharCode(name >> 8, name & 255)) + t.values + valueKey;
  const head = Buffer.from(text, 'utf8');
  k.tagHeads.set(headKey, head);
  return head;
}
const KEYS: Record<NamingForm, Keys> = { camel: keysFor('camel'), snake: keysFor('snake') };

/** The writer's common case compiled from native/alignment-json.c (package.json's install script builds it). */
interface NativeAlignmentJson {
  /** INTERFACE_VERSION of the C file the module was built from. */
  interfaceVersion: number;
  create(texts: object): object;
  /** Where the record's JSON ends in `out`, or -1: the record is this file's to write. */
  write(writer: object, record: Buffer, at: number, end: number, group: number, form: number, out: Buffer, writeAt: number, comma: boolean): number;
  /** Writes a run of records, the state saying where to start, the page's limits and the lane's window; see RUN. */
  writeRun(writer: object, record: Buffer, out: Buffer, state: Int32Array): void;
}

/**
 * The fields of a run's state (native/alignment-json.c, write_run): the current record, the page's
 * count and byte budget, the lane's window and place, and, once written, where the run stopped and
 * why (`stop`: 1 the lane's next record is current, 0 the lane is done, 2 more of the file is needed,
 * as Lane.tryAdvance answers in reads/service.ts); `groupMask` the groups asked for (0: all) and
 * `group` the current record's.
 */
export const RUN = {
  at: 0, end: 1, form: 2, written: 3, pageSize: 4, budgetLeft: 5, writeAt: 6, refId: 7, start: 8, windowEnd: 9,
  sortPosition: 10, atPosition: 11, after: 12, afterPosition: 13, afterOrdinal: 14, afterCount: 15, ordinal: 16,
  stop: 17, lastPosition: 18, lastAt: 19, count: 20, groupMask: 21, group: 22, fields: 23,
} as const;

/** The interface of native/alignment-json.c this file was written against (its INTERFACE_VERSION). */
const NATIVE_INTERFACE_VERSION = 1;

/** The native writer (GA4GH_NATIVE_WRITER=0: this file's writer alone); either way the answers are the same bytes. */
export const nativeAlignmentJson = nativeModule<NativeAlignmentJson>('alignment_json', NATIVE_INTERFACE_VERSION, 'GA4GH_NATIVE_WRITER');

/** The runs of keys and values between the numbers of a record that only its flag decides. */
interface FlagTexts {
  /** From improperPlacement to the fragmentLength key. */
  beforeLength: Buffer;
  /** readNumber (when it has one) and failedVendorQualityChecks. */
  afterLength: Buffer;
  /** secondaryAlignment and supplementaryAlignment. */
  afterAlignment: Buffer;
  /** The same, then the alignedSequence key (a record with bases: one copy instead of two). */
  afterAlignmentThenSequence: Buffer;
}

function flagTextsOf(k: Keys, flag: number): FlagTexts {
  const t = k.text;
  let afterLength = '';
  if (!(flag & 1) || (flag & 192) === 64 || (flag & 192) === 128) afterLength += t.readNumber + (flag & 128 ? '1' : '0');
  afterLength += t.failedVendorQualityChecks + ((flag & 512) !== 0);
  const afterAlignment = t.secondaryAlignment + ((flag & 256) !== 0) + t.supplementaryAlignment + ((flag & 2048) !== 0);
  return {
    beforeLength: Buffer.from(
      t.improperPlacement + ((flag & 2) === 0) + t.duplicateFragment + ((flag & 1024) !== 0) + t.numberReads + (flag & 1 ? '2' : '1') + t.fragmentLength,
      'latin1',
    ),
    afterLength: Buffer.from(afterLength, 'latin1'),
    afterAlignment: Buffer.from(afterAlignment, 'latin1'),
    afterAlignmentThenSequence: Buffer.from(afterAlignment + t.alignedSequence, 'latin1'),
  };
}

/** Two bases per byte of SEQ, as the two characters' codes in one 16-bit number. */
const BASE_PAIRS = new Uint16Array(256);
for (let i = 0; i < 256; i++) BASE_PAIRS[i] = BASES.charCodeAt(i >> 4) | (BASES.charCodeAt(i & 15) << 8);

/** The text of each quality value and its comma, as the 4 bytes of a little-endian number, and its length. */
const QUALITY_TEXT = new Uint32Array(256);
const QUALITY_LENGTH = new Uint8Array(256);
for (let v = 0; v < 256; v++) {
  const text = v + ',';
  QUALITY_LENGTH[v] = text.length;
  for (let i = 0; i < text.length; i++) QUALITY_TEXT[v] |= text.charCodeAt(i) << (8 * i);
}

/** The two digits of 0..99. */
const DIGIT_PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[i * 2] = 48 + Math.floor(i / 10);
  DIGIT_PAIRS[i * 2 + 1] = 48 + (i % 10);
}

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

/** Bytes of a value of each tag type, by the type's character code (0: not a fixed-size type). */
const TAG_SIZES = new Uint8Array(256);
for (const [type, size] of Object.entries({ A: 1, c: 1, C: 1, s: 2, S: 2, i: 4, I: 4, f: 4 })) TAG_SIZES[type.charCodeAt(0)] = size;

/**
 * The most bytes of JSON one byte of a record can become: a name byte is at most 6 (\u00XX) in the
 * fragment name and 8 in the id's base64 of the same; a CIGAR unit's 4 bytes ~70; one element of a
 * B:c array ~21 (`{"int32_value":-128},`); a quality 4; other tags less.
 */
const BYTES_PER_RECORD_BYTE = 48;

/**
 * Copies `piece` to `out` at `o`; returns where it ends. TypedArray set (a memmove) is ~10 times
 * faster than a byte loop for an 87-byte key run; a byte loop only wins for a few bytes.
 */
function put(out: Buffer, o: number, piece: Buffer): number {
  const n = piece.length;
  if (n < 16) {
    for (let i = 0; i < n; i++) out[o + i] = piece[i];
  } else out.set(piece, o);
  return o + n;
}

/** Writes the decimal text of an integer (from -2^31 to 2^32 - 1) at `o`; returns where it ends. */
function putInt(out: Buffer, o: number, n: number): number {
  if (n < 0) {
    out[o++] = 45;
    n = -n;
  }
  if (n < 10) {
    out[o] = 48 + n;
    return o + 1;
  }
  const digits = n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
  const end = o + digits;
  let at = end;
  while (n >= 100) {
    const q = Math.floor(n / 100);
    const pair = (n - q * 100) * 2;
    out[--at] = DIGIT_PAIRS[pair + 1];
    out[--at] = DIGIT_PAIRS[pair];
    n = q;
  }
  if (n >= 10) {
    out[--at] = DIGIT_PAIRS[n * 2 + 1];
    out[--at] = DIGIT_PAIRS[n * 2];
  } else out[--at] = 48 + n;
  return end;
}

/** Whether `bytes[from, to)` can go into a JSON string as it is (printable ASCII, no quote or backslash). */
function isPlain(bytes: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = bytes[i];
    if (b < 32 || b === 34 || b === 92 || b > 126) return false;
  }
  return true;
}

/** `bytes[from, to)` between quotes, as it is: for text that needs no escaping (isPlain). */
function putQuoted(out: Buffer, o: number, bytes: Buffer, from: number, to: number): number {
  out[o++] = 34;
  for (let i = from; i < to; i++) out[o++] = bytes[i];
  out[o++] = 34;
  return o;
}

/**
 * A JSON string from the UTF-8 `bytes[from, to)`, copied as it is unless it needs escaping (`plain`:
 * whether it does, when the caller has checked already).
 */
function putString(out: Buffer, o: number, bytes: Buffer, from: number, to: number, plain = isPlain(bytes, from, to)): number {
  return plain ? putQuoted(out, o, bytes, from, to) : o + out.write(JSON.stringify(bytes.toString('utf8', from, to)), o);
}

/** The two base64url characters of each 12-bit value, as a little-endian 16-bit number. */
const BASE64URL_PAIRS = new Uint16Array(4096);
for (let v = 0; v < 4096; v++) BASE64URL_PAIRS[v] = BASE64URL[v >> 6] | (BASE64URL[v & 63] << 8);

/**
 * base64url (no padding) of `bytes[0, n)` at `o` of the buffer `view` covers; returns where it ends.
 * Each 3 bytes become one 32-bit store of two character pairs instead of four byte stores.
 */
function putBase64(out: Buffer, view: DataView, o: number, bytes: Buffer, n: number): number {
  let i = 0;
  for (; i + 3 <= n; i += 3) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    view.setUint32(o, BASE64URL_PAIRS[v >> 12] | (BASE64URL_PAIRS[v & 4095] << 16), true);
    o += 4;
  }
  if (n - i === 1) {
    const v = bytes[i] << 16;
    out[o++] = BASE64URL[v >> 18];
    out[o++] = BASE64URL[(v >> 12) & 63];
  } else if (n - i === 2) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out[o++] = BASE64URL[v >> 18];
    out[o++] = BASE64URL[(v >> 12) & 63];
    out[o++] = BASE64URL[(v >> 6) & 63];
  }
  return o;
}

/**
 * The start of an alignment id's JSON text, `["ds","rgs","set","group","reference","`: its whole
 * 3-byte groups already in base64url (after the record's opening `{"id":"`), and the 0-2 bytes left
 * over, which begin the rest of the text.
 */
interface IdPrefix {
  encoded: Buffer;
  rest: Buffer;
}

function idPrefixOf(text: string): IdPrefix {
  const bytes = Buffer.from(text);
  const whole = bytes.length - (bytes.length % 3);
  // "id" is spelt the same in both naming forms.
  return { encoded: Buffer.from(KEYS.camel.text.id + bytes.subarray(0, whole).toString('base64url'), 'latin1'), rest: bytes.subarray(whole) };
}

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

/** The texts of one set in one naming form. */
interface SetTexts {
  /** Per read group: `","readGroupId":"<id>","fragmentName":`. */
  group: Buffer[];
  /** Per reference: the alignment's keys up to its position's number, with the reference name. */
  alignment: Buffer[];
  /** Per reference: the same for nextMatePosition. */
  mate: Buffer[];
}

export class AlignmentWriter {
  private readonly groupIndex = new Map<string, number>();
  /** The read group names as bytes, to find a record's group without making a string. */
  private readonly groupNameBytes: Buffer[];
  private readonly texts: Record<NamingForm, SetTexts>;
  private readonly referenceCount: number;
  /** Per group, per reference (+1: none): the start of the alignment id. */
  private readonly idPrefixes: IdPrefix[][];
  /** The rest of an id's JSON text is assembled here (a read name has at most 254 bytes), then written in base64url. */
  private readonly idTail = Buffer.allocUnsafe(2048);
  /** Bytes of JSON a record needs beyond BYTES_PER_RECORD_BYTE per byte of it. */
  private readonly fixedBytes: number;
  /** A view of the buffer written last, to write bases and qualities several bytes at a time. */
  private view = new DataView(new ArrayBuffer(0));
  private viewOf: Buffer | undefined;
  /** The native writer's copy of this set's texts, when it is loaded. */
  private readonly native: object | undefined;
  private readonly nativeModule: NativeAlignmentJson | null;

  constructor(context: WriterContext, native: NativeAlignmentJson | null = nativeAlignmentJson ?? null) {
    context.readGroupNames.forEach((name, i) => this.groupIndex.set(name, i));
    this.groupNameBytes = context.readGroupNames.map((name) => Buffer.from(name));
    this.referenceCount = context.referenceNames.length;
    const textsOf = (form: NamingForm): SetTexts => {
      const t = KEYS[form].text;
      return {
        group: context.readGroupIds.map((id) => Buffer.from(t.readGroupId + JSON.stringify(id) + t.fragmentName)),
        alignment: context.referenceNames.map((name) => Buffer.from(t.alignment + JSON.stringify(name) + t.position)),
        mate: context.referenceNames.map((name) => Buffer.from(t.nextMatePosition + JSON.stringify(name) + t.position)),
      };
    };
    this.texts = { camel: textsOf('camel'), snake: textsOf('snake') };
    this.idPrefixes = context.readGroupNames.map((group) =>
      [...context.referenceNames, '*'].map((reference) => {
        const text = JSON.stringify([context.datasetName, 'rgs', context.setName, group, reference, '']);
        return idPrefixOf(text.slice(0, -2)); // up to the opening quote of the position
      }),
    );
    const longest = (buffers: Buffer[]) => buffers.reduce((n, b) => Math.max(n, b.length), 0);
    const keyBytes = Object.values(KEYS.snake.text).reduce((n, t) => n + t.length, 0) + Object.values(KEYS.camel.text).reduce((n, t) => n + t.length, 0);
    this.fixedBytes =
      1024 +
      keyBytes +
      Math.max(longest(this.texts.camel.group), longest(this.texts.snake.group)) +
      Math.max(longest(this.texts.camel.alignment), longest(this.texts.snake.alignment)) +
      Math.max(longest(this.texts.camel.mate), longest(this.texts.snake.mate)) +
      2 * this.idPrefixes.reduce((n, row) => Math.max(n, longest(row.map((p) => p.encoded))), 0);
    this.nativeModule = native;
    this.native = native?.create({
      camel: this.nativeTexts('camel'),
      snake: this.nativeTexts('snake'),
      idEncoded: this.idPrefixes.flatMap((row) => row.map((p) => p.encoded)),
      idRest: this.idPrefixes.flatMap((row) => row.map((p) => p.rest)),
      groupNames: this.groupNameBytes,
      fixedBytes: this.fixedBytes,
      bytesPerRecordByte: BYTES_PER_RECORD_BYTE,
    });
  }

  /** The most bytes of JSON the record `bytes[at, end)` can need, taken at once before it is written. */
  private roomFor(at: number, end: number): number {
    return this.fixedBytes + BYTES_PER_RECORD_BYTE * (end - at);
  }

  /** Whether writeRun can be used: the native writer is loaded. */
  get writesRuns(): boolean {
    return this.native !== undefined;
  }

  /**
   * Writes the record `state` names (RUN.at, RUN.end) and those after it in `bytes` that the lane
   * would give next, in one native call, for as long as the page has room and count for them and
   * no promise is needed; RUN's fields then say where it stopped. Only when writesRuns.
   */
  writeRun(bytes: Buffer, out: ByteChunks, state: Int32Array): void {
    // The room write would take for the current record, so that the run can always write it.
    const buffer = out.room(this.roomFor(state[RUN.at], state[RUN.end]));
    state[RUN.writeAt] = out.writeAt;
    this.nativeModule!.writeRun(this.native!, bytes, buffer, state);
    out.wrote(state[RUN.writeAt]);
  }

  /** The texts of one naming form, as native/alignment-json.c reads them. */
  private nativeTexts(form: NamingForm) {
    const k = KEYS[form];
    const texts = Object.fromEntries(Object.entries(k.text).map(([name, text]) => [name, Buffer.from(text)]));
    return { ...texts, cigarOps: k.cigarOps, ...this.texts[form] };
  }

  /**
   * Writes the id of a record as base64url of the JSON array
   * [dataset, "rgs", set, group, reference or "*", position, read name, flag], the text encodeId gives.
   */
  private id(out: Buffer, view: DataView, o: number, bytes: Buffer, group: number, refId: number, position: number, nameStart: number, nameEnd: number, plainName: boolean, flag: number): number {
    const prefixes = this.idPrefixes[group];
    const prefix = prefixes[refId >= 0 && refId < prefixes.length - 1 ? refId : prefixes.length - 1];
    o = put(out, o, prefix.encoded);
    const text = this.idTail;
    const rest = prefix.rest;
    let n = 0;
    for (let i = 0; i < rest.length; i++) text[n++] = rest[i];
    n = putInt(text, n, position);
    text[n++] = 34; // "
    text[n++] = 44; // ,
    // A name that needs escaping is read as latin1 here (a character per byte), as UTF-8 in the fragment name.
    if (plainName) n = putQuoted(text, n, bytes, nameStart, nameEnd);
    else n += text.write(JSON.stringify(bytes.toString('latin1', nameStart, nameEnd)), n);
    text[n++] = 44;
    text[n++] = 34;
    n = putInt(text, n, flag);
    text[n++] = 34;
    text[n++] = 93; // ]
    return putBase64(out, view, o, text, n);
  }

  /**
   * The read group of a record (by its position in readGroupNames): the one its RG tag names, else the
   * first (a record without an RG tag, or with one the header does not declare, belongs to the first).
   */
  groupOf(bytes: Buffer, at: number, end: number): number {
    for (let tag = tagsStart(bytes, at); tag + 3 <= end; ) {
      const type = bytes[tag + 2];
      if (type === 90 /* Z */ && bytes[tag] === 82 /* R */ && bytes[tag + 1] === 71 /* G */) {
        const from = tag + 3;
        let stop = from;
        let ascii = true;
        while (stop < end && bytes[stop] !== 0) {
          if (bytes[stop] > 127) ascii = false;
          stop++;
        }
        if (!ascii || this.groupNameBytes.length > 16) return this.groupIndex.get(bytes.toString('utf8', from, stop)) ?? 0;
        // Few groups: compare bytes, the last group of a repeated name first (as the map holds it).
        const names = this.groupNameBytes;
        for (let g = names.length - 1; g >= 0; g--) {
          const name = names[g];
          if (name.length !== stop - from) continue;
          let same = true;
          for (let i = 0; i < name.length; i++) {
            if (name[i] !== bytes[from + i]) {
              same = false;
              break;
            }
          }
          if (same) return g;
        }
        return 0;
      }
      tag = skipTag(bytes, tag, end);
    }
    return 0;
  }

  /**
   * Writes the record `bytes[at, end)` (its length field first), of read group `group`, to `out`, after
   * a comma when `comma`. The record's JSON is written where it goes in `out`, in one piece of room
   * taken for the most it can need, so no byte is copied twice and no size is checked per field.
   */
  write(bytes: Buffer, at: number, end: number, group: number, form: NamingForm, out: ByteChunks, comma = false): void {
    const room = this.roomFor(at, end);
    const buffer = out.room(room);
    if (this.native) {
      const stop = this.nativeModule!.write(this.native, bytes, at, end, group, form === 'camel' ? 0 : 1, buffer, out.writeAt, comma);
      if (stop >= 0) return out.wrote(stop);
    }
    const k = KEYS[form];
    const texts = this.texts[form];
    // The fixed fields lie within the record: its cursor checks that a record has their 36 bytes.
    const refId = int32At(bytes, at + 4);
    const position = int32At(bytes, at + 8);
    const nameLength = bytes[at + 12];
    const mappingQuality = bytes[at + 13];
    const cigarCount = bytes[at + 16] | (bytes[at + 17] << 8);
    const flag = bytes[at + 18] | (bytes[at + 19] << 8);
    const sequenceLength = int32At(bytes, at + 20);
    const mateRefId = int32At(bytes, at + 24);
    const matePosition = int32At(bytes, at + 28);
    const templateLength = int32At(bytes, at + 32);
    const nameStart = at + 36;
    const nameEnd = nameLength > 0 ? nameStart + nameLength - 1 : nameStart; // without its NUL
    const cigarStart = nameStart + nameLength;
    const sequenceStart = cigarStart + cigarCount * 4;
    const qualityStart = sequenceStart + ((sequenceLength + 1) >> 1);
    const tagStart = qualityStart + sequenceLength;
    if (sequenceLength < 0 || tagStart > end) {
      throw new Error('the fields of an alignment record run past the end of the record');
    }

    if (buffer !== this.viewOf) {
      this.view = new DataView(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.length);
      this.viewOf = buffer;
    }
    const view = this.view;
    const from = out.writeAt;
    let o = from;
    if (comma) buffer[o++] = 44;
    // Read names are mostly printable ASCII, written as they are in the id and as the fragment name.
    const plainName = isPlain(bytes, nameStart, nameEnd);
    o = this.id(buffer, view, o, bytes, group, refId, position, nameStart, nameEnd, plainName, flag);
    o = put(buffer, o, texts.group[group]);
    o = putString(buffer, o, bytes, nameStart, nameEnd, plainName);
    const flags = (k.flagTexts[flag & 4095] ??= flagTextsOf(k, flag & 4095));
    o = put(buffer, o, flags.beforeLength);
    o = putInt(buffer, o, templateLength);
    o = put(buffer, o, flags.afterLength);

    // A CIGAR of more than 65,535 operations lies in a CG tag, behind a placeholder (SAM spec 4.2.2).
    const longCigar = cigarCount === 2 && tagStart < end ? longCigarTag(bytes, cigarStart, sequenceLength, tagStart, end) : -1;
    if (!(flag & 4) && refId >= 0 && refId < this.referenceCount) {
      o = put(buffer, o, texts.alignment[refId]);
      o = putInt(buffer, o, position);
      o = put(buffer, o, flag & 16 ? k.strandMinusQuality : k.strandPlusQuality);
      o = putInt(buffer, o, mappingQuality);
      const units = longCigar < 0 ? cigarStart : longCigar + 8;
      const unitCount = longCigar < 0 ? cigarCount : bytes.readInt32LE(longCigar + 4);
      // The record's own CIGAR lies before tagStart (checked above); one in a CG tag is checked here.
      if (units + unitCount * 4 > end) throw new Error(`the CIGAR of read ${bytes.toString('latin1', nameStart, nameEnd)} runs past the end of its record`);
      if (unitCount > 0) {
        o = put(buffer, o, k.cigar);
        for (let i = 0; i < unitCount; i++) {
          const unit = int32At(bytes, units + i * 4) >>> 0;
          const op = k.cigarOps[unit & 15];
          if (!op) throw new Error(`a CIGAR operation of read ${bytes.toString('latin1', nameStart, nameEnd)} is not one of MIDNSHP=X`);
          if (i) buffer[o++] = 44;
          o = put(buffer, o, op);
          o = putInt(buffer, o, unit >>> 4);
          buffer[o++] = 125;
        }
        buffer[o++] = 93;
      }
      buffer[o++] = 125;
    }
    if (sequenceLength > 0) {
      o = put(buffer, o, flags.afterAlignmentThenSequence);
      const basesEnd = o + sequenceLength;
      for (let i = sequenceStart; i < qualityStart; i++) {
        view.setUint16(o, BASE_PAIRS[bytes[i]], true);
        o += 2;
      }
      o = basesEnd; // an odd length leaves the last half-byte's padding out
      if (bytes[qualityStart] !== 255) {
        o = put(buffer, o, k.alignedQuality);
        for (let i = qualityStart; i < tagStart; i++) {
          const quality = bytes[i];
          view.setUint32(o, QUALITY_TEXT[quality], true);
          o += QUALITY_LENGTH[quality];
        }
        buffer[o - 1] = 93; // over the last comma
      } else buffer[o++] = 34;
    } else o = put(buffer, o, flags.afterAlignment);

    if (mateRefId >= 0 && matePosition >= 0 && mateRefId < this.referenceCount) {
      o = put(buffer, o, texts.mate[mateRefId]);
      o = putInt(buffer, o, matePosition);
      o = put(buffer, o, flag & 32 ? k.strandMinus : k.strandPlus);
    }
    if (tagStart < end) o = this.attributes(buffer, o, bytes, tagStart, end, k, longCigar);
    buffer[o++] = 125;
    if (o - from > room) throw new Error(`the JSON of read ${bytes.toString('latin1', nameStart, nameEnd)} outgrew the room taken for it`);
    out.wrote(o);
  }

  /** The record's tags from `from`, leaving out the one at `leaveOut` (a CG tag that holds the CIGAR). */
  private attributes(out: Buffer, o: number, bytes: Buffer, from: number, end: number, k: Keys, leaveOut: number): number {
    let first = true;
    for (let tag = from; tag + 3 <= end; ) {
      const type = bytes[tag + 2];
      const next = skipTag(bytes, tag, end);
      if (next <= tag || next > end) throw new Error('a tag of an alignment record runs past the end of the record');
      if (tag === leaveOut) {
        tag = next;
        continue;
      }
      const values = tag + 3;
      let value = 0;
      let kind: TagKind;
      switch (type) {
        case 102: kind = TagKind.double; break; // f
        case 65: case 90: case 72: kind = TagKind.string; break; // A, Z, H
        case 66: // B
          if (bytes.readInt32LE(values + 1) === 0) {
            tag = next; // an empty array: no values to give
            continue;
          }
          kind = TagKind.array;
          break;
        default:
          value = integerAt(bytes, type, values);
          kind = value > 2147483647 ? TagKind.int64 : TagKind.int32;
      }
      const headKey = (((bytes[tag] << 8) | bytes[tag + 1]) * 8 + kind) * 2 + (first ? 1 : 0);
      o = put(out, o, k.tagHeads.get(headKey) ?? tagHeadOf(k, headKey));
      first = false;
      switch (kind) {
        case TagKind.int32:
        case TagKind.int64:
          o = putInt(out, o, value);
          out[o++] = 125;
          break;
        case TagKind.double:
          o += out.write(float32Text(bytes.readFloatLE(values)) + '}', o);
          break;
        case TagKind.string:
          if (type === 65) o += out.write(JSON.stringify(String.fromCharCode(bytes[values])), o);
          else o = putString(out, o, bytes, values, next - 1);
          out[o++] = 125;
          break;
        default: {
          const subtype = bytes[values];
          const count = bytes.readInt32LE(values + 1);
          const size = TAG_SIZES[subtype];
          for (let i = 0; i < count; i++) {
            if (i) out[o++] = 44;
            o = this.number(out, o, subtype, bytes, values + 5 + i * size, k);
          }
        }
      }
      out[o] = 93;
      out[o + 1] = 125;
      o += 2;
      tag = next;
    }
    if (!first) {
      out[o] = 125;
      out[o + 1] = 125;
      o += 2;
    }
    return o;
  }

  private number(out: Buffer, o: number, type: number, bytes: Buffer, at: number, k: Keys): number {
    if (type === 102 /* f */) {
      o = put(out, o, k.doubleValue);
      return o + out.write(float32Text(bytes.readFloatLE(at)) + '}', o);
    }
    const value = integerAt(bytes, type, at);
    o = put(out, o, value > 2147483647 ? k.int64Value : k.int32Value);
    o = putInt(out, o, value);
    out[o] = 125;
    return o + 1;
  }
}

/** The integer of tag type `type` (c, C, s, S, i or I) at `at`; any other type is refused. */
function integerAt(bytes: Buffer, type: number, at: number): number {
  switch (type) {
    case 99: return bytes.readInt8(at); // c
    case 67: return bytes[at]; // C
    case 115: return bytes.readInt16LE(at); // s
    case 83: return bytes.readUInt16LE(at); // S
    case 105: return bytes.readInt32LE(at); // i
    case 73: return bytes.readUInt32LE(at); // I
    default:
      throw new Error(`a tag has the unknown type '${String.fromCharCode(type)}'`);
  }
}

/**
 * The offset of the CG tag that holds a record's real CIGAR, or -1: when a CIGAR has more than 65,535
 * operations, BAM keeps `<read length>S<reference length>N` in its place and the operations in a CG
 * tag of type B:I, which samtools shows as the CIGAR (and not as a tag).
 */
function longCigarTag(bytes: Buffer, cigarStart: number, sequenceLength: number, tagStart: number, end: number): number {
  const first = bytes.readUInt32LE(cigarStart);
  const second = bytes.readUInt32LE(cigarStart + 4);
  if ((first & 15) !== 4 || first >>> 4 !== sequenceLength || (second & 15) !== 3) return -1;
  for (let tag = tagStart; tag + 8 <= end; tag = skipTag(bytes, tag, end)) {
    if (bytes[tag] === 67 /* C */ && bytes[tag + 1] === 71 /* G */ && bytes[tag + 2] === 66 /* B */) {
      const subtype = bytes[tag + 3];
      return subtype === 73 /* I */ || subtype === 105 /* i */ ? tag : -1;
    }
  }
  return -1;
}

/** Where the tags of the record at `at` begin. */
function tagsStart(bytes: Buffer, at: number): number {
  const sequenceLength = int32At(bytes, at + 20);
  return at + 36 + bytes[at + 12] + (bytes[at + 16] | (bytes[at + 17] << 8)) * 4 + ((sequenceLength + 1) >> 1) + sequenceLength;
}

/** The offset after the tag at `tag`. */
function skipTag(bytes: Buffer, tag: number, end: number): number {
  const type = bytes[tag + 2];
  const size = TAG_SIZES[type];
  if (size !== 0) return tag + 3 + size;
  if (type === 90 || type === 72) {
    // A loop, not indexOf: tag strings are short, and indexOf's call into C++ cost more than the scan.
    let stop = tag + 3;
    while (stop < end && bytes[stop] !== 0) stop++;
    if (stop >= end) throw new Error('a string tag of an alignment record has no end');
    return stop + 1;
  }
  if (type === 66) {
    const elementSize = TAG_SIZES[bytes[tag + 3]];
    if (elementSize === 0) throw new Error(`an array tag has the unknown element type '${String.fromCharCode(bytes[tag + 3])}'`);
    return tag + 8 + bytes.readInt32LE(tag + 4) * elementSize;
  }
  throw new Error(`a tag has the unknown type '${String.fromCharCode(type)}'`);
}
