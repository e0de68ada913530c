/**
 * The patched lines of the variant writer (variant-writer.ts, patchedCalls): which sample columns of a
 * line are not the first sample's text, and the patching of their calls into the copy of that text's
 * run. In a genotype-only cohort that is a few hundred columns of thousands, and the scan passes over
 * every column of every line, so both run in C (native/call-scan.c) where the module is built; the
 * functions of this file do the same where it is not.
 */
import { nativeModule } from '../../native.js';

interface NativeCallScan {
  /** INTERFACE_VERSION of the C file the module was built from. */
  interfaceVersion: number;
  find(bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, slots: Int32Array, found: Int32Array): number;
  apply(buffer: Uint8Array, at: number, offsets: Int32Array, found: Int32Array, count: number, pool: Int32Array): void;
}

/** The interface of native/call-scan.c this file was written against (its INTERFACE_VERSION). */
const NATIVE_INTERFACE_VERSION = 2;

const native = nativeModule<NativeCallScan>('call_scan', NATIVE_INTERFACE_VERSION, 'GA4GH_NATIVE_SCAN');
/** Whether the scan runs in C (for tests that hold both ways to the same answers). */
export const nativeScan = native !== undefined;

const TAB = 9;
/** Slots of diploidSlot: two alleles of 0-9, phased or not. */
const DIPLOID_SLOTS = 200;
/** A table entry for a text whose patch is not worked out yet. */
const UNKNOWN = -1;
/** A table entry for a text whose calls cannot be patched into the line text's (their lengths differ). */
export const UNPATCHABLE = -2;

/**
 * The slot of a column text of 3 bytes and the tab after it, read as one little-endian 32-bit `word`,
 * when the text is a diploid genotype of one-digit alleles; else -1.
 */
export function diploidSlot(word: number): number {
  if (word >>> 24 !== TAB) return -1;
  const first = (word & 255) - 48;
  const separator = (word >>> 8) & 255;
  const second = ((word >>> 16) & 255) - 48;
  if (first < 0 || first > 9 || second < 0 || second > 9 || (separator !== 124 && separator !== 47)) return -1;
  return (first * 10 + second) * 2 + (separator === 124 ? 1 : 0);
}

/**
 * How the calls of other texts differ from those of one line text, as the scan reads them: each patch
 * lies in `pool` (its number of pairs, then the pairs: distance from the call's end, byte), found by
 * the other text's diploid slot (most texts that differ from the line's are diploid genotypes such as
 * "0|1", and an array read is cheaper than a map's) or by its packed key.
 */
export class PatchTable {
  /** Per diploid slot: the pool index of its patch, UNKNOWN or UNPATCHABLE. */
  readonly slots = new Int32Array(DIPLOID_SLOTS).fill(UNKNOWN);
  /** By the other text's packed key: the pool index of its patch, or UNPATCHABLE. */
  readonly byText = new Map<number, number>();
  pool = new Int32Array(64);
  private poolLength = 0;

  /** Keeps a patch (pairs of distance from the call's end and byte; null: unpatchable) and returns its entry. */
  add(pairs: Int32Array | null): number {
    if (pairs === null) return UNPATCHABLE;
    const at = this.poolLength;
    const need = at + 1 + pairs.length;
    if (need > this.pool.length) {
      const grown = new Int32Array(Math.max(need, 2 * this.pool.length));
      grown.set(this.pool.subarray(0, at));
      this.pool = grown;
    }
    this.pool[at] = pairs.length / 2;
    this.pool.set(pairs, at + 1);
    this.poolLength = need;
    return at;
  }
}

/**
 * The sample columns of a tab-separated line from the second on, the first sample's text being
 * `bytes[baseStart, baseStart + baseLength)` (at most 4 bytes) and the line ending at `lineEnd`: every
 * column whose text differs from it goes into `found` as [sample, patch], the patch being the table's
 * entry for its diploid slot when known, else -1 - the column's start (for the caller to work out).
 * `found` has room for `samples` pairs and one number more, where the count of columns waiting for
 * the caller goes. Returns how many columns, -1 when the line has fewer columns than `samples`, -2
 * when a column longer than 4 bytes comes first, -3 when a column's text cannot be patched.
 */
export function findPatches(bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, table: PatchTable, found: Int32Array): number {
  if (native) return native.find(bytes, baseStart, baseLength, lineEnd, samples, table.slots, found);
  return findInScript(bytes, baseStart, baseLength, lineEnd, samples, table, found);
}

/** findPatches without the native module (exported for its tests). */
export function findInScript(bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, table: PatchTable, found: Int32Array): number {
  const slots = table.slots;
  // A 3-byte text and the tab after it, as one number: one load and one comparison per column in the
  // common case (a genotype like "0|0"), instead of four of each.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const column = baseLength === 3 ? (bytes[baseStart] | (bytes[baseStart + 1] << 8) | (bytes[baseStart + 2] << 16) | (TAB << 24)) >>> 0 : -1;
  let count = 0;
  let waiting = 0;
  let end = baseStart + baseLength;
  found[found.length - 1] = 0;
  for (let sample = 1; sample < samples; sample++) {
    const start = end + 1;
    if (start > lineEnd) return -1;
    let slot = -1;
    if (start + 4 <= lineEnd) {
      const word = view.getUint32(start, true);
      if (word === column) {
        end = start + 3;
        continue;
      }
      slot = diploidSlot(word);
    }
    if (slot >= 0) {
      end = start + 3;
      const patch = slots[slot];
      if (patch === UNPATCHABLE) return -3;
      found[2 * count] = sample;
      found[2 * count + 1] = patch >= 0 ? patch : -1 - start;
      if (patch < 0) waiting++;
      count++;
      continue;
    }
    let columnEnd = start;
    while (columnEnd < lineEnd && bytes[columnEnd] !== TAB && columnEnd - start <= 4) columnEnd++;
    if (columnEnd - start > 4) return -2;
    end = columnEnd;
    if (columnEnd - start === baseLength && sameBytes(bytes, start, baseStart, baseLength)) continue;
    found[2 * count] = sample;
    found[2 * count + 1] = -1 - start;
    waiting++;
    count++;
  }
  found[found.length - 1] = waiting;
  return count;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/**
 * Patches the calls of the first `count` columns of `found` (each [sample, patch], every patch worked
 * out) in a line's run of calls copied to `buffer` from `at` on, without its first comma: the call of
 * sample s ends before `at + offsets[s + 1] - 1`.
 */
export function applyPatches(buffer: Uint8Array, at: number, offsets: Int32Array, found: Int32Array, count: number, pool: Int32Array): void {
  if (native) return native.apply(buffer, at, offsets, found, count, pool);
  applyPatchesBy((position, byte) => (buffer[position] = byte), at, offsets, found, count, pool);
}

/** The same, each patched byte given to `put` (a run copied across two buffers, or no native module). */
export function applyPatchesBy(put: (position: number, byte: number) => void, at: number, offsets: Int32Array, found: Int32Array, count: number, pool: Int32Array): void {
  for (let i = 0; i < count; i++) {
    const callEnd = at + offsets[found[2 * i] + 1] - 1;
    const patch = found[2 * i + 1];
    for (let j = 0, pairs = pool[patch]; j < pairs; j++) put(callEnd - pool[patch + 1 + 2 * j], pool[patch + 2 + 2 * j]);
  }
}
