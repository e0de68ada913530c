/**
 * What keeps one client, or many, from taking the server down: a bound on the nesting of request
 * bodies, JSON answers for the requests Node's parser refuses, a cap on open connections, a
 * per-address rate limit and a cap on large responses written at once. Each limit is a `serve`
 * option (src/config.ts, docs/serving.md, "Options").
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { ServerLimits } from '../config.js';
import { GAException } from '../protocol/errors.js';
import { writeError, type JsonSink } from '../protocol/reply.js';
import type { NamingForm } from '../protocol/schema.js';

/**
 * Whether JSON text nests objects and arrays deeper than `limit`: read before JSON.parse, so that no
 * body under the size limit reaches the recursive request reader deep enough to exhaust the stack.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  503: 'Service Unavailable',
};

/** A whole HTTP/1.1 error response as bytes, for sockets no ServerResponse is left to write on; the connection closes after it. */
export function rawErrorResponse(error: GAException, form: NamingForm, extraHeaders: Record<string, string> = {}): string {
  const body = writeError(error, form);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...(error.retryAfterSeconds !== undefined ? { 'Retry-After': String(error.retryAfterSeconds) } : {}),
    ...extraHeaders,
    Connection: 'close',
  };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}\r\n${head}\r\n${body}`;
}

/** The error for a request Node's HTTP parser refused (its `clientError`), or undefined when nothing should be written. */
export function clientErrorOf(err: NodeJS.ErrnoException & { reason?: string }, maxHeaderBytes: number): GAException | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return new GAException('headersTooLarge', `the request line and headers are larger than the limit of ${maxHeaderBytes} bytes`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GAException('requestTimeout', 'the request was not received in time');
    default: {
      // llhttp's reasons name what was wrong: "Transfer-Encoding can't be present with Content-Length", "Invalid character in chunk size".
      const reason = (err.reason ?? err.message ?? '').replace(/^Parse Error: /, '');
      return new GAException('invalidRequest', `malformed HTTP request${reason ? `: ${reason}` : ''}`);
    }
  }
}

/**
 * Answers the requests Node's parser refuses (malformed request line or header, a bad chunk, headers
 * over the limit, a request that took too long) with the JSON error body, where the socket still
 * allows it: not when it is gone, nor when a response is being written on it.
 */
export function answerClientErrors(server: http.Server, form: NamingForm, maxHeaderBytes: number): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const error = clientErrorOf(err, maxHeaderBytes);
    const busy = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (!error || !socket.writable || (busy && busy.headersSent)) {
      socket.destroy();
      return;
    }
    socket.end(rawErrorResponse(error, form));
  });
}

/**
 * Caps the connections open at once: one over the cap is answered `503` with Retry-After and closed
 * before it can send a request, so that the server's file descriptors and memory stay bounded.
 */
export function capConnections(server: http.Server, maxConnections: number, form: NamingForm): void {
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
    if (open <= maxConnections) return;
    const error = GAException.retryLater('unavailable', `the server has ${maxConnections} connections open, its limit; try again shortly`, 1);
    socket.end(rawErrorResponse(error, form));
  });
}

/**
 * Requests per client address: a token bucket each, refilled at `perWindow` tokens per `windowMs` and
 * holding at most `burst`. The table is bounded by dropping buckets that have refilled completely,
 * which hold no information.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    private readonly burst = perWindow,
    private readonly maxTracked = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  private level(bucket: { tokens: number; at: number } | undefined, now: number): number {
    return bucket ? Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.perWindow) / this.windowMs) : this.burst;
  }

  /** Takes one token for this address; false when it has none left. */
  take(address: string): boolean {
    const now = this.now();
    const bucket = this.buckets.get(address);
    const tokens = this.level(bucket, now);
    if (tokens < 1) {
      this.buckets.set(address, { tokens, at: now });
      return false;
    }
    if (!bucket && this.buckets.size >= this.maxTracked) this.sweep(now);
    this.buckets.set(address, { tokens: tokens - 1, at: now });
    return true;
  }

  /** Seconds until this address has a token again (at least 1). */
  secondsUntilNext(address: string): number {
    const missing = 1 - this.level(this.buckets.get(address), this.now());
    return Math.max(1, Math.ceil((missing * this.windowMs) / this.perWindow / 1000));
  }

  private sweep(now: number): void {
    for (const [address, b] of this.buckets) if (this.level(b, now) >= this.burst) this.buckets.delete(address);
    // Still full of active senders: forget the oldest, which at worst lets one of them send a little more.
    while (this.buckets.size >= this.maxTracked) this.buckets.delete(this.buckets.keys().next().value!);
  }
}

/**
 * How many requests for a large response may wait for a slot, per slot. A waiting reply holds what
 * was built of it before it asked (at most 4 MB handed over by a page worker), so the queue is bounded
 * like the slots themselves: 8 slots, at most 32 waiting.
 */
const WAITING_PER_SLOT = 4;

/**
 * Large (streamed) responses being written at once. Beyond the cap a request waits for a slot, first
 * come first served, for at most `waitMs`: a freed slot goes to the request that has waited longest,
 * never to whichever client happens to ask again first. Once the wait is over, or when the queue is
 * full, the request is refused with `503` and Retry-After; with `waitMs` 0 it is refused at once.
 */
export class StreamSlots {
  private used = 0;
  /** The requests waiting for a slot, in arrival order; each is handed its slot's release. */
  private readonly queue: Array<(release: () => void) => void> = [];
  private readonly listeners: Array<(atLimit: boolean) => void> = [];

  constructor(
    private readonly max: number,
    private readonly waitMs = 0,
    private readonly maxWaiting = waitMs > 0 ? max * WAITING_PER_SLOT : 0,
  ) {}

  /** Calls `listener` each time every slot becomes taken (true) or one becomes free again (false). */
  watch(listener: (atLimit: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** How many requests wait for a slot. */
  waiting(): number {
    return this.queue.length;
  }

  /** Takes a free slot (returning its release, to call once) or throws the 503 at once. */
  take(): () => void {
    if (this.used >= this.max) throw this.refusal('');
    if (++this.used === this.max) this.tell(true);
    return this.release();
  }

  /**
   * Takes a slot, waiting in line for one when all are taken; rejects with the 503 once `waitMs` has
   * passed or when the line is full, and with the signal's reason once `leave` aborts (the client
   * went away): its place in line goes at once to those behind it.
   */
  takeInTurn(leave: AbortSignal): Promise<() => void> {
    // A slot is free only while nobody waits: a freed slot passes straight to the first in line.
    if (this.used < this.max) return Promise.resolve(this.take());
    if (this.queue.length >= this.maxWaiting) {
      return Promise.reject(this.refusal(this.maxWaiting > 0 ? `, and ${this.maxWaiting} more wait for one` : ''));
    }
    if (leave.aborted) return Promise.reject(leave.reason);
    return new Promise((resolve, reject) => {
      const served = (release: () => void) => {
        clearTimeout(timer);
        leave.removeEventListener('abort', left);
        resolve(release);
      };
      const leaveQueue = (error: unknown) => {
        this.queue.splice(this.queue.indexOf(served), 1);
        leave.removeEventListener('abort', left);
        clearTimeout(timer);
        reject(error);
      };
      const left = () => leaveQueue(leave.reason);
      const timer = setTimeout(() => leaveQueue(this.refusal(`, and none became free within ${this.waitMs} ms`)), this.waitMs);
      leave.addEventListener('abort', left, { once: true });
      this.queue.push(served);
    });
  }

  /** The release of a taken slot: it passes the slot to the first in line, or frees it. */
  private release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next(this.release());
      else if (this.used-- === this.max) this.tell(false);
    };
  }

  private refusal(why: string): GAException {
    return GAException.retryLater('unavailable', `the server is writing ${this.max} large responses, its limit${why}; try again shortly`, 1);
  }

  private tell(atLimit: boolean): void {
    for (const listener of this.listeners) listener(atLimit);
  }
}

/** The slots of large responses a server with these limits has (`--max-streams`, `--stream-wait-ms`). */
export const streamSlotsOf = (limits: ServerLimits) => new StreamSlots(limits.maxStreams, limits.streamWaitMs);

/**
 * The longest stretch of synchronous work a streamed reply does before other connections get their
 * turn; streams then take turns, one slice per turn of the event loop (SliceQueue).
 */
export const SLICE_MS = 4;

/**
 * Large responses waiting for their next slice of work (a stream's next stretch or large piece),
 * served one per turn of the event loop: however many are being written, a turn holds at most
 * one slice, so new connections are accepted and small requests answered between any two slices.
 */
export class SliceQueue {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** Resolves when it is this caller's turn. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()!();
      this.schedule(); // queued from inside the check phase: runs on the next turn
    });
  }
}

/**
 * Pieces at least this large are written in a turn of the event loop of their own: a 1 MB write to a
 * socket is 0.3-1 ms of copying in the kernel, and a turn that wrote one piece of each of several
 * streams kept a new connection waiting for all of them.
 */
export const LARGE_PIECE = 64 * 1024;

/**
 * A sink that hands control back to the event loop once `sliceMs` of synchronous work has passed
 * since it last did, and before each large piece, waiting its turn in `queue`, so that large
 * responses cannot hold up the requests of other connections.
 */
export function yieldingSink(sink: JsonSink, sliceMs: number, queue: SliceQueue): JsonSink {
  let sliceStart = performance.now();
  const restart = () => void (sliceStart = performance.now());
  const afterWrite = (waited: void | Promise<void>) => {
    if (waited) return waited.then(restart);
    if (performance.now() - sliceStart < sliceMs) return;
    return queue.next().then(restart);
  };
  return {
    write(chunk) {
      if (chunk.length < LARGE_PIECE) return afterWrite(sink.write(chunk));
      return queue.next().then(() => {
        restart();
        return afterWrite(sink.write(chunk));
      });
    },
    // A page held until complete takes its turns here, so no slice runs past sliceMs by much.
    pause: () => afterWrite(sink.pause?.()),
  };
}
