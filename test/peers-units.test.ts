/**
 * The peer area's parts on their own: URL normal form, which addresses count as public, the rate
 * limiter's refill, the protocol-version rule, and the verification request through its pinned lookup.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { AnnounceRateLimiter } from '../src/areas/peers/rate-limit.js';
import { normalisePeerUrl } from '../src/areas/peers/url.js';
import { isPublicAddress, majorMinor, vetHost, verifyPeer } from '../src/areas/peers/verify.js';

describe('peer URL normal form', () => {
  it('lower-cases scheme and host, drops default ports and trailing slashes, keeps base paths', () => {
    const cases: Array<[string, string]> = [
      ['HTTP://Example.ORG', 'http://example.org'],
      ['http://example.org:80/', 'http://example.org'],
      ['https://example.org:443/', 'https://example.org'],
      ['http://example.org:443/', 'http://example.org:443'],
      ['https://example.org:80', 'https://example.org:80'],
      ['http://example.org:8000///', 'http://example.org:8000'],
      ['https://Example.org/GA4GH/v1/', 'https://example.org/GA4GH/v1'],
      ['http://[::1]:8000/', 'http://[::1]:8000'],
      ['http://[2001:DB8::A]', 'http://[2001:db8::a]'],
    ];
    for (const [raw, normal] of cases) assert.deepEqual(normalisePeerUrl(raw), { ok: true, url: normal }, raw);
  });

  it('refuses what is not an absolute http(s) base URL without credentials', () => {
    const refused = [
      'example.org',
      '//example.org',
      '/ga4gh',
      'ftp://example.org',
      'file:///etc/passwd',
      'gopher://example.org',
      'http://',
      'http://user@example.org',
      'http://user:pw@example.org',
      'http://example.org/?a=1',
      'http://example.org/?',
      'http://example.org/#',
      'http://exa mple.org',
      'http://example.org/' + 'x'.repeat(2048),
    ];
    for (const raw of refused) assert.equal(normalisePeerUrl(raw).ok, false, raw);
  });
});

describe('public addresses', () => {
  it('refuses loopback, private, link-local, metadata and reserved addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a00:1',
      'not an address',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });

  it('accepts public ones', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '193.62.193.80', '2606:4700:4700::1111', '::ffff:8.8.4.4']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  it('judges a name by what it resolves to', async () => {
    await assert.rejects(vetHost('localhost', false), /loopback, private/);
    await assert.rejects(vetHost('[::1]', false), /::1/);
    assert.equal((await vetHost('127.0.0.1', true)).address, '127.0.0.1');
    await assert.rejects(vetHost('no-such-host.invalid', true), /cannot resolve/);
  });
});

describe('protocol version rule', () => {
  it('compares major.minor', () => {
    assert.equal(majorMinor('0.6.0a10'), '0.6');
    assert.equal(majorMinor('0.6.0'), '0.6');
    assert.equal(majorMinor('00.06.1'), '0.6');
    assert.equal(majorMinor('0.5.1'), '0.5');
    assert.equal(majorMinor('1.0'), '1.0');
    assert.equal(majorMinor('v0.6.0'), undefined);
    assert.equal(majorMinor('six'), undefined);
  });
});

describe('announcement rate limiter', () => {
  it('allows a burst of the per-minute rate per address, then refills over time', () => {
    let now = 1_000_000;
    const limiter = new AnnounceRateLimiter(6, 100, () => now);
    const burst = Array.from({ length: 8 }, () => limiter.take('198.51.100.7'));
    assert.deepEqual(burst, [true, true, true, true, true, true, false, false]);
    assert.equal(limiter.take('198.51.100.8'), true, 'another address has its own bucket');
    now += 9_999; // 6 a minute: one token every 10 s
    assert.equal(limiter.take('198.51.100.7'), false);
    now += 1;
    assert.equal(limiter.take('198.51.100.7'), true);
    assert.equal(limiter.take('198.51.100.7'), false);
    now += 10 * 60_000; // refills to the burst size, not beyond
    assert.deepEqual(
      Array.from({ length: 7 }, () => limiter.take('198.51.100.7')),
      [true, true, true, true, true, true, false],
    );
  });

  it('stays bounded when many addresses send', () => {
    let now = 0;
    const limiter = new AnnounceRateLimiter(2, 50, () => now);
    for (let i = 0; i < 1000; i++) {
      now += 1;
      assert.equal(limiter.take(`10.0.${i >> 8}.${i & 255}`), true);
    }
    assert.ok((limiter as unknown as { buckets: Map<string, unknown> }).buckets.size <= 50);
  });
});

describe('verifying a peer', () => {
  it('reaches a peer named by host name through the pinned address', async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ protocolVersion: '0.6.0a10', seen: req.headers.host }));
    });
    // Listen on every loopback family the name may resolve to first.
    await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const options = { protocolVersion: '0.6.0a10', timeoutMs: 2000, allowPrivate: true };
    assert.deepEqual(await verifyPeer(`http://localhost:${port}`, options), { ok: true, protocolVersion: '0.6.0a10' });
    const refused = await verifyPeer(`http://localhost:${port}`, { ...options, allowPrivate: false });
    assert.equal(refused.ok, false);
  });
});
