/** Reply buffers are reused only once the writer is done with them and every piece of them is sent. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteChunks } from '../src/areas/variants/variant-writer.js';
import { adopt, CHUNK_BYTES, handedOut, pieceSent, retire, takeChunkBuffer, takeForTransfer } from '../src/protocol/chunk-pool.js';

/** A pooled buffer with two pieces of it handed out: bytes 0-10 and 10-`end`. */
function bufferWithTwoPieces(end: number) {
  const buffer = takeChunkBuffer();
  const first = buffer.subarray(0, 10);
  const second = buffer.subarray(10, end);
  handedOut(first);
  handedOut(second);
  return { buffer, first, second };
}

describe('chunk pool', () => {
  it('gives a buffer again only after it is retired and all its pieces are sent, each piece counted once', () => {
    const { buffer, first, second } = bufferWithTwoPieces(20);
    retire(buffer);
    pieceSent(first);
    pieceSent(first); // reported twice: still one piece
    const other = takeChunkBuffer();
    assert.notEqual(other.buffer, buffer.buffer, 'a piece is still being sent');
    pieceSent(second);
    const again = takeChunkBuffer();
    assert.equal(again.buffer, buffer.buffer, 'every piece sent and the writer done: reused');
    retire(other);
    retire(again);
  });

  it('keeps a buffer the writer still writes into, and lets pieces of other buffers be', () => {
    const buffer = takeChunkBuffer();
    const piece = buffer.subarray(0, 5);
    handedOut(piece);
    pieceSent(piece);
    pieceSent(Buffer.from('not pooled'));
    pieceSent('text');
    const other = takeChunkBuffer();
    assert.notEqual(other.buffer, buffer.buffer, 'not retired: the writer may still write there');
    retire(buffer);
    assert.equal(takeChunkBuffer().buffer, buffer.buffer);
  });

  it('keeps a burst of the buffers a page worker has out while a client pages a cohort', () => {
    // Two 8 MB pages built ahead and four chunks in flight: twenty buffers that come back together.
    const out = Array.from({ length: 20 }, () => takeChunkBuffer());
    for (const buffer of out) retire(buffer);
    const returned = new Set(out.map((b) => b.buffer));
    const again = Array.from({ length: 20 }, () => takeChunkBuffer());
    assert.equal(again.filter((b) => returned.has(b.buffer)).length, 20, 'every buffer of the burst is reused, none newly made');
    for (const buffer of again) retire(buffer);
  });

  it('lets only the last unsent piece of a retired buffer be moved to another thread, and takes the buffer back', () => {
    const { buffer, first, second: last } = bufferWithTwoPieces(30);
    assert.equal(takeForTransfer(last), false, 'the writer may still write into the buffer');
    retire(buffer);
    assert.equal(takeForTransfer(last), false, 'another piece of it is not sent yet');
    pieceSent(first);
    assert.equal(takeForTransfer(Buffer.from('not pooled')), false);
    assert.equal(takeForTransfer(last), true);
    pieceSent(last); // the buffer left the pool: nothing to return
    assert.notEqual(takeChunkBuffer().buffer, buffer.buffer, 'a moved buffer is not handed out again here');
    const moved = buffer.buffer as ArrayBuffer;
    assert.equal(adopt(new ArrayBuffer(CHUNK_BYTES / 2)), false, 'not of the pool\'s size');
    assert.equal(adopt(moved), true);
    assert.equal(takeChunkBuffer().buffer, moved, 'back from the other thread: reused');
  });

  it('writes a small page of a search into a pooled buffer, the same memory page after page, moved whole to another thread', () => {
    /** A page of ~12 KB written and finished: its pieces. */
    const page = () => {
      const out = ByteChunks.forPage();
      out.text('{"alignments":[');
      for (let i = 0; i < 100; i++) out.text((i ? ',' : '') + JSON.stringify({ id: `read-${i}`, alignedSequence: 'ACGT'.repeat(25) }));
      out.text(']}');
      return out.finish();
    };
    const first = page();
    assert.equal(first.length, 1);
    for (const piece of first) pieceSent(piece);
    const second = page();
    assert.equal(second[0].buffer, first[0].buffer, 'the page before was sent: its buffer is written again');
    assert.equal(takeForTransfer(second[0]), true, 'the one piece of a finished buffer: moved as it lies, not copied');
    // A small reply of another kind keeps a small buffer of its own.
    const small = new ByteChunks();
    small.text('{}');
    assert.ok(small.finish()[0].buffer.byteLength < CHUNK_BYTES);
  });
});
