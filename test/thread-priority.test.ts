/**
 * Background threads run below the main thread: the idle scheduling policy where the system allows
 * it, else a nice value; the main thread keeps its own priority. Read back from /proc, not from the
 * function's answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_NICENESS } from '../src/thread-priority.js';
import { SCHED_IDLE, SCHED_OTHER, schedulingIn, schedulingOfThread } from './helpers.js';

const linux = process.platform === 'linux';

describe('runInBackground', { skip: linux ? false : 'reads /proc (Linux)' }, () => {
  it('lowers the calling thread only: the idle policy, or the background nice value', async () => {
    const api = import.meta.resolve('tsx/esm/api');
    const entry = new URL('../src/thread-priority.ts', import.meta.url).href;
    const code = `
      const { parentPort } = await import('node:worker_threads');
      const fs = await import('node:fs');
      (await import(${JSON.stringify(api)})).register();
      const { runInBackground } = await import(${JSON.stringify(entry)});
      const done = runInBackground();
      parentPort.postMessage({ done, stat: fs.readFileSync('/proc/thread-self/stat', 'utf8'), task: fs.readlinkSync('/proc/thread-self') });`;
    const mainBefore = schedulingOfThread(process.pid);
    const worker = new Worker(code, { eval: true });
    const reply = await new Promise<{ done: string; stat: string; task: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    const background = schedulingIn(reply.stat);
    if (reply.done === 'idle policy') assert.equal(background.policy, SCHED_IDLE, reply.stat);
    else {
      assert.equal(reply.done, 'niced', 'a thread may always lower its own priority');
      assert.deepEqual(background, { nice: BACKGROUND_NICENESS, policy: SCHED_OTHER });
    }
    // The main thread (its task id is the process id) is as it was.
    assert.deepEqual(schedulingOfThread(process.pid), mainBefore);
    assert.notEqual(reply.task.split('/').at(-1), String(process.pid), 'the worker is a thread of its own');
  });
});
