/** The wire rules every area shares, checked on a real server over an empty but real registry. */
import assert from 'node:assert/strict';
import http from 'node:http';
import { before, describe, it } from 'node:test';
import { newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';

let server: TestServer;
let snakeServer: TestServer;

before(async () => {
  const { location } = await newRegistry(tempDir());
  server = await startTestServer(location, { bodyLimit: 2048 });
  snakeServer = await startTestServer(location, { forceForm: 'snake', cors: false });
});

function assertGaError(res: { status: number; json: any; headers: Headers }, status: number, message?: RegExp) {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json; charset=utf-8/);
  assert.deepEqual(Object.keys(res.json).sort(), ['errorCode', 'message']);
  assert.equal(typeof res.json.errorCode, 'number');
  if (message) assert.match(res.json.message, message);
}

describe('requests', () => {
  it('reads an empty body as {}', async () => {
    const res = await server.post('/datasets/search', '');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { datasets: [] });
  });

  it('reads a body without a content type as JSON', async () => {
    // fetch() always adds a content type to a string body, so speak HTTP directly.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(server.url + '/datasets/search', { method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{"pageSize": 5}');
    });
    assert.equal(status, 200);
  });

  it('answers 415 for a body of another content type', async () => {
    assertGaError(await server.post('/datasets/search', '{}', { 'content-type': 'text/plain' }), 415, /application\/json/);
  });

  it('answers 400 for malformed JSON and for JSON that is not an object', async () => {
    assertGaError(await server.post('/datasets/search', '{"pageSize":'), 400, /not valid JSON/);
    for (const body of ['null', '[]', '"x"', '3']) assertGaError(await server.post('/datasets/search', body), 400, /JSON object/);
  });

  it('answers 400 naming an unknown field, a mistyped value or a field given in both forms', async () => {
    assertGaError(await server.post('/datasets/search', { pagesize: 3 }), 400, /'pagesize'/);
    assertGaError(await server.post('/datasets/search', { pageSize: 'many' }), 400, /'pageSize'/);
    assertGaError(await server.post('/datasets/search', { pageSize: -1 }), 400, /'pageSize'/);
    assertGaError(await server.post('/datasets/search', { pageSize: 1, page_size: 1 }), 400, /twice/);
    assertGaError(await server.post('/datasets/search', { pageToken: 'not-a-token' }), 400, /'pageToken'/);
  });

  it('answers 413 for a body over the limit', async () => {
    assertGaError(await server.post('/datasets/search', JSON.stringify({ pageToken: 'x'.repeat(4096) })), 413);
  });

  it('answers errors of snake_case requests in snake_case', async () => {
    const res = await server.post('/datasets/search', { page_size: 'x' });
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.json).sort(), ['error_code', 'message']);
  });
});

describe('paths', () => {
  it('serves every path under the version prefix too', async () => {
    assert.equal((await server.post('/v0.6.0a10/datasets/search', {})).status, 200);
    assert.equal((await server.get('/v0.6.0a10/info')).status, 200);
  });

  it('answers 404 for unknown paths and 405 for a known path with the wrong method', async () => {
    assertGaError(await server.get('/nothing/here'), 404, /no endpoint/);
    const wrong = await server.get('/datasets/search');
    assertGaError(wrong, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
    assertGaError(await server.post('/info', {}), 405);
  });

  it('answers CORS preflights when CORS is on, and not when it is off', async () => {
    const pre = await fetch(server.url + '/datasets/search', {
      method: 'OPTIONS',
      headers: { origin: 'http://browser.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    const off = await fetch(snakeServer.url + '/datasets/search', { method: 'OPTIONS' });
    assert.equal(off.status, 405);
    assert.equal(off.headers.get('access-control-allow-origin'), null);
  });
});

describe('responses', () => {
  it('can be forced into one naming form', async () => {
    const res = await snakeServer.get('/info');
    assert.equal(res.json.protocol_version, '0.6.0a10');
  });

  it('report the protocol version', async () => {
    const res = await server.get('/info');
    assert.equal(res.status, 200);
    assert.equal(res.json.protocolVersion, '0.6.0a10');
  });
});
