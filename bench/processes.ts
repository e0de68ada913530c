/**
 * The processes the bench measures: `ga4gh serve` (optionally under --cpu-prof), the bare node:http
 * baseline servers (P3's fixed answer, P1's, READS' and F2's replays of recorded pages), and the memory of a process
 * read from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { floorArgument, type FloorSpec } from './floor.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface RunningServer {
  url: URL;
  pid: number;
  /** Stops the process and waits for it (so a CPU profile is written). */
  stop(): Promise<void>;
}

/**
 * Starts a child process and waits for the first stdout line matching `ready` (its first group is
 * the URL). Standard error goes to `logFile`; `env` adds to the environment.
 */
function startProcess(args: string[], ready: RegExp, logFile: string, env?: Record<string, string>): Promise<RunningServer> {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', log], env: env && { ...process.env, ...env } });
  fs.closeSync(log);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${args.join(' ')} did not start within 60 s`)), 60_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`${args.join(' ')} exited (${code}) before it was ready; see ${logFile}`)));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.resume();
      resolve({ url: new URL(m[1]), pid: child.pid!, stop: () => stopProcess(child) });
    });
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

export interface ServeOptions {
  registry: string;
  logFile: string;
  /** Write CPU profiles into this folder when the server stops: one file per thread. */
  profileDir?: string;
  /** `--page-workers`, when given. */
  pageWorkers?: number;
  /** `--read-ahead-mb`, when given. */
  readAheadMb?: number;
  /** Environment variables besides the bench's own (a mechanism switched off: bench/audit.ts). */
  env?: Record<string, string>;
}

/** `node bin/ga4gh serve REGISTRY --port 0` on loopback, in its own process. */
export function startGa4ghServer(o: ServeOptions): Promise<RunningServer> {
  const profile = o.profileDir ? ['--cpu-prof', '--cpu-prof-dir', o.profileDir] : [];
  return startProcess(
    [
      ...profile,
      path.join(ROOT, 'bin', 'ga4gh'),
      'serve',
      o.registry,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      ...(o.pageWorkers === undefined ? [] : ['--page-workers', String(o.pageWorkers)]),
      ...(o.readAheadMb === undefined ? [] : ['--read-ahead-mb', String(o.readAheadMb)]),
    ],
    /serving .* at (http:\/\/\S+)/,
    o.logFile,
    o.env,
  );
}

/**
 * Runs bench/SCRIPT in a Node process of its own (its standard error passed through), with `input` on
 * its standard input, and returns the JSON of the last line it writes to standard output.
 */
export function runBenchScript<T>(script: string, args: string[], input = ''): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', script), ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`bench/${script} exited (${code}); its message is above`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as T);
    });
    child.stdin!.end(input);
  });
}

/** The platform's ceiling for P3: bench/bare-server.ts in its own process. */
export function startBareServer(logFile: string): Promise<RunningServer> {
  return startProcess(['--import', 'tsx', path.join(ROOT, 'bench', 'bare-server.ts')], /listening at (http:\/\/\S+)/, logFile);
}

/** H1's floor: bench/range-server.ts in its own process, serving the files of `folder` by byte range. */
export function startRangeServer(folder: string, logFile: string): Promise<RunningServer> {
  return startProcess(['--import', 'tsx', path.join(ROOT, 'bench', 'range-server.ts'), folder], /listening at (http:\/\/\S+)/, logFile);
}

/**
 * The reads part's replay baseline: bench/reads-replay-server.ts in its own process, serving recorded
 * pages; with `floor`, each made first with the least work of a server reading the file (floor.ts).
 */
export function startReadsReplayServer(bodies: string, index: string, logFile: string, floor?: FloorSpec): Promise<RunningServer> {
  const args = [path.join(ROOT, 'bench', 'reads-replay-server.ts'), bodies, index, ...(floor ? [floorArgument(floor)] : [])];
  return startProcess(['--import', 'tsx', ...args], /listening at (http:\/\/\S+)/, logFile);
}

/** F2's floor for HTTP: bench/page-replay-server.ts in its own process, answering each request with its recorded page. */
export function startPageReplayServer(pages: string, logFile: string): Promise<RunningServer> {
  return startProcess(['--import', 'tsx', path.join(ROOT, 'bench', 'page-replay-server.ts'), pages], /listening at (http:\/\/\S+)/, logFile);
}

/**
 * P1's limit: bench/replay-server.ts replaying the pages recorded in `pagesDir`, in its own process;
 * with `getBodyFile`, it answers every GET with that file's bytes (P6); with `floor`, each
 * uncompressed page is made first with the least work of a server reading the file (floor.ts).
 */
export function startReplayServer(pagesDir: string, mode: 'precompressed' | 'compressing', logFile: string, getBodyFile?: string, floor?: FloorSpec): Promise<RunningServer> {
  const args = [path.join(ROOT, 'bench', 'replay-server.ts'), pagesDir, mode, ...(getBodyFile ? [getBodyFile] : []), ...(floor ? [floorArgument(floor)] : [])];
  return startProcess(['--import', 'tsx', ...args], /listening at (http:\/\/\S+)/, logFile);
}

/** CPU seconds (user + system, every thread) a process has used: /proc/PID/stat fields 14 and 15. */
export function cpuSecondsOf(pid: number): number {
  return cpuSecondsIn(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** The CPU seconds of a `stat` file of /proc (a process's or a thread's). */
function cpuSecondsIn(stat: string): number {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU seconds each thread of a process has used, by thread id (/proc/PID/task/TID/stat). */
export function threadCpuSecondsOf(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(Number(tid), cpuSecondsIn(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')));
    } catch {
      // the thread ended since the folder was read
    }
  }
  return threads;
}

/**
 * How a process's CPU seconds between two readings of threadCpuSecondsOf split between its threads:
 * the main thread (its id is the process's), the busiest other (a server's page worker, when one
 * builds the pages), and the rest together (V8's collector and compiler threads, the libuv pool,
 * other workers). Node names none of its threads, so they are told apart by what they did.
 */
export function threadSplit(pid: number, before: Map<number, number>, after: Map<number, number>) {
  let busiestOtherThread = 0;
  let otherThreads = 0;
  for (const [tid, seconds] of after) {
    if (tid === pid) continue;
    const used = seconds - (before.get(tid) ?? 0);
    otherThreads += used;
    busiestOtherThread = Math.max(busiestOtherThread, used);
  }
  const mainThread = (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
  // Ticks are hundredths of a second; the sums of their differences are rounded back to them.
  const ticks = (seconds: number) => Math.round(seconds * CLOCK_TICKS) / CLOCK_TICKS;
  return { mainThread: ticks(mainThread), busiestOtherThread: ticks(busiestOtherThread), restOfThreads: ticks(otherThreads - busiestOtherThread) };
}

/** Kernel clock ticks per second (USER_HZ): 100 on Linux. */
const CLOCK_TICKS = 100;

/** Resident and peak resident memory of a process, in bytes, from /proc/PID/status. */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * Peak memory over a stretch of work: resets the kernel's high-water mark (`echo 5 > clear_refs`)
 * and samples VmRSS every 20 ms as well, since the reset is not allowed everywhere.
 */
export function trackPeakMemory(pid: number): () => { peak: number; method: string } {
  let hwmReset = true;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    hwmReset = false;
  }
  let sampled = memoryOf(pid).rss;
  const timer = setInterval(() => {
    try {
      sampled = Math.max(sampled, memoryOf(pid).rss);
    } catch {
      /* the process ended; the caller will notice */
    }
  }, 20);
  return () => {
    clearInterval(timer);
    const { rss, hwm } = memoryOf(pid);
    sampled = Math.max(sampled, rss);
    return hwmReset
      ? { peak: Math.max(hwm, sampled), method: 'VmHWM after clear_refs, and VmRSS sampled every 20 ms' }
      : { peak: sampled, method: 'VmRSS sampled every 20 ms' };
  };
}
