/**
 * Variant pages built off the main thread. Building a page of a 2,504-sample cohort is tens of
 * milliseconds of CPU per 8 MB; on the main thread, even cut into slices, a CPU-bound event loop
 * answered a new connection's GET /info in 40-220 ms (median) while 4 clients paged, against 1 ms
 * idle (bench P6, README). In worker threads the main thread only moves bytes, and a larger server's
 * cores all build pages.
 *
 * Each request goes to one worker, chosen by its query (without the page token), so the pages of one
 * query keep finding the worker that remembers where the next page starts.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { GAException, type ErrorKindName } from '../../protocol/errors.js';
import type { PagingLimits } from '../../protocol/paging.js';
import type { Reply } from '../../protocol/reply.js';
import type { NamingForm } from '../../protocol/schema.js';

/** The nice value of page workers (0 is the main thread's; 19 the lowest priority). */
export const PAGE_WORKER_NICENESS = 10;

export interface WorkerSettings {
  registryLocation: string;
  paging: PagingLimits;
  registryCacheMs: number;
}

export type ToWorker =
  | { op: 'search' | 'get'; id: number; arg: unknown; form: NamingForm }
  | { op: 'ack'; id: number }
  | { op: 'cancel'; id: number }
  | { op: 'close'; id: 0 };

export type FromWorker =
  | { type: 'ready'; id: number }
  | { type: 'error'; id: number; kind: ErrorKindName; message: string; retryAfterSeconds?: number }
  | { type: 'chunk'; id: number; bytes: Uint8Array }
  | { type: 'end'; id: number };

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
const ENTRY = new URL('./page-worker.ts', import.meta.url).href;
const BOOT = `import(${JSON.stringify(TSX_API)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(ENTRY)}));`;

class PageWorker {
  private readonly worker: Worker;
  readonly inboxes = new Map<number, Inbox>();
  exited = false;

  constructor(settings: WorkerSettings) {
    this.worker = new Worker(BOOT, { eval: true, workerData: settings });
    this.worker.on('message', (m: FromWorker) => this.inboxes.get(m.id)?.put(m));
    // A dead worker fails its requests as an internal fault, as one it reported itself would.
    const fail = (message: string) => {
      this.exited = true;
      for (const inbox of this.inboxes.values()) inbox.put({ type: 'error', id: 0, kind: 'internal', message });
    };
    this.worker.on('error', (e) => fail(`page worker failed: ${e.stack ?? e.message}`));
    this.worker.on('exit', (code) => fail(`page worker exited (${code})`));
  }

  send(message: ToWorker): void {
    this.worker.postMessage(message);
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
    return error;
  }
  if (message.type === 'error') return new Error(message.message);
  return new Error(`unexpected ${message.type} from a page worker`);
}

export function pageWorkers(count: number, settings: WorkerSettings) {
  const workers: Array<PageWorker | undefined> = new Array(count);
  let nextId = 1;

  function workerFor(key: string): PageWorker {
    const index = createHash('sha1').update(key).digest().readUInt32BE(0) % count;
    let worker = workers[index];
    if (!worker || worker.exited) workers[index] = worker = new PageWorker(settings);
    return worker;
  }

  /** Sends the request to its worker; resolves once the worker has checked it (every 4xx happens here). */
  async function run(op: 'search' | 'get', arg: unknown, form: NamingForm, key: string): Promise<Reply> {
    const worker = workerFor(key);
    const id = nextId++;
    const inbox = new Inbox();
    worker.inboxes.set(id, inbox);
    worker.send({ op, id, arg, form });
    const first = await inbox.take();
    if (first.type !== 'ready') {
      worker.inboxes.delete(id);
      throw rethrown(first);
    }
    return {
      kind: 'stream',
      async write(sink) {
        let ended = false;
        try {
          for (;;) {
            const message = await inbox.take();
            if (message.type === 'end') return void (ended = true);
            if (message.type !== 'chunk') {
              ended = true;
              throw rethrown(message);
            }
            await sink.write(message.bytes);
            worker.send({ op: 'ack', id });
          }
        } finally {
          worker.inboxes.delete(id);
          // The client went away (or the socket failed): the worker stops building the page.
          if (!ended && !worker.exited) worker.send({ op: 'cancel', id });
        }
      },
    };
  }

  return {
    searchVariants(body: { pageToken?: string } & Record<string, unknown>, form: NamingForm): Promise<Reply> {
      const { pageToken: _token, pageSize: _size, ...query } = body;
      return run('search', body, form, JSON.stringify(query));
    },
    getVariant: (id: string, form: NamingForm) => run('get', id, form, id),
    async close(): Promise<void> {
      await Promise.all(workers.filter((w): w is PageWorker => w !== undefined && !w.exited).map((w) => w.close()));
    },
  };
}
