/**
 * Writes a VCF data line as the JSON bytes of a Variant with its calls, in either naming form, without
 * building an object per call: building GA4GH objects cost more than parsing the VCF itself
 * (DEPENDENCIES.md, "Throughput seen"), so each call is written from precomputed pieces (its call-set
 * name and id), only the requested samples' columns are looked at, and the JSON of a sample column
 * that repeats (GT-only files: "0|0" again and again) is reused.
 *
 * The hot path (every call of a 1000-Genomes-like cohort, docs/performance.md, "Variant pages") scans
 * the line as bytes and copies whole runs of calls at once: for a short column text that keeps coming back
 * ("0|0"), the calls of every sample with that text are precomputed as one byte string, so a run of
 * neighbouring samples with the same genotype is one copy. Output goes into large buffers handed to
 * the socket as they fill (ByteChunks).
 *
 * Values of INFO and FORMAT fields are written from their text as it stands in the file, typed by the
 * header (Integer → int32Value, Float → doubleValue, Flag → boolValue, String/Character →
 * stringValue), so 0.7707 stays 0.7707.
 */
import { CHUNK_BYTES, handedOut, retire, takeChunkBuffer } from '../../protocol/chunk-pool.js';
import { hashText } from '../../protocol/hash.js';
import { encodeId } from '../../protocol/ids.js';
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import { AttributeValue, Attributes, AttributeValueList } from '../../protocol/common.js';
import { applyPatches, applyPatchesBy, diploidSlot, findPatches, PatchTable, UNPATCHABLE } from './call-scan.js';
import { Call, Variant } from './messages.js';
import type { FieldTypes, ValueType } from './vcf-header.js';

const FORMS: NamingForm[] = ['camel', 'snake'];

function keysFor(form: NamingForm) {
  const v = (f: string) => keyOf(Variant, f, form);
  const c = (f: string) => keyOf(Call, f, form);
  return {
    id: v('id'),
    variantSetId: v('variantSetId'),
    names: v('names'),
    referenceName: v('referenceName'),
    start: v('start'),
    end: v('end'),
    referenceBases: v('referenceBases'),
    alternateBases: v('alternateBases'),
    attributes: v('attributes'),
    calls: v('calls'),
    variantType: v('variantType'),
    svlen: v('svlen'),
    cipos: v('cipos'),
    ciend: v('ciend'),
    filtersApplied: v('filtersApplied'),
    filtersPassed: v('filtersPassed'),
    filtersFailed: v('filtersFailed'),
    callSetName: c('callSetName'),
    callSetId: c('callSetId'),
    genotype: c('genotype'),
    phaseset: c('phaseset'),
    genotypeLikelihood: c('genotypeLikelihood'),
    attr: keyOf(Attributes, 'attr', form),
    values: keyOf(AttributeValueList, 'values', form),
    int32Value: keyOf(AttributeValue, 'int32Value', form),
    doubleValue: keyOf(AttributeValue, 'doubleValue', form),
    boolValue: keyOf(AttributeValue, 'boolValue', form),
    stringValue: keyOf(AttributeValue, 'stringValue', form),
    nullValue: keyOf(AttributeValue, 'nullValue', form),
  };
}
type Keys = ReturnType<typeof keysFor>;
const KEYS: Record<NamingForm, Keys> = { camel: keysFor('camel'), snake: keysFor('snake') };

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const JSON_INTEGER = /^-?(?:0|[1-9]\d*)$/;

/** A number as JSON text: the file's own text when it is valid JSON, else its value; NaN/Inf as strings. */
function numberText(text: string): string | undefined {
  if (JSON_NUMBER.test(text)) return text;
  const n = Number(text);
  if (Number.isFinite(n)) return String(n);
  if (Number.isNaN(n) && /^[+-]?nan$/i.test(text)) return '"NaN"';
  if (/^\+?inf(inity)?$/i.test(text)) return '"Infinity"';
  if (/^-inf(inity)?$/i.test(text)) return '"-Infinity"';
  return undefined;
}

/** One value of an INFO/FORMAT field as an AttributeValue. */
function attributeValue(text: string, type: ValueType, k: Keys): string {
  if (text === '.') return '{' + k.nullValue + '"NULL_VALUE"}';
  if (type === 'Integer') {
    if (JSON_INTEGER.test(text)) return '{' + k.int32Value + text + '}';
    const n = Number(text);
    if (Number.isInteger(n)) return '{' + k.int32Value + String(n) + '}';
  } else if (type === 'Float') {
    const number = numberText(text);
    if (number !== undefined) return '{' + k.doubleValue + number + '}';
  }
  return '{' + k.stringValue + JSON.stringify(text) + '}';
}

/** An allele index of a genotype; a missing one ('.') is -1. */
function alleleText(a: string): string {
  if (JSON_INTEGER.test(a)) return a;
  const n = Number.parseInt(a, 10);
  return Number.isNaN(n) ? '-1' : String(n);
}

/** `"KEY":{"values":[...]}` for a field, or '' when its value is missing altogether ("."). */
function attributeEntry(key: string, text: string | undefined, type: ValueType, k: Keys): string {
  if (type === 'Flag') return JSON.stringify(key) + ':{' + k.values + '[{' + k.boolValue + 'true}]}';
  if (text === undefined || text === '.' || text === '') return '';
  const parts = text.split(',');
  if (parts.every((p) => p === '.')) return '';
  let out = JSON.stringify(key) + ':{' + k.values + '[';
  for (let i = 0; i < parts.length; i++) out += (i ? ',' : '') + attributeValue(parts[i], type, k);
  return out + ']}';
}

/** INFO values that fill Variant fields of their own. */
interface SvFields {
  type?: string;
  len?: string;
  cipos?: string;
  ciend?: string;
  end?: string;
}

/**
 * The 0-based exclusive end of a variant: INFO END (1-based inclusive, so the same number) when present
 * and past the start, as for a `<DEL>`; otherwise start + len(REF).
 */
export function variantEnd(start: number, ref: string, endText: string | undefined): number {
  if (endText !== undefined) {
    const end = Number(endText);
    if (Number.isSafeInteger(end) && end > start) return end;
  }
  return start + ref.length;
}

/** The short digest of REF and ALT that tells apart variants at one position in their ids. */
export function alleleDigest(ref: string, alt: string): string {
  return hashText('sha1', ref + '\t' + alt, 'hex').slice(0, 16);
}

/**
 * JSON bytes handed out in pieces of a fixed size, so memory stays flat whatever the page. Everything
 * is copied into the pieces, runs of calls too: handing long runs out as they lie (no copy) made many
 * small HTTP chunks, and the client then lost more than the server saved (2.0-2.3 M calls/s with
 * copies, 1.6-1.9 M without, same machine and load).
 */
export class ByteChunks {
  private buffer: Buffer;
  /** The part of `buffer` not yet handed out is [start, used). */
  private start = 0;
  private used = 0;
  private ready: Buffer[] = [];
  private readyBytes = 0;
  /** Bytes written so far. */
  total = 0;

  constructor(
    readonly chunkSize = CHUNK_BYTES,
    /** The buffer to write first; by default a small one of its own. */
    first?: Buffer,
  ) {
    // Small replies (a get by id, a few variants) should not cost a whole chunk each.
    this.buffer = first ?? Buffer.allocUnsafe(Math.min(chunkSize, FIRST_BUFFER_BYTES));
  }

  /**
   * For a page of a search, replies that come one after another: its first buffer is a pooled chunk,
   * reused once sent (and moved to the main thread as it lies from a page worker). A new 64 KB first
   * buffer per page of a hundred reads made V8 run a dozen full collections a second (memory outside
   * the heap counts towards starting one), and was copied once more to be moved.
   */
  static forPage(): ByteChunks {
    return new ByteChunks(CHUNK_BYTES, takeChunkBuffer());
  }

  /** A buffer for at least `n` bytes: a pooled one when a chunk is enough. */
  private next(n: number): void {
    this.cut();
    retire(this.buffer);
    this.buffer = this.chunkSize === CHUNK_BYTES && n <= CHUNK_BYTES ? takeChunkBuffer() : Buffer.allocUnsafe(Math.max(this.chunkSize, n));
    this.start = this.used = 0;
  }

  text(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit, so this never cuts a character.
    if (text.length * 3 <= this.buffer.length - this.used) {
      const n = this.buffer.write(text, this.used);
      this.used += n;
      this.total += n;
    } else {
      const bytes = Buffer.from(text, 'utf8');
      this.bytes(bytes, 0, bytes.length);
    }
  }

  /** Copies `source[from, to)`. */
  bytes(source: Uint8Array, from: number, to: number): void {
    this.total += to - from;
    while (from < to) {
      if (this.used === this.buffer.length) this.next(this.chunkSize);
      const n = Math.min(this.buffer.length - this.used, to - from);
      this.buffer.set(source.subarray(from, from + n), this.used);
      this.used += n;
      from += n;
    }
  }

  /**
   * Overwrites the byte at `at` (counted as `total` counts) with `byte`. Only for the bytes of the
   * last `bytes` call of at most a chunk, before anything is taken: they lie in the current buffer or,
   * when that call filled a buffer, in the piece cut from it just before.
   */
  overwrite(at: number, byte: number): void {
    const index = at - (this.total - this.used);
    if (index >= 0) this.buffer[index] = byte;
    else {
      const piece = this.ready[this.ready.length - 1];
      piece[piece.length + index] = byte;
    }
  }

  /**
   * Room for `n` more bytes in one buffer, for a writer that writes its bytes in place (no copy):
   * it writes `room(n)` from `writeAt` on, at most `n` bytes, then calls `wrote` with where it stopped.
   * The room comes from a new buffer when the current one has too little left.
   */
  room(n: number): Buffer {
    if (this.buffer.length - this.used < n) this.next(n);
    return this.buffer;
  }

  /** The buffer being written: its byte `i` is byte `total - writeAt + i` of the reply (to overwrite what was just written). */
  get current(): Buffer {
    return this.buffer;
  }

  /** Where the next byte goes in the buffer `room` gave. */
  get writeAt(): number {
    return this.used;
  }

  /** The bytes of `room`'s buffer up to `end` are written. */
  wrote(end: number): void {
    this.total += end - this.used;
    this.used = end;
  }

  /**
   * Whether `take` would hand anything out: about a chunk's worth of bytes in buffers the writer is
   * done with (half a chunk or more: a buffer is given up with up to one record's room unused). The
   * buffer still being written is left whole, so that a page worker can move each buffer to the main
   * thread as it lies instead of copying the part written so far (page-builder.ts, ownCopy).
   */
  full(): boolean {
    return this.readyBytes * 2 >= this.chunkSize;
  }

  private cut(): void {
    if (this.used === this.start) return;
    const piece = this.buffer.subarray(this.start, this.used);
    handedOut(piece);
    this.ready.push(piece);
    this.readyBytes += this.used - this.start;
    this.start = this.used;
  }

  /** The pieces to send now, once about a chunk's worth has gathered in buffers given up (else none). */
  take(): Buffer[] {
    return this.full() ? this.handOut() : [];
  }

  /**
   * Everything written and not yet taken. Nothing is written after it, so the last buffer is given up
   * too: it may be moved to another thread, or reused once its pieces are sent (chunk-pool.ts).
   */
  finish(): Buffer[] {
    this.cut();
    retire(this.buffer);
    return this.handOut();
  }

  private handOut(): Buffer[] {
    const ready = this.ready;
    this.ready = [];
    this.readyBytes = 0;
    return ready;
  }
}

/*
 * 1 MB chunks (CHUNK_BYTES): a raw node:http server sending a precomputed page in 64 KB writes reached
 * ~120 MB/s over loopback, in 256 KB writes ~280 MB/s, in 1 MB writes ~300 MB/s (2 cores under load).
 */
const FIRST_BUFFER_BYTES = 64 * 1024;

/**
 * The calls of every sample for one column text, as one byte string: call i is
 * `bytes[offsets[i], offsets[i + 1])`, each written with the comma that goes before it, so the calls
 * of neighbouring samples that share the text are one copy. A plain Uint8Array, not a Buffer: its
 * subarray, made for every copy (~2 M per pass of P1's region), costs two thirds of a Buffer's.
 */
interface CallRun {
  bytes: Uint8Array;
  offsets: Int32Array;
}

/**
 * Bytes of every CallRun of every writer together. A run is ~300 KB for 2,504 samples; runs are
 * dropped oldest first beyond this, and rebuilt when their text comes back (~1 ms each).
 */
const RUN_CACHE_BYTES = 48 * 1024 * 1024;
const runLedger: Array<{ owner: Map<number, CallRun>; key: number; size: number }> = [];
let runLedgerBytes = 0;

function rememberRun(owner: Map<number, CallRun>, key: number, run: CallRun): void {
  owner.set(key, run);
  runLedger.push({ owner, key, size: run.bytes.length });
  runLedgerBytes += run.bytes.length;
  while (runLedgerBytes > RUN_CACHE_BYTES && runLedger.length > 1) {
    const old = runLedger.shift()!;
    old.owner.delete(old.key);
    runLedgerBytes -= old.size;
  }
}

/** How the samples of one FORMAT layout (e.g. "GT:DS:GL") are written. */
interface FormatPlan {
  keys: string[];
  gt: number;
  ps: number;
  /** Index of the field that becomes genotypeLikelihood (GL, else PL), or -1. */
  likelihood: number;
  likelihoodIsPl: boolean;
  /** Indexes of the fields that go to attributes, with their types. */
  attributes: Array<{ index: number; type: ValueType }>;
  /** Call bodies by sample text, per naming form, for short texts that repeat. */
  cache: Record<NamingForm, Map<string, string>>;
  /** The same for columns of up to 4 bytes, keyed by the packed bytes (no string made at all). */
  shortCache: Record<NamingForm, Map<number, string>>;
  /** Runs of calls by packed column text (up to 4 bytes), per naming form. */
  runs: Record<NamingForm, Map<number, CallRun>>;
  /** How often each packed text was written call by call, to build a run only for texts that repeat. */
  uses: Record<NamingForm, Map<number, number>>;
  /** Per line text (packed key): how the calls of each other text differ from the line text's (patchOf). */
  patches: Record<NamingForm, Map<number, PatchTable>>;
}

const BODY_CACHE_LIMIT = 4096;
const BODY_CACHE_TEXT = 32;
const USES_LIMIT = 4096;
const TAB = 9;

/**
 * The packed key of the column text at `start` (its bytes, then its length: `key % 8`), as the run
 * caches take it; -1 when the text is longer than 4 bytes.
 */
function shortTextKey(bytes: Buffer, start: number, lineEnd: number): number {
  let end = start;
  let key = 0;
  while (end < lineEnd && bytes[end] !== TAB && end - start < 4) key = key * 256 + bytes[end++];
  return end < lineEnd && bytes[end] !== TAB ? -1 : key * 8 + (end - start);
}

export interface CallSetPieces {
  names: string[];
  ids: string[];
}

/** A VCF data line as bytes: `bytes[lineStart, lineEnd)`, without its line end. */
export interface LineBytes {
  bytes: Buffer;
  lineStart: number;
  lineEnd: number;
}

/** Everything about one variant set that the writer needs, computed once and then reused. */
export class VariantWriter {
  private readonly plans = new Map<string, FormatPlan>();
  /** `{"callSetName":"…","callSetId":"…"` per sample, per naming form. */
  private readonly callPrefix: Record<NamingForm, string[]>;
  private readonly variantSetIdText: string;
  /** Calls written one by one with a short text before its run is built. */
  private readonly runAfter: number;
  /** Where patchedCalls' scan puts the columns it finds, [sample, patch] pairs, and then how many wait for a patch. */
  private readonly foundColumns: Int32Array;

  /**
   * `runAfter`: how many calls of one short column text are written one by one before the run of that
   * text is built (default: as many as there are samples, so building never costs more than twice
   * what it saves; tests set 0 and Infinity to compare both ways of writing).
   */
  constructor(
    private readonly datasetName: string,
    private readonly setName: string,
    variantSetId: string,
    callSets: CallSetPieces,
    private readonly types: FieldTypes,
    options: { runAfter?: number } = {},
  ) {
    this.runAfter = options.runAfter ?? callSets.names.length;
    this.foundColumns = new Int32Array(2 * callSets.names.length + 1);
    this.variantSetIdText = JSON.stringify(variantSetId);
    this.callPrefix = { camel: [], snake: [] };
    for (const form of FORMS) {
      const k = KEYS[form];
      this.callPrefix[form] = callSets.names.map(
        (name, i) => '{' + k.callSetName + JSON.stringify(name) + ',' + k.callSetId + JSON.stringify(callSets.ids[i]),
      );
    }
  }

  private planFor(format: string): FormatPlan {
    let plan = this.plans.get(format);
    if (plan) return plan;
    const keys = format === '' ? [] : format.split(':');
    const gl = keys.indexOf('GL');
    const pl = keys.indexOf('PL');
    const likelihood = gl !== -1 ? gl : pl;
    plan = {
      keys,
      gt: keys.indexOf('GT'),
      ps: keys.indexOf('PS'),
      likelihood,
      likelihoodIsPl: likelihood !== -1 && likelihood === pl,
      attributes: [],
      cache: { camel: new Map(), snake: new Map() },
      shortCache: { camel: new Map(), snake: new Map() },
      runs: { camel: new Map(), snake: new Map() },
      uses: { camel: new Map(), snake: new Map() },
      patches: { camel: new Map(), snake: new Map() },
    };
    keys.forEach((key, index) => {
      if (key === 'GT' || key === 'PS' || index === likelihood) return;
      plan!.attributes.push({ index, type: this.types.format.get(key) ?? 'String' });
    });
    if (this.plans.size > 64) this.plans.clear();
    this.plans.set(format, plan);
    return plan;
  }

  /** The fields of one call after the call-set prefix: `,"genotype":[0,1],"phaseset":"True"...}`. */
  private callBody(plan: FormatPlan, text: string, k: Keys): string {
    const values = text.split(':');
    let out = '';
    if (plan.gt !== -1 && plan.gt < values.length) {
      const gt = values[plan.gt];
      const alleles = gt.split(/[/|]/);
      out += ',' + k.genotype + '[';
      for (let i = 0; i < alleles.length; i++) {
        const a = alleles[i];
        out += (i ? ',' : '') + alleleText(a);
      }
      out += ']';
      const ps = plan.ps !== -1 && plan.ps < values.length ? values[plan.ps] : '.';
      if (ps !== '.' && ps !== '') out += ',' + k.phaseset + JSON.stringify(ps);
      else if (gt.includes('|')) out += ',' + k.phaseset + '"True"';
    }
    if (plan.likelihood !== -1 && plan.likelihood < values.length) {
      const raw = values[plan.likelihood];
      if (raw !== '.' && raw !== '') {
        const parts = raw.split(',');
        out += ',' + k.genotypeLikelihood + '[';
        for (let i = 0; i < parts.length; i++) {
          const p = parts[i];
          let number: string | undefined;
          if (p === '.') number = '"NaN"';
          else if (plan.likelihoodIsPl) {
            const n = Number(p) / -10;
            number = Number.isFinite(n) ? String(n) : '"NaN"';
          } else number = numberText(p) ?? '"NaN"';
          out += (i ? ',' : '') + number;
        }
        out += ']';
      }
    }
    let attributes = '';
    for (const { index, type } of plan.attributes) {
      if (index >= values.length) continue;
      const entry = attributeEntry(plan.keys[index], values[index], type, k);
      if (entry) attributes += (attributes ? ',' : '') + entry;
    }
    if (attributes) out += ',' + k.attributes + '{' + k.attr + '{' + attributes + '}}';
    return out + '}';
  }

  private infoAttributes(info: string, k: Keys, sv: SvFields): string {
    if (info === '.' || info === '') return '';
    let out = '';
    const seen = new Set<string>();
    for (const item of info.split(';')) {
      if (item === '') continue;
      const eq = item.indexOf('=');
      const key = eq === -1 ? item : item.slice(0, eq);
      const value = eq === -1 ? undefined : item.slice(eq + 1);
      if (seen.has(key)) continue;
      seen.add(key);
      const type = this.types.info.get(key) ?? (eq === -1 ? 'Flag' : 'String');
      const entry = attributeEntry(key, value, eq === -1 ? 'Flag' : type, k);
      if (entry) out += (out ? ',' : '') + entry;
      if (value !== undefined) {
        if (key === 'SVTYPE') sv.type = value;
        else if (key === 'SVLEN') sv.len = value;
        else if (key === 'CIPOS') sv.cipos = value;
        else if (key === 'CIEND') sv.ciend = value;
        else if (key === 'END') sv.end = value;
      }
    }
    return out;
  }

  /** The id of the variant on a line, from the fields that identify it. */
  variantId(referenceName: string, start: number, ref: string, alt: string): string {
    return encodeId([this.datasetName, 'vs', this.setName, referenceName, String(start), alleleDigest(ref, alt)]);
  }

  /**
   * Writes the Variant of a VCF line to `out`. `samples` lists the sample columns to write calls for
   * (in call-set order), or is 'all'.
   */
  write(line: LineBytes, samples: number[] | 'all', form: NamingForm, out: ByteChunks): void {
    const k = KEYS[form];
    const { bytes, lineStart, lineEnd } = line;
    // The ends of the first 9 columns (the 9th, FORMAT, is followed by the samples).
    const cols: number[] = [];
    let at = lineStart - 1;
    for (let i = 0; i < 9; i++) {
      const tab = bytes.indexOf(TAB, at + 1);
      if (tab === -1 || tab >= lineEnd) break;
      cols.push(tab);
      at = tab;
    }
    const field = (i: number) =>
      i <= cols.length ? bytes.toString('utf8', i === 0 ? lineStart : cols[i - 1] + 1, i < cols.length ? cols[i] : lineEnd) : '.';
    const chrom = field(0);
    const start = Number(field(1)) - 1;
    const id = field(2);
    const ref = field(3);
    const alt = field(4);
    const filter = field(6);
    const info = field(7);

    // INFO is read first: its END (structural variants) is the variant's end.
    const sv: SvFields = {};
    const attributes = this.infoAttributes(info, k, sv);
    let text = '{' + k.id + '"' + this.variantId(chrom, start, ref, alt) + '",' + k.variantSetId + this.variantSetIdText;
    // Empty lists are left out of records (wire contract): no names for ID '.', no alternates for ALT '.'.
    if (id !== '.') text += ',' + k.names + JSON.stringify(id.split(';'));
    text += ',' + k.referenceName + JSON.stringify(chrom);
    text += ',' + k.start + start + ',' + k.end + variantEnd(start, ref, sv.end);
    text += ',' + k.referenceBases + JSON.stringify(ref);
    if (alt !== '.') text += ',' + k.alternateBases + JSON.stringify(alt.split(','));
    if (attributes) text += ',' + k.attributes + '{' + k.attr + '{' + attributes + '}}';
    // Calls only when there are some to write (no FORMAT column, no samples or callSetIds [] give none).
    const withCalls = cols.length === 9 && (samples === 'all' ? this.callPrefix[form].length > 0 : samples.length > 0);
    if (withCalls) {
      out.text(text + ',' + k.calls + '[');
      this.calls(line, cols[7], cols[8], samples, form, out);
      text = ']';
    }
    if (sv.type !== undefined) text += ',' + k.variantType + JSON.stringify(sv.type);
    if (sv.len !== undefined) {
      const len = Number.parseInt(sv.len.split(',')[0], 10);
      if (Number.isSafeInteger(len)) text += ',' + k.svlen + len;
    }
    for (const [key, value] of [[k.cipos, sv.cipos], [k.ciend, sv.ciend]] as const) {
      if (value === undefined) continue;
      const bounds = value.split(',').map((v) => Number.parseInt(v, 10));
      if (bounds.length === 2 && bounds.every(Number.isSafeInteger)) text += ',' + key + '[' + bounds.join(',') + ']';
    }
    const applied = filter !== '.' && filter !== '';
    text += ',' + k.filtersApplied + applied;
    if (applied) {
      const passed = filter === 'PASS';
      text += ',' + k.filtersPassed + passed;
      if (!passed) text += ',' + k.filtersFailed + JSON.stringify(filter.split(';'));
    }
    out.text(text + '}');
  }

  /**
   * The calls of one line: its sample columns start after the tab at `formatEnd`. The line is read as
   * bytes and the calls of neighbouring samples with the same short text are copied as one run: on a
   * 2,504-sample GT-only cohort this took the server from ~1.7 M to ~10 M calls/s (no HTTP; the
   * call-by-call writer on strings before, docs/performance.md, "Variant pages").
   */
  private calls(line: LineBytes, formatStart: number, formatEnd: number, samples: number[] | 'all', form: NamingForm, out: ByteChunks): void {
    const { bytes, lineEnd } = line;
    const plan = this.planFor(bytes.toString('utf8', formatStart + 1, formatEnd));
    const k = KEYS[form];
    const prefix = this.callPrefix[form];
    const all = samples === 'all';
    if (all && this.patchedCalls(line, formatEnd, plan, form, k, out)) return;
    const last = all ? prefix.length - 1 : samples[samples.length - 1];
    let first = true;
    // The run being gathered: samples [runFrom, runTo) all have the column text `runKey`.
    let run: CallRun | undefined;
    let runKey = -1;
    let runFrom = 0;
    let runTo = 0;
    // Walk the sample columns once, left to right, writing the requested ones.
    let columnStart = formatEnd + 1;
    let sample = 0;
    let wanted = 0;
    while (sample <= last && columnStart <= lineEnd) {
      // The common case first: a 3-byte text (a diploid GT: "0|0") whose key is the run's, of the
      // sample after it, ends the same run one sample further, with no scan for the tab.
      if (
        run !== undefined &&
        sample === runTo &&
        runKey === ((bytes[columnStart] * 256 + bytes[columnStart + 1]) * 256 + bytes[columnStart + 2]) * 8 + 3
      ) {
        const end = columnStart + 3;
        if ((end === lineEnd || (end < lineEnd && bytes[end] === TAB)) && (all || samples[wanted] === sample)) {
          wanted++;
          runTo++;
          sample++;
          columnStart = end + 1;
          continue;
        }
      }
      // Find the column's end, packing its first 4 bytes into a number on the way.
      let columnEnd = columnStart;
      let key = 0;
      for (let b = bytes[columnEnd]; columnEnd < lineEnd && b !== TAB; b = bytes[++columnEnd]) {
        if (columnEnd - columnStart < 4) key = key * 256 + b;
      }
      if (all || samples[wanted] === sample) {
        wanted++;
        const length = columnEnd - columnStart;
        key = key * 8 + length; // with the length, texts of different lengths never share a key (< 2^35)
        if (length <= 4 && run !== undefined && key === runKey && sample === runTo) {
          runTo++; // the common case: the same genotype as the neighbour, one comparison
        } else {
          if (run !== undefined) {
            out.bytes(run.bytes, run.offsets[runFrom] + (first ? 1 : 0), run.offsets[runTo]);
            first = false;
          }
          run = length <= 4 ? this.runFor(plan, form, key, bytes, columnStart, columnEnd) : undefined;
          if (run !== undefined) {
            runKey = key;
            runFrom = sample;
            runTo = sample + 1;
          } else {
            const body = this.bodyFor(plan, form, k, key, length, bytes, columnStart, columnEnd);
            out.text((first ? '' : ',') + prefix[sample] + body);
            first = false;
          }
        }
      }
      sample++;
      columnStart = columnEnd + 1;
    }
    if (run !== undefined) out.bytes(run.bytes, run.offsets[runFrom] + (first ? 1 : 0), run.offsets[runTo]);
  }

  /**
   * Every call of a line whose sample columns are all short texts, most of them the first sample's
   * (a genotype-only cohort): the first sample's run of calls is copied whole, in one piece, and the
   * calls of the other texts are patched in place, since their JSON differs from it in a few bytes
   * and not in length (`0|1` against `0|0`: one digit of the genotype). A copy per change of text
   * cost ~100 ns each (making the view to copy from, then the copy), and two thirds of P1's copies
   * were of a single call. False, having written nothing, when the line is not such a line: it is
   * then written run by run.
   */
  private patchedCalls(line: LineBytes, formatEnd: number, plan: FormatPlan, form: NamingForm, k: Keys, out: ByteChunks): boolean {
    const { bytes, lineEnd } = line;
    const samples = this.callPrefix[form].length;
    // The first sample's column: the line's text. Its run is built by the run-by-run path, which
    // counts the uses of each text; this path only takes it once it is there.
    const baseStart = formatEnd + 1;
    const baseKey = shortTextKey(bytes, baseStart, lineEnd);
    const base = baseKey > 0 ? plan.runs[form].get(baseKey) : undefined;
    // At most a chunk, so that the copy lies in at most two buffers (see overwrite).
    if (samples === 0 || base === undefined || base.offsets[samples] > out.chunkSize) return false;
    const byBase = plan.patches[form];
    let table = byBase.get(baseKey);
    // A new table when a line text is new, or when its table holds the patches of too many other texts
    // (short texts of another field, e.g. GT:DP "0:12", can be many); never in the middle of a line.
    if (table === undefined || table.byText.size >= USES_LIMIT) {
      if (byBase.size >= USES_LIMIT) byBase.clear();
      table = new PatchTable();
      byBase.set(baseKey, table);
    }
    const baseLength = baseKey % 8;
    // The columns that are not the line's text, with their patches where the table has them (in C
    // where the module is built, call-scan.ts).
    const found = this.foundColumns;
    const count = findPatches(bytes, baseStart, baseLength, lineEnd, samples, table, found);
    if (count < 0) return false; // fewer columns than samples, a text longer than 4 bytes, or one that cannot be patched
    if (found[found.length - 1] > 0 && !this.workOutPatches(plan, form, k, baseKey, bytes, baseStart, lineEnd, table, found, count)) return false;
    const lineStart = out.total;
    out.bytes(base.bytes, base.offsets[0] + 1, base.offsets[samples]); // the first call without its comma
    // Where the call ends (in the reply, or in the buffer being written when the whole line lies there,
    // as it mostly does); a patch gives its bytes by their distance from the end.
    const shift = out.total - out.writeAt;
    if (lineStart >= shift) {
      applyPatches(out.current, lineStart - shift, base.offsets, found, count, table.pool);
      return true;
    }
    applyPatchesBy((position, byte) => out.overwrite(position, byte), lineStart, base.offsets, found, count, table.pool);
    return true;
  }

  /**
   * Works out the patches the table did not have for the columns of `found` (their entry is -1 - the
   * column's start), keeps them in the table and puts them in `found`; false when one cannot be patched.
   */
  private workOutPatches(plan: FormatPlan, form: NamingForm, k: Keys, baseKey: number, bytes: Buffer, baseStart: number, lineEnd: number, table: PatchTable, found: Int32Array, count: number): boolean {
    for (let i = 0; i < count; i++) {
      if (found[2 * i + 1] >= 0) continue;
      const start = -1 - found[2 * i + 1];
      const key = shortTextKey(bytes, start, lineEnd);
      let patch = table.byText.get(key);
      if (patch === undefined) {
        patch = table.add(this.patchOf(plan, form, k, baseKey, key, bytes, baseStart, start, start + (key % 8)));
        table.byText.set(key, patch);
      }
      const slot = start + 4 <= lineEnd ? diploidSlot(bytes.readUInt32LE(start)) : -1;
      if (slot >= 0) table.slots[slot] = patch;
      if (patch === UNPATCHABLE) return false;
      found[2 * i + 1] = patch;
    }
    return true;
  }

  /**
   * How the calls of the column text `key` differ from those of `baseKey`, as pairs (distance from the
   * call's end, byte); null when their lengths differ. A call ends with its body, and only the body
   * depends on the text, so the pairs are the same for every sample.
   */
  private patchOf(plan: FormatPlan, form: NamingForm, k: Keys, baseKey: number, key: number, bytes: Buffer, baseStart: number, from: number, to: number): Int32Array | null {
    const baseLength = baseKey % 8;
    const base = Buffer.from(this.bodyFor(plan, form, k, baseKey, baseLength, bytes, baseStart, baseStart + baseLength));
    const body = Buffer.from(this.bodyFor(plan, form, k, key, to - from, bytes, from, to));
    if (body.length !== base.length) return null;
    const pairs: number[] = [];
    for (let i = 0; i < body.length; i++) if (body[i] !== base[i]) pairs.push(body.length - i, body[i]);
    return Int32Array.from(pairs);
  }

  /** The call body for one column text, from the caches when it was seen before. */
  private bodyFor(plan: FormatPlan, form: NamingForm, k: Keys, key: number, length: number, bytes: Buffer, from: number, to: number): string {
    let body: string | undefined;
    if (length <= 4) {
      const shortCache = plan.shortCache[form];
      body = shortCache.get(key);
      if (body === undefined) {
        body = this.callBody(plan, bytes.toString('utf8', from, to), k);
        shortCache.set(key, body);
      }
      return body;
    }
    const cache = plan.cache[form];
    const text = bytes.toString('utf8', from, to);
    body = cache.get(text);
    if (body === undefined) {
      body = this.callBody(plan, text, k);
      if (text.length <= BODY_CACHE_TEXT && cache.size < BODY_CACHE_LIMIT) cache.set(text, body);
    }
    return body;
  }

  /** The run of a short column text, once the text has been written call by call `runAfter` times; else undefined. */
  private runFor(plan: FormatPlan, form: NamingForm, key: number, bytes: Buffer, from: number, to: number): CallRun | undefined {
    const runs = plan.runs[form];
    const run = runs.get(key);
    if (run !== undefined) return run;
    const prefix = this.callPrefix[form];
    const uses = plan.uses[form];
    const count = (uses.get(key) ?? 0) + 1;
    if (count <= this.runAfter) {
      if (uses.size >= USES_LIMIT) uses.clear();
      uses.set(key, count);
      return undefined;
    }
    uses.delete(key);
    const body = this.bodyFor(plan, form, KEYS[form], key, to - from, bytes, from, to);
    const offsets = new Int32Array(prefix.length + 1);
    const pieces: string[] = [];
    let size = 0;
    for (let i = 0; i < prefix.length; i++) {
      const piece = ',' + prefix[i] + body;
      offsets[i] = size;
      size += Buffer.byteLength(piece);
      pieces.push(piece);
    }
    offsets[prefix.length] = size;
    const text = Buffer.from(pieces.join(''), 'utf8');
    const built = { bytes: new Uint8Array(text.buffer, text.byteOffset, text.length), offsets };
    rememberRun(runs, key, built);
    return built;
  }
}
