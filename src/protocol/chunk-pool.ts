/**
 * Reusable buffers for replies written in pieces. A page of reads is ~1.2 MB of JSON; a new 1 MB buffer
 * per megabyte sent made V8 run a full garbage collection every ~10 MB of replies (memory outside the
 * heap counts towards starting one), about a fifth of the server's time while paging reads.
 *
 * The contract: a writer takes a buffer (`takeChunkBuffer`), hands out pieces of it (`handedOut`), and
 * says when it writes no more into it (`retire`). Whoever sends a piece says when the piece's bytes
 * are no longer needed (`pieceSent`: written to the socket, or taken in by a compressor). A buffer
 * returns to the pool once it is retired and every piece handed out of it is sent. A piece nobody
 * reports sent keeps its buffer out of the pool for good (the garbage collector frees it), so a sink
 * that does not know this contract costs only the reuse.
 */

/** The size of the pooled buffers. */
export const CHUNK_BYTES = 1 << 20;
/**
 * Buffers kept for reuse at most (the rest are left to the garbage collector). A page worker has about
 * this many out at once while a client pages P1's cohort: two 8 MB pages built ahead and the chunks in
 * flight. With 8, the buffers came back in bursts, those beyond 8 were dropped, and 7-8% of the
 * buffers the worker took were new ones (fresh memory, faulted in page by page); with 24, 0.4%.
 */
const POOL_SIZE = 24;

interface BufferState {
  /** Pieces handed out and not yet sent. */
  outstanding: number;
  retired: boolean;
}

const states = new WeakMap<ArrayBuffer, BufferState>();
/** The pieces handed out and not yet sent (a piece reported twice counts once). */
const outstandingPieces = new WeakSet<Uint8Array>();
const free: Buffer[] = [];

/** A buffer of CHUNK_BYTES, reused when one is free. */
export function takeChunkBuffer(): Buffer {
  const buffer = free.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
  states.set(buffer.buffer as ArrayBuffer, { outstanding: 0, retired: false });
  return buffer;
}

/** A piece of a buffer from takeChunkBuffer is handed to a sink. */
export function handedOut(piece: Uint8Array): void {
  const state = states.get(piece.buffer as ArrayBuffer);
  if (!state) return;
  state.outstanding++;
  outstandingPieces.add(piece);
}

/** The writer writes no more into `buffer`. */
export function retire(buffer: Uint8Array): void {
  const state = states.get(buffer.buffer as ArrayBuffer);
  if (!state) return;
  state.retired = true;
  release(buffer.buffer as ArrayBuffer, state);
}

/**
 * Takes `piece` out of the pool's bookkeeping when it may be moved to another thread as it lies: it is
 * the one piece not yet sent of a buffer its writer has retired, so nothing here writes into that
 * buffer or reads from it again. The buffer then leaves the pool; `adopt` takes it back once the other
 * thread returns it. False (nothing changes) for any other piece: it must be copied to be moved.
 */
export function takeForTransfer(piece: Uint8Array): boolean {
  const arrayBuffer = piece.buffer as ArrayBuffer;
  const state = states.get(arrayBuffer);
  if (!state || !state.retired || state.outstanding !== 1 || !outstandingPieces.has(piece)) return false;
  states.delete(arrayBuffer);
  outstandingPieces.delete(piece);
  return true;
}

/** A buffer of this pool's size back from another thread: kept for reuse (false when it is not wanted). */
export function adopt(buffer: ArrayBuffer): boolean {
  if (buffer.byteLength !== CHUNK_BYTES || free.length >= POOL_SIZE) return false;
  free.push(Buffer.from(buffer, 0, CHUNK_BYTES));
  return true;
}

/** What to do once a piece that is not of this pool is sent (a buffer moved from a page worker goes back to it). */
const sentCallbacks = new WeakMap<Uint8Array, () => void>();

/** Calls `sent` once `piece` is reported sent (pieceSent), in place of returning it to this pool. */
export function whenSent(piece: Uint8Array, sent: () => void): void {
  sentCallbacks.set(piece, sent);
}

/** The bytes of `piece` are sent: its buffer may be written again. Pieces of other buffers are let be. */
export function pieceSent(piece: string | Uint8Array): void {
  if (typeof piece === 'string') return;
  const sent = sentCallbacks.get(piece);
  if (sent) {
    sentCallbacks.delete(piece);
    return sent();
  }
  if (!outstandingPieces.delete(piece)) return;
  const state = states.get(piece.buffer as ArrayBuffer);
  if (!state) return;
  state.outstanding--;
  release(piece.buffer as ArrayBuffer, state);
}

function release(arrayBuffer: ArrayBuffer, state: BufferState): void {
  if (!state.retired || state.outstanding > 0) return;
  states.delete(arrayBuffer);
  if (free.length < POOL_SIZE) free.push(Buffer.from(arrayBuffer, 0, CHUNK_BYTES));
}
