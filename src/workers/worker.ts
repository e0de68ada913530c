/**
 * A page worker thread: opens the registry, builds every registered area's page operations, and
 * answers the main thread's requests (page-builder.ts). The main thread only accepts connections and
 * writes bytes, so one busy client cannot delay the others (pool.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { encodeWhole } from '../content-coding.js';
import { openRegistry } from '../registry/registry.js';
import { runInBackground } from '../thread-priority.js';
import { type PageOperationsFactory, type ToWorker, type WorkerSettings } from './operations.js';
import { PageBuilder } from './page-builder.js';

const settings = workerData as WorkerSettings;
// Below the main thread: when the cores are busy, accepting and answering small requests comes before
// building more of a page.
runInBackground();
const port = parentPort!;
// No migrations to check against: the main thread opened the same registry with all of them, and
// importing every area here would cost the worker their modules' memory.
const registry = await openRegistry(settings.registryLocation, []);
const operations = await Promise.all(
  settings.modules.map(async (url) => ((await import(url)) as { pageOperations: PageOperationsFactory }).pageOperations(registry, settings)),
);
const builder = new PageBuilder(
  operations,
  settings.readAhead,
  (message, transfer = []) => port.postMessage(message, transfer),
  (coding, pieces, size) => encodeWhole(coding, settings.compression, pieces, size),
);

port.on('message', (message: ToWorker) => {
  builder.receive(message);
  if (message.op === 'close') void registry.close().then(() => port.close());
});
