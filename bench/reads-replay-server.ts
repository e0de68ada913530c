/**
 * The reads part's second baseline: a bare node:http server that answers each reads search with the
 * bytes the ga4gh server sent for the same request (recorded by the bench), found by the request's
 * pageToken, in 1 MB writes as the server writes them. What is left is what HTTP and the client cost.
 * With `--floor=JSON`, each page is first made by the floor (floor.ts), the next one as soon as the
 * current one is handed to the socket.
 * Usage: reads-replay-server.ts BODIES INDEX [--floor=JSON] (INDEX: JSON of pageToken → [offset,
 * length] in BODIES, in the order of the pass).
 */
import fs from 'node:fs';
import http from 'node:http';
import { floorOf, PageFloor } from './floor.js';
import { serveOnLoopback } from './loopback.js';

const [bodiesFile, indexFile] = process.argv.slice(2);
const bodies = fs.readFileSync(bodiesFile);
const index = JSON.parse(fs.readFileSync(indexFile, 'utf8')) as Record<string, [number, number]>;
const CHUNK = 1 << 20;
const spec = floorOf(process.argv);
const tokens = Object.keys(index);
const pageNumber = new Map(tokens.map((token, k) => [token, k]));
const bodyOf = (k: number) => bodies.subarray(index[tokens[k]][0], index[tokens[k]][0] + index[tokens[k]][1]);
const floor = spec ? new PageFloor(spec, bodies) : undefined;

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const token = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { pageToken?: string }).pageToken ?? '';
    const k = pageNumber.get(token);
    if (k === undefined) {
      res.writeHead(404).end();
      return;
    }
    const body = floor ? floor.take(k, bodyOf(k)) : bodyOf(k);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    let at = 0;
    const write = () => {
      while (at < body.length) {
        const end = Math.min(at + CHUNK, body.length);
        const more = res.write(body.subarray(at, end));
        at = end;
        if (!more) return void res.once('drain', write);
      }
      res.end();
      if (k + 1 < tokens.length) floor?.makeAhead(k + 1, bodyOf(k + 1));
    };
    write();
  });
});
serveOnLoopback(server);
