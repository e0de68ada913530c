/**
 * Background threads run below the main thread: the idle scheduling policy where the system allows
 * it, else a nice value; the main thread keeps its own priority. Read back from /proc, not from the
 * function's answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BACKGROUND_NICENESS } from '../src/thread-priority.js';
import { inWorkerThread, SCHED_IDLE, SCHED_OTHER, schedulingIn, schedulingOfThread, source } from './helpers.js';

const linux = process.platform === 'linux';

describe('runInBackground', { skip: linux ? false : 'reads /proc (Linux)' }, () => {
  it('lowers the calling thread only: the idle policy, or the background nice value', async () => {
    const mainBefore = schedulingOfThread(process.pid);
    const reply = await inWorkerThread<{ done: string; stat: string; task: string }>(`
      const fs = await import('node:fs');
      const { runInBackground } = await import(${source('thread-priority.ts')});
      const done = runInBackground();
      post({ done, stat: fs.readFileSync('/proc/thread-self/stat', 'utf8'), task: fs.readlinkSync('/proc/thread-self') });`);
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
