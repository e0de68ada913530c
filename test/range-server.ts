/** A static file server with HTTP Range support on loopback, standing in for object storage in tests. */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { atEnd } from './helpers.js';

export interface RangeServer {
  url: string;
  /** Requests answered so far, as "METHOD path range". */
  log: string[];
}

export async function startRangeServer(root: string): Promise<RangeServer> {
  const log: string[] = [];
  /** Sends a file's bytes; a file removed between the check and the read (a test moving it away) cuts the reply. */
  const send = (res: http.ServerResponse, stream: fs.ReadStream) => stream.on('error', () => res.destroy()).pipe(res);
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    log.push(`${req.method} ${req.url} ${req.headers.range ?? ''}`);
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    const size = fs.statSync(file).size;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (!range) {
      res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes' });
      if (req.method === 'HEAD') res.end();
      else send(res, fs.createReadStream(file));
      return;
    }
    const start = Number(range[1]);
    const end = Math.min(range[2] ? Number(range[2]) : size - 1, size - 1);
    if (start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': end - start + 1, 'accept-ranges': 'bytes' });
    if (req.method === 'HEAD') res.end();
    else send(res, fs.createReadStream(file, { start, end }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  atEnd(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log };
}
