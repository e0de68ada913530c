/**
 * Content-Encoding of JSON replies: the coding is chosen from the request's Accept-Encoding (RFC 9110
 * section 12.5.3, q-values included), and only bodies of at least the threshold are compressed, so a
 * get by id costs no more than before. Compression runs in node's zlib streams, whose work happens on
 * the libuv thread pool: the event loop goes on building pages (and answering small requests) while
 * the last piece is being compressed. Streamed replies stay streamed: each piece of a variant page is
 * handed to the compressor as it is written, with backpressure from the socket. The codings' settings
 * and compressors are in src/content-coding.ts.
 */
import type http from 'node:http';
import { compressor, encodeWhole, type CompressionSettings } from '../content-coding.js';
import { pieceSent } from '../protocol/chunk-pool.js';
import type { ContentCoding } from '../protocol/reply.js';

/**
 * Reads `--compression` text: `off`, or codings in order of preference, each with an optional level,
 * e.g. `br:3,gzip:1`, `gzip`, `gzip:6`. Throws a one-line message naming what is wrong.
 */
export function parseCompressionOption(text: string, base: CompressionSettings): CompressionSettings {
  const value = text.trim().toLowerCase();
  if (value === 'off' || value === 'none') return { ...base, codings: [] };
  const settings: CompressionSettings = { ...base, codings: [] };
  for (const item of value.split(',')) {
    const m = /^\s*(br|gzip)(?::(\d+))?\s*$/.exec(item);
    if (!m) throw new Error(`--compression takes off, or codings br and gzip with an optional level (br:3,gzip:1), not '${text}'`);
    const coding = m[1] as ContentCoding;
    if (settings.codings.includes(coding)) throw new Error(`--compression names ${coding} twice`);
    settings.codings.push(coding);
    if (m[2] === undefined) continue;
    const level = Number(m[2]);
    if (coding === 'gzip') {
      if (level < 1 || level > 9) throw new Error(`--compression: the gzip level must be 1 to 9, not ${level}`);
      settings.gzipLevel = level;
    } else {
      if (level > 11) throw new Error(`--compression: the brotli quality must be 0 to 11, not ${level}`);
      settings.brotliQuality = level;
    }
  }
  return settings;
}

/** Settings as `--compression` text: `br:3,gzip:1`, or `off`. */
export function formatCompressionOption(settings: CompressionSettings): string {
  if (!settings.codings.length) return 'off';
  return settings.codings.map((c) => `${c}:${c === 'gzip' ? settings.gzipLevel : settings.brotliQuality}`).join(',');
}

/** The q-value of each coding an Accept-Encoding header names (lower case; `*` included). */
function qualities(header: string): Map<string, number> {
  const q = new Map<string, number>();
  for (const item of header.split(',')) {
    const [name, ...params] = item.split(';');
    const spelled = name.trim().toLowerCase();
    if (!spelled) continue;
    const coding = spelled === 'x-gzip' ? 'gzip' : spelled; // the old alias (RFC 9110 section 8.4.1.3)
    let weight = 1;
    for (const param of params) {
      const [key, raw] = param.split('=').map((s) => s.trim());
      if (key.toLowerCase() !== 'q') continue;
      // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ); anything else drops the entry.
      weight = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(raw ?? '') ? Number(raw) : NaN;
    }
    if (Number.isNaN(weight)) continue;
    // When a coding is listed twice, the first mention counts (as most servers do).
    if (!q.has(coding)) q.set(coding, weight);
  }
  return q;
}

/**
 * The coding to answer with, or undefined for none (identity). No header, or an empty one, means
 * identity. A coding is acceptable with its own q, else the q of `*`; identity is acceptable unless
 * excluded (`identity;q=0`, or `*;q=0` without an identity entry). The highest q wins; a coding wins
 * a tie with identity (the client said either is fine), and the server's order decides between
 * codings. When nothing is acceptable, the answer is sent as it is (RFC 9110: no content coding
 * rather than an error).
 */
export function chooseCoding(header: string | undefined, settings: CompressionSettings): ContentCoding | undefined {
  if (!header || !settings.codings.length) return undefined;
  const q = qualities(header);
  const star = q.get('*');
  // Identity not named: as acceptable as `*`, else as the least wanted coding named (as the
  // `negotiator` package does), so `gzip;q=0.5` still means "gzip, please".
  const named = [...q.values()].filter((w) => w > 0);
  const identity = q.get('identity') ?? star ?? (named.length ? Math.min(...named) : 1);
  let best: ContentCoding | undefined;
  let bestQ = 0;
  for (const coding of settings.codings) {
    const weight = q.get(coding) ?? star ?? 0;
    if (weight > bestQ) {
      best = coding;
      bestQ = weight;
    }
  }
  return best !== undefined && bestQ >= identity ? best : undefined;
}

/**
 * Bytes of an uncompressed reply queued for the socket before its writer waits: a few of the writers'
 * 1 MB pieces, so the connection never waits for the next piece to be handed over.
 */
const SOCKET_WINDOW = 4 * 1024 * 1024;

const byteLength = (piece: string | Uint8Array) => (typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length);

/** Sends pieces of `size` bytes in all uncompressed, with their length; returns the size. */
export function sendAsIs(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders, pieces: Array<string | Uint8Array>, size: number): number {
  res.writeHead(status, { ...headers, 'content-length': size });
  res.cork(); // one write to the socket for all the pieces
  for (const piece of pieces) res.write(piece);
  res.end();
  return size;
}

/** Adds `name` to the reply's Vary header, keeping what others put there (CORS varies by Origin). */
export function addVary(res: http.ServerResponse, name: string): void {
  const current = res.getHeader('vary');
  const names = current === undefined ? [] : String(current).split(',').map((n) => n.trim()).filter(Boolean);
  if (!names.some((n) => n.toLowerCase() === name.toLowerCase())) res.setHeader('vary', [...names, name].join(', '));
}

/** The headers of a reply that is compressed with `coding`. */
function encodedHeaders(headers: http.OutgoingHttpHeaders, coding: ContentCoding): http.OutgoingHttpHeaders {
  const out = { ...headers, 'content-encoding': coding };
  delete out['content-length'];
  return out;
}

/**
 * How the body of one reply is written: `whole` for a body already in memory, `stream` for one that
 * is written in pieces. Replies of a server that offers compression carry `Vary: Accept-Encoding`,
 * compressed or not, so that caches keep the variants apart.
 */
export class ReplyEncoder {
  constructor(
    private readonly res: http.ServerResponse,
    private readonly coding: ContentCoding | undefined,
    private readonly settings: CompressionSettings,
  ) {
    if (settings.codings.length) addVary(res, 'Accept-Encoding');
  }

  /**
   * Sends a body held in memory; compressed on the thread pool when it is large enough.
   * Returns the size of the body as sent.
   */
  async whole(status: number, headers: http.OutgoingHttpHeaders, pieces: Array<string | Uint8Array>): Promise<number> {
    const { res, coding } = this;
    const size = pieces.reduce((n, p) => n + byteLength(p), 0);
    const body = coding && (await encodeWhole(coding, this.settings, pieces, size));
    if (!coding || !body) return sendAsIs(res, status, headers, pieces, size);
    res.writeHead(status, { ...encodedHeaders(headers, coding), 'content-length': body.length });
    res.end(body);
    return body.length;
  }

  /**
   * A sink for a body written in pieces. The first `threshold` bytes are held back: a reply that ends
   * before that is sent as it is, with its length; a longer one is compressed from its start. The
   * status line and headers go out only then, so a failure before that can still answer an error.
   */
  stream(status: number, headers: http.OutgoingHttpHeaders): StreamSink {
    return new StreamSink(this.res, status, headers, this.coding, this.settings);
  }

  /** A sink for a body whose pieces are in the negotiated coding already: sent as they are, under its Content-Encoding. */
  coded(status: number, headers: http.OutgoingHttpHeaders, coded: ContentCoding): StreamSink {
    if (coded !== this.coding) throw new Error(`a reply coded ${coded} for a request that takes ${this.coding ?? 'no coding'}`);
    return new StreamSink(this.res, status, encodedHeaders(headers, coded), undefined, this.settings);
  }
}

export class StreamSink {
  private held: Array<string | Uint8Array> = [];
  private heldBytes = 0;
  /** Where pieces go once the headers are sent: the compressor, or the response itself. */
  private target?: NodeJS.WritableStream & { destroyed: boolean; writableEnded: boolean };
  private finished?: Promise<void>;
  /** Bytes of the body handed to the response so far (after compression). */
  private sent = 0;
  /** Bytes handed to the socket that it has not written yet (uncompressed replies). */
  private unwritten = 0;
  /** Resumes the writer waiting for the socket's queue to shrink. */
  private wake?: () => void;

  constructor(
    private readonly res: http.ServerResponse,
    private readonly status: number,
    private readonly headers: http.OutgoingHttpHeaders,
    private readonly coding: ContentCoding | undefined,
    private readonly settings: CompressionSettings,
  ) {
  }

  write(piece: string | Uint8Array): void | Promise<void> {
    // Uncompressed replies start with their first piece: nothing is gained by holding them, and a
    // reply that fails before it has written anything still answers with its own error status.
    if (!this.target && this.coding === undefined) this.open();
    if (!this.target) {
      this.held.push(piece);
      this.heldBytes += byteLength(piece);
      if (this.heldBytes < this.settings.threshold) return;
      this.open();
      return this.release();
    }
    return this.send(piece);
  }

  /** Ends the body; resolves, with the body's size as sent, once the response is finished (or the client is gone). */
  async end(): Promise<number> {
    if (!this.target) return sendAsIs(this.res, this.status, this.headers, this.held, this.heldBytes);
    this.target.end();
    await this.finished;
    return this.sent;
  }

  private open(): void {
    const { res } = this;
    if (this.coding === undefined) {
      res.writeHead(this.status, this.headers);
      this.target = res;
      this.finished = Promise.resolve();
      return;
    }
    res.writeHead(this.status, encodedHeaders(this.headers, this.coding));
    const zip = compressor(this.coding, this.settings);
    this.target = zip;
    this.finished = new Promise<void>((resolve) => {
      res.once('close', resolve);
      res.once('finish', resolve);
    });
    zip.on('data', (chunk: Buffer) => (this.sent += chunk.length));
    zip.pipe(res);
    // The client left: stop compressing (pipe does not tell the source); a compressor fault ends the reply.
    res.once('close', () => zip.destroy());
    zip.once('error', (e) => {
      console.error('compressing a reply:', e);
      res.destroy();
    });
  }

  private async release(): Promise<void> {
    const held = this.held;
    this.held = [];
    for (const piece of held) await this.send(piece);
  }

  private send(piece: string | Uint8Array): void | Promise<void> {
    const target = this.target!;
    if (target.destroyed || this.res.destroyed) return; // the client went away: nothing to wait for
    if (target !== this.res) {
      // Once the compressor has taken the piece in, its buffer may be reused.
      if (target.write(piece, (error) => error || pieceSent(piece))) return;
      return this.until((done) => {
        target.on('drain', done);
        return () => target.off('drain', done);
      });
    }
    // To the socket: up to SOCKET_WINDOW bytes are queued before the writer waits, and it waits
    // only until the queue is below that again, not until it is empty, so that the kernel always
    // has the next piece at hand (waiting for 'drain' left the connection idle between pieces).
    const size = byteLength(piece);
    this.sent += size;
    this.unwritten += size;
    target.write(piece, (error) => {
      this.unwritten -= size;
      if (!error) pieceSent(piece);
      if (this.unwritten < SOCKET_WINDOW) this.wake?.();
    });
    if (this.unwritten < SOCKET_WINDOW) return;
    return this.until((done) => {
      this.wake = done;
      return () => (this.wake = undefined);
    });
  }

  /**
   * Resolves on the signal `listen` sets up (it returns how to stop listening), or once the client
   * goes away, since no signal would come then.
   */
  private until(listen: (done: () => void) => () => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        stop();
        this.res.off('close', done);
        resolve();
      };
      const stop = listen(done);
      this.res.on('close', done);
    });
  }
}
