/**
 * Turns a plain (uncompressed) VCF into a bgzipped VCF with a tabix index, the layout `bgzip` and
 * `tabix -p vcf` produce, so that a user with a plain .vcf needs no other tool.
 */
import { bgzfCompress, type VirtualOffset } from '../../formats/bgzf.js';

/** The smallest UCSC bin holding [beg, end) (SAM/tabix specification, section 5.3). */
function reg2bin(beg: number, end: number): number {
  end -= 1;
  if (beg >> 14 === end >> 14) return ((1 << 15) - 1) / 7 + (beg >> 14);
  if (beg >> 17 === end >> 17) return ((1 << 12) - 1) / 7 + (beg >> 17);
  if (beg >> 20 === end >> 20) return ((1 << 9) - 1) / 7 + (beg >> 20);
  if (beg >> 23 === end >> 23) return ((1 << 6) - 1) / 7 + (beg >> 23);
  if (beg >> 26 === end >> 26) return ((1 << 3) - 1) / 7 + (beg >> 26);
  return 0;
}

const toBig = (v: VirtualOffset) => (BigInt(v.blockPosition) << 16n) | BigInt(v.dataPosition);

interface RefIndex {
  name: string;
  /** bin → chunks as [begin, end) virtual offsets. */
  bins: Map<number, Array<[bigint, bigint]>>;
  linear: Array<bigint | undefined>;
  lastStart: number;
}

/** Compresses a plain VCF and indexes it. Throws with a one-line reason when the file is unsorted. */
export function bgzipAndIndex(text: Buffer, source: string): { bgzf: Buffer; tbi: Buffer } {
  const compressed = bgzfCompress(text);
  const refs: RefIndex[] = [];
  const byName = new Map<string, RefIndex>();
  let lineStart = 0;
  let lineNumber = 0;
  // Columns of a data line under the #CHROM line: 8, or 9 plus one per sample. A line with another
  // count was cut short (a file copied while it was written) and is refused rather than served.
  let headerColumns: number[] | undefined;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf(10, lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const next = lineEnd + 1;
    lineNumber++;
    if (text[lineStart] === 35 && text.toString('latin1', lineStart, lineStart + 6) === '#CHROM') {
      const count = countColumns(text, lineStart, lineEnd);
      headerColumns = count > 9 ? [count] : [8, 9];
    }
    if (lineEnd > lineStart && text[lineStart] !== 35 /* # */) {
      if (headerColumns) {
        const count = countColumns(text, lineStart, lineEnd);
        if (!headerColumns.includes(count)) {
          throw new Error(`${source} line ${lineNumber} has ${count} columns where the header has ${headerColumns.join(' or ')} (a file cut short?)`);
        }
      }
      const columns = text.toString('utf8', lineStart, Math.min(lineEnd, lineStart + 64 * 1024)).split('\t', 8);
      const [chrom, posText, , ref, , , , info = ''] = columns;
      const pos = Number(posText);
      if (!chrom || !Number.isSafeInteger(pos) || pos < 0 || ref === undefined) {
        throw new Error(`${source} line ${lineNumber} is not a VCF data line`);
      }
      const beg = Math.max(pos - 1, 0);
      let end = beg + Math.max(ref.length, 1);
      const endTag = /(?:^|;)END=(\d+)/.exec(info);
      if (endTag) end = Math.max(end, Number(endTag[1]));
      let refIndex = byName.get(chrom);
      if (!refIndex) {
        refIndex = { name: chrom, bins: new Map(), linear: [], lastStart: -1 };
        byName.set(chrom, refIndex);
        refs.push(refIndex);
      } else if (refs[refs.length - 1] !== refIndex) {
        throw new Error(`${source} is not sorted: ${chrom} appears again at line ${lineNumber}; sort it (bcftools sort) first`);
      }
      if (beg < refIndex.lastStart) {
        throw new Error(`${source} is not sorted: ${chrom}:${pos} at line ${lineNumber} comes after a later position; sort it (bcftools sort) first`);
      }
      refIndex.lastStart = beg;
      const from = toBig(compressed.virtualOffsetOf(lineStart));
      const to = toBig(compressed.virtualOffsetOf(Math.min(next, text.length)));
      const bin = reg2bin(beg, end);
      const chunks = refIndex.bins.get(bin) ?? [];
      const lastChunk = chunks[chunks.length - 1];
      if (lastChunk && lastChunk[1] === from) lastChunk[1] = to;
      else chunks.push([from, to]);
      refIndex.bins.set(bin, chunks);
      for (let w = beg >> 14; w <= (end - 1) >> 14; w++) refIndex.linear[w] ??= from;
    }
    lineStart = next;
  }
  return { bgzf: compressed.bytes, tbi: bgzfCompress(tbiBytes(refs)).bytes };
}

/** Tab-separated columns of text[from, to), a CR before the line end not counted. */
function countColumns(text: Buffer, from: number, to: number): number {
  let count = 1;
  for (let at = text.indexOf(9, from); at !== -1 && at < to; at = text.indexOf(9, at + 1)) count++;
  return count;
}

function tbiBytes(refs: RefIndex[]): Buffer {
  const parts: Buffer[] = [];
  const int32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    parts.push(b);
  };
  const uint64 = (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(n);
    parts.push(b);
  };
  const names = Buffer.concat(refs.map((r) => Buffer.from(r.name + '\0', 'utf8')));
  parts.push(Buffer.from('TBI\x01', 'latin1'));
  int32(refs.length);
  int32(2); // format: VCF
  int32(1); // sequence column
  int32(2); // begin column
  int32(0); // end column (VCF: from REF and END)
  int32(35); // meta character '#'
  int32(0); // lines to skip
  int32(names.length);
  parts.push(names);
  for (const ref of refs) {
    int32(ref.bins.size);
    for (const [bin, chunks] of ref.bins) {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(bin);
      parts.push(b);
      int32(chunks.length);
      for (const [from, to] of chunks) {
        uint64(from);
        uint64(to);
      }
    }
    // Windows without a record of their own take the offset of the window before them.
    let previous = 0n;
    int32(ref.linear.length);
    for (const offset of ref.linear) {
      previous = offset ?? previous;
      uint64(previous);
    }
  }
  return Buffer.concat(parts);
}
