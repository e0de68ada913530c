/**
 * A deterministic bigWig for the continuous-data part: one contig of coverage-like values (runs of 1-20
 * bases with one value, a gap of 50-500 bases every few thousand), written by a minimal bigWig writer
 * (no zoom levels: the server reads the full-resolution data only): bedGraph sections of up to 1,024
 * items, each zlib-compressed, a one-level chromosome B+ tree and a one-level R-tree index.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { generatedOnce, prng } from './data.js';

const GENERATOR_VERSION = 1;
const SEED = 0xb16_f1e;
const ITEMS_PER_BLOCK = 1024;

export interface BigWigManifest {
  file: string;
  contig: string;
  length: number;
  /** Bases that have a value. */
  basesWithValues: number;
  generationSeconds: number;
}

export function ensureBigWig(scratch: string, length: number, log: (line: string) => void): Promise<BigWigManifest> {
  const dir = path.join(scratch, `bigwig-v${GENERATOR_VERSION}-${length}`);
  return generatedOnce(path.join(dir, 'manifest.json'), { dir, log }, () => {
    log(`generating a bigWig of ${length.toLocaleString('en')} bases`);
    const file = path.join(dir, 'signal.bw');
    return { file, contig: 'chrS', length, basesWithValues: writeBigWig(file, 'chrS', length) };
  });
}

function writeBigWig(file: string, contig: string, length: number): number {
  const random = prng(SEED);
  // Items: [start, end, value], in order.
  const items: Array<[number, number, number]> = [];
  let pos = 0;
  let untilGap = 2_000 + Math.floor(random() * 6_000);
  let covered = 0;
  while (pos < length) {
    if (untilGap <= 0) {
      pos += 50 + Math.floor(random() * 450);
      untilGap = 2_000 + Math.floor(random() * 6_000);
      continue;
    }
    const span = Math.min(1 + Math.floor(random() * 20), length - pos);
    items.push([pos, pos + span, Math.round(random() * 400) / 4]);
    covered += span;
    pos += span;
    untilGap -= span;
  }

  const HEADER = 64;
  // The total summary (bases covered, min, max, sum, sum of squares), which readers expect.
  const summary = Buffer.alloc(40);
  let [min, max, sum, squares] = [Infinity, -Infinity, 0, 0];
  for (const [s, e, v] of items) {
    const n = e - s;
    min = Math.min(min, v);
    max = Math.max(max, v);
    sum += v * n;
    squares += v * v * n;
  }
  summary.writeBigUInt64LE(BigInt(covered), 0);
  summary.writeDoubleLE(min, 8);
  summary.writeDoubleLE(max, 16);
  summary.writeDoubleLE(sum, 24);
  summary.writeDoubleLE(squares, 32);
  const chromTreeOffset = HEADER + summary.length;
  const keySize = contig.length;
  const chromTree = Buffer.alloc(32 + 4 + keySize + 8);
  chromTree.writeUInt32LE(0x78ca8c91, 0);
  chromTree.writeUInt32LE(1, 4); // block size
  chromTree.writeUInt32LE(keySize, 8);
  chromTree.writeUInt32LE(8, 12); // value size
  chromTree.writeBigUInt64LE(1n, 16); // items
  chromTree.writeUInt8(1, 32); // leaf
  chromTree.writeUInt16LE(1, 34);
  chromTree.write(contig, 36, 'latin1');
  chromTree.writeUInt32LE(0, 36 + keySize); // chrom id
  chromTree.writeUInt32LE(length, 40 + keySize);

  const dataOffset = chromTreeOffset + chromTree.length;
  const blocks: Buffer[] = [];
  const index: Array<{ start: number; end: number; offset: number; size: number }> = [];
  let offset = dataOffset + 8; // after the block count
  let maxRaw = 0;
  for (let i = 0; i < items.length; i += ITEMS_PER_BLOCK) {
    const chunk = items.slice(i, i + ITEMS_PER_BLOCK);
    const raw = Buffer.alloc(24 + chunk.length * 12);
    raw.writeUInt32LE(0, 0);
    raw.writeUInt32LE(chunk[0][0], 4);
    raw.writeUInt32LE(chunk.at(-1)![1], 8);
    raw.writeUInt32LE(0, 12); // item step
    raw.writeUInt32LE(0, 16); // item span
    raw.writeUInt8(1, 20); // bedGraph section
    raw.writeUInt16LE(chunk.length, 22);
    chunk.forEach(([s, e, v], k) => {
      raw.writeUInt32LE(s, 24 + k * 12);
      raw.writeUInt32LE(e, 28 + k * 12);
      raw.writeFloatLE(v, 32 + k * 12);
    });
    maxRaw = Math.max(maxRaw, raw.length);
    const packed = zlib.deflateSync(raw);
    blocks.push(packed);
    index.push({ start: chunk[0][0], end: chunk.at(-1)![1], offset, size: packed.length });
    offset += packed.length;
  }
  const blockCount = Buffer.alloc(8);
  blockCount.writeBigUInt64LE(BigInt(blocks.length));

  const indexOffset = offset;
  const rtree = Buffer.alloc(48 + 4 + index.length * 32);
  rtree.writeUInt32LE(0x2468ace0, 0);
  rtree.writeUInt32LE(Math.max(index.length, 1), 4); // block size: every entry in one node
  rtree.writeBigUInt64LE(BigInt(items.length), 8);
  rtree.writeUInt32LE(0, 16);
  rtree.writeUInt32LE(index[0]?.start ?? 0, 20);
  rtree.writeUInt32LE(0, 24);
  rtree.writeUInt32LE(index.at(-1)?.end ?? 0, 28);
  rtree.writeBigUInt64LE(BigInt(indexOffset), 32);
  rtree.writeUInt32LE(ITEMS_PER_BLOCK, 40);
  rtree.writeUInt8(1, 48); // leaf
  rtree.writeUInt16LE(index.length, 50);
  index.forEach((entry, k) => {
    const at = 52 + k * 32;
    rtree.writeUInt32LE(0, at);
    rtree.writeUInt32LE(entry.start, at + 4);
    rtree.writeUInt32LE(0, at + 8);
    rtree.writeUInt32LE(entry.end, at + 12);
    rtree.writeBigUInt64LE(BigInt(entry.offset), at + 16);
    rtree.writeBigUInt64LE(BigInt(entry.size), at + 24);
  });
  if (index.length > 0xffff) throw new Error('too many blocks for a one-level R-tree; use a shorter contig');

  const header = Buffer.alloc(HEADER);
  header.writeUInt32LE(0x888ffc26, 0);
  header.writeUInt16LE(4, 4); // version
  header.writeUInt16LE(0, 6); // zoom levels
  header.writeBigUInt64LE(BigInt(chromTreeOffset), 8);
  header.writeBigUInt64LE(BigInt(dataOffset), 16);
  header.writeBigUInt64LE(BigInt(indexOffset), 24);
  header.writeUInt16LE(0, 32); // field count
  header.writeUInt16LE(0, 34);
  header.writeBigUInt64LE(0n, 36); // autoSql
  header.writeBigUInt64LE(BigInt(HEADER), 44); // total summary
  header.writeUInt32LE(maxRaw, 52); // uncompressed buffer size: blocks are zlib-compressed
  header.writeBigUInt64LE(0n, 56); // extension
  fs.writeFileSync(file, Buffer.concat([header, summary, chromTree, blockCount, ...blocks, rtree]));
  return covered;
}
