/**
 * H1's floor: a bare node:http server answering GET and HEAD of the files of one folder, whole or by
 * one `Range: bytes=` range, as any static web server does. A tool reading a file from it (htslib's
 * libcurl reader, the index first) does the least any HTTP server of the file can ask of it.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { serveOnLoopback } from './loopback.js';

const folder = path.resolve(process.argv[2]);

const server = http.createServer((req, res) => {
  req.resume();
  const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
  const file = path.join(folder, name);
  let size: number;
  try {
    if (path.dirname(file) !== folder) throw new Error('outside');
    size = fs.statSync(file).size;
  } catch {
    res.writeHead(404).end();
    return;
  }
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  const start = range ? Number(range[1]) : 0;
  const end = range && range[2] !== '' ? Math.min(Number(range[2]), size - 1) : size - 1;
  if (range && start >= size) {
    res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
    return;
  }
  const headers: http.OutgoingHttpHeaders = { 'content-length': end - start + 1, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
  if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD') res.end();
  else fs.createReadStream(file, { start, end }).pipe(res);
});
serveOnLoopback(server);
