/** Shared test tools: temporary folders, fixtures, the real CLI, and a real server on a loopback port. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import { startServer } from '../src/app.js';
import { allMigrations } from '../src/areas/index.js';
import { defaultServerConfig, type ServerConfig } from '../src/config.js';
import type { SearchReadsQuery } from '../src/areas/reads/messages.js';
import type { ReadService } from '../src/areas/reads/service.js';
import { pieceSent } from '../src/protocol/chunk-pool.js';
import { pageTokenAtEnd } from '../src/protocol/reply.js';
import { createOrMigrateRegistry, initRegistry, migrateRegistry, type Registry } from '../src/registry/registry.js';
import { ContractChecker } from './contract.js';

/**
 * Cleanups run once the test file is done. Registered here, at the top level of the file's module
 * graph, because an after() called from inside a before() hook would run right after that hook.
 */
const cleanups: Array<() => unknown> = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});
export const atEnd = (fn: () => unknown) => cleanups.push(fn);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TESTDATA = path.join(ROOT, 'testdata');

/** A fresh temporary folder, removed when the test file ends. */
export function tempDir(prefix = 'ga4gh-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  atEnd(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs a tool of the field (bgzip, tabix) and fails the test with its message if it fails. */
export function tool(command: string, ...args: string[]): Buffer {
  const r = spawnSync(command, args);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Writes `text` as a VCF bgzipped by `bgzip` (several BGZF blocks when long), indexed by `tabix`, under `name` in a new folder of `dir`. */
export function bgzippedVcf(dir: string, name: string, text: string, index = true): string {
  const folder = fs.mkdtempSync(path.join(dir, 'vcf-'));
  const plain = path.join(folder, name.replace(/\.gz$/, ''));
  fs.writeFileSync(plain, text);
  const gz = path.join(folder, name);
  fs.writeFileSync(gz, tool('bgzip', '-c', plain));
  fs.rmSync(plain);
  if (index) tool('tabix', '-p', 'vcf', gz);
  return gz;
}

/** Copies files or folders from testdata/ into `dir` (so loaders may write indexes beside them). */
export function copyFixture(relative: string, dir: string): string {
  const target = path.join(dir, path.basename(relative));
  fs.cpSync(path.join(TESTDATA, relative), target, { recursive: true });
  for (const f of fs.statSync(target).isDirectory() ? fs.readdirSync(target).map((n) => path.join(target, n)) : [target]) {
    fs.chmodSync(f, 0o644);
  }
  return target;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs bin/ga4gh as a user would, without blocking this process: needed when the command talks to a
 * server running inside the test process (spawnSync would stall that server's event loop).
 */
export function runCliAsync(...args: string[]): Promise<CliResult> {
  return runAsync(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), ...args]);
}

/** Runs a program without blocking this process, as runCliAsync runs bin/ga4gh. */
export function runAsync(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Runs bin/ga4gh as a user would. */
export function runCli(...args: string[]): CliResult {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A new, migrated registry, open and closed when the test file ends: a file in `dir`, or any location
 * (a PostgreSQL URL from test/backends.ts).
 */
export async function newRegistry(dirOrLocation: string, fileName?: string): Promise<{ location: string; registry: Registry }> {
  const location = /^postgres/.test(dirOrLocation)
    ? dirOrLocation
    : path.join(dirOrLocation, fileName ?? `registry-${Math.random().toString(36).slice(2)}.sqlite`);
  const registry = await initRegistry(location, allMigrations());
  atEnd(() => registry.close());
  return { location, registry };
}

/** A registry at `location` as the migrations before `migration` (its name) left it, to fill as an older version did. */
export const registryBefore = (location: string, migration: string) =>
  createOrMigrateRegistry(location, allMigrations().filter((m) => m.name !== migration));

/** Runs the migrations the registry at `location` lacks, checks that they are `expected` (names), and serves it. */
export async function servedAfterMigrating(location: string, expected: string[]): Promise<TestServer> {
  const { registry, applied } = await migrateRegistry(location, allMigrations());
  await registry.close();
  assert.deepEqual(applied.map((m) => m.name), expected);
  return startTestServer(location);
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface TestServer {
  url: string;
  get(pathAndQuery: string, headers?: Record<string, string>): Promise<HttpResult>;
  post(pathName: string, body: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  close(): Promise<void>;
}

/** A response read whole: its text, and its JSON when it is some. */
export async function toResult(res: Response): Promise<HttpResult> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Starts the real server on a free loopback port over the registry at `location`. Every answer that
 * get() and post() receive is checked against the server's /openapi.json (test/contract.ts): a
 * response the document does not describe fails the test that received it.
 */
export async function startTestServer(location: string, overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const server = await startServer(location, { ...defaultServerConfig(), port: 0, ...overrides });
  let checker: Promise<ContractChecker> | undefined;
  const checked = async (method: string, url: string, res: Response): Promise<HttpResult> => {
    const result = await toResult(res);
    const problem = (await (checker ??= ContractChecker.forServer(server.url))).check(
      method,
      url,
      result.status,
      result.headers.get('content-type') ?? '',
      result.text,
    );
    if (problem) throw new Error(`contract (test/contract.ts): ${problem}`);
    return result;
  };
  let closed = false;
  const close = async () => {
    if (!closed) {
      closed = true;
      await server.close();
    }
  };
  atEnd(close);
  return {
    url: server.url,
    get: async (p, headers = {}) => checked('GET', server.url + p, await fetchSaying(server.url + p, { headers })),
    post: async (p, body, headers = {}) =>
      checked(
        'POST',
        server.url + p,
        await fetchSaying(server.url + p, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      ),
    close,
  };
}

/** fetch, whose failure says what failed and why (undici's own message is only "fetch failed"). */
async function fetchSaying(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${init.method ?? 'GET'} ${url}: ${(err as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`, { cause: err });
  }
}

/** Follows nextPageToken until it disappears, returning every record of the list field. */
export async function collectPages(
  server: TestServer,
  pathName: string,
  request: Record<string, unknown>,
  listField: string,
): Promise<{ records: any[]; pages: number }> {
  const records: any[] = [];
  let pages = 0;
  let token: string | undefined;
  do {
    const res = await server.post(pathName, token ? { ...request, pageToken: token } : request);
    if (res.status !== 200) throw new Error(`${pathName} answered ${res.status}: ${res.text}`);
    pages++;
    records.push(...res.json[listField]);
    token = res.json.nextPageToken;
    if (token === '') throw new Error('empty nextPageToken sent');
  } while (token);
  return { records, pages };
}

/** The id of a record as the server builds it: base64url of a JSON array of names (wire contract). */
export const idOf = (...names: string[]) => Buffer.from(JSON.stringify(names)).toString('base64url');

export interface ServeProcess {
  url: string;
  /** Everything the server wrote to standard error so far. */
  stderr(): string;
  /** Sends the server process a signal (SIGHUP...). */
  signal(name: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** Runs `ga4gh serve REGISTRY --port 0 ARGS...` in its own process, as a user would; stopped when the test file ends. */
export function startServeProcess(registry: string, ...args: string[]): Promise<ServeProcess> {
  return startServeProcessWith(process.env, registry, ...args);
}

/** The same, with the environment given. */
export function startServeProcessWith(env: NodeJS.ProcessEnv, registry: string, ...args: string[]): Promise<ServeProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), 'serve', registry, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  atEnd(stop);
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /serving .* at (http:\/\/\S+)/.exec(stdout);
      if (m) resolve({ url: m[1], stderr: () => stderr, signal: (name) => void child.kill(name), stop });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

/**
 * Runs `body`, the text of an async function body, in a new worker thread that loads the TypeScript
 * sources through tsx as the server's worker threads do (`source(file)` names a module of src/ for a
 * dynamic import there), and resolves with the first value it hands to `post`.
 */
export async function inWorkerThread<T>(body: string): Promise<T> {
  const code = `(async () => {
    const { parentPort } = await import('node:worker_threads');
    (await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})).register();
    const post = (value) => parentPort.postMessage(value);
    ${body}
  })();`;
  const worker = new Worker(code, { eval: true });
  try {
    return await new Promise<T>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

/** A module of src/, as a worker thread's dynamic import names it (for inWorkerThread). */
export const source = (file: string) => JSON.stringify(new URL(`../src/${file}`, import.meta.url).href);

/** SCHED_OTHER and SCHED_IDLE, as /proc gives a thread's scheduling policy. */
export const SCHED_OTHER = 0;
export const SCHED_IDLE = 5;

/** Nice value and scheduling policy in a thread's /proc stat line (fields 19 and 41; Linux). */
export function schedulingIn(stat: string): { nice: number; policy: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from the third field on
  return { nice: Number(fields[19 - 3]), policy: Number(fields[41 - 3]) };
}

/** Nice value and scheduling policy of a thread of this process. */
export const schedulingOfThread = (tid: string | number) => schedulingIn(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8'));

export interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request on a connection of its own (no keep-alive race with the server's timeout when a test
 * pauses between requests); the body as it came over the wire, not decompressed.
 */
export function raw(server: TestServer, method: string, pathName: string, headers: Record<string, string>, body?: unknown): Promise<Raw> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      server.url + pathName,
      { method, agent: false, headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The body of a raw answer, decompressed as its Content-Encoding says. */
export function decoded(r: Raw): Buffer {
  switch (r.headers['content-encoding']) {
    case undefined:
      return r.body;
    case 'gzip':
      return zlib.gunzipSync(r.body);
    case 'br':
      return zlib.brotliDecompressSync(r.body);
    default:
      throw new Error(`unexpected content-encoding ${r.headers['content-encoding']}`);
  }
}

/** "readGroupId" once per alignment, in the camel form pageReadsInProcess writes. */
const ALIGNMENT_KEY = Buffer.from('"readGroupId"');

/**
 * Every page of a reads search, written in process as a page worker writes them (each piece reported
 * sent, so its buffer goes back to the pool); the pages and the alignments. The alignments are
 * counted on the bytes as they lie, allocating next to nothing: a suite that measures memory relies
 * on that.
 */
export async function pageReadsInProcess(service: ReadService, request: SearchReadsQuery): Promise<{ pages: number; alignments: number }> {
  let pages = 0;
  let alignments = 0;
  let token: string | undefined;
  do {
    const stream = await service.searchReads(token ? { ...request, pageToken: token } : request);
    let tail = '';
    await stream.write(
      {
        write(chunk) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          for (let at = bytes.indexOf(ALIGNMENT_KEY); at !== -1; at = bytes.indexOf(ALIGNMENT_KEY, at + 1)) alignments++;
          // A key cut between two chunks: found in the last bytes of one and the first of the next.
          const seam = tail.slice(1 - ALIGNMENT_KEY.length) + bytes.toString('latin1', 0, ALIGNMENT_KEY.length - 1);
          if (seam.includes(ALIGNMENT_KEY.toString('latin1'))) alignments++;
          tail = (tail + bytes.toString('latin1', Math.max(0, bytes.length - 300))).slice(-300);
          pieceSent(chunk);
        },
      },
      'camel',
    );
    token = pageTokenAtEnd(tail);
    pages++;
  } while (token);
  return { pages, alignments };
}
