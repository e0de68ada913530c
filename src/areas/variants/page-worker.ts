/**
 * A worker thread that builds variant pages (and variants by id) with the same service the main
 * thread would use, and hands their JSON to the main thread chunk by chunk: the main thread only
 * accepts connections and writes bytes, so one busy client cannot delay the others (page-workers.ts).
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { GAException } from '../../protocol/errors.js';
import type { NamingForm } from '../../protocol/schema.js';
import { openRegistry } from '../../registry/registry.js';
import { TemporarilyUnavailable } from '../../unavailable.js';
import { variantService, type JsonStream } from './service.js';
import { PAGE_WORKER_NICENESS, type FromWorker, type ToWorker, type WorkerSettings } from './page-workers.js';

const settings = workerData as WorkerSettings;
// Below the main thread (on Linux a thread's own priority): when the cores are busy, accepting and
// answering small requests comes before building more of a page.
try {
  os.setPriority(PAGE_WORKER_NICENESS);
} catch {
  // not allowed here: the default priority does too
}
const port = parentPort!;
// No migrations to check against: the main thread opened the same registry with all of them, and
// importing every area here would cost the worker their modules' memory.
const registry = await openRegistry(settings.registryLocation, []);
const service = variantService(registry, settings.paging, settings.registryCacheMs);
/** Per request: settles when the main thread has written the last chunk sent, or no longer wants it. */
const acks = new Map<number, { written: () => void; cancelled: (e: Error) => void }>();

const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/** The error as the main thread will rethrow it. */
function describeError(e: unknown): FromWorker & { type: 'error' } {
  if (e instanceof GAException) return { type: 'error', id: 0, kind: e.kind, message: e.message, retryAfterSeconds: e.retryAfterSeconds };
  if (e instanceof TemporarilyUnavailable) return { type: 'error', id: 0, kind: 'unavailable', message: e.message, retryAfterSeconds: e.retryAfterSeconds };
  return { type: 'error', id: 0, kind: 'internal', message: (e as Error)?.stack ?? String(e) };
}

async function serve(id: number, op: 'search' | 'get', arg: unknown, form: NamingForm): Promise<void> {
  let stream: JsonStream;
  try {
    stream = op === 'search' ? await service.searchVariants(arg as never) : await service.getVariant(arg as string);
  } catch (e) {
    post({ ...describeError(e), id });
    return;
  }
  post({ type: 'ready', id });
  try {
    await stream.write(
      {
        write(chunk) {
          // A copy of its own, so the buffer can be moved to the main thread without a second copy.
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          const own = new Uint8Array(bytes.byteLength);
          own.set(bytes);
          const written = new Promise<void>((resolve, reject) => acks.set(id, { written: resolve, cancelled: reject }));
          post({ type: 'chunk', id, bytes: own }, [own.buffer]);
          return written;
        },
      },
      form,
    );
    post({ type: 'end', id });
  } catch (e) {
    // Errors of the protocol's kinds (a damaged file: 503) keep their kind across the thread boundary.
    if (e !== CANCELLED) post({ ...describeError(e), id });
  } finally {
    acks.delete(id);
  }
}

const CANCELLED = new Error('the main thread no longer wants this reply');

port.on('message', (message: ToWorker) => {
  if (message.op === 'ack') acks.get(message.id)?.written();
  else if (message.op === 'cancel') acks.get(message.id)?.cancelled(CANCELLED);
  else if (message.op === 'close') void registry.close().then(() => port.close());
  else void serve(message.id, message.op, message.arg, message.form);
});
