/**
 * gzip and brotli compression of reply bodies, with the server's settings: applied by the HTTP layer
 * as it writes a reply (src/http/compression.ts negotiates the coding), and by the page workers to
 * pages built ahead of their request.
 *
 * Measured on a variant page of 2,504-sample GT-only calls (8 MB, bench data, MB per CPU second):
 * gzip level 1 makes it 17x smaller at ~680 MB/s, level 6 only 19x at ~310 MB/s (its 32 KB window
 * cannot see the previous variant's calls, ~280 KB back); brotli's 4 MB window sees them: quality 3
 * makes it 100x smaller at ~610 MB/s, the cost of gzip level 1 (quality 4: 128x at ~400 MB/s).
 * Hence brotli quality 3 first when the client takes it, gzip level 1 otherwise.
 */
import zlib from 'node:zlib';
import type { ContentCoding } from './protocol/reply.js';

export interface CompressionSettings {
  /** Codings offered, the server's preference first (it decides between codings of equal q); empty: never compress. */
  codings: ContentCoding[];
  /** zlib level of gzip, 1 (fastest) to 9. */
  gzipLevel: number;
  /** Brotli quality, 0 (fastest) to 11. */
  brotliQuality: number;
  /** Bodies smaller than this many bytes are sent as they are. */
  threshold: number;
}

export const defaultCompression = (): CompressionSettings => ({
  codings: ['br', 'gzip'],
  gzipLevel: 1,
  brotliQuality: 3,
  threshold: 16 * 1024,
});

/** Compressor output pieces: a few round trips to the thread pool per MB of input, not dozens. */
const OUTPUT_CHUNK = 64 * 1024;
/**
 * Input a streamed reply may queue ahead of the compressor before the writer waits: the next piece
 * of the page is built on the event loop while the last one is compressed on the pool.
 */
const INPUT_QUEUE = 2 * 1024 * 1024;

/** The brotli parameters of these settings (the bench's replay compresses with the same). */
export function brotliParams(settings: CompressionSettings, sizeHint?: number): Record<number, number> {
  const params: Record<number, number> = {
    [zlib.constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  };
  if (sizeHint !== undefined) params[zlib.constants.BROTLI_PARAM_SIZE_HINT] = sizeHint;
  return params;
}

/**
 * A zlib stream compressing with `coding` as these settings say (`sizeHint`: the input's size, when it
 * is known); its work runs on the libuv thread pool.
 */
export function compressor(coding: ContentCoding, settings: CompressionSettings, sizeHint?: number): zlib.Gzip | zlib.BrotliCompress {
  const stream = { chunkSize: OUTPUT_CHUNK, writableHighWaterMark: INPUT_QUEUE };
  return coding === 'gzip'
    ? zlib.createGzip({ ...stream, level: settings.gzipLevel })
    : zlib.createBrotliCompress({ ...stream, params: brotliParams(settings, sizeHint) });
}

/**
 * A whole body held in pieces, `size` bytes in all, compressed with `coding` into one buffer of its
 * own (so that it can be moved to another thread); undefined when the body is under the threshold and
 * goes as it is. For replies held in memory, and for pages built ahead of their request
 * (src/workers/page-builder.ts), compressed while the client still reads the page before.
 */
export async function encodeWhole(coding: ContentCoding, settings: CompressionSettings, pieces: Array<string | Uint8Array>, size: number): Promise<Uint8Array | undefined> {
  if (size < settings.threshold) return undefined;
  const zip = compressor(coding, settings, size);
  const output: Buffer[] = [];
  let encodedSize = 0;
  zip.on('data', (piece: Buffer) => {
    output.push(piece);
    encodedSize += piece.length;
  });
  const ended = new Promise<void>((resolve, reject) => {
    zip.once('end', resolve);
    zip.once('error', reject);
  });
  for (const piece of pieces) if (!zip.write(piece)) await new Promise((resolve) => zip.once('drain', resolve));
  zip.end();
  await ended;
  // zlib's output pieces share larger buffers that it goes on filling: copied out into one of its own.
  const whole = new Uint8Array(encodedSize);
  let at = 0;
  for (const piece of output) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}
