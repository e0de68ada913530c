/**
 * What a page worker does with the requests the main thread sends it: runs the operation, hands the
 * JSON to the main thread chunk by chunk (a bounded number in flight: the page's building waits while
 * the main thread has not written them, so the socket's backpressure reaches it), and builds the next
 * page of a search ahead of its request.
 *
 * Read-ahead. Clients page one request at a time: the server idles while the client reads a page, and
 * the client idles while the server builds the next. So once a page with a nextPageToken is built, the
 * same request with that token, in the same naming form, is built into memory, and the one after it
 * (PAGES_AHEAD); the client's next request takes the first (or joins its build while it runs). Such a
 * page is exact: the same operation on the same request writes the same bytes, and it is served only
 * while the registrations it depends on are unchanged, as read through the registry cache at the time
 * of the request (`registration`), and at most `holdMs` (no longer than the registry cache time) after
 * its build began. A page built ahead that
 * fails is dropped without a word: the request then builds its own page and reports its own error.
 * Pages are built ahead only while the server is below its limit of large responses, two pages ahead
 * per query, within `maxBytes` per worker; a page found stale drops the pages built after it.
 *
 * A client that takes a content coding (gzip, br) asks for its next page in it too: a page built ahead
 * for it is compressed here once it is complete (`encode`), so that its request costs no compression;
 * the page after it is built meanwhile (compression runs on the thread pool).
 * A request that comes while its page is still being built takes it as it is, as without a coding (the
 * main thread compresses it as it goes); one that comes while it is being compressed waits for that.
 */
import { adopt, pieceSent, takeForTransfer } from '../protocol/chunk-pool.js';
import { GAException } from '../protocol/errors.js';
import { pageTokenAtEnd, type ContentCoding, type JsonSink, type JsonStream } from '../protocol/reply.js';
import { TemporarilyUnavailable } from '../unavailable.js';
import { canonicalJson, type FromWorker, type PageOperation, type PageOperations, type ReadAheadLimits, type ReplyStart, type ToWorker } from './operations.js';

export type Post = (message: FromWorker, transfer?: ArrayBuffer[]) => void;
/** A whole page, held in pieces of `size` bytes in all, compressed into one buffer of its own; undefined when it goes as it is. */
export type Encode = (coding: ContentCoding, pieces: Uint8Array[], size: number) => Promise<Uint8Array | undefined>;
type RunMessage = Extract<ToWorker, { op: 'run' }>;

/** Thrown into a page's writer once nobody wants the page any more. */
const CANCELLED = new Error('the page is no longer wanted');
/** What reading a page built ahead throws when its build failed. */
const AHEAD_FAILED = new Error('the page built ahead failed');
/**
 * Chunks handed to the main thread and not yet written there, at most: four, so that the socket's
 * window (SOCKET_WINDOW in src/http/compression.ts, 4 MB) can be kept full; a request holds at most
 * ~4 MB in flight.
 */
const CHUNKS_IN_FLIGHT = 4;
/**
 * Pages built ahead of the last one asked for, per query: with one, the worker stopped after each
 * page until the client asked for it; with two, it builds on while the client reads.
 */
const PAGES_AHEAD = 2;
/** Bytes of a page's end kept to read its nextPageToken from (a token is at most 4,096 characters). */
const TAIL_BYTES = 8192;

/** Resolves after the messages that came meanwhile are handled (a request waits no longer than ~1 MB of building). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The error as the main thread will rethrow it: the protocol's kinds (a damaged file: 503) keep their kind. */
function describeError(e: unknown, id: number): FromWorker & { type: 'error' } {
  if (e instanceof GAException) return { type: 'error', id, kind: e.kind, message: e.message, retryAfterSeconds: e.retryAfterSeconds, logDetail: e.logDetail };
  if (e instanceof TemporarilyUnavailable) return { type: 'error', id, kind: 'unavailable', message: e.message, retryAfterSeconds: e.retryAfterSeconds };
  return { type: 'error', id, kind: 'internal', message: (e as Error)?.stack ?? String(e) };
}

/**
 * Buffers the main thread has written and handed back, smallest first, filled again instead of a new
 * allocation per chunk (a new one per chunk made this thread's collector run several times a second).
 */
const spares: ArrayBuffer[] = [];
const MAX_SPARES = 8;

/** A buffer this thread may fill again: a reply buffer of the chunk pool goes back there, any other is a spare. */
function takeBack(buffer: ArrayBuffer): void {
  if (!adopt(buffer)) keepSpare(buffer);
}

function keepSpare(buffer: ArrayBuffer): void {
  const at = spares.findIndex((b) => b.byteLength >= buffer.byteLength);
  spares.splice(at < 0 ? spares.length : at, 0, buffer);
  if (spares.length > MAX_SPARES) spares.shift();
}

/** The least a piece holds to be moved in its pooled buffer as it lies rather than copied. */
const MOVED_AS_IT_LIES = 64 * 1024;

/**
 * A piece of JSON as bytes of its own (a spare that fits, else a new buffer), so its buffer can be
 * moved to the main thread without a second copy; the writer's buffer is then free to be filled again
 * (chunk-pool.ts).
 */
function ownCopy(chunk: string | Uint8Array): Uint8Array {
  // The last piece of a buffer its writer is done with is moved as it lies, not copied, unless it
  // holds little of it: a page of a few reads moved in its 1 MB chunk made the main thread take in a
  // megabyte per page, and V8 collect its heap every few dozen pages (memory taken in from outside
  // the heap counts towards starting a collection).
  if (typeof chunk !== 'string' && chunk.byteLength >= MOVED_AS_IT_LIES && takeForTransfer(chunk)) return chunk;
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  const at = spares.findIndex((b) => b.byteLength >= bytes.byteLength);
  const own = new Uint8Array(at < 0 ? new ArrayBuffer(bytes.byteLength) : spares.splice(at, 1)[0], 0, bytes.byteLength);
  own.set(bytes);
  pieceSent(chunk);
  return own;
}

/**
 * The last bytes of a page, to read its nextPageToken from. Kept as bytes and read as text once, when
 * the token is asked for: kept as text, each chunk made ~16 KB of strings, most of what a page
 * worker allocated for reads and a third of it for variants (sampled allocations).
 */
export class Tail {
  private readonly bytes = new Uint8Array(TAIL_BYTES);
  /** How many of `bytes`, from its start, hold the page's last bytes. */
  private filled = 0;

  add(chunk: Uint8Array): void {
    const n = chunk.byteLength;
    if (n >= TAIL_BYTES) {
      this.bytes.set(chunk.subarray(n - TAIL_BYTES));
      this.filled = TAIL_BYTES;
      return;
    }
    const kept = Math.min(this.filled, TAIL_BYTES - n);
    if (kept < this.filled) this.bytes.copyWithin(0, this.filled - kept, this.filled);
    this.bytes.set(chunk, kept);
    this.filled = kept + n;
  }

  /**
   * Chunks that follow one another: only those that reach into their last TAIL_BYTES are read. A page
   * built ahead goes in one message of ~8 chunks, and reading the end of each took 35-37 µs of the
   * wait for its first byte.
   */
  addAll(chunks: Uint8Array[]): void {
    let first = chunks.length;
    for (let bytes = 0; first > 0 && bytes < TAIL_BYTES; ) bytes += chunks[--first].byteLength;
    for (let i = first; i < chunks.length; i++) this.add(chunks[i]);
  }

  token(): string | undefined {
    return pageTokenAtEnd(Buffer.from(this.bytes.buffer, 0, this.filled).toString('latin1'));
  }
}

/** A page built ahead of its request: its chunks so far, and how its build went. */
class AheadPage {
  private chunks: Array<Uint8Array | undefined> = [];
  bytes = 0;
  /**
   * The memory its chunks keep: their buffers, larger than the bytes they hold when a page of a hundred
   * reads is moved in its pooled 1 MB chunk (ByteChunks.forPage), or a piece was copied into a spare.
   */
  held = 0;
  /**
   * Checking the request, then writing the page, then written (its JSON complete and its next token
   * known; being compressed, if it is); it ends done or failed.
   */
  state: 'checking' | 'writing' | 'written' | 'done' | 'failed' = 'checking';
  /** A request took it (it is no longer in the worker's store). */
  taken = false;
  /** The content coding its chunks are in, once compressed (it is then one chunk). */
  coded?: ContentCoding;
  /** Its compression has begun: its chunks are being read by the compressor, and must not be moved. */
  encoding = false;
  /** Taken by its request before its compression began: it goes as it is. */
  asIs = false;
  cancelled = false;
  readonly tail = new Tail();
  timer?: NodeJS.Timeout;
  private wakers: Array<() => void> = [];

  constructor(
    readonly key: string,
    /** The query it is a page of (its request without the page token): the pages built ahead of one query form a chain. */
    readonly chain: string,
    /** How many pages after the last page asked for of its query it is (1: the very next). */
    public depth: number,
    /** The registrations the page depends on, read when its build began. */
    readonly registration: Promise<string | undefined>,
  ) {}

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.bytes += chunk.byteLength;
    this.held += chunk.buffer.byteLength;
    this.tail.add(chunk);
    this.wake();
  }

  /** Its chunks so far, as they lie. */
  pieces(): Uint8Array[] {
    return this.chunks.filter((c): c is Uint8Array => c !== undefined);
  }

  /** Replaces its chunks, before anyone read them, by the page compressed. */
  recode(whole: Uint8Array, coding: ContentCoding): void {
    this.chunks = [whole];
    this.bytes = whole.byteLength;
    this.held = whole.buffer.byteLength;
    this.coded = coding;
  }

  settle(state: AheadPage['state']): void {
    this.state = state;
    this.wake();
  }

  /** Whether all its JSON is written, compressed or not: its next page's token is known. */
  get written(): boolean {
    return this.state === 'written' || this.state === 'done';
  }

  /** Its nextPageToken once all its JSON is written; undefined when it has none or failed before. */
  async writtenToken(): Promise<string | undefined> {
    while (this.state === 'checking' || this.state === 'writing') await this.changed();
    return this.written ? this.tail.token() : undefined;
  }

  /** True once the page passed its request's checks, false when it failed before. */
  async checked(): Promise<boolean> {
    while (this.state === 'checking') await this.changed();
    return this.state !== 'failed' || this.chunks.length > 0;
  }

  /** Resolves once the page is done (compressed, if it is) or failed. */
  async finished(): Promise<void> {
    while (this.state !== 'done' && this.state !== 'failed') await this.changed();
  }

  /**
   * Its chunks in order, all those built so far at each step (`last` when they end the page), so that
   * a page complete before its request goes in one message; throws AHEAD_FAILED when the build fails.
   */
  async *read(): AsyncGenerator<{ chunks: Uint8Array[]; last: boolean }> {
    for (let i = 0; ; ) {
      if (i < this.chunks.length) {
        const chunks = this.chunks.slice(i) as Uint8Array[];
        this.chunks.fill(undefined, i); // moved to the main thread: nothing left to keep
        i = this.chunks.length;
        yield { chunks, last: this.state === 'done' };
      } else if (this.state === 'done') return;
      else if (this.state === 'failed') throw AHEAD_FAILED;
      else await this.changed();
    }
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.wakers.push(resolve));
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }
}

/** A request being answered: whether the main thread still wants it, and its chunks not yet written there. */
interface Request {
  cancelled: boolean;
  inFlight: number;
  /** The writer waiting for a chunk to be written before it sends another. */
  waiting?: { resolve: () => void; reject: (e: Error) => void };
}

export class PageBuilder {
  private readonly requests = new Map<number, Request>();
  private readonly ahead = new Map<string, AheadPage>();
  /** Memory held by the pages in `ahead` (AheadPage.held; taken pages belong to their request). */
  private aheadBytes = 0;
  private atLimit = false;
  /** The builds of pages ahead under way. */
  private readonly building = new Set<Promise<void>>();
  private readonly chains = new WeakMap<RunMessage, string>();

  constructor(
    /** The operations of each registered module, by module index. */
    private readonly operations: PageOperations[],
    private readonly limits: ReadAheadLimits,
    private readonly post: Post,
    /** How pages built ahead are compressed for clients that take a coding; absent: they are kept as they are. */
    private readonly encode?: Encode,
  ) {}

  receive(message: ToWorker): void {
    if ('spares' in message) for (const buffer of message.spares ?? []) takeBack(buffer);
    switch (message.op) {
      case 'run':
        void this.serve(message);
        return;
      case 'ack': {
        const request = this.requests.get(message.id);
        if (request) {
          request.inFlight--;
          request.waiting?.resolve();
          request.waiting = undefined;
        }
        return;
      }
      case 'cancel': {
        const request = this.requests.get(message.id);
        if (request) {
          request.cancelled = true;
          request.waiting?.reject(CANCELLED);
          request.waiting = undefined;
        }
        return;
      }
      case 'spare':
        return;
      case 'limit':
        this.atLimit = message.atLimit;
        // Builds ahead give way to the requests themselves; pages already built stay (they cost no CPU).
        if (message.atLimit) for (const page of [...this.ahead.values()]) if (page.state !== 'done') this.drop(page);
        return;
      case 'close':
        for (const page of [...this.ahead.values()]) this.drop(page);
        return;
    }
  }

  /**
   * The key of a query's pages whatever their token (its chain): the request's module, operation, form
   * and coding, and its arg without the token. Kept with the request: its pages ahead are looked up
   * several times per page, and the arg's canonical JSON was the worker's costliest function per page
   * of a few reads.
   */
  private chainOf(message: RunMessage): string {
    let chain = this.chains.get(message);
    if (chain === undefined) {
      const query = { ...(message.arg as object), pageToken: undefined };
      chain = `${message.module}\0${message.name}\0${message.form}\0${message.coding ?? ''}\0${canonicalJson(query)}`;
      this.chains.set(message, chain);
    }
    return chain;
  }

  /** The key of the page of the query of `message` that `token` asks for (undefined: its first page). */
  private keyOf(message: RunMessage, token: unknown): string {
    return `${this.chainOf(message)}\0${token === undefined ? '' : JSON.stringify(token)}`;
  }

  private async serve(message: RunMessage): Promise<void> {
    const { id, arg, form } = message;
    const operation = this.operations[message.module]?.[message.name];
    if (!operation) {
      this.post(describeError(new Error(`no page operation '${message.name}' in module ${message.module}`), id));
      return;
    }
    const request: Request = { cancelled: false, inFlight: 0 };
    this.requests.set(id, request);
    try {
      let page = operation.registration ? this.take(this.keyOf(message, (arg as { pageToken?: unknown } | null)?.pageToken)) : undefined;
      if (page && !(await this.stillExact(page, operation, arg))) page = undefined;
      // The next page is built ahead once this one is written, while it is compressed if it is.
      if (page) void page.writtenToken().then((token) => this.extend(message, token));
      if (page && this.codingAhead(message)) {
        // Still being built: it goes as it is. Being compressed: served once compressed (its chunks
        // are the compressor's meanwhile); one whose build failed is built again by the request.
        if (!page.encoding && page.state !== 'done') page.asIs = true;
        else {
          await page.finished();
          if (page.state !== 'done') page = undefined;
        }
      }
      let stream: JsonStream | undefined;
      if (!page) {
        try {
          stream = await operation.start(arg);
        } catch (e) {
          this.post(describeError(e, id));
          return;
        }
      }
      const out = this.sender(id, request, { ahead: page !== undefined, coded: page?.coded });
      try {
        if (page) {
          try {
            for await (const { chunks, last } of page.read()) await out.send(chunks, last);
          } catch (e) {
            if (e !== AHEAD_FAILED) throw e;
            // Its build failed midway: the request builds the page itself, after what was already sent
            // (the same bytes), and reports its own error if it fails too.
            stream = await operation.start(arg);
            await stream.write(out.skipping(out.sent), form);
            if (operation.registration) this.extend(message, out.tail.token());
          }
        } else {
          await stream!.write(out, form);
          if (operation.registration) this.extend(message, out.tail.token());
        }
        out.end();
      } catch (e) {
        if (e !== CANCELLED) this.post(describeError(e, id));
      }
    } finally {
      this.requests.delete(id);
    }
  }

  /**
   * A sink that hands chunks to the main thread; it waits while CHUNKS_IN_FLIGHT messages are not
   * written there. Its first message says how the reply was built (`start`), its last ends it.
   */
  private sender(id: number, request: Request, start: ReplyStart) {
    const tail = new Tail();
    const post = this.post;
    let started = false;
    let ended = false;
    const sender = {
      sent: 0,
      tail,
      /** Sends chunks the worker owns (moved, not copied); with `last`, they end the reply. */
      send(chunks: Uint8Array[], last = false): Promise<void> {
        if (request.cancelled) return Promise.reject(CANCELLED);
        tail.addAll(chunks);
        for (const chunk of chunks) sender.sent += chunk.byteLength;
        const message: FromWorker = { type: 'chunk', id, chunks };
        if (!started) message.start = start;
        if (last) message.end = true;
        started = true;
        ended = last;
        post(message, [...new Set(chunks.map((chunk) => chunk.buffer as ArrayBuffer))]);
        if (last) return Promise.resolve(); // the main thread acks no last message
        if (++request.inFlight < CHUNKS_IN_FLIGHT) return Promise.resolve();
        return new Promise<void>((resolve, reject) => (request.waiting = { resolve, reject }));
      },
      /** Ends the reply, unless its last chunks did. */
      end(): void {
        if (!ended && !request.cancelled) void sender.send([], true);
      },
      write: (chunk: string | Uint8Array) => sender.send([ownCopy(chunk)]),
      /** Other requests (and pages built ahead) get their turn while a held page is built. */
      pause: nextTurn,
      /** The same sink, leaving out the first `skip` bytes written to it. */
      skipping(skip: number): JsonSink {
        let left = skip;
        return {
          write(chunk) {
            const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            if (left >= bytes.byteLength) {
              left -= bytes.byteLength;
              return;
            }
            const rest = bytes.subarray(left);
            left = 0;
            return sender.write(rest);
          },
        };
      },
    };
    return sender;
  }

  /** Takes the page built ahead for this key out of the store, if there is one. */
  private take(key: string): AheadPage | undefined {
    const page = this.ahead.get(key);
    if (!page) return undefined;
    this.forget(page);
    page.taken = true;
    return page;
  }

  /** Whether a page built ahead is what the request would get now; when not, its build stops. */
  private async stillExact(page: AheadPage, operation: PageOperation, arg: unknown): Promise<boolean> {
    const [then, now] = await Promise.all([page.registration, operation.registration!(arg).catch(() => undefined)]);
    if (then === undefined || now !== then) {
      page.cancelled = true;
      // The pages built after it were built under the same registrations: none of them is exact either.
      for (const later of [...this.ahead.values()]) if (later.chain === page.chain) this.drop(later);
      return false;
    }
    return page.checked();
  }

  /**
   * Makes sure the PAGES_AHEAD pages after the one that ends with `token` are built or being built:
   * pages already built are walked through, the first missing one is started (a page, once built,
   * extends the chain from itself). `depth` is how far after the last page asked for that page is.
   */
  private extend(message: RunMessage, token: string | undefined, depth = 1): void {
    for (; token && depth <= PAGES_AHEAD; depth++) {
      const page = this.ahead.get(this.keyOf(message, token));
      if (!page) return this.buildAhead(message, { ...(message.arg as Record<string, unknown>), pageToken: token }, depth);
      page.depth = depth;
      if (!page.written) return;
      token = page.tail.token();
    }
  }

  /** Starts building the page of `arg` (the request of `message` with a later token), unless the limits say no. */
  private buildAhead(message: RunMessage, arg: Record<string, unknown>, depth: number): void {
    const operation = this.operations[message.module][message.name];
    if (!operation.registration || this.atLimit) return;
    if (this.limits.maxBytes <= 0 || this.limits.holdMs <= 0 || this.aheadBytes >= this.limits.maxBytes) return;
    const key = this.keyOf(message, arg.pageToken);
    const page = new AheadPage(key, this.chainOf(message), depth, operation.registration(arg).catch(() => undefined));
    this.ahead.set(key, page);
    page.timer = setTimeout(() => this.drop(page), this.limits.holdMs);
    page.timer.unref();
    const build = (async () => {
      try {
        const stream = await operation.start(arg);
        if (page.cancelled) throw CANCELLED;
        page.settle('writing');
        await stream.write({ write: (chunk) => this.keepAhead(page, chunk), pause: nextTurn }, message.form);
        page.settle('written');
        // The next page is built while this one is compressed (on the thread pool): one after the
        // other, a client that takes a coding waited for both per page.
        this.extend(message, page.tail.token(), page.depth + 1);
        const coding = this.codingAhead(message);
        if (coding && !page.asIs) await this.encodeAhead(page, coding);
        page.settle('done');
      } catch {
        // Never reported: the request, if it comes, builds its page itself.
        page.settle('failed');
        this.forget(page);
      }
    })();
    this.building.add(build);
    void build.finally(() => this.building.delete(build));
  }

  /** The coding the pages built ahead of this request's query are compressed in; undefined: they are kept as they are. */
  private codingAhead(message: RunMessage): ContentCoding | undefined {
    return this.encode ? message.coding : undefined;
  }

  /** Compresses a page built ahead, complete and not yet read; its uncompressed buffers are filled again. */
  private async encodeAhead(page: AheadPage, coding: ContentCoding): Promise<void> {
    page.encoding = true;
    const held = page.held;
    const pieces = page.pieces();
    const whole = await this.encode!(coding, pieces, page.bytes);
    if (page.cancelled) throw CANCELLED;
    if (!whole) return; // under the compression threshold: it goes as it is
    page.recode(whole, coding);
    for (const piece of pieces) takeBack(piece.buffer as ArrayBuffer);
    if (!page.taken) this.aheadBytes += page.held - held;
  }

  /** Resolves once no page is being built ahead (what a test waits for before changing the registry). */
  async aheadSettled(): Promise<void> {
    while (this.building.size) await Promise.all([...this.building]);
  }

  /** Keeps a chunk of a page being built ahead; gives way to other work between chunks. */
  private keepAhead(page: AheadPage, chunk: string | Uint8Array): Promise<void> {
    if (page.cancelled) throw CANCELLED;
    const own = ownCopy(chunk);
    if (!page.taken) {
      // What the page will hold more once it keeps this chunk (AheadPage.push counts the same).
      const held = own.buffer.byteLength;
      if (this.aheadBytes + held > this.limits.maxBytes) {
        this.drop(page);
        throw CANCELLED;
      }
      this.aheadBytes += held;
    }
    page.push(own);
    // Requests (and their acks) are handled between any two chunks of a page built ahead.
    return nextTurn();
  }

  /** Drops a page from the store and stops its build. */
  private drop(page: AheadPage): void {
    if (page.taken) return;
    page.cancelled = true;
    this.forget(page);
  }

  /** Takes a page out of the store (its bytes no longer count against the limit). */
  private forget(page: AheadPage): void {
    if (this.ahead.get(page.key) !== page) return;
    this.ahead.delete(page.key);
    this.aheadBytes -= page.held;
    clearTimeout(page.timer);
  }
}
