/**
 * `ga4gh serve --access-policy`: the policy read and checked at start (a bad one stops the start in
 * one line), read again on SIGHUP and when the file changes, a bad new one refused with one log line
 * while the old one stays in force; each snapshot of the holder is one whole policy, whatever reloads
 * happen while requests use it. Real `serve` processes, their logs read; a real registry.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AccessPolicyHolder, newApiKey } from '../src/access/index.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { newRegistry, runCliAsync, startServeProcess, tempDir, type ServeProcess } from './helpers.js';

const dir = tempDir('ga4gh-access-serve-');
const { location, registry } = await newRegistry(dir, 'registry.sqlite');
await addDataset(registry, 'cohort1');
await addDataset(registry, 'cohort2');

/** Resolves once `read()` matches `pattern`, which it returns the match of; fails after 15 s. */
async function waitFor(read: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const m = pattern.exec(read());
    if (m) return m;
    if (Date.now() > deadline) assert.fail(`no ${pattern} in:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Replaces the file as deployment tools do: written beside it, renamed onto it. */
function replaceFile(file: string, text: string): void {
  const temporary = `${file}.new`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

const lineOf = (text: string, marker: string) => text.split('\n').findIndex((l) => l.includes(marker)) + 1;

const ONE_DATASET = 'datasets:\n  cohort1: { anonymous: none, authenticated: record }\n';
const TWO_DATASETS = 'datasets:\n  cohort1: { anonymous: none }\n  cohort2: { anonymous: count }\ndefault: { anonymous: none }\n';
const INVALID = 'datasets:\n  cohort1:\n    anonymous: none\n    authenticated: everything\n';

describe('serve --access-policy', () => {
  it('without it, one line at start says every dataset is open, and SIGHUP does not stop the server', async () => {
    const server = await startServeProcess(location);
    await waitFor(server.stderr, /access: no --access-policy given: every dataset is open to every caller \(level data\)/);
    server.signal('SIGHUP');
    await waitFor(server.stderr, /access: SIGHUP: no --access-policy to read again; every dataset stays open/);
    assert.equal((await fetch(`${server.url}/service-info`)).status, 200);
    await server.stop();
  });

  it('a policy that fails its checks, names a dataset the registry lacks, or cannot be read stops the start in one line', async () => {
    const invalid = path.join(dir, 'invalid.yaml');
    fs.writeFileSync(invalid, INVALID);
    const unknown = path.join(dir, 'unknown.yaml');
    fs.writeFileSync(unknown, 'datasets:\n  cohort1: { anonymous: none }\n  cohort3: { anonymous: none }\n');
    const cases: Array<[string, RegExp]> = [
      [invalid, new RegExp(`invalid\\.yaml:${lineOf(INVALID, 'everything')}: datasets\\.cohort1\\.authenticated: "everything" is not a level`)],
      [unknown, /unknown\.yaml:3: datasets\.cohort3: the registry holds no dataset cohort3/],
      [path.join(dir, 'missing.yaml'), /missing\.yaml: cannot be read: ENOENT/],
    ];
    for (const [file, message] of cases) {
      const r = await runCliAsync('serve', location, '--port', '0', '--access-policy', file);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stdout, /serving/);
    }
  });

  it('is read again when the file changes and on SIGHUP; an invalid one is refused, naming its line, and the old one stays', async () => {
    const file = path.join(dir, 'policy.yaml');
    fs.writeFileSync(file, ONE_DATASET);
    const server: ServeProcess = await startServeProcess(location, '--access-policy', file);
    // Each expected line is looked for after the one before it.
    let seen = 0;
    const next = async (pattern: RegExp) => {
      const m = await waitFor(() => server.stderr().slice(seen), pattern);
      seen += m.index + m[0].length;
      return m;
    };
    await next(/access policy \S*policy\.yaml in force: 1 dataset, 0 issuers, 0 visa issuers, 0 keys\n/);

    fs.writeFileSync(file, INVALID);
    const refused = await next(/access policy \S+ refused \(file changed\), the one loaded at (\S+) stays in force: (.*)\n/);
    assert.match(refused[2], new RegExp(`^policy\\.yaml:${lineOf(INVALID, 'everything')}: datasets\\.cohort1\\.authenticated: "everything" is not a level`));

    server.signal('SIGHUP');
    const again = await next(/access policy \S+ refused \(SIGHUP\), the one loaded at (\S+) stays in force/);
    assert.equal(again[1], refused[1], 'still the policy loaded at start');

    replaceFile(file, TWO_DATASETS);
    await next(/access policy \S+ reloaded \(file changed\): 2 datasets, 0 issuers, 0 visa issuers, 0 keys\n/);

    const badHash = `${TWO_DATASETS}keys:\n  - { name: pipeline, hash: "x", datasets: { cohort9: data } }\n`;
    replaceFile(file, badHash);
    const refusedAfterReload = await next(/refused \(file changed\), the one loaded at (\S+) stays in force: (.*)\n/);
    assert.notEqual(refusedAfterReload[1], refused[1], 'the policy in force is the one reloaded');
    assert.match(refusedAfterReload[2], new RegExp(`^policy\\.yaml:${lineOf(badHash, 'pipeline')}: keys\\[0\\]\\.hash: is not a key hash`));

    const unknownDataset = `${TWO_DATASETS}keys:\n  - { name: pipeline, hash: "${(await newApiKey()).hash}", datasets: { cohort9: data } }\n`;
    replaceFile(file, unknownDataset);
    await next(new RegExp(`refused \\(file changed\\).*: policy\\.yaml:${lineOf(unknownDataset, 'pipeline')}: keys\\[0\\]\\.datasets\\.cohort9: the registry holds no dataset cohort9\n`));

    fs.writeFileSync(file, ONE_DATASET);
    await next(/reloaded \(file changed\): 1 dataset, 0 issuers/);
    server.signal('SIGHUP');
    await next(/reloaded \(SIGHUP\): 1 dataset, 0 issuers/);
    await server.stop();
  });
});

describe('the policy holder', () => {
  it('a snapshot is one whole policy: reloads while requests resolve callers never mix two policies, and a refused one changes nothing', async () => {
    const file = path.join(dir, 'holder.yaml');
    const [a, b] = [await newApiKey(), await newApiKey()];
    const policyWith = (name: string, hash: string) => `datasets:\n  cohort1: { anonymous: none }\nkeys:\n  - { name: ${name}, hash: "${hash}", datasets: { cohort1: data } }\n`;
    fs.writeFileSync(file, policyWith('a', a.hash));
    const lines: string[] = [];
    const holder = await AccessPolicyHolder.start({ file, knownDatasets: async () => new Set(['cohort1']), log: (l) => lines.push(l), debounceMs: 20 });
    try {
      const first = holder.current();
      assert.deepEqual(first.policy!.keys.map((k) => k.name), ['a']);

      const invalid = `${policyWith('b', b.hash)}default: { anonymous: nothing }\n`;
      fs.writeFileSync(file, invalid);
      await holder.reload('test');
      assert.equal(holder.current(), first, 'the refused policy changed nothing');
      assert.match(lines.at(-1)!, new RegExp(`refused \\(test\\).*holder\\.yaml:${lineOf(invalid, 'nothing')}: default\\.anonymous: "nothing" is not a level`));

      // Each request takes one snapshot, and the policy is replaced while it resolves its callers.
      const seen: string[] = [];
      for (let flip = 0; flip < 6; flip++) {
        const snapshot = holder.current();
        const name = snapshot.policy!.keys[0].name;
        fs.writeFileSync(file, name === 'a' ? policyWith('b', b.hash) : policyWith('a', a.hash));
        const reloading = holder.reload('test');
        const [withA, withB] = await Promise.all([snapshot.resolver.resolve({ headers: {}, queryKeys: [a.key] }), snapshot.resolver.resolve({ headers: {}, queryKeys: [b.key] })]);
        await reloading;
        assert.notEqual(holder.current(), snapshot, 'replaced meanwhile');
        assert.equal(withA.ok, name === 'a', `key a under the policy of key ${name}`);
        assert.equal(withB.ok, name === 'b', `key b under the policy of key ${name}`);
        seen.push(name);
      }
      assert.deepEqual(seen, ['a', 'b', 'a', 'b', 'a', 'b']);
      const old = await first.resolver.resolve({ headers: {}, queryKeys: [a.key] });
      assert.ok(old.ok, 'a request holding the first snapshot still resolves under it');
    } finally {
      holder.close();
    }
  });
});
