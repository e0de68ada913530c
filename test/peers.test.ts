/**
 * The peer area over HTTP: GET /info, the list, announcements under each policy between real servers
 * on loopback ports, fake peers that answer /info badly, malformed bodies, floods, and the refusal of
 * private addresses. Background verification is awaited by polling with a deadline, never by sleeping.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { Registry } from '../src/registry/registry.js';
import { backends, type Backend } from './backends.js';
import { collectPages, newRegistry, ROOT, startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir('ga4gh-peers-');

/** A server with its own fresh registry, and that registry open beside it for reading the tables. */
async function serverWith(
  options: Record<string, unknown>,
  backend: Backend = backends[0],
): Promise<{ server: TestServer; registry: Registry; location: string }> {
  const { location, registry } = await newRegistry(await backend.newLocation(dir));
  const server = await startTestServer(location, { options: { announceRate: 1000, ...options } });
  return { server, registry, location };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function peerUrls(server: TestServer): Promise<string[]> {
  const { records } = await collectPages(server, '/peers/list', {}, 'peers');
  return records.map((p) => p.url);
}

const announce = (server: TestServer, url: unknown, extra: Record<string, unknown> = {}) =>
  server.post('/peers/announce', { peer: { url, ...extra } });

type LogRow = { url: string | null; outcome: string; detail: string | null; remote_address: string; user_agent: string };

async function logOf(registry: Registry): Promise<LogRow[]> {
  return registry.db
    .selectFrom('peer_announcement')
    .select(['url', 'outcome', 'detail', 'remote_address', 'user_agent'])
    .orderBy('received_at')
    .orderBy('id')
    .execute();
}

/** The settled log entry of an announced URL (not pending any more). */
const settledEntry = (registry: Registry, url: string) =>
  waitFor(`the outcome for ${url}`, async () => (await logOf(registry)).find((r) => r.url === url && r.outcome !== 'pending'));

/** A tiny HTTP server standing in for a peer; `answer` decides what each request gets. */
async function fakePeer(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const infoAnswer = (body: string, delayMs = 0) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  const send = () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  };
  if (delayMs) setTimeout(send, delayMs);
  else send();
};

describe('GET /info', () => {
  it('reports the protocol version, and the server name, version and areas in attributes', async () => {
    const { server } = await serverWith({});
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    for (const prefix of ['', '/v0.6.0a10']) {
      const res = await server.get(prefix + '/info');
      assert.equal(res.status, 200);
      assert.equal(res.json.protocolVersion, '0.6.0a10');
      const attr = res.json.attributes.attr;
      assert.deepEqual(attr.name.values, [{ stringValue: pkg.name }]);
      assert.deepEqual(attr.version.values, [{ stringValue: pkg.version }]);
      const areas = attr.areas.values.map((v: { stringValue: string }) => v.stringValue);
      assert.ok(areas.includes('peers') && areas.includes('references'), `areas: ${areas}`);
      assert.deepEqual(Object.keys(res.json).sort(), ['attributes', 'protocolVersion']);
    }
  });
});

// Everything that touches the registry runs on each backend: replicas may share one PostgreSQL registry.
for (const backend of backends) {
  describe(`on ${backend.name}`, { skip: backend.skip }, () => {
    const serve = (options: Record<string, unknown>) => serverWith(options, backend);

    describe('malformed announcements', () => {
      it('answer 400 with success false and the GAException fields, and are all logged', async () => {
        const { server, registry } = await serve({ peerPolicy: 'open' });
        const cases: Array<[string, unknown, RegExp]> = [
          ['empty body', {}, /'peer'/],
          ['peer null', { peer: null }, /'peer'/],
          ['peer not an object', { peer: 'http://example.org' }, /peer/],
          ['no url', { peer: {} }, /'peer\.url'/],
          ['url not a string', { peer: { url: 42 } }, /'peer\.url'/],
          ['url relative', { peer: { url: '/ga4gh' } }, /'peer\.url'.*absolute/],
          ['url without scheme', { peer: { url: 'example.org:8000' } }, /'peer\.url'/],
          ['url ftp', { peer: { url: 'ftp://example.org' } }, /'peer\.url'.*http/],
          ['url javascript', { peer: { url: 'javascript:alert(1)' } }, /'peer\.url'/],
          ['url with credentials', { peer: { url: 'http://user:secret@example.org' } }, /'peer\.url'.*credentials/],
          ['url with user only', { peer: { url: 'https://user@example.org/' } }, /'peer\.url'.*credentials/],
          ['url with query', { peer: { url: 'http://example.org/?x=1' } }, /'peer\.url'.*query/],
          ['url with fragment', { peer: { url: 'http://example.org/#top' } }, /'peer\.url'.*fragment/],
          ['url too long', { peer: { url: 'http://example.org/' + 'a'.repeat(3000) } }, /'peer\.url'.*longer/],
          ['url empty', { peer: { url: '' } }, /'peer\.url'/],
          ['unknown field in peer', { peer: { url: 'http://example.org', port: 80 } }, /'peer\.port'/],
          ['unknown top-level field', { peer: { url: 'http://example.org' }, extra: true }, /'extra'/],
          ['attributes of the wrong type', { peer: { url: 'http://example.org', attributes: 'x' } }, /attributes/],
          ['attributes too large', { peer: { url: 'http://example.org', attributes: { attr: { k: { values: [{ stringValue: 'x'.repeat(20000) }] } } } } }, /attributes/],
          ['the same field in both forms', { peer: { url: 'http://example.org' }, Peer: 1 }, /Peer/],
        ];
        for (const [label, body, messagePattern] of cases) {
          for (const route of ['/peers/announce', '/announce']) {
            const res = await server.post(route, body);
            assert.equal(res.status, 400, `${label} on ${route}: ${res.text}`);
            assert.equal(res.json.success, false, `${label}: ${res.text}`);
            assert.equal(typeof res.json.errorCode, 'number', label);
            assert.match(res.json.message, messagePattern, label);
          }
        }
        const log = await logOf(registry);
        assert.equal(log.length, cases.length * 2);
        assert.ok(log.every((r) => r.outcome === 'invalid' && r.remote_address.includes('127.0.0.1')));
        assert.equal(log.find((r) => r.url === 'ftp://example.org')?.outcome, 'invalid');
        assert.deepEqual(await peerUrls(server), [], 'nothing malformed was listed');
      });

      it('a body of the wrong content type or invalid JSON is refused with success false, and logged', async () => {
        const { server, registry } = await serve({ peerPolicy: 'open' });
        const badJson = await server.post('/peers/announce', '{"peer": {');
        assert.equal(badJson.status, 400);
        assert.equal(badJson.json.success, false);
        assert.equal(typeof badJson.json.errorCode, 'number');
        const array = await server.post('/announce', '[]');
        assert.equal(array.status, 400);
        assert.equal(array.json.success, false);
        const wrongType = await server.post('/peers/announce', '{"peer": {"url": "http://example.org"}}', { 'content-type': 'text/plain' });
        assert.equal(wrongType.status, 415);
        assert.equal(wrongType.json.success, false);
        const log = await logOf(registry);
        assert.equal(log.length, 3);
        assert.ok(log.every((r) => r.outcome === 'invalid'));
        assert.deepEqual(await peerUrls(server), []);
      });
    });

    describe('policy open', () => {
      it('lists every well-formed URL at once, normalised, and logs each announcement', async () => {
        const { server, registry } = await serve({ peerPolicy: 'open' });
        const announced: Array<[string, string]> = [
          ['HTTP://Peer-One.EXAMPLE.org:80/ga4gh/', 'http://peer-one.example.org/ga4gh'],
          ['https://peer-two.example.org:443', 'https://peer-two.example.org'],
          ['http://peer-three.example.org:8080//', 'http://peer-three.example.org:8080'],
          ['  https://peer-four.example.org:8443/api/v1  ', 'https://peer-four.example.org:8443/api/v1'],
          ['http://[2001:DB8::1]:80/', 'http://[2001:db8::1]'],
        ];
        for (const [raw] of announced) {
          const res = await server.post('/announce', { peer: { url: raw } }, { 'user-agent': 'peer-test/1.0' });
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.json, { success: true });
        }
        assert.deepEqual(await peerUrls(server), announced.map(([, normal]) => normal).sort());

        // The same peer again, spelled differently: no duplicate.
        assert.equal((await announce(server, 'http://PEER-ONE.example.org/ga4gh')).status, 200);
        assert.equal((await peerUrls(server)).length, announced.length);

        const log = await logOf(registry);
        assert.deepEqual(
          log.map((r) => r.outcome),
          [...announced.map(() => 'added'), 'listed'],
        );
        assert.equal(log[0].url, announced[0][0], 'the log keeps the URL as announced');
        assert.equal(log[0].user_agent, 'peer-test/1.0');
      });

      it('keeps announced attributes and answers in snake_case when asked in it', async () => {
        const { server } = await serve({ peerPolicy: 'open' });
        const attributes = { attr: { name: { values: [{ stringValue: 'other server' }] }, replicas: { values: [{ int64Value: 3 }] } } };
        assert.equal((await announce(server, 'https://attr.example.org', { attributes })).status, 200);
        const res = await server.post('/peers/list', { page_size: 10 });
        assert.equal(res.status, 200);
        assert.deepEqual(res.json, { peers: [{ url: 'https://attr.example.org', attributes: { attr: { name: { values: [{ string_value: 'other server' }] }, replicas: { values: [{ int64_value: 3 }] } } } }] });
      });

      it('stops adding peers at --max-peers and says so in the log', async () => {
        const { server, registry } = await serve({ peerPolicy: 'open', maxPeers: 2 });
        for (const host of ['a', 'b', 'c']) assert.equal((await announce(server, `https://${host}.example.org`)).status, 200);
        assert.deepEqual(await peerUrls(server), ['https://a.example.org', 'https://b.example.org']);
        assert.equal((await logOf(registry)).at(-1)?.outcome, 'full');
      });
    });

    describe('the peer list', () => {
      it('pages with pageSize 1 in URL order, the token disappearing after the last peer', async () => {
        const { server } = await serve({ peerPolicy: 'open' });
        const urls = ['https://c.example.org', 'https://a.example.org', 'http://b.example.org:8000'];
        for (const url of urls) assert.equal((await announce(server, url)).status, 200);
        const seen: string[] = [];
        let token: string | undefined;
        let pages = 0;
        do {
          const res = await server.post('/peers/list', token ? { pageSize: 1, pageToken: token } : { pageSize: 1 });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.json.peers.length, 1);
          seen.push(res.json.peers[0].url);
          token = res.json.nextPageToken;
          pages++;
        } while (token !== undefined && pages < 10);
        assert.equal(pages, 3);
        assert.deepEqual(seen, [...urls].sort());
        // A token of this list works with another page size; a tampered one is a 400.
        const first = await server.post('/peers/list', { pageSize: 1 });
        const rest = await server.post('/peers/list', { pageSize: 5, pageToken: first.json.nextPageToken });
        assert.deepEqual(rest.json.peers.map((p: { url: string }) => p.url), [...urls].sort().slice(1));
        assert.equal(rest.json.nextPageToken, undefined);
        assert.equal((await server.post('/peers/list', { pageToken: 'nonsense' })).status, 400);
        assert.equal((await server.post('/peers/list', { pageSize: -1 })).status, 400);
        assert.equal((await server.post('/peers/list', { pagesize: 1 })).status, 400);
      });

      it('an empty list is an empty array with no token', async () => {
        const { server } = await serve({});
        const res = await server.post('/v0.6.0a10/peers/list', {});
        assert.equal(res.status, 200);
        assert.deepEqual(res.json, { peers: [] });
      });
    });

    describe('policy log', () => {
      it('records announcements but lists nobody', async () => {
        const { server, registry } = await serve({ peerPolicy: 'log' });
        const other = await serve({});
        const res = await announce(server, other.server.url);
        assert.deepEqual(res.json, { success: true });
        assert.deepEqual(await peerUrls(server), []);
        const log = await logOf(registry);
        assert.deepEqual(log.map((r) => [r.url, r.outcome]), [[other.server.url, 'logged']]);
      });
    });

    describe('rate limit', () => {
      it('a flood from one address gets 429 with success false beyond --announce-rate, each attempt logged', async () => {
        const { server, registry } = await serve({ peerPolicy: 'log', announceRate: 5 });
        const statuses: number[] = [];
        const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => announce(server, `https://flood${i}.example.org`)));
        for (const res of replies) {
          statuses.push(res.status);
          if (res.status === 429) {
            assert.equal(res.json.success, false);
            assert.equal(typeof res.json.errorCode, 'number');
            assert.match(res.json.message, /too many announcements/);
          }
        }
        assert.equal(statuses.filter((s) => s === 200).length, 5);
        assert.equal(statuses.filter((s) => s === 429).length, 15);
        // Malformed announcements count against the limit too.
        assert.equal((await server.post('/announce', {})).status, 429);
        const log = await logOf(registry);
        assert.equal(log.length, 21);
        assert.equal(log.filter((r) => r.outcome === 'rate-limited').length, 16);
      });
    });

    describe('announcement log', () => {
      it('is pruned to --announcement-log-size, keeping the newest', async () => {
        const { server, registry } = await serve({ peerPolicy: 'log', announcementLogSize: 4 });
        for (let i = 0; i < 10; i++) assert.equal((await announce(server, `https://log${i}.example.org`)).status, 200);
        const log = await logOf(registry);
        assert.deepEqual(
          log.map((r) => r.url),
          [6, 7, 8, 9].map((i) => `https://log${i}.example.org`),
        );
      });
    });

    describe('policy verify between real servers', () => {
      it('two servers announcing to each other each end up listing the other', async () => {
        const a = await serve({ peerPolicy: 'verify', allowPrivatePeers: true });
        const b = await serve({ peerPolicy: 'verify', allowPrivatePeers: true });
        const started = Date.now();
        assert.deepEqual((await a.server.post('/peers/announce', { peer: { url: b.server.url + '/' } })).json, { success: true });
        assert.deepEqual((await b.server.post('/announce', { peer: { url: a.server.url } })).json, { success: true });
        await waitFor('a to list b', async () => ((await peerUrls(a.server)).includes(b.server.url) ? true : undefined));
        await waitFor('b to list a', async () => ((await peerUrls(b.server)).includes(a.server.url) ? true : undefined));
        assert.ok(Date.now() - started < 8000);
        const entry = await settledEntry(a.registry, b.server.url + '/');
        assert.equal(entry.outcome, 'verified');
        assert.match(entry.detail ?? '', /0\.6\.0a10/);
      });

      it('under policy open and log, the same exchange lists at once, or never', async () => {
        const open = await serve({ peerPolicy: 'open' });
        const logOnly = await serve({ peerPolicy: 'log' });
        await open.server.post('/announce', { peer: { url: logOnly.server.url } });
        await logOnly.server.post('/announce', { peer: { url: open.server.url } });
        assert.deepEqual(await peerUrls(open.server), [logOnly.server.url]);
        assert.deepEqual(await peerUrls(logOnly.server), []);
      });

      it('serve --announce-to announces --public-url to another server at start-up', async () => {
        const hub = await serve({ peerPolicy: 'verify', allowPrivatePeers: true });
        const port = await freePort();
        const publicUrl = `http://127.0.0.1:${port}`;
        const { location } = await newRegistry(await backend.newLocation(dir));
        const announcer = await startTestServer(location, {
          port,
          options: { announceTo: [hub.server.url + '/'], publicUrl: publicUrl + '/', peerPolicy: 'open' },
        });
        await waitFor('the hub to list the announcer', async () => ((await peerUrls(hub.server)).includes(publicUrl) ? true : undefined));
        const entry = await settledEntry(hub.registry, publicUrl);
        assert.equal(entry.outcome, 'verified');
        assert.match(entry.user_agent, /ga4gh-server/);
        // A server never lists itself, even under policy open.
        assert.deepEqual((await announcer.post('/announce', { peer: { url: publicUrl } })).json, { success: true });
        assert.deepEqual(await peerUrls(announcer), []);
      });

      it('--announce-to without --public-url stops start-up', async () => {
        const { location } = await newRegistry(await backend.newLocation(dir));
        await assert.rejects(startTestServer(location, { options: { announceTo: ['http://127.0.0.1:9'] } }), /--public-url/);
      });
    });

    describe('policy verify against fake peers', () => {
      it('answers at once and refuses, in the log, a peer whose /info is slow, wrong or not JSON', async () => {
        const { server, registry } = await serve({ peerPolicy: 'verify', allowPrivatePeers: true, peerVerifyTimeout: 400 });
        const slow = await fakePeer(infoAnswer(JSON.stringify({ protocolVersion: '0.6.0a10' }), 3000));
        const oldVersion = await fakePeer(infoAnswer(JSON.stringify({ protocolVersion: '0.5.1' })));
        const newerMinor = await fakePeer(infoAnswer(JSON.stringify({ protocolVersion: '0.7.0' })));
        const notJson = await fakePeer(infoAnswer('<html>hello</html>'));
        const noVersion = await fakePeer(infoAnswer(JSON.stringify({ attributes: {} })));
        const versionNotText = await fakePeer(infoAnswer(JSON.stringify({ protocolVersion: 6 })));
        const missing = await fakePeer((_req, res) => {
          res.writeHead(404);
          res.end();
        });
        const closed = `http://127.0.0.1:${await freePort()}`;

        const t0 = Date.now();
        assert.deepEqual((await announce(server, slow.url)).json, { success: true });
        assert.ok(Date.now() - t0 < 1000, 'the announcement does not wait for the check');

        const cases: Array<[string, RegExp]> = [
          [slow.url, /longer than 400 ms/],
          [oldVersion.url, /0\.5\.1/],
          [newerMinor.url, /0\.7\.0/],
          [notJson.url, /JSON/],
          [noVersion.url, /protocolVersion/],
          [versionNotText.url, /protocolVersion/],
          [missing.url, /404/],
          [closed, /ECONNREFUSED/],
        ];
        for (const [url] of cases.slice(1)) assert.deepEqual((await announce(server, url)).json, { success: true });
        for (const [url, reason] of cases) {
          const entry = await settledEntry(registry, url);
          assert.equal(entry.outcome, 'refused', `${url}: ${entry.detail}`);
          assert.match(entry.detail ?? '', reason);
        }
        assert.deepEqual(await peerUrls(server), []);
        assert.deepEqual(oldVersion.hits, ['/info']);
      });

      it('accepts the same major.minor under a base path, with the announced attributes', async () => {
        const { server, registry } = await serve({ peerPolicy: 'verify', allowPrivatePeers: true });
        const peer = await fakePeer((req, res) =>
          req.url === '/ga4gh/info' ? infoAnswer(JSON.stringify({ protocol_version: '0.6.0a9' }))(req, res) : (res.writeHead(404), res.end()),
        );
        const attributes = { attr: { site: { values: [{ stringValue: 'fake' }] } } };
        assert.equal((await announce(server, peer.url + '/ga4gh/', { attributes })).status, 200);
        const entry = await settledEntry(registry, peer.url + '/ga4gh/');
        assert.equal(entry.outcome, 'verified', entry.detail ?? '');
        const res = await server.post('/peers/list', {});
        assert.deepEqual(res.json.peers, [{ url: peer.url + '/ga4gh', attributes }]);
        assert.deepEqual(peer.hits, ['/ga4gh/info']);
      });

      it('without --allow-private-peers, never contacts loopback peers, by address or by name', async () => {
        const { server, registry } = await serve({ peerPolicy: 'verify' });
        const peer = await fakePeer(infoAnswer(JSON.stringify({ protocolVersion: '0.6.0a10' })));
        const port = new URL(peer.url).port;
        const urls = [peer.url, `http://localhost:${port}`, `http://[::1]:${port}`, `http://127.1:${port}`, `http://0x7f000001:${port}`];
        for (const url of urls) assert.deepEqual((await announce(server, url)).json, { success: true });
        for (const url of urls) {
          const entry = await settledEntry(registry, url);
          assert.equal(entry.outcome, 'refused', `${url}: ${entry.detail}`);
          assert.match(entry.detail ?? '', /loopback, private/);
        }
        assert.deepEqual(await peerUrls(server), []);
        assert.deepEqual(peer.hits, [], 'the fake peer was never contacted');
      });
    });

    describe('serve --peers', () => {
      it('seeds the list from a file of URLs, normalised, skipping comments and blank lines', async () => {
        const file = path.join(dir, 'seed.txt');
        fs.writeFileSync(file, '# peers we trust\nhttps://Seed-One.example.org/\n\n  http://seed-two.example.org:80/ga4gh  # lab\n');
        const { server } = await serve({ peers: file });
        assert.deepEqual(await peerUrls(server), ['http://seed-two.example.org/ga4gh', 'https://seed-one.example.org']);
      });

      it('a bad line stops start-up, naming the file and line', async () => {
        const file = path.join(dir, 'bad-seed.txt');
        fs.writeFileSync(file, 'https://ok.example.org\nftp://bad.example.org\n');
        const { location } = await newRegistry(await backend.newLocation(dir));
        await assert.rejects(startTestServer(location, { options: { peers: file } }), /bad-seed\.txt:2/);
      });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
