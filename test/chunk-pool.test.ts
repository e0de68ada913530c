/** Reply buffers are reused only once the writer is done with them and every piece of them is sent. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handedOut, pieceSent, retire, takeChunkBuffer } from '../src/protocol/chunk-pool.js';

describe('chunk pool', () => {
  it('gives a buffer again only after it is retired and all its pieces are sent, each piece counted once', () => {
    const buffer = takeChunkBuffer();
    const first = buffer.subarray(0, 10);
    const second = buffer.subarray(10, 20);
    handedOut(first);
    handedOut(second);
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
});
