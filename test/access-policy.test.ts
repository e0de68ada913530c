/**
 * The access policy: its file checked whole, each problem naming its line (found here in the text
 * the test wrote) and field; the levels levelOf gives each kind of caller under each kind of grant;
 * API keys made by the real `ga4gh access add-key`, verified from `?key=` and `Authorization: Bearer`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ANONYMOUS, LEVELS, levelOf, type Caller, type Level, type VerifiedVisa } from '../src/access/index.js';
import { PolicyInvalid, readPolicy } from '../src/access/policy-file.js';
import { callerResolver, type CallerResolution } from '../src/access/resolve-caller.js';
import { KeySets } from '../src/access/tokens.js';
import { runCli, tempDir } from './helpers.js';

const dir = tempDir('ga4gh-access-');
const ISSUER = 'https://login.example.org';
const OTHER_ISSUER = 'https://other-login.example.org';
const COHORT1_URL = 'https://example.org/datasets/cohort1';

/** The 1-based number of the line of `text` holding `marker` (once). */
function lineOf(text: string, marker: string): number {
  const lines = text.split('\n');
  const found = lines.flatMap((line, i) => (line.includes(marker) ? [i + 1] : []));
  assert.equal(found.length, 1, `the marker ${marker} is on one line`);
  return found[0];
}

/** The problems reading `text` finds (none: the test fails). */
function problemsOf(text: string): string[] {
  try {
    readPolicy(text, 'policy.yaml');
  } catch (e) {
    assert.ok(e instanceof PolicyInvalid, String(e));
    return e.problems;
  }
  assert.fail('the policy was accepted');
}

const ISSUERS = `issuers:
  - issuer: ${ISSUER}
    jwks: ${ISSUER}/jwks
    audience: ga4gh-server
  - issuer: ${OTHER_ISSUER}
    discovery: true
    audience: [ga4gh-server, beacon]
visas:
  - issuer: https://visas.example.org
    jwks: https://visas.example.org/jwks
`;

describe('the policy file is checked whole, each problem naming its line and field', () => {
  const cases: Array<[string, string, string, RegExp]> = [
    // [what, the text of the datasets entry, the marker of the line the problem is on, what it says]
    ['an unknown level', 'cohort1:\n    anonymous: admin', 'anonymous: admin', /datasets\.cohort1\.anonymous: "admin" is not a level \(none, boolean, count, record, data\)/],
    ['a grant without level', `cohort1:\n    grants:\n      - { issuer: ${ISSUER}, subject: alice }`, 'subject: alice', /datasets\.cohort1\.grants\[0\]\.level: missing/],
    ['a misspelt key of a grant', `cohort1:\n    grants:\n      - { group: readers, isuer: ${ISSUER}, level: record }`, 'isuer', /datasets\.cohort1\.grants\[0\]\.isuer: is not a key here/],
    ['a subject without its issuer', 'cohort1:\n    grants:\n      - { subject: alice, level: data }', 'subject: alice', /grants\[0\]\.issuer: missing: a subject is granted only with its issuer/],
    ['a grant naming two kinds', `cohort1:\n    grants:\n      - { issuer: ${ISSUER}, subject: alice, group: g, level: data }`, 'subject: alice', /grants\[0\]: names subject and group/],
    ['a grant of an issuer not trusted', 'cohort1:\n    grants:\n      - { issuer: https://elsewhere.example.org, subject: alice, level: data }', 'elsewhere', /grants\[0\]\.issuer: https:\/\/elsewhere\.example\.org is not one of issuers:/],
    ['a visa grant without the dataset\'s url', 'cohort1:\n    grants:\n      - { visa: true, level: data }', 'visa: true', /grants\[0\]: a visa grant needs the dataset's url/],
    ['authenticated below anonymous', 'cohort1:\n    anonymous: record\n    authenticated: count', 'authenticated: count', /datasets\.cohort1\.authenticated: count is below anonymous \(record\)/],
    ['a url that is no URL', 'cohort1:\n    url: not a url', 'url: not a url', /datasets\.cohort1\.url: "not a url" is not an absolute URL/],
    ['a dataset named twice', 'cohort1:\n    anonymous: none\n  cohort1: # again\n    anonymous: data', '# again', /datasets\.cohort1: is named twice \(first on line \d+\)/],
    ['two datasets with one url', `cohort1:\n    url: ${COHORT1_URL}\n  cohort2:\n    url: ${COHORT1_URL}  # second`, '# second', /datasets\.cohort2\.url: .* is the url of dataset cohort1 too/],
  ];
  for (const [what, datasets, marker, message] of cases) {
    it(what, () => {
      const text = `${ISSUERS}datasets:\n  ${datasets}\n`;
      const problems = problemsOf(text);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0], new RegExp(`^policy\\.yaml:${lineOf(text, marker)}: `));
      assert.match(problems[0], message);
    });
  }

  const issuerCases: Array<[string, string, string, RegExp]> = [
    ['an issuer without jwks or discovery', `  - issuer: ${ISSUER}\n    audience: a`, `issuer: ${ISSUER}`, /issuers\[0\]: needs jwks: URL or discovery: true/],
    ['an issuer without audience', `  - issuer: ${ISSUER}\n    jwks: ${ISSUER}/jwks`, `issuer: ${ISSUER}`, /issuers\[0\]\.audience: missing/],
    ['a JWKS in plain http off the loopback', `  - issuer: ${ISSUER}\n    jwks: http://login.example.org/jwks\n    audience: a`, 'http://login', /issuers\[0\]\.jwks: http:\/\/login\.example\.org\/jwks is not an https: URL/],
    ['an HMAC algorithm', `  - issuer: ${ISSUER}\n    jwks: ${ISSUER}/jwks\n    audience: a\n    algorithms: [RS256, HS256]`, 'algorithms', /issuers\[0\]\.algorithms: HS256: not an asymmetric signature algorithm/],
    ['alg none', `  - issuer: ${ISSUER}\n    jwks: ${ISSUER}/jwks\n    audience: a\n    algorithms: none`, 'algorithms', /issuers\[0\]\.algorithms: none: not an asymmetric/],
    ['an issuer listed twice', `  - { issuer: ${ISSUER}, discovery: true, audience: a }\n  - { issuer: ${ISSUER}, discovery: true, audience: b }`, 'audience: b', /issuers\[1\]\.issuer: .* is already issuers\[0\]/],
    ['discovery that is not true', `  - { issuer: ${ISSUER}, discovery: yes-please, audience: a }`, 'yes-please', /issuers\[0\]\.discovery: must be true/],
  ];
  for (const [what, issuers, marker, message] of issuerCases) {
    it(what, () => {
      const text = `issuers:\n${issuers}\n`;
      const problems = problemsOf(text);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0], new RegExp(`^policy\\.yaml:${lineOf(text, marker)}: `));
      assert.match(problems[0], message);
    });
  }

  it('an unknown top-level key, a bad key entry and a bad leeway are all reported at once; keys starting with x- are left alone', () => {
    const text = [
      'x-managed-by: a deployment tool',
      'datasetz: {}',
      'leewaySeconds: -5',
      'keys:',
      '  - { name: pipeline, hash: "not a hash", datasets: { cohort1: record } }',
      '  - { name: "bad name!", hash: "$scrypt$ln=14,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", datasets: { cohort1: sometimes } }',
      '',
    ].join('\n');
    const problems = problemsOf(text);
    const expected: Array<[string, RegExp]> = [
      ['datasetz', /the policy\.datasetz: is not a key here/],
      ['leewaySeconds', /leewaySeconds: must be a number of seconds/],
      ['not a hash', /keys\[0\]\.hash: is not a key hash/],
      ['bad name!', /keys\[1\]\.name: "bad name!"/],
      ['bad name!', /keys\[1\]\.datasets\.cohort1: "sometimes" is not a level/],
    ];
    assert.equal(problems.length, expected.length, problems.join('\n'));
    for (const [marker, message] of expected) {
      const problem = problems.find((p) => message.test(p));
      assert.ok(problem, `${message} in ${problems.join('\n')}`);
      assert.ok(problem.startsWith(`policy.yaml:${lineOf(text, marker)}: `), problem);
    }
  });

  it('an empty file, a file that is not YAML, a policy that is not a mapping', () => {
    assert.match(problemsOf('')[0], /^policy\.yaml:1: the policy is empty/);
    assert.match(problemsOf('datasets:\n  cohort1: [unclosed\n')[0], /^policy\.yaml:\d+: /);
    assert.match(problemsOf('- a\n- b\n')[0], /^policy\.yaml:1: the policy: must be a mapping/);
  });

  it('a JSON policy is read too, its problems on their lines', () => {
    const text = JSON.stringify({ datasets: { cohort1: { anonymous: 'count' }, cohort2: { anonymous: 'everything' } } }, null, 2);
    const problems = problemsOf(text);
    assert.equal(problems.length, 1);
    assert.match(problems[0], new RegExp(`^policy\\.yaml:${lineOf(text, '"everything"')}: datasets\\.cohort2\\.anonymous: "everything" is not a level`));
  });
});

describe('levelOf', () => {
  const text = `${ISSUERS}
datasets:
  cohort1:
    anonymous: boolean
    authenticated: count
    url: ${COHORT1_URL}
    grants:
      - { issuer: ${ISSUER}, subject: alice, level: data }
      - { group: cohort1-readers, level: record }
      - { issuer: ${OTHER_ISSUER}, group: other-only, level: data }
      - { visa: true, level: data }
  closed:
    anonymous: none
default: { anonymous: record, authenticated: data }
keys:
  - { name: pipeline, hash: "$scrypt$ln=14,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", datasets: { cohort1: record, unnamed: data } }
`;
  const { policy } = readPolicy(text, 'policy.yaml');
  const person = (issuer: string, subject: string, groups: string[] = [], visas: VerifiedVisa[] = []): Caller => ({ kind: 'identity', issuer, subject, groups, visas });
  const visa = (type: string, value: string): VerifiedVisa => ({ issuer: 'https://visas.example.org', subject: 'v1', type, value, source: 'https://dac.example.org', asserted: 0, expiresAt: 0 });

  it('without a policy every dataset is open at level data, to anyone', () => {
    for (const caller of [ANONYMOUS, person(ISSUER, 'alice'), { kind: 'key', name: 'any' } as Caller]) assert.equal(levelOf(null, caller, 'cohort1'), 'data');
  });

  it('anonymous and authenticated callers get the dataset\'s base levels; datasets the policy does not name take the default', () => {
    assert.equal(levelOf(policy, ANONYMOUS, 'cohort1'), 'boolean');
    assert.equal(levelOf(policy, person(ISSUER, 'bob'), 'cohort1'), 'count');
    assert.equal(levelOf(policy, ANONYMOUS, 'closed'), 'none');
    assert.equal(levelOf(policy, person(ISSUER, 'bob'), 'closed'), 'none', 'authenticated defaults to anonymous');
    assert.equal(levelOf(policy, ANONYMOUS, 'unnamed'), 'record');
    assert.equal(levelOf(policy, person(ISSUER, 'bob'), 'unnamed'), 'data');
    const noDefault = readPolicy('datasets:\n  cohort1: { anonymous: record }\n', 'p.yaml').policy;
    assert.equal(levelOf(noDefault, person(ISSUER, 'bob'), 'unnamed'), 'none', 'without default: a dataset the policy does not name is closed');
  });

  it('an identity grant needs the issuer and the subject together', () => {
    assert.equal(levelOf(policy, person(ISSUER, 'alice'), 'cohort1'), 'data');
    assert.equal(levelOf(policy, person(OTHER_ISSUER, 'alice'), 'cohort1'), 'count', 'the same subject at another issuer is another person');
  });

  it('a group grant takes the groups the token carries, from any issuer unless the grant names one', () => {
    assert.equal(levelOf(policy, person(ISSUER, 'bob', ['cohort1-readers']), 'cohort1'), 'record');
    assert.equal(levelOf(policy, person(OTHER_ISSUER, 'bob', ['cohort1-readers']), 'cohort1'), 'record');
    assert.equal(levelOf(policy, person(ISSUER, 'bob', ['other-only']), 'cohort1'), 'count');
    assert.equal(levelOf(policy, person(OTHER_ISSUER, 'bob', ['other-only']), 'cohort1'), 'data');
  });

  it('a visa grant takes a ControlledAccessGrants visa whose value is the dataset\'s url exactly', () => {
    assert.equal(levelOf(policy, person(ISSUER, 'bob', [], [visa('ControlledAccessGrants', COHORT1_URL)]), 'cohort1'), 'data');
    assert.equal(levelOf(policy, person(ISSUER, 'bob', [], [visa('ControlledAccessGrants', `${COHORT1_URL}/`)]), 'cohort1'), 'count');
    assert.equal(levelOf(policy, person(ISSUER, 'bob', [], [visa('AffiliationAndRole', COHORT1_URL)]), 'cohort1'), 'count');
  });

  it('a key gets its own level for each dataset it names, and the anonymous level elsewhere (not the authenticated one)', () => {
    const key: Caller = { kind: 'key', name: 'pipeline' };
    assert.equal(levelOf(policy, key, 'cohort1'), 'record');
    assert.equal(levelOf(policy, key, 'unnamed'), 'data');
    assert.equal(levelOf(policy, key, 'closed'), 'none');
    assert.equal(levelOf(policy, { kind: 'key', name: 'not-in-the-policy' }, 'cohort1'), 'boolean');
  });

  it('the highest of the base level and every grant that applies, at every level', () => {
    const higher = (a: Level, b: Level): Level => (LEVELS.indexOf(a) >= LEVELS.indexOf(b) ? a : b);
    for (const granted of LEVELS) {
      const one = readPolicy(`${ISSUERS}datasets:\n  ds:\n    anonymous: none\n    authenticated: boolean\n    grants:\n      - { group: g, level: ${granted} }\n      - { issuer: ${ISSUER}, subject: alice, level: count }\n`, 'p.yaml').policy;
      assert.equal(levelOf(one, person(ISSUER, 'alice', ['g']), 'ds'), higher(granted, 'count'), `group grant ${granted} with the identity grant`);
      assert.equal(levelOf(one, person(ISSUER, 'bob', ['g']), 'ds'), higher(granted, 'boolean'), `group grant ${granted} alone`);
      assert.equal(levelOf(one, person(ISSUER, 'bob'), 'ds'), 'boolean', 'no grant');
    }
  });
});

describe('API keys from ga4gh access add-key', () => {
  const made = runCli('access', 'add-key', 'pipeline', '--dataset', 'cohort1=record', '--dataset', 'cohort2=count');
  assert.equal(made.code, 0, made.stderr);
  const key = /^key: (\S+)$/m.exec(made.stdout)![1];
  const entry = /^ {2}(- \{.*\})$/m.exec(made.stdout)![1];
  const policyText = `datasets:\n  cohort1: { anonymous: none }\n  cohort2: { anonymous: boolean }\nkeys:\n  ${entry}\n`;
  const { policy } = readPolicy(policyText, 'policy.yaml');
  const resolver = callerResolver(policy, new KeySets());
  const refusedFor = (result: CallerResolution, why: RegExp) => {
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.match(result.refused.reason, why);
      assert.ok(!result.refused.reason.includes(key.slice(8)), 'the reason holds no part of the key');
    }
  };

  it('prints the key and its entry, whose hash is salted (two keys of the same name differ), never the key itself', () => {
    assert.ok(!entry.includes(key.slice(6)), 'the entry does not hold the key');
    assert.match(entry, /hash: "\$scrypt\$ln=\d+,r=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+"/);
    const again = runCli('access', 'add-key', 'pipeline', '--dataset', 'cohort1=record');
    assert.notEqual(/^key: (\S+)$/m.exec(again.stdout)![1], key);
    assert.notEqual(/hash: "([^"]+)"/.exec(again.stdout)![1], /hash: "([^"]+)"/.exec(entry)![1]);
  });

  it('the key verifies from ?key= and from Authorization: Bearer, and gets its levels', async () => {
    for (const request of [{ headers: {}, queryKeys: [key] }, { headers: { authorization: `Bearer ${key}` }, queryKeys: [] }]) {
      const result = await resolver.resolve(request);
      assert.ok(result.ok);
      assert.deepEqual(result.caller, { kind: 'key', name: 'pipeline' });
      assert.equal(levelOf(policy, result.caller, 'cohort1'), 'record');
      assert.equal(levelOf(policy, result.caller, 'cohort2'), 'count');
    }
  });

  it('a wrong key, a key of another policy, two keys, a key with a token: refused', async () => {
    const flipped = key.slice(0, -5) + (key.at(-5) === 'A' ? 'B' : 'A') + key.slice(-4);
    refusedFor(await resolver.resolve({ headers: {}, queryKeys: [flipped] }), /none of the policy's keys/);
    const other = /^key: (\S+)$/m.exec(runCli('access', 'add-key', 'other', '--dataset', 'cohort1=data').stdout)![1];
    refusedFor(await resolver.resolve({ headers: { authorization: `Bearer ${other}` }, queryKeys: [] }), /none of the policy's keys/);
    refusedFor(await resolver.resolve({ headers: {}, queryKeys: [key, key] }), /gives 2 keys/);
    refusedFor(await resolver.resolve({ headers: { authorization: 'Bearer a.b.c' }, queryKeys: [key] }), /both a key and an Authorization token/);
    refusedFor(await resolver.resolve({ headers: {}, queryKeys: [''] }), /none of the policy's keys/);
  });

  it('--policy adds the entry to a YAML file, its comments kept, and refuses a name already there', () => {
    const file = path.join(dir, 'policy.yaml');
    fs.writeFileSync(file, '# who may see what\ndatasets:\n  cohort1: { anonymous: none } # closed to the public\n', { mode: 0o600 });
    const added = runCli('access', 'add-key', 'pipeline', '--dataset', 'cohort1=data', '--policy', file);
    assert.equal(added.code, 0, added.stderr);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /# who may see what/);
    assert.match(text, /# closed to the public/);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the file keeps its permissions');
    const { policy: written } = readPolicy(text, 'policy.yaml');
    assert.deepEqual(written.keys.map((k) => [k.name, Object.fromEntries(k.datasets)]), [['pipeline', { cohort1: 'data' }]]);
    const refused = runCli('access', 'add-key', 'pipeline', '--dataset', 'cohort1=data', '--policy', file);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    assert.match(refused.stderr, /already has a key named pipeline/);
    assert.equal(fs.readFileSync(file, 'utf8'), text, 'unchanged');
  });

  it('--policy keeps a JSON file JSON, and the key it printed verifies under it', async () => {
    const file = path.join(dir, 'policy.json');
    fs.writeFileSync(file, JSON.stringify({ datasets: { cohort1: { anonymous: 'none' } } }));
    const added = runCli('access', 'add-key', 'script', '--dataset', 'cohort1=record', '--policy', file);
    assert.equal(added.code, 0, added.stderr);
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.equal(json.keys[0].name, 'script');
    const fromFile = readPolicy(fs.readFileSync(file, 'utf8'), 'policy.json').policy;
    const result = await callerResolver(fromFile, new KeySets()).resolve({ headers: {}, queryKeys: [/^key: (\S+)$/m.exec(added.stdout)![1]] });
    assert.ok(result.ok && result.caller.kind === 'key' && result.caller.name === 'script');
  });

  it('bad input is one line and a non-zero exit', () => {
    for (const args of [['pipeline'], ['pipeline', '--dataset', 'cohort1'], ['pipeline', '--dataset', 'cohort1=everything'], ['bad name', '--dataset', 'cohort1=data'], ['p', '--dataset', 'a=data', '--policy', path.join(dir, 'missing.yaml')]]) {
      const r = runCli('access', 'add-key', ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.stdout, '', 'no key printed');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });
});
