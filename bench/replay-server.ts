/**
 * P1's baseline: a bare node:http server replaying variant pages the project served (recorded by the
 * bench, `page-N.json` in the folder given as argument, with `.gz` and `.br` beside each, compressed
 * ahead of time). It does no work but sending bytes: the limit of what moving those bytes to the
 * bench's client allows on this machine. Each connection gets the recorded pages in order, from the
 * first again when a request carries no pageToken; the bench stops after as many pages as the
 * project's pass took. Prints its URL, like `ga4gh serve`, and stops on SIGTERM.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';

const dir = process.argv[2];
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

const next = new WeakMap<Socket, number>();
const PAGE_TOKEN = Buffer.from('"pageToken"');

const server = http.createServer((req, res) => {
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
    const body = page[coding];
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
    if (coding !== 'identity') headers['content-encoding'] = coding;
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening at http://127.0.0.1:${port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
process.once('SIGINT', () => server.close(() => process.exit(0)));
