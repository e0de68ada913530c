/**
 * Inflating BGZF blocks (src/formats/bgzf.ts, inflateBlocks): blocks written by the bgzip tool
 * inflate to the very text given to bgzip, one block or a run of them, the end-of-file block to
 * nothing; a block whose deflate data, CRC or size field was changed is refused, never inflated to
 * other text.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { inflateBlocks } from '../src/formats/bgzf.js';
import { TESTDATA } from './helpers.js';

const skip = spawnSync('sh', ['-c', 'command -v bgzip']).status !== 0 ? 'needs bgzip (apt-get install -y tabix)' : false;
const text = fs.readFileSync(path.join(TESTDATA, 'compliance', 'brca1_1kgPhase3_variants.vcf'));

/** bgzip's output for `text`, and where each of its blocks begins (the last is the end-of-file block). */
function bgzipped(): { bytes: Buffer; blocks: number[] } {
  const r = spawnSync('bgzip', ['-c'], { input: text, maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, String(r.stderr));
  const bytes = r.stdout as Buffer;
  const blocks: number[] = [];
  for (let at = 0; at < bytes.length; at += bytes.readUInt16LE(at + 16) + 1) blocks.push(at);
  return { bytes, blocks };
}

describe('inflating BGZF blocks', { skip }, () => {
  it("gives bgzip's input back, block by block and as one run, and nothing for the end-of-file block", () => {
    const { bytes, blocks } = bgzipped();
    assert.ok(blocks.length >= 4, `${blocks.length} blocks`);
    const eof = blocks.at(-1)!;
    assert.ok(inflateBlocks(bytes, 0, eof, 'test').equals(text));
    const pieces = blocks.slice(0, -1).map((at, i) => inflateBlocks(bytes, at, blocks[i + 1], 'test'));
    assert.ok(Buffer.concat(pieces).equals(text));
    assert.equal(inflateBlocks(bytes, eof, bytes.length, 'test').length, 0);
  });

  it('refuses a block whose deflate data, CRC or size field was changed', () => {
    const { bytes, blocks } = bgzipped();
    const [start, end] = [blocks[1], blocks[2]];
    const changed = (at: number, value: number) => {
      const copy = Buffer.from(bytes);
      copy[at] = value;
      return copy;
    };
    assert.throws(() => inflateBlocks(changed(start + 40, bytes[start + 40] ^ 0xff), start, end, 'test'), /does not inflate|CRC|size/);
    assert.throws(() => inflateBlocks(changed(end - 8, bytes[end - 8] ^ 1), start, end, 'test'), /CRC/);
    assert.throws(() => inflateBlocks(changed(end - 4, bytes[end - 4] ^ 1), start, end, 'test'), /declares|size/);
    // The same block intact still inflates: a refusal leaves nothing behind.
    assert.ok(inflateBlocks(bytes, start, end, 'test').length > 0);
  });
});
