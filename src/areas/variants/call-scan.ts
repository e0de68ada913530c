/**
 * The sample scan of the variant writer's patched lines (variant-writer.ts, patchedCalls): which
 * sample columns of a line are not the first sample's text. In a genotype-only cohort that is a few
 * columns of thousands, and the scan passes over every column of every line, so it runs in C
 * (native/call-scan.c) where the module is built; this file's loop does the same where it is not.
 */
import { nativeModule } from '../../native.js';

interface NativeCallScan {
  /** INTERFACE_VERSION of the C file the module was built from. */
  interfaceVersion: number;
  scan(bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, found: Int32Array): number;
}

/** The interface of native/call-scan.c this file was written against (its INTERFACE_VERSION). */
const NATIVE_INTERFACE_VERSION = 1;

const native = nativeModule<NativeCallScan>('call_scan', NATIVE_INTERFACE_VERSION, 'GA4GH_NATIVE_SCAN');
/** Whether the scan runs in C (for tests that hold both ways to the same answers). */
export const nativeScan = native !== undefined;

const TAB = 9;

/**
 * The sample columns of a tab-separated line from the second on, the first sample's text being
 * `bytes[baseStart, baseStart + baseLength)` (at most 4 bytes) and the line ending at `lineEnd`:
 * every column whose text differs from it goes into `found` as [sample, start] (room for `samples`
 * pairs). Returns how many, -1 when the line has fewer columns than `samples`, -2 when a column
 * longer than 4 bytes comes first.
 */
export function scanColumns(bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, found: Int32Array): number {
  if (native) return native.scan(bytes, baseStart, baseLength, lineEnd, samples, found);
  return scanInScript(bytes, baseStart, baseLength, lineEnd, samples, found);
}

/** scanColumns without the native module (exported for its tests). */
export function scanInScript(bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, found: Int32Array): number {
  // A 3-byte text and the tab after it, as one number: one load and one comparison per column in the
  // common case (a genotype like "0|0"), instead of four of each.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const column = baseLength === 3 ? (bytes[baseStart] | (bytes[baseStart + 1] << 8) | (bytes[baseStart + 2] << 16) | (TAB << 24)) >>> 0 : -1;
  let count = 0;
  let end = baseStart + baseLength;
  for (let sample = 1; sample < samples; sample++) {
    const start = end + 1;
    if (start > lineEnd) return -1;
    if (start + 4 <= lineEnd && view.getUint32(start, true) === column) {
      end = start + 3;
      continue;
    }
    let columnEnd = start;
    while (columnEnd < lineEnd && bytes[columnEnd] !== TAB && columnEnd - start <= 4) columnEnd++;
    if (columnEnd - start > 4) return -2;
    end = columnEnd;
    if (columnEnd - start === baseLength && sameBytes(bytes, start, baseStart, baseLength)) continue;
    found[2 * count] = sample;
    found[2 * count + 1] = start;
    count++;
  }
  return count;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}
