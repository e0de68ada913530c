/**
 * How every bare baseline server of the benchmark runs: on a free loopback port, announced on standard
 * output as `listening at URL` (what bench/processes.ts waits for), stopped cleanly by SIGTERM or SIGINT.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export function serveOnLoopback(server: http.Server): void {
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening at http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
  process.once('SIGINT', () => server.close(() => process.exit(0)));
}
