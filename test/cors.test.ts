/**
 * CORS over real servers: any origin by default; with `--cors-origin`, the listed origins only (the
 * request's Origin echoed, `Vary: Origin` on every answer, joined with the other Vary names), and
 * preflights answered for them alone. The option's bad values are refused by the real CLI.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { copyFixture, idOf, newRegistry, runCli, startTestServer, tempDir, type TestServer } from './helpers.js';

const ALLOWED = 'http://127.0.0.1:5173';
const OTHER = 'https://elsewhere.example';
const dir = tempDir();
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
let anyOrigin: TestServer;
let listed: TestServer;
let registryLocation: string;

const vary = (res: Response) => (res.headers.get('vary') ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean).sort();
const preflight = (server: TestServer, origin: string, headers = 'content-type') =>
  fetch(server.url + '/datasets/search', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers } });

before(async () => {
  const { location, registry } = await newRegistry(dir);
  registryLocation = location;
  await loadReferenceSet(registry, fasta, { name: 'hg37' });
  anyOrigin = await startTestServer(location);
  listed = await startTestServer(location, { cors: { origins: [ALLOWED, 'https://app.example.org'] } });
});

describe('CORS for any origin (the default)', () => {
  it('lets any page read answers, with the headers a range reader needs', async () => {
    const res = await fetch(anyOrigin.url + `/files/referencesets/${idOf('hg37')}/fasta`, { headers: { origin: OTHER, range: 'bytes=0-9' } });
    assert.equal(res.status, 206);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
    for (const name of ['content-range', 'content-length', 'accept-ranges']) assert.ok(exposed.includes(name), name);
    assert.ok(!vary(res).includes('origin'), 'the answer is the same for every origin');
  });

  it('answers preflights, allowing Range', async () => {
    const res = await preflight(anyOrigin, OTHER, 'range');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-headers') ?? '', /range/i);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
  });
});

describe('CORS for listed origins (--cors-origin)', () => {
  it('echoes a listed origin, and varies by Origin', async () => {
    const res = await fetch(listed.url + '/info', { headers: { origin: ALLOWED } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED);
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /Content-Range/);
    assert.ok(vary(res).includes('origin'));
  });

  it('gives another origin no CORS headers, and the same answer otherwise', async () => {
    const res = await fetch(listed.url + '/info', { headers: { origin: OTHER } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-expose-headers'), null);
    assert.ok(vary(res).includes('origin'));
    const none = await fetch(listed.url + '/info');
    assert.equal(none.headers.get('access-control-allow-origin'), null);
    assert.ok(vary(none).includes('origin'), 'a cache must not hand this answer to a listed origin');
  });

  it('answers the preflights of listed origins, and refuses others with 403', async () => {
    const ok = await preflight(listed, ALLOWED, 'content-type, range');
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), ALLOWED);
    assert.match(ok.headers.get('access-control-allow-headers') ?? '', /range/);
    const refused = await preflight(listed, OTHER);
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    assert.match((await refused.json()).message, /pages of https:\/\/elsewhere\.example may not call this server/);
  });

  it('keeps Vary: Origin beside the Vary of compression and of media types', async () => {
    const compressed = await fetch(listed.url + '/info', { headers: { origin: ALLOWED, 'accept-encoding': 'gzip' } });
    assert.deepEqual(vary(compressed), ['accept-encoding', 'origin']);
    const md5 = (await (await fetch(listed.url + '/references/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ referenceSetId: idOf('hg37') }) })).json()).references[0].md5checksum;
    const refget = await fetch(`${listed.url}/refget/sequence/${md5}?start=0&end=10`, { headers: { origin: ALLOWED } });
    assert.equal(refget.status, 200);
    assert.deepEqual(vary(refget), ['accept', 'origin']);
    assert.equal(refget.headers.get('access-control-allow-origin'), ALLOWED);
  });
});

describe('ga4gh serve --cors-origin', () => {
  const refused = (args: string[], pattern: RegExp) => {
    const r = runCli('serve', registryLocation, '--port', '0', ...args);
    assert.notEqual(r.code, 0);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, pattern);
  };

  it('refuses what is not an origin, in one line', () => {
    refused(['--cors-origin', 'http://127.0.0.1:5173/'], /write http:\/\/127\.0\.0\.1:5173/);
    refused(['--cors-origin', 'app.example.org'], /'app\.example\.org' is not an origin/);
    refused(['--cors-origin', 'ftp://files.example.org'], /is not an origin/);
    refused(['--cors-origin', '*,https://app.example.org'], /either \* or a list of origins/);
  });

  it('refuses --cors-origin with --no-cors', () => {
    refused(['--cors-origin', ALLOWED, '--no-cors'], /cannot be given together/);
  });
});
