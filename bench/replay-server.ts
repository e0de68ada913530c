/**
 * P1's baseline: a bare node:http server replaying variant pages the project served (recorded by the
 * bench, `page-N.json` in the folder given as first argument, with `.gz` and `.br` beside each,
 * compressed ahead of time with the server's default settings). Each connection gets the recorded
 * pages in order, from the first again when a request carries no pageToken; the bench stops after as
 * many pages as the project's pass took. Prints its URL, like `ga4gh serve`, and stops on SIGTERM.
 *
 * Second argument, what a compressed page costs it:
 * - `precompressed`: it sends the bytes compressed ahead of time, doing no work but sending bytes:
 *   the limit of moving those bytes to the bench's client on this machine;
 * - `compressing`: it compresses each page as it sends it, with the same settings and the same
 *   means as the project (zlib streams on the thread pool, 1 MB pieces): the limit for any server
 *   that must compress what it sends.
 * Uncompressed pages are sent as they are in both modes.
 *
 * Optional third argument, a file: every GET is answered with its bytes (P6 probes it with the bytes
 * of the server's `GET /info`, while clients page through the recorded pages).
 *
 * With `--floor=JSON` (floor.ts), each uncompressed page is first made by the floor, as the n-th page
 * of a pass of `pages` (one connection at a time), the next one as soon as it is handed to the socket.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { brotliParams, defaultCompression } from '../src/content-coding.js';
import { floorOf, PageFloor } from './floor.js';
import { serveOnLoopback } from './loopback.js';

const dir = process.argv[2];
const mode = process.argv[3];
if (mode !== 'precompressed' && mode !== 'compressing') throw new Error(`mode must be precompressed or compressing, not ${mode}`);
const settings = defaultCompression();
const names = fs
  .readdirSync(dir)
  .filter((n) => /^page-\d+\.json$/.test(n))
  .sort((a, b) => Number(a.match(/\d+/)![0]) - Number(b.match(/\d+/)![0]));
const pages = names.map((n) => ({
  identity: fs.readFileSync(path.join(dir, n)),
  gzip: fs.readFileSync(path.join(dir, n + '.gz')),
  br: fs.readFileSync(path.join(dir, n + '.br')),
}));
if (!pages.length) throw new Error(`no recorded pages in ${dir}`);
const getBody = process.argv[4] && !process.argv[4].startsWith('--') ? fs.readFileSync(process.argv[4]) : undefined;
const floorSpec = floorOf(process.argv);
const floor = floorSpec ? new PageFloor(floorSpec, pages[0].identity) : undefined;

const next = new WeakMap<Socket, number>();
const PAGE_TOKEN = Buffer.from('"pageToken"');

const PIECE = 1 << 20;

async function compressInto(res: http.ServerResponse, body: Buffer, coding: 'gzip' | 'br'): Promise<void> {
  const stream = { chunkSize: 64 * 1024, writableHighWaterMark: 2 * PIECE };
  const zip =
    coding === 'gzip'
      ? zlib.createGzip({ ...stream, level: settings.gzipLevel })
      : zlib.createBrotliCompress({
          ...stream,
          params: brotliParams(settings),
        });
  zip.pipe(res);
  for (let at = 0; at < body.length; at += PIECE) {
    if (!zip.write(body.subarray(at, at + PIECE))) await new Promise((resolve) => zip.once('drain', resolve));
  }
  zip.end();
}

const server = http.createServer((req, res) => {
  if (getBody && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': getBody.length });
    res.end(getBody);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const first = !Buffer.concat(chunks).includes(PAGE_TOKEN);
    const index = first ? 0 : (next.get(req.socket) ?? 0);
    next.set(req.socket, index + 1);
    const page = pages[index % pages.length];
    // The bench's client asks for one coding at a time.
    const accept = req.headers['accept-encoding'] ?? '';
    const coding = accept.includes('br') ? 'br' : accept.includes('gzip') ? 'gzip' : 'identity';
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json; charset=utf-8' };
    if (floor && coding === 'identity') {
      const k = index % floor.spec.pages;
      const body = floor.take(k, page.identity);
      res.writeHead(200, { ...headers, 'content-length': body.length });
      res.end(body);
      floor.makeAhead(k + 1, pages[(k + 1) % pages.length].identity);
      return;
    }
    if (coding === 'identity' || mode === 'precompressed') {
      const body = page[coding];
      if (coding !== 'identity') headers['content-encoding'] = coding;
      res.writeHead(200, { ...headers, 'content-length': body.length });
      res.end(body);
      return;
    }
    res.writeHead(200, { ...headers, 'content-encoding': coding });
    void compressInto(res, page.identity, coding);
  });
});
serveOnLoopback(server);
