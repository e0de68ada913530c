/**
 * Large replies built off the main thread, for any area. Building a page of a 2,504-sample cohort is
 * tens of milliseconds of CPU per 8 MB; on the main thread, even cut into slices, a CPU-bound event
 * loop answered a new connection's GET /info in 40-220 ms (median) while 4 clients paged, against 1 ms
 * idle (bench P6). In worker threads the main thread only moves bytes, and a larger server's cores all
 * build pages; the workers also build the next page of a search ahead of its request (page-builder.ts).
 *
 * An area registers a module of operations (operations.ts) and runs them through the pool; every
 * area shares the same workers, messages, and cancel, ack and backpressure path. Each request goes to
 * one worker, chosen by its query without the page token, so the pages of one query keep finding the
 * worker that remembers where the next page starts, and that built it ahead.
 */
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { whenSent } from '../protocol/chunk-pool.js';
import { GAException } from '../protocol/errors.js';
import type { ContentCoding, Reply } from '../protocol/reply.js';
import type { NamingForm } from '../protocol/schema.js';
import { canonicalJson, type FromWorker, type ToWorker, type WorkerSettings } from './operations.js';

/** Tells whether the server writes as many large responses as it may, each time that changes. */
export interface StreamLoad {
  watch(listener: (atLimit: boolean) => void): void;
}

/** Messages of one request, read in order as they come. */
class Inbox {
  private readonly queue: FromWorker[] = [];
  private waiting?: (m: FromWorker) => void;

  put(message: FromWorker): void {
    if (this.waiting) {
      const deliver = this.waiting;
      this.waiting = undefined;
      deliver(message);
    } else this.queue.push(message);
  }

  take(): Promise<FromWorker> {
    const next = this.queue.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}

// The worker runs the TypeScript sources as the main thread does: through tsx's loader.
const TSX_API = import.meta.resolve('tsx/esm/api');
const ENTRY = new URL('./worker.ts', import.meta.url).href;
const BOOT = `import(${JSON.stringify(TSX_API)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(ENTRY)}));`;

/**
 * Chunk buffers written and not yet handed back that make a message of their own; fewer go back with
 * the worker's next run or ack (a message costs both threads a wake-up).
 */
const SPARES_HELD = 4;

/**
 * The old generation a page worker's heap starts with, in MB. V8 starts a full collection once the old
 * generation, plus the memory outside the heap allocated since the last one, nears a limit it derives
 * from the live heap (~17 MB in a worker, so ~40 MB). A worker compressing pages ahead moves a few MB of
 * buffers through that count per page: it ran 15-33 full collections per pass of P1's cohort in `br`
 * (a few ms of its own time each, the rest on V8's helper threads), and still 5-8 per uncompressed pass
 * after. Started at 64 MB: 0-6 per pass, and the peak memory of P1 did not move (docs/performance.md).
 */
const WORKER_INITIAL_OLD_SPACE_MB = 64;

/**
 * Sets the initial old generation for the isolates made from now on (the page workers; the main
 * thread's heap is made already), unless Node was started with a setting of its own.
 */
function sizeWorkerHeaps(): void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /initial[-_]old[-_]space[-_]size|initial[-_]heap[-_]size/.test(arg));
  if (!given) v8.setFlagsFromString(`--initial-old-space-size=${WORKER_INITIAL_OLD_SPACE_MB}`);
}

class PageWorker {
  private readonly worker: Worker;
  readonly inboxes = new Map<number, Inbox>();
  exited = false;
  private spares: ArrayBuffer[] = [];

  constructor(settings: WorkerSettings) {
    this.worker = new Worker(BOOT, { eval: true, workerData: settings });
    this.worker.on('message', (m: FromWorker) => this.inboxes.get(m.id)?.put(m));
    // A dead worker fails its requests as an internal fault, as one it reported itself would.
    const fail = (message: string) => {
      this.exited = true;
      this.spares = [];
      for (const inbox of this.inboxes.values()) inbox.put({ type: 'error', id: 0, kind: 'internal', message });
    };
    this.worker.on('error', (e) => fail(`page worker failed: ${e.stack ?? e.message}`));
    this.worker.on('exit', (code) => fail(`page worker exited (${code})`));
  }

  send(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  /** A chunk's buffer, written: back to the worker, to be filled again. */
  spare(buffer: ArrayBuffer): void {
    // Each chunk owns its buffer; a buffer named twice, or already moved, would fail the whole message.
    if (this.exited || buffer.byteLength === 0 || this.spares.includes(buffer)) return;
    this.spares.push(buffer);
    if (this.spares.length >= SPARES_HELD) this.sendWithSpares({ op: 'spare', id: 0, spares: [] });
  }

  /** Posts a run, an ack or a spare message carrying (and moving) the spare buffers gathered so far. */
  sendWithSpares(message: Extract<ToWorker, { op: 'run' | 'ack' | 'spare' }>): void {
    const spares = this.spares;
    this.spares = [];
    if (spares.length) message.spares = spares;
    this.worker.postMessage(message, spares);
  }

  /** The request will not be read any further: the worker stops building it. */
  cancel(id: number): void {
    this.inboxes.delete(id);
    if (!this.exited) this.send({ op: 'cancel', id });
  }

  close(): Promise<void> {
    this.send({ op: 'close', id: 0 });
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    const timer = setTimeout(() => void this.worker.terminate(), 2000);
    return exited.finally(() => clearTimeout(timer));
  }
}

/**
 * A worker's report of a failure, as the main thread throws it: a GAException keeps its kind (a damaged
 * file found while a page is built is still a 503 naming the set), anything else is an internal fault.
 */
function rethrown(message: FromWorker): Error {
  if (message.type === 'error' && message.kind !== 'internal') {
    const error = new GAException(message.kind, message.message);
    error.retryAfterSeconds = message.retryAfterSeconds;
    error.logDetail = message.logDetail;
    return error;
  }
  return new Error(message.type === 'error' ? message.message : `unexpected ${message.type} from a page worker`);
}

/** Runs the operations of one registered module. */
export interface PageOperationsHandle {
  /** Sends the request to its worker; resolves once the worker has checked it (every 4xx happens there) and sent the first bytes. */
  run(name: string, arg: unknown, form: NamingForm, coding?: ContentCoding): Promise<Reply>;
}

export type PageWorkerPool = ReturnType<typeof pageWorkerPool>;

export function pageWorkerPool(count: number, settings: Omit<WorkerSettings, 'modules'>, load?: StreamLoad) {
  if (count > 0) sizeWorkerHeaps();
  const modules: string[] = [];
  const workers: Array<PageWorker | undefined> = new Array(count);
  let started = false;
  let atLimit = false;
  let nextId = 1;

  load?.watch((now) => {
    atLimit = now;
    for (const worker of workers) if (worker && !worker.exited) worker.send({ op: 'limit', id: 0, atLimit });
  });

  function workerAt(index: number): PageWorker {
    let worker = workers[index];
    if (!worker || worker.exited) {
      started = true;
      workers[index] = worker = new PageWorker({ ...settings, modules });
      if (atLimit) worker.send({ op: 'limit', id: 0, atLimit });
    }
    return worker;
  }

  async function run(module: number, name: string, arg: unknown, form: NamingForm, coding: ContentCoding | undefined): Promise<Reply> {
    // The pages of one query (whatever the token and page size) go to one worker. With one worker (the
    // default on two cores) neither the query's text (~2 µs of the main thread) nor its digest (~5 µs) is made.
    let index = 0;
    if (count > 1) {
      const query = arg !== null && typeof arg === 'object' ? { ...arg, pageToken: undefined, pageSize: undefined } : arg;
      index = createHash('sha1').update(`${module}\0${name}\0${canonicalJson(query)}`).digest().readUInt32BE(0) % count;
    }
    const worker = workerAt(index);
    const id = nextId++;
    const inbox = new Inbox();
    worker.inboxes.set(id, inbox);
    worker.sendWithSpares({ op: 'run', id, module, name, arg, form, coding });
    const first = await inbox.take();
    if (first.type !== 'chunk') {
      worker.inboxes.delete(id);
      throw rethrown(first);
    }
    return {
      kind: 'stream',
      coded: first.start?.coded,
      async write(sink) {
        let ended = false;
        try {
          for (let message = first; ; ) {
            for (const bytes of message.chunks) {
              // The buffer goes back once written: kept here until the collector found it, it counted as
              // external memory, and at hundreds of MB/s that made a full collection of the main thread's
              // heap every ~0.1 s, each a pause of 3-20 ms for every connection.
              const buffer = bytes.buffer as ArrayBuffer;
              whenSent(bytes, () => worker.spare(buffer));
              await sink.write(bytes);
            }
            if (message.end) return void (ended = true);
            worker.sendWithSpares({ op: 'ack', id });
            const next = await inbox.take();
            if (next.type !== 'chunk') {
              ended = true;
              throw rethrown(next);
            }
            message = next;
          }
        } finally {
          // The client went away (or the socket failed): the worker stops building the page.
          if (ended) worker.inboxes.delete(id);
          else worker.cancel(id);
        }
      },
      // Refused before a byte was written (the server is at its limit of large responses).
      abandon: () => worker.cancel(id),
    };
  }

  return {
    /** Registers a module of page operations (before the first request); returns how to run them. */
    operations(moduleUrl: string): PageOperationsHandle {
      if (started) throw new Error('page operations must be registered before the first request');
      const index = modules.push(moduleUrl) - 1;
      return { run: (name, arg, form, coding) => run(index, name, arg, form, coding) };
    },
    async close(): Promise<void> {
      await Promise.all(workers.filter((w): w is PageWorker => w !== undefined && !w.exited).map((w) => w.close()));
    },
  };
}
