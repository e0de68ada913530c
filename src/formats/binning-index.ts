/**
 * Binning indexes: BAM's .bai, the .csi of BAM and BCF (and of VCF, with tabix's names), and tabix's
 * .tbi. One reader for all of them, below the areas and the interfaces that use it: the reads area
 * starts its pages where the index says, and the htsget tickets are the chunks of a region, cut from
 * the file. Read here rather than through @gmod/bam or @gmod/tabix: besides the chunks of a region,
 * the reads area needs what those libraries do not expose (the per-reference mapped and unmapped
 * counts of the pseudo-bins, the count of reads without a position, and where those reads begin), and
 * a BCF's .csi names its references only through the BCF header, which @gmod/tabix cannot take. Each
 * format is a small binary table; a .csi and a .tbi are BGZF-compressed.
 */
import { gunzipSync } from 'node:zlib';
import type { GenericFilehandle } from 'generic-filehandle2';
import type { VirtualOffset } from './bgzf.js';

export type IndexKind = 'bai' | 'csi' | 'tbi';

/** A virtual offset as one number (compressed offset * 2^16 + offset in the block): exact below 2^53. */
export type PackedOffset = number;

export const packOffset = (v: VirtualOffset): PackedOffset => v.blockPosition * 65536 + v.dataPosition;
export const unpackOffset = (p: PackedOffset): VirtualOffset => ({ blockPosition: Math.floor(p / 65536), dataPosition: p % 65536 });

/** A run of the file holding records of a bin: from `begin` up to, not including, `end`. */
export interface Chunk {
  begin: PackedOffset;
  end: PackedOffset;
}

interface ReferenceIndex {
  bins: Map<number, Chunk[]>;
  /** BAI and TBI: the smallest offset of a record overlapping each 16 kb window. */
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

/**
 * Chunks in file order, those that overlap or touch joined into one: each byte of the file once. With
 * `gap`, also those that begin within `gap` compressed bytes after the last one ends (the records
 * between are taken along).
 */
export function joinChunks(chunks: Chunk[], gap = 0): Chunk[] {
  const runs: Chunk[] = [];
  for (const chunk of [...chunks].sort((a, b) => a.begin - b.begin)) {
    const last = runs[runs.length - 1];
    if (last && (chunk.begin <= last.end || unpackOffset(chunk.begin).blockPosition - unpackOffset(last.end).blockPosition <= gap)) last.end = Math.max(last.end, chunk.end);
    else runs.push({ ...chunk });
  }
  return runs;
}

/** Tabix's reference names (a .tbi's header, a .csi's auxiliary data): `length` bytes of NUL-ended names at `at`. */
function namesAt(bytes: Buffer, at: number, length: number): string[] {
  return bytes.toString('utf8', at, at + length).split('\0').slice(0, -1);
}

/** The magic number each kind of index begins with. */
const MAGIC: Record<IndexKind, string> = { bai: 'BAI\x01', csi: 'CSI\x01', tbi: 'TBI\x01' };

/** Tabix's header fields before the names (format, three column numbers, meta character, skip), then the names' length. */
const TABIX_FIELDS = 28;

export class BinningIndex {
  private constructor(
    readonly kind: IndexKind,
    private readonly minShift: number,
    private readonly depth: number,
    private readonly references: ReferenceIndex[],
    private readonly noCoordinate: number | undefined,
    /** The references by their number, when the index itself names them (tabix's .tbi and .csi). */
    readonly names: string[] | undefined,
  ) {}

  static async open(file: GenericFilehandle, kind: IndexKind, source: string): Promise<BinningIndex> {
    const raw = await file.readFile();
    const bytes = kind === 'bai' ? Buffer.from(raw.buffer, raw.byteOffset, raw.length) : gunzipSync(raw);
    return BinningIndex.parse(bytes, kind, source);
  }

  static parse(bytes: Buffer, kind: IndexKind, source: string): BinningIndex {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const fail = (why: string) => new Error(`${source} is not a valid ${kind.toUpperCase()} index (${why})`);
    const need = (at: number, n: number) => {
      if (at + n > bytes.length) throw fail('it ends early');
    };
    need(0, 8);
    if (bytes.toString('latin1', 0, 4) !== MAGIC[kind]) throw fail('wrong magic number');
    let at = 4;
    let minShift = 14;
    let depth = 5;
    let names: string[] | undefined;
    let referenceCount: number;
    if (kind === 'tbi') {
      need(at, 4 + TABIX_FIELDS);
      referenceCount = view.getInt32(at, true);
      const namesLength = view.getInt32(at + TABIX_FIELDS, true);
      need(at + 4 + TABIX_FIELDS, namesLength);
      names = namesAt(bytes, at + 4 + TABIX_FIELDS, namesLength);
      at += 4 + TABIX_FIELDS + namesLength;
    } else {
      if (kind === 'csi') {
        need(at, 12);
        minShift = view.getInt32(at, true);
        depth = view.getInt32(at + 4, true);
        const auxLength = view.getInt32(at + 8, true);
        need(at + 12, auxLength);
        // A tabix .csi carries tabix's header as auxiliary data; a BAM's or BCF's carries none.
        if (auxLength >= TABIX_FIELDS) names = namesAt(bytes, at + 12 + TABIX_FIELDS, view.getInt32(at + 12 + TABIX_FIELDS - 4, true));
        at += 12 + auxLength;
      }
      need(at, 4);
      referenceCount = view.getInt32(at, true);
      at += 4;
    }
    const pseudoBin = ((1 << ((depth + 1) * 3)) - 1) / 7 + 1;
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
      if (kind !== 'csi') {
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
    return new BinningIndex(kind, minShift, depth, references, noCoordinate, names);
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
   * The runs of the file that hold every record of reference `refId` overlapping [start, end), in file
   * order, overlapping runs joined (a record in two bins' chunks is in one run): the chunks of the
   * bins the window falls in, none before the linear index's entry for `start` (no record overlapping
   * its 16 kb window lies before it). They may hold records outside the window too; empty when the
   * index knows of none.
   */
  chunksOf(refId: number, start: number, end: number): Chunk[] {
    const ref = this.references[refId];
    if (!ref) return [];
    const floor = this.kind === 'csi' ? 0 : (ref.linear[Math.floor(start / 2 ** 14)] ?? 0);
    const found: Chunk[] = [];
    for (const bin of this.binsOverlapping(start, end)) {
      for (const chunk of ref.bins.get(bin) ?? []) {
        if (chunk.end > floor) found.push({ begin: Math.max(chunk.begin, floor), end: chunk.end });
      }
    }
    return joinChunks(found);
  }

  /**
   * BAI and TBI: where the first record overlapping the 16 kb window that begins at or after
   * `position` lies (a record there may begin before the window), when the index has that window.
   */
  windowOffset(refId: number, position: number): PackedOffset | undefined {
    return this.kind === 'csi' ? undefined : this.references[refId]?.linear[Math.ceil(position / 2 ** 14)];
  }

  /** Where the file's first record lies (every record is in some bin's chunk), or undefined when it has none. */
  firstRecord(): PackedOffset | undefined {
    let first: PackedOffset | undefined;
    for (const ref of this.references) {
      for (const chunks of ref.bins.values()) for (const chunk of chunks) if (first === undefined || chunk.begin < first) first = chunk.begin;
    }
    return first;
  }

  /**
   * Where to start reading for records of reference `refId` overlapping [start, end): every such record
   * lies at or after this offset (records of the reference are sorted by position), or undefined when
   * the index knows of none. A CSI has no linear index, and its coarse bins hold the records that
   * cross a boundary of their finer bins (a SNP across the 8 Mb mark sits in a 64 Mb bin): their
   * chunks begin far before `start`. So, as htslib does, reading begins no earlier than the loffset of
   * the bin nearest before `start` (the first record overlapping that bin's first window, and so
   * before every record overlapping `start`).
   */
  startOf(refId: number, start: number, end: number): PackedOffset | undefined {
    const chunks = this.chunksOf(refId, start, end);
    const floor = this.kind === 'csi' ? this.loffsetBefore(refId, start) : 0;
    const chunk = chunks.find((c) => c.end > floor);
    return chunk && Math.max(chunk.begin, floor);
  }

  /**
   * CSI: the loffset of the bin at or before `position`'s finest bin that the index has: its left
   * siblings first, then its parent and the parent's left siblings, up to the root; 0 when none.
   */
  private loffsetBefore(refId: number, position: number): PackedOffset {
    const ref = this.references[refId];
    if (!ref) return 0;
    const limit = 2 ** (this.minShift + this.depth * 3);
    const leafFirst = ((1 << (this.depth * 3)) - 1) / 7;
    let bin = leafFirst + Math.floor(Math.min(position, limit - 1) / 2 ** this.minShift);
    while (bin > 0 && !ref.binOffsets.has(bin)) {
      const parent = (bin - 1) >> 3;
      bin = bin > parent * 8 + 1 ? bin - 1 : parent;
    }
    return ref.binOffsets.get(bin) ?? 0;
  }

  /** Whether the index has records of reference `refId` (a BCF's .csi lists every contig of its header). */
  holdsRecords(refId: number): boolean {
    const ref = this.references[refId];
    return ref !== undefined && (ref.bins.size > 0 || (ref.mapped ?? 0) + (ref.unmapped ?? 0) > 0);
  }

  /** Where the reads without a position begin: after every record of every reference. */
  unplacedStart(): PackedOffset {
    let end = 0;
    for (const ref of this.references) if (ref.lastEnd > end) end = ref.lastEnd;
    return end;
  }
}
