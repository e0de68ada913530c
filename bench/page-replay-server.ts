/**
 * F2's baseline: a bare node:http server answering each request with the very bytes the ga4gh server
 * sent for the same request body (recorded by the bench), in one write with its length, as the server
 * sends a page held in memory. What is left is what HTTP and the client cost for that page.
 * Usage: page-replay-server.ts PAGES (PAGES: JSON of request body text → base64 of the answer).
 */
import fs from 'node:fs';
import http from 'node:http';
import { serveOnLoopback } from './loopback.js';

const pages = new Map(
  Object.entries(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as Record<string, string>).map(([request, body]) => [request, Buffer.from(body, 'base64')]),
);

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const body = pages.get(Buffer.concat(parts).toString('utf8'));
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
});
serveOnLoopback(server);
