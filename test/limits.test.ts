/**
 * Hostile and broken input at the HTTP layer, spoken over raw sockets: nesting depth, requests Node's
 * parser refuses, clients that go away, and the limits of `serve`.
 */
import assert from 'node:assert/strict';
import { before, describe, it, mock } from 'node:test';
import { newRegistry, startServeProcess, startTestServer, tempDir, type TestServer } from './helpers.js';
import { connect, rawExchange, rawPost, readResponse, type RawResponse } from './raw-http.js';
import { defaultServerConfig, defaultServerLimits } from '../src/config.js';
import { startHttpServer } from '../src/http/server.js';
import { TemporarilyUnavailable } from '../src/unavailable.js';

let server: TestServer;
let registryFile: string;

before(async () => {
  registryFile = (await newRegistry(tempDir())).location;
  server = await startTestServer(registryFile);
});

function assertJsonError(res: RawResponse, status: number, message?: RegExp) {
  assert.equal(res.status, status, res.body);
  assert.match(res.headers['content-type'] ?? '', /^application\/json; charset=utf-8/);
  assert.deepEqual(Object.keys(res.json ?? {}).sort(), ['errorCode', 'message'], res.body);
  if (message) assert.match(res.json.message, message);
}

/** Attributes as JSON text, `levels` deep: each AttributeValue holding Attributes holding one more. */
function nestedAttributes(levels: number): string {
  const open = '{"attributes":{"attr":{"k":{"values":[';
  const close = ']}}}}';
  return '{"attr":{"k":{"values":[' + open.repeat(levels) + '{"stringValue":"leaf"}' + close.repeat(levels) + ']}}}';
}

/** `depth` levels of JSON objects around an unknown field of a search request. */
const nestedRequest = (depth: number) => '{"nope":'.repeat(depth - 1) + '{"x":1}' + '}'.repeat(depth - 1);

describe('nesting depth', () => {
  it('answers 400 naming the limit for 1,000 levels of peer.attributes, a body under the size limit', async () => {
    const body = `{"peer":{"url":"https://peer.example","attributes":${nestedAttributes(1000)}}}`;
    assert.ok(body.length > 40_000 && body.length < 1024 * 1024, `${body.length} bytes`);
    for (const path of ['/peers/announce', '/datasets/search']) {
      const res = await rawExchange(server.url, rawPost(path, body));
      assert.equal(res.status, 400, res.body);
      assert.match(res.json.message, /deeper than the limit of 64 levels/);
    }
  });

  it('answers 400, not 500, for the deepest body the size limit allows', async () => {
    const depth = 500_000; // 1 MB of brackets
    const res = await rawExchange(server.url, rawPost('/datasets/search', '{"a":' + '['.repeat(depth) + ']'.repeat(depth) + '}'));
    assertJsonError(res, 400, /deeper than the limit/);
  });

  it('reads brackets inside strings as text, and accepts nesting up to the limit', async () => {
    const quoted = JSON.stringify({ pageToken: '['.repeat(200) });
    assertJsonError(await rawExchange(server.url, rawPost('/datasets/search', quoted)), 400, /'pageToken'/);
    assertJsonError(await rawExchange(server.url, rawPost('/datasets/search', nestedRequest(64))), 400, /unknown field 'nope'/);
    assertJsonError(await rawExchange(server.url, rawPost('/datasets/search', nestedRequest(65))), 400, /deeper than the limit of 64/);
  });
});

describe('requests the HTTP parser refuses', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['no Host header', 'GET /info HTTP/1.1\r\n\r\n', 400, /Host header/],
    ['a malformed request line', 'GET /info HTTP/1.1 extra\r\nHost: x\r\n\r\n', 400, /malformed HTTP request/],
    ['a malformed header', 'GET /info HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400, /malformed HTTP request/],
    [
      'Content-Length with Transfer-Encoding',
      'POST /datasets/search HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      400,
      /Transfer-Encoding can't be present with Content-Length/,
    ],
    ['a bad chunk', 'POST /datasets/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400, /malformed HTTP request: .*chunk/],
    ['headers over 16 KB', `GET /info HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431, /limit of 16384 bytes/],
    ['a URL over 16 KB', `GET /info?${'q'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, /limit of 16384 bytes/],
  ];
  for (const [what, request, status, message] of cases) {
    it(`answers ${what} with ${status} and a JSON error body`, async () => {
      assertJsonError(await rawExchange(server.url, request), status, message);
    });
  }

  it('keeps answering on a kept-alive connection after the refused request was answered', async () => {
    // The refused request closes its connection; the server itself goes on.
    assert.equal((await rawExchange(server.url, 'GET /info HTTP/1.1\r\nHost: x\r\n\r\n')).status, 200);
  });
});

describe('clients that go away', () => {
  it('are not logged as internal errors, and never with a stack', async () => {
    const served = await startServeProcess(registryFile, '--access-log');
    for (let i = 0; i < 5; i++) {
      const socket = await connect(served.url);
      // Announces 1000 bytes of body, sends 10, and hangs up.
      socket.write('POST /datasets/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"pageSize"');
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
    }
    // A request after them is answered and logged, so the log has caught up with the aborted ones.
    assert.equal((await rawExchange(served.url, 'GET /info HTTP/1.1\r\nHost: x\r\n\r\n')).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = served.stderr();
    assert.match(log, /GET \/info 200/);
    assert.doesNotMatch(log, /internal error/);
    assert.doesNotMatch(log, /^\s+at /m);
    assert.equal(log.match(/client-went-away/g)?.length, 5, log);
  });
});

describe('a reply that fails after its headers', () => {
  it('closes the connection before the body is complete, and logs why', async () => {
    const firstPiece = '{"values":[' + '1,'.repeat(100_000);
    const server = await startHttpServer(
      [
        {
          method: 'GET',
          path: '/failing',
          handle: async () => ({
            kind: 'stream',
            write: async (sink) => {
              await sink.write(firstPiece);
              await new Promise((resolve) => setTimeout(resolve, 50));
              throw new TemporarilyUnavailable('the file server stopped answering');
            },
          }),
        },
      ],
      { ...defaultServerConfig(), port: 0 },
    );
    const logged = mock.method(console, 'error', () => {});
    try {
      const socket = await connect(server.url);
      socket.write('GET /failing HTTP/1.1\r\nHost: x\r\n\r\n');
      let received = '';
      socket.on('data', (d) => (received += d.toString('latin1')));
      await new Promise((resolve) => socket.once('close', resolve));
      // The status line and a first piece went out, and the chunked body never ended.
      assert.match(received, /^HTTP\/1.1 200/);
      assert.ok(received.includes('1,1,1,'));
      assert.ok(!received.endsWith('0\r\n\r\n'), 'the chunked body must not end as if complete');
      const lines = logged.mock.calls.map((c) => c.arguments.join(' '));
      assert.ok(lines.some((l) => /GET \/failing was cut short after its headers: the file server stopped answering/.test(l)), lines.join('\n'));
    } finally {
      logged.mock.restore();
      await server.close();
    }
  });
});

describe('serve limits', () => {
  const limited = (overrides: Partial<ReturnType<typeof defaultServerLimits>>) =>
    startTestServer(registryFile, { limits: { ...defaultServerLimits(), ...overrides } });
  const info = 'GET /info HTTP/1.1\r\nHost: x\r\n\r\n';
  const closed = (socket: import('node:net').Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

  it('answers a connection over --max-connections with 503, Retry-After and a JSON body, and takes one again once another closes', async () => {
    const small = await limited({ maxConnections: 2 });
    const held = [await connect(small.url), await connect(small.url)];
    const refused = await rawExchange(small.url, info);
    assertJsonError(refused, 503, /2 connections open/);
    assert.equal(refused.json.errorCode, 22);
    assert.equal(refused.headers['retry-after'], '1');
    held[0].destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await rawExchange(small.url, info)).status, 200);
    held[1].destroy();
  });

  it('answers requests over --rate-limit from one address with 429 and Retry-After', async () => {
    const slow = await limited({ ratePerSecond: 1, rateBurst: 3 });
    // Plain fetches: the test helper's contract check would spend tokens of its own on /openapi.json.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await fetch(slow.url + '/info'));
    assert.deepEqual(statuses.map((r) => r.status), [200, 200, 200, 429]);
    assert.equal(((await statuses[3].json()) as { errorCode: number }).errorCode, 16);
    assert.equal(statuses[3].headers.get('retry-after'), '1');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await fetch(slow.url + '/info')).status, 200);
  });

  it('answers a client that sends its headers too slowly (slowloris) with 408 and closes', async () => {
    const strict = await limited({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const socket = await connect(strict.url);
    const started = Date.now();
    const response = readResponse(socket, 5000);
    socket.write('GET /info HTTP/1.1\r\nHost: x\r\n'); // and never the blank line
    const res = await response;
    assertJsonError(res, 408, /not received in time/);
    assert.ok(Date.now() - started < 3000);
    await closed(socket);
  });

  it('closes an idle kept-alive connection after --keep-alive-timeout-ms, and a silent one after --idle-timeout-ms', async () => {
    const brief = await limited({ keepAliveTimeoutMs: 200, idleTimeoutMs: 400 });
    const kept = await connect(brief.url);
    const answered = readResponse(kept);
    kept.write(info);
    assert.equal((await answered).status, 200);
    const silent = await connect(brief.url);
    const started = Date.now();
    await closed(kept);
    assert.ok(Date.now() - started < 2000);
    await closed(silent);
    assert.ok(Date.now() - started < 3000);
  });

  it('takes its limits from the serve options', async () => {
    const served = await startServeProcess(registryFile, '--max-json-depth', '3', '--max-header-bytes', '2048', '--rate-limit', '1', '--rate-burst', '2');
    assertJsonError(await rawExchange(served.url, rawPost('/datasets/search', nestedRequest(4))), 400, /limit of 3 levels/);
    assertJsonError(await rawExchange(served.url, `GET /info HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(3000)}\r\n\r\n`), 431, /limit of 2048 bytes/);
    assert.equal((await rawExchange(served.url, info)).status, 200);
    assertJsonError(await rawExchange(served.url, info), 429);
  });

  it('accepts the deepest nesting the option allows without exhausting the stack', async () => {
    const deep = await limited({ maxJsonDepth: 512 });
    const body = `{"peer":{"url":"https://peer.example","attributes":${nestedAttributes(100)}}}`;
    const res = await rawExchange(deep.url, rawPost('/peers/announce', body));
    assert.notEqual(res.status, 500, res.body);
  });
});
