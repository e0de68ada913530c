/**
 * Background threads (page workers) below the main thread, which accepts connections and answers
 * small requests: a new connection should not wait for a page being built.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** The nice value used where the idle policy is not available (0 is the main thread's; 19 the lowest). */
export const BACKGROUND_NICENESS = 10;

/**
 * Lowers the calling thread's priority: on Linux to the SCHED_IDLE policy (through `chrt`, as Node
 * has no call for it), under which it runs when a core has nothing else to run, and a core running
 * only such threads counts as free when the kernel places a thread that wakes up. With two cores, a
 * worker niced to 10 could still hold the core the main thread woke on for a new connection (turns
 * of the event loop up to ~5 ms under 4 paging clients, against ~1 ms with the idle policy).
 * Elsewhere, or without `chrt`, the thread is niced to BACKGROUND_NICENESS. Threads this thread
 * starts later inherit its priority (the libuv pool is started by the main thread before any worker).
 * Returns what was done.
 */
export function runInBackground(): 'idle policy' | 'niced' | 'unchanged' {
  let done: 'idle policy' | 'niced' | 'unchanged' = 'unchanged';
  try {
    os.setPriority(BACKGROUND_NICENESS); // on Linux, the calling thread only
    done = 'niced';
  } catch {
    // not allowed here
  }
  if (process.platform !== 'linux') return done;
  try {
    // "PID/task/TID": the thread's own id, which chrt takes for that thread alone.
    const tid = fs.readlinkSync('/proc/thread-self').split('/').at(-1)!;
    execFileSync('chrt', ['--idle', '--pid', '0', tid], { stdio: 'ignore', timeout: 2000 });
    return 'idle policy';
  } catch {
    return done;
  }
}
