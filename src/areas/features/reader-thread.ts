/**
 * The GFF3 reading thread of `repo add-featureset` (reader.ts): reads the file given as workerData and
 * posts its features in batches, waiting when BATCHES_IN_FLIGHT are not yet taken.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { UserError } from '../../user-error.js';
import { BATCHES_IN_FLIGHT, readFeatures, type FromReader, type ReadRequest } from './reader.js';

const port = parentPort!;
let inFlight = 0;
let taken: (() => void) | undefined;
port.on('message', () => {
  inFlight--;
  taken?.();
  taken = undefined;
});
const post = (message: FromReader) => port.postMessage(message);

try {
  for await (const features of readFeatures(workerData as ReadRequest)) {
    while (inFlight >= BATCHES_IN_FLIGHT) await new Promise<void>((resolve) => (taken = resolve));
    inFlight++;
    post({ kind: 'features', features });
  }
  post({ kind: 'end' });
} catch (e) {
  post({ kind: 'failed', message: (e as Error).message, userError: e instanceof UserError });
}
port.close();
