/**
 * bigWig files, read in place (local or by HTTP range) with @gmod/bbi: what kind of file a path holds,
 * its sequences, and the runs of values over a window that become Continuous records.
 */
import { BigWig } from '@gmod/bbi';
import { openFile } from '../../files.js';

/** The first four bytes of a bigWig file, read as a little- or big-endian integer. */
const BIGWIG_MAGIC = 0x888ffc26;
const BIGBED_MAGIC = 0x8789f2eb;

export type FileKind = 'bigWig' | 'bigBed' | 'wiggle' | 'bedGraph' | 'other';

/** Tells a bigWig from the text formats it is made from (and from bigBed), by its first bytes. */
export async function fileKind(location: string): Promise<FileKind> {
  const head = Buffer.from(await openFile(location).read(4096, 0));
  if (head.length >= 4) {
    const little = head.readUInt32LE(0);
    const big = head.readUInt32BE(0);
    if (little === BIGWIG_MAGIC || big === BIGWIG_MAGIC) return 'bigWig';
    if (little === BIGBED_MAGIC || big === BIGBED_MAGIC) return 'bigBed';
  }
  const text = head.toString('latin1');
  if (/[\x00-\x08\x0e-\x1f]/.test(text)) return 'other';
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#') && !l.startsWith('browser'));
  if (lines.some((l) => /^(variableStep|fixedStep)\b/.test(l))) return 'wiggle';
  // The last line may be cut off where the 4,096 bytes end.
  const data = lines.filter((l) => !l.startsWith('track')).slice(0, head.length === 4096 ? -1 : undefined);
  if (data.length && data.every((l) => /^\S+\s+\d+\s+\d+\s+\S+\s*$/.test(l))) return 'bedGraph';
  if (lines.length && lines[0].startsWith('track') && /type=wiggle/.test(lines[0])) return 'wiggle';
  return 'other';
}

export interface BigWigFile {
  /** Sequence name -> length, from the file's chromosome tree. */
  sequences: Map<string, number>;
  reader: BigWig;
  /** Bytes. */
  size: number;
}

/**
 * Opens a bigWig and reads its header. With `expectedSize` (the size at registration), a file of another
 * size is refused: a bigWig cut short reads as one with fewer values, not as an error, so the size is
 * what tells a damaged or replaced file from the one registered.
 */
export async function openBigWig(location: string, expectedSize?: number): Promise<BigWigFile> {
  const handle = openFile(location);
  const { size } = await handle.stat();
  if (expectedSize !== undefined && size !== expectedSize) {
    throw new Error(`the file is ${size} bytes long, ${expectedSize} when it was registered`);
  }
  const reader = new BigWig({ filehandle: handle });
  const header = await reader.getHeader();
  if (header.unzoomedIndexOffset >= size || header.unzoomedDataOffset >= size) throw new Error('the file ends before its data index');
  return { reader, size, sequences: new Map(Object.values(header.refsByNumber).map((r) => [r.name, r.length])) };
}

/**
 * The value as written: bigWig stores float32, whose exact double (0.10000000149011612) is not what the
 * file's source said; the shortest decimal that is the same float32 (0.1) is.
 */
export function float32Value(v: number): number {
  if (Number.isInteger(v) || !Number.isFinite(v)) return v;
  for (let digits = 6; digits < 9; digits++) {
    const shorter = Number(v.toPrecision(digits));
    if (Math.fround(shorter) === v) return shorter;
  }
  return v;
}

export interface Run {
  start: number;
  values: number[];
}

/**
 * Runs of consecutive bases with values over [from, to): a base without a value (a gap between
 * intervals, or NaN) ends a run, and no run is longer than `maxValues`, so a record stays bounded.
 * Runs start at `from` or at the first base after a gap, then every `maxValues` bases: the same runs
 * whichever record boundary a page resumes from. Stops once `wanted` runs are complete (the last one
 * complete means its end is known), reading the file a window at a time.
 */
export async function readRuns(
  file: BigWigFile,
  referenceName: string,
  from: number,
  to: number,
  maxValues: number,
  wanted: number,
): Promise<Run[]> {
  const runs: Run[] = [];
  let open: Run | undefined;
  let openEnd = 0;
  let window = Math.max(maxValues * wanted, 65_536);
  let cursor = from;
  while (cursor < to && runs.length < wanted) {
    const windowEnd = Math.min(to, cursor + window);
    const { starts, ends, scores } = await file.reader.getFeaturesAsArrays(referenceName, cursor, windowEnd);
    let sawAny = false;
    for (let i = 0; i < starts.length && runs.length < wanted; i++) {
      const score = scores[i];
      if (Number.isNaN(score)) continue;
      let s = Math.max(starts[i], cursor);
      const e = Math.min(ends[i], windowEnd);
      if (e <= s) continue;
      sawAny = true;
      const value = float32Value(score);
      while (s < e && runs.length < wanted) {
        if (open && (s !== openEnd || open.values.length >= maxValues)) {
          runs.push(open);
          open = undefined;
          if (runs.length >= wanted) break;
        }
        if (!open) {
          open = { start: s, values: [] };
          openEnd = s;
        }
        const take = Math.min(e - s, maxValues - open.values.length);
        for (let k = 0; k < take; k++) open.values.push(value);
        s += take;
        openEnd = s;
      }
      cursor = Math.max(cursor, e);
    }
    cursor = windowEnd;
    // Sparse stretches: read further at a time.
    if (!sawAny) window *= 4;
  }
  if (open && runs.length < wanted) runs.push(open);
  return runs;
}
