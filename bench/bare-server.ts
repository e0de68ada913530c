/**
 * P3's baseline: a bare node:http server answering every request with a small fixed JSON body, the
 * ceiling of requests per second this platform allows one Node process. Prints its URL, like
 * `ga4gh serve`, and stops on SIGTERM.
 */
import http from 'node:http';
import { serveOnLoopback } from './loopback.js';

const body = Buffer.from(JSON.stringify({ id: 'WyJiZW5jaCIsIjIwIl0', name: '20', length: 20000000, md5checksum: 'a'.repeat(32) }));

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
serveOnLoopback(server);
