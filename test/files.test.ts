/**
 * Local data files as the page workers read them (src/files.ts): with blocking calls, the same bytes
 * as the file holds at every position asked for, short at the file's end, and the same errors; and
 * the handle a worker thread is given is that one, while the main thread keeps reading on the pool.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BlockingLocalFile, openFile } from '../src/files.js';
import { copyFixture, inWorkerThread, source, tempDir } from './helpers.js';

const dir = tempDir();
const bam = copyFixture('compliance/brca1_HG00096.bam', dir);
const whole = fs.readFileSync(bam);

describe('local files read with blocking calls', () => {
  const file = new BlockingLocalFile(bam);

  it('gives the bytes the file holds at every position, and fewer only past its end', async () => {
    const size = whole.length;
    for (const [position, length] of [
      [0, 18],
      [1, 65_536],
      [size - 100, 100],
      [size - 100, 4096],
      [Math.floor(size / 2), 1 << 20],
      [size, 10],
      [size + 5000, 10],
      [123, 0],
    ]) {
      const got = await file.read(length, position);
      const expected = whole.subarray(Math.min(position, size), Math.min(position + length, size));
      assert.equal(got.length, expected.length, `${length} bytes at ${position}`);
      assert.ok(Buffer.from(got).equals(expected), `${length} bytes at ${position}`);
    }
  });

  it('reads the whole file, as bytes or as text, and its size', async () => {
    assert.ok(Buffer.from(await file.readFile()).equals(whole));
    const text = path.join(dir, 'note.txt');
    fs.writeFileSync(text, 'chr17\t41196311\n');
    assert.equal(await new BlockingLocalFile(text).readFile('utf8'), 'chr17\t41196311\n');
    assert.equal(await new BlockingLocalFile(text).readFile({ encoding: 'utf8' }), 'chr17\t41196311\n');
    assert.equal((await file.stat()).size, whole.length);
  });

  it('reads a file replaced on disk as it is now', async () => {
    const changing = path.join(dir, 'changing.bin');
    fs.writeFileSync(changing, 'first');
    const handle = new BlockingLocalFile(changing);
    assert.equal(Buffer.from(await handle.read(5, 0)).toString(), 'first');
    fs.writeFileSync(path.join(dir, 'next.bin'), 'other');
    fs.renameSync(path.join(dir, 'next.bin'), changing);
    assert.equal(Buffer.from(await handle.read(5, 0)).toString(), 'other');
  });

  it('rejects, as the pool-read handle does, when the file is missing', async () => {
    const missing = path.join(dir, 'missing.bam');
    const pooled = await openFile(missing).read(10, 0).catch((e: NodeJS.ErrnoException) => e);
    const blocking = await new BlockingLocalFile(missing).read(10, 0).catch((e: NodeJS.ErrnoException) => e);
    assert.ok(pooled instanceof Error && blocking instanceof Error);
    assert.equal((blocking as NodeJS.ErrnoException).code, 'ENOENT');
    assert.equal((blocking as NodeJS.ErrnoException).code, (pooled as NodeJS.ErrnoException).code);
  });
});

describe('which handle a thread gets', () => {
  it('the main thread reads on the pool; a worker thread with blocking calls', async () => {
    assert.equal(openFile(bam).constructor.name, 'LocalFile');
    const name = await inWorkerThread(`post((await import(${source('files.ts')})).openFile(${JSON.stringify(bam)}).constructor.name);`);
    assert.equal(name, 'BlockingLocalFile');
  });
});
