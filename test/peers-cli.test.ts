/**
 * The operator's peer commands through the real `ga4gh` command line: add, list, remove, the
 * announcement log, and the refusals (one line, exit 1).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { allMigrations } from '../src/areas/index.js';
import { initRegistry } from '../src/registry/registry.js';
import { runCli, runCliAsync, startTestServer, tempDir } from './helpers.js';

const dir = tempDir('ga4gh-peers-cli-');
const location = path.join(dir, 'registry.sqlite');

before(async () => {
  const registry = await initRegistry(location, allMigrations());
  await registry.close();
});

describe('repo add-peer, list-peers, remove-peer', () => {
  it('adds normalised URLs with attributes, lists them, replaces attributes, removes them', () => {
    const added = runCli('repo', 'add-peer', location, 'HTTPS://Peer.Example.org:443/ga4gh/', '--attributes', '{"site": "Example lab", "tier": [1, 2]}');
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout.trim(), 'added peer https://peer.example.org/ga4gh');

    const wire = runCli('repo', 'add-peer', location, 'http://second.example.org', '--attributes', '{"attr": {"k": {"values": [{"boolValue": true}]}}}');
    assert.equal(wire.code, 0, wire.stderr);

    const listed = runCli('repo', 'list-peers', location);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.equal(lines.length, 4, listed.stdout); // header, rule, two peers
    assert.match(lines[2], /^http:\/\/second\.example\.org\s+operator\s.*"boolValue":true/);
    assert.match(lines[3], /^https:\/\/peer\.example\.org\/ga4gh\s+operator\s.*"stringValue":"Example lab".*"int64Value":2/);

    const again = runCli('repo', 'add-peer', location, 'https://peer.example.org/ga4gh');
    assert.equal(again.stdout.trim(), 'updated peer https://peer.example.org/ga4gh');

    const inventory = runCli('repo', 'list', location, '--json');
    assert.equal(inventory.code, 0, inventory.stderr);
    assert.deepEqual(JSON.parse(inventory.stdout).peers, [
      { url: 'http://second.example.org', origin: 'operator' },
      { url: 'https://peer.example.org/ga4gh', origin: 'operator' },
    ]);

    const removed = runCli('repo', 'remove-peer', location, 'http://SECOND.example.org/');
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout.trim(), 'removed peer http://second.example.org');
    const after = runCli('repo', 'list-peers', location);
    assert.doesNotMatch(after.stdout, /second/);
    assert.match(after.stdout, /peer\.example\.org/);
  });

  it('refuses bad URLs, bad attributes and unknown peers with one line and exit 1', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['repo', 'add-peer', location, 'ftp://example.org'], /only http and https/],
      [['repo', 'add-peer', location, 'http://me:pw@example.org'], /credentials/],
      [['repo', 'add-peer', location, 'http://example.org', '--attributes', '{nope'], /--attributes is not valid JSON/],
      [['repo', 'add-peer', location, 'http://example.org', '--attributes', '{"k": {"deep": 1}}'], /'k' must be/],
      [['repo', 'add-peer', location, 'http://example.org', '--attributes', '{"attr": {"k": 1}}'], /attr\.k/],
      [['repo', 'remove-peer', location, 'http://never-added.example.org'], /no peer http:\/\/never-added\.example\.org/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCliAsync(...args)));
    for (const [i, [args, pattern]] of cases.entries()) {
      const r = results[i];
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^ga4gh: /);
    }
    assert.doesNotMatch(runCli('repo', 'list-peers', location).stdout, /example\.org\s+operator\s*$/m);
  });
});

describe('repo announcements', () => {
  it('shows the newest announcements first with their outcome, limited by --limit', async () => {
    const logDir = tempDir('ga4gh-peers-log-');
    const logRegistry = path.join(logDir, 'log.sqlite');
    const registry = await initRegistry(logRegistry, allMigrations());
    await registry.close();
    const server = await startTestServer(logRegistry, { options: { peerPolicy: 'open' } });
    await server.post('/announce', { peer: { url: 'https://first.example.org' } }, { 'user-agent': 'tester/2' });
    await server.post('/announce', { peer: { url: 'gopher://second.example.org' } });
    await server.post('/announce', { peer: { url: 'https://third.example.org/' } });
    await server.close();

    const all = runCli('repo', 'announcements', logRegistry);
    assert.equal(all.code, 0, all.stderr);
    const rows = all.stdout.trim().split('\n').slice(2);
    assert.equal(rows.length, 3);
    assert.match(rows[0], /127\.0\.0\.1\s+added\s+https:\/\/third\.example\.org\/\s/);
    assert.match(rows[1], /invalid\s+gopher:\/\/second\.example\.org\s+field 'peer\.url' has scheme gopher/);
    assert.match(rows[2], /added\s+https:\/\/first\.example\.org\s.*tester\/2$/);

    const limited = runCli('repo', 'announcements', logRegistry, '--limit', '1');
    assert.equal(limited.stdout.trim().split('\n').length, 3);
    assert.match(limited.stdout, /third/);
    assert.equal(runCli('repo', 'announcements', logRegistry, '--limit', '0').code, 1);

    const empty = runCli('repo', 'announcements', location);
    assert.equal(empty.stdout.trim(), 'no announcements');
  });
});

describe('serve options', () => {
  it('refuses an unknown --peer-policy before serving', () => {
    const r = runCli('serve', location, '--port', '0', '--peer-policy', 'everyone');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /peer-policy/);
    assert.match(r.stderr, /log, verify, open/);
  });
});
