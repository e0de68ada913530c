/**
 * BAM indexes (.bai and .csi), read here rather than through @gmod/bam: besides the chunks of a region,
 * the reads area needs what that library does not expose, the per-reference mapped and unmapped
 * counts of the pseudo-bins, the count of reads without a position, and where those reads begin.
 * Both formats are small binary tables; a .csi is BGZF-compressed.
 */
import { gunzipSync } from 'node:zlib';
import type { GenericFilehandle } from 'generic-filehandle2';
import type { VirtualOffset } from '../variants/bgzf.js';

/** A virtual offset as one number (compressed offset * 2^16 + offset in the block): exact below 2^53. */
export type PackedOffset = number;

export const packOffset = (v: VirtualOffset): PackedOffset => v.blockPosition * 65536 + v.dataPosition;
export const unpackOffset = (p: PackedOffset): VirtualOffset => ({ blockPosition: Math.floor(p / 65536), dataPosition: p % 65536 });

interface Chunk {
  begin: PackedOffset;
  end: PackedOffset;
}

interface ReferenceIndex {
  bins: Map<number, Chunk[]>;
  /** BAI: the smallest offset of a record overlapping each 16 kb window. */
  linear: PackedOffset[];
  /** CSI: the smallest offset of a record in each bin. */
  binOffsets: Map<number, PackedOffset>;
  mapped?: number;
  unmapped?: number;
  /** Where this reference's records end (pseudo-bin), or the largest chunk end. */
  lastEnd: PackedOffset;
}

export interface IndexStats {
  /** Per reference of the BAM header (by its position there): mapped and placed-unmapped reads. */
  perReference: Array<{ mapped: number; unmapped: number } | undefined>;
  /** Reads without a position, at the end of the file (absent in old indexes). */
  noCoordinate?: number;
}

function readOffset(view: DataView, at: number): PackedOffset {
  const low = view.getUint32(at, true);
  const high = view.getUint32(at + 4, true);
  return high * 2 ** 32 + low;
}

function readCount(view: DataView, at: number): number {
  return view.getUint32(at + 4, true) * 2 ** 32 + view.getUint32(at, true);
}

export class BamIndex {
  private constructor(
    readonly kind: 'bai' | 'csi',
    private readonly minShift: number,
    private readonly depth: number,
    private readonly references: ReferenceIndex[],
    private readonly noCoordinate: number | undefined,
  ) {}

  static async open(file: GenericFilehandle, kind: 'bai' | 'csi', source: string): Promise<BamIndex> {
    const raw = await file.readFile();
    const bytes = kind === 'csi' ? gunzipSync(raw) : Buffer.from(raw.buffer, raw.byteOffset, raw.length);
    return BamIndex.parse(bytes, kind, source);
  }

  static parse(bytes: Buffer, kind: 'bai' | 'csi', source: string): BamIndex {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const fail = (why: string) => new Error(`${source} is not a valid ${kind === 'bai' ? 'BAI' : 'CSI'} index (${why})`);
    const need = (at: number, n: number) => {
      if (at + n > bytes.length) throw fail('it ends early');
    };
    need(0, 8);
    const magic = bytes.toString('latin1', 0, 4);
    if (magic !== (kind === 'bai' ? 'BAI\x01' : 'CSI\x01')) throw fail('wrong magic number');
    let at = 4;
    let minShift = 14;
    let depth = 5;
    if (kind === 'csi') {
      need(at, 12);
      minShift = view.getInt32(at, true);
      depth = view.getInt32(at + 4, true);
      const auxLength = view.getInt32(at + 8, true);
      at += 12 + auxLength;
    }
    need(at, 4);
    const pseudoBin = ((1 << ((depth + 1) * 3)) - 1) / 7 + 1;
    const referenceCount = view.getInt32(at, true);
    at += 4;
    const references: ReferenceIndex[] = [];
    for (let r = 0; r < referenceCount; r++) {
      need(at, 4);
      const binCount = view.getInt32(at, true);
      at += 4;
      const ref: ReferenceIndex = { bins: new Map(), linear: [], binOffsets: new Map(), lastEnd: 0 };
      for (let b = 0; b < binCount; b++) {
        need(at, kind === 'csi' ? 16 : 8);
        const bin = view.getUint32(at, true);
        at += 4;
        if (kind === 'csi') {
          ref.binOffsets.set(bin, readOffset(view, at));
          at += 8;
        }
        const chunkCount = view.getInt32(at, true);
        at += 4;
        need(at, chunkCount * 16);
        if (bin === pseudoBin) {
          ref.lastEnd = Math.max(ref.lastEnd, readOffset(view, at + 8));
          ref.mapped = readCount(view, at + 16);
          ref.unmapped = readCount(view, at + 24);
        } else {
          const chunks: Chunk[] = [];
          for (let c = 0; c < chunkCount; c++) {
            const chunk = { begin: readOffset(view, at + c * 16), end: readOffset(view, at + c * 16 + 8) };
            chunks.push(chunk);
            if (chunk.end > ref.lastEnd) ref.lastEnd = chunk.end;
          }
          ref.bins.set(bin, chunks);
        }
        at += chunkCount * 16;
      }
      if (kind === 'bai') {
        need(at, 4);
        const windows = view.getInt32(at, true);
        at += 4;
        need(at, windows * 8);
        for (let w = 0; w < windows; w++) ref.linear.push(readOffset(view, at + w * 8));
        at += windows * 8;
      }
      references.push(ref);
    }
    const noCoordinate = at + 8 <= bytes.length ? readCount(view, at) : undefined;
    return new BamIndex(kind, minShift, depth, references, noCoordinate);
  }

  get referenceCount(): number {
    return this.references.length;
  }

  stats(): IndexStats {
    return {
      perReference: this.references.map((r) => (r.mapped === undefined ? undefined : { mapped: r.mapped, unmapped: r.unmapped ?? 0 })),
      noCoordinate: this.noCoordinate,
    };
  }

  /** The bins that may hold records overlapping [start, end), with the level's first bin number. */
  private binsOverlapping(start: number, end: number): number[] {
    const bins: number[] = [];
    const limit = 2 ** (this.minShift + this.depth * 3); // the largest position the index can address
    start = Math.min(start, limit - 1);
    const last = Math.max(start, Math.min(end, limit) - 1);
    let levelFirst = 0;
    for (let level = 0, shift = this.minShift + this.depth * 3; level <= this.depth; level++, shift -= 3) {
      const from = levelFirst + Math.floor(start / 2 ** shift);
      const to = levelFirst + Math.floor(last / 2 ** shift);
      for (let b = from; b <= to; b++) bins.push(b);
      levelFirst += 1 << (level * 3);
    }
    return bins;
  }

  /**
   * Where to start reading for records of reference `refId` overlapping [start, end): every such record
   * lies at or after this offset (records of the reference are sorted by position), or undefined when
   * the index knows of none.
   */
  startOf(refId: number, start: number, end: number): PackedOffset | undefined {
    const ref = this.references[refId];
    if (!ref) return undefined;
    let floor = 0;
    if (this.kind === 'bai') {
      // No record overlapping the 16 kb window of `start` lies before its linear-index entry.
      floor = ref.linear[Math.floor(start / 2 ** 14)] ?? 0;
    }
    let best: PackedOffset | undefined;
    for (const bin of this.binsOverlapping(start, end)) {
      const chunks = ref.bins.get(bin);
      if (!chunks) continue;
      for (const chunk of chunks) {
        if (chunk.end <= floor) continue;
        const begin = Math.max(chunk.begin, floor);
        if (best === undefined || begin < best) best = begin;
      }
    }
    return best;
  }

  /** Where the reads without a position begin: after every record of every reference. */
  unplacedStart(): PackedOffset {
    let end = 0;
    for (const ref of this.references) if (ref.lastEnd > end) end = ref.lastEnd;
    return end;
  }
}
