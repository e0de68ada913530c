/**
 * Tools of the htsget tests: the tools of the field run on URLs and on files, a ticket fetched the way
 * a client fetches it (its own small client, not the server's code), and the reference sets of the
 * htsget test files, which are on hs37d5 and other assemblies this repository holds no FASTA of.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { loadDictionaryReferenceSet } from '../src/areas/references/loader.js';
import { allMigrations } from '../src/areas/index.js';
import { initRegistry } from '../src/registry/registry.js';

/** Where htslib looks for CRAM references: nowhere it could reach (the htsget CRAM embeds its reference). */
const htslibEnv = (cache: string) => ({ ...process.env, REF_PATH: path.join(cache, 'none', '%s'), REF_CACHE: path.join(cache, '%2s', '%s') });

export interface Tools {
  /** A tool's standard output; a failure fails the test with its message. */
  run(command: string, ...args: string[]): string;
  /** The same, for a tool that writes binary output. */
  bytes(command: string, ...args: string[]): Buffer;
  /** The same without blocking this process: for a tool that reads from a server running in it. */
  output(command: string, ...args: string[]): Promise<string>;
}

export function tools(dir: string): Tools {
  const run = (command: string, args: string[]) => {
    const r = spawnSync(command, args, { env: htslibEnv(dir), maxBuffer: 256 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const output = (command: string, args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(command, args, { env: htslibEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString('utf8')) : reject(new Error(`${command} ${args.join(' ')}: ${stderr}`))));
    });
  return { run: (command, ...args) => run(command, args).toString('utf8'), bytes: (command, ...args) => run(command, args), output: (command, ...args) => output(command, args) };
}

/** A sequence a VCF header declares in a ##contig line. */
export interface Declared {
  name: string;
  length: number;
  md5?: string;
}

/** The ##contig lines of a VCF or BCF header, as bcftools reads them. */
export function vcfSequences(t: Tools, file: string): Declared[] {
  return t
    .run('bcftools', 'view', '-h', file)
    .split('\n')
    .filter((line) => line.startsWith('##contig=<'))
    .map((line) => ({ name: /[<,]ID=([^,>]+)/.exec(line)![1], length: Number(/[<,]length=(\d+)/.exec(line)?.[1] ?? 0), md5: /[<,]md5=([0-9a-f]{32})/i.exec(line)?.[1] }));
}

/** Registers the sequences a file's header declares as a reference set without bases (`add-referenceset --dictionary`). */
export async function addHeaderReferenceSet(location: string, name: string, file: string): Promise<void> {
  const registry = await initRegistry(location, allMigrations());
  try {
    await loadDictionaryReferenceSet(registry, file, { name });
  } finally {
    await registry.close();
  }
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body as JSON (undefined when it is not). */
  json: any;
}

/**
 * One request on a connection of its own: the tests run the tools with spawnSync, which stalls this
 * process, so a kept-alive connection may have been closed by the server meanwhile unnoticed.
 */
export function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const { method = 'GET', headers = {}, body } = options;
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const sent = payload ? { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers } : headers;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers: sent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(bytes.toString('utf8'));
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The bytes a ticket stands for: each URL fetched with its headers (inline `data:` parts decoded), concatenated in order. */
export async function ticketBytes(ticket: { htsget: { urls: Array<{ url: string; headers?: Record<string, string> }> } }): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const { url, headers } of ticket.htsget.urls) {
    const inline = /^data:;base64,(.*)$/.exec(url);
    if (inline) {
      parts.push(Buffer.from(inline[1], 'base64'));
      continue;
    }
    const res = await request(url, { headers });
    if (res.status !== 200 && res.status !== 206) throw new Error(`${url} answered ${res.status}: ${res.body}`);
    parts.push(res.body);
  }
  return Buffer.concat(parts);
}

/** Writes `bytes` as a file of `dir` and returns its path. */
export function saved(dir: string, name: string, bytes: Buffer): string {
  const file = path.join(fs.mkdtempSync(path.join(dir, 'blob-')), name);
  fs.writeFileSync(file, bytes);
  return file;
}
