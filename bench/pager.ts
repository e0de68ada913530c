/**
 * The load of P6, in a process of its own so that its work does not slow the probe's event loop:
 * `CLIENTS` clients each page through every call of the cohort (pageSize 1000, every call), over and
 * over, until standard input closes; then one line of JSON says what they read.
 *
 * Usage: node --import tsx bench/pager.ts URL CLIENTS REQUEST_JSON
 */
import { Client, variantPage } from './client.js';

const [url, clientsText, requestJson] = process.argv.slice(2);
const request = JSON.parse(requestJson) as Record<string, unknown>;
const totals = { pages: 0, bytes: 0, passes: 0, shed: 0, failures: 0 };
let stopping = false;
const started = new Set<number>();

async function pageForever(id: number): Promise<void> {
  const client = new Client(new URL(url));
  try {
    while (!stopping) {
      let pageToken: string | undefined;
      do {
        const page = await variantPage(client, pageToken ? { ...request, pageToken } : request, { countCalls: false, countVariants: false });
        if (page.status === 503) {
          totals.shed++; // the server said it is at its limit: wait as it asked, then ask again
          await new Promise((resolve) => setTimeout(resolve, 1000));
          continue;
        }
        if (page.status !== 200) {
          totals.failures++;
          throw new Error(`POST /variants/search answered ${page.status}: ${page.error}`);
        }
        if (!started.has(id)) {
          started.add(id);
          if (started.size === Number(clientsText)) process.stdout.write('started\n');
        }
        totals.pages++;
        totals.bytes += page.bytes;
        pageToken = page.nextPageToken;
      } while (pageToken && !stopping);
      if (!pageToken) totals.passes++;
    }
  } finally {
    client.close();
  }
}

const clients = Array.from({ length: Number(clientsText) }, (_, i) => pageForever(i));
process.stdin.resume();
process.stdin.on('end', () => (stopping = true));
Promise.all(clients).then(
  () => process.stdout.write(JSON.stringify(totals) + '\n'),
  (e) => {
    process.stderr.write(`pager: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
