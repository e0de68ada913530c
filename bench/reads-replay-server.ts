/**
 * The reads part's second baseline: a bare node:http server that answers each reads search with the
 * bytes the ga4gh server sent for the same request (recorded by the bench), found by the request's
 * pageToken, in 1 MB writes as the server writes them. What is left is what HTTP and the client cost.
 * Usage: replay-server.ts BODIES INDEX (INDEX: JSON of pageToken → [offset, length] in BODIES).
 */
import fs from 'node:fs';
import http from 'node:http';
import { serveOnLoopback } from './loopback.js';

const [bodiesFile, indexFile] = process.argv.slice(2);
const bodies = fs.readFileSync(bodiesFile);
const index = JSON.parse(fs.readFileSync(indexFile, 'utf8')) as Record<string, [number, number]>;
const CHUNK = 1 << 20;

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const token = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { pageToken?: string }).pageToken ?? '';
    const found = index[token];
    if (!found) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    const [offset, length] = found;
    let at = offset;
    const write = () => {
      while (at < offset + length) {
        const end = Math.min(at + CHUNK, offset + length);
        const more = res.write(bodies.subarray(at, end));
        at = end;
        if (!more) return void res.once('drain', write);
      }
      res.end();
    };
    write();
  });
});
serveOnLoopback(server);
