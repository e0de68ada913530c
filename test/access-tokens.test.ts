/**
 * Tokens and passports, verified against real issuers: test issuers in this process serve their JWKS
 * and discovery documents on loopback ports, and every token, passport and visa is signed here with
 * their keys. Each refused kind of token must come back as a refusal whose reason says why and holds
 * no token; each visa that must not count must leave the level where the policy puts it without it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { levelOf, type Caller } from '../src/access/index.js';
import { readPolicy } from '../src/access/policy-file.js';
import { callerResolver, type CallerResolution, type RequestCredentials } from '../src/access/resolve-caller.js';
import { KeySets } from '../src/access/tokens.js';
import { now, tampered, TestIssuer } from './access-issuer.js';

const login = await TestIssuer.start();
await login.addKey('es-1', 'ES256');
await login.addKey('unpublished', 'RS256', false);
const untrusted = await TestIssuer.start();
const visaIssuer = await TestIssuer.start();
const rogueVisaIssuer = await TestIssuer.start();

const COHORT1_URL = 'https://example.org/datasets/cohort1';
const COHORT2_URL = 'https://example.org/datasets/cohort2';

/** A resolver over a policy text with fresh key sets (nothing fetched yet). */
function resolverOf(text: string) {
  const { policy } = readPolicy(text, 'policy.yaml');
  return { policy, resolver: callerResolver(policy, new KeySets()) };
}

const issuerEntry = (issuer: TestIssuer, extra = '') => `
  - issuer: ${issuer.url}
    jwks: ${issuer.jwksUrl}
    audience: ga4gh-server
    groupsClaim: roles${extra}`;

const basePolicy = (issuers: string) => `
leewaySeconds: 30
issuers:${issuers}
visas:
  - issuer: ${visaIssuer.url}
    jwks: ${visaIssuer.jwksUrl}
datasets:
  cohort1:
    anonymous: none
    authenticated: count
    url: ${COHORT1_URL}
    grants:
      - { visa: true, level: data }
  cohort2:
    anonymous: none
    authenticated: boolean
    url: ${COHORT2_URL}
    grants:
      - { visa: true, level: record }
`;

const bearer = (token: string, headers: Record<string, string> = {}): RequestCredentials => ({ headers: { authorization: `Bearer ${token}`, ...headers }, queryKeys: [] });

function callerOf(result: CallerResolution): Caller {
  assert.ok(result.ok, result.ok ? '' : `refused: ${result.refused.reason}`);
  return result.caller;
}

/** The request is refused, for a reason matching `why` that does not echo the credentials. */
function assertRefused(result: CallerResolution, why: RegExp, token: string): void {
  assert.equal(result.ok, false, 'refused');
  if (result.ok) return;
  assert.match(result.refused.reason, why);
  for (const part of token.split('.').filter((p) => p.length > 8)) assert.ok(!result.refused.reason.includes(part), 'the reason holds no part of the token');
}

describe('access tokens', () => {
  const { resolver } = resolverOf(basePolicy(issuerEntry(login, '\n    algorithms: [RS256, ES256]\n    jwksCooldownSeconds: 600')));

  it('a token of a trusted issuer, signed with RS256 or ES256, is the caller with its issuer, subject and groups', async () => {
    const rs = callerOf(await resolver.resolve(bearer(await login.token('alice', { roles: ['cohort1-readers', 'staff'] }))));
    assert.deepEqual(rs, { kind: 'identity', issuer: login.url, subject: 'alice', groups: ['cohort1-readers', 'staff'], visas: [] });
    const oneRole = callerOf(await resolver.resolve(bearer(await login.token('bob', { roles: 'one-role' }))));
    assert.deepEqual(oneRole.kind === 'identity' && oneRole.groups, ['one-role']);
    const esToken = await login.token('carol', {}, { kid: 'es-1' });
    assert.deepEqual(callerOf(await resolver.resolve(bearer(esToken))), { kind: 'identity', issuer: login.url, subject: 'carol', groups: [], visas: [] });
  });

  it('no credentials: the anonymous caller', async () => {
    assert.deepEqual(callerOf(await resolver.resolve({ headers: {}, queryKeys: [] })), { kind: 'anonymous' });
  });

  it('an expired token is refused, but not within the leeway', async () => {
    const expired = await login.token('alice', { exp: now() - 120 });
    assertRefused(await resolver.resolve(bearer(expired)), /expired/, expired);
    callerOf(await resolver.resolve(bearer(await login.token('alice', { exp: now() - 10 }))));
  });

  it('a token not yet valid (nbf in the future beyond the leeway) is refused', async () => {
    const early = await login.token('alice', { nbf: now() + 120 });
    assertRefused(await resolver.resolve(bearer(early)), /not valid before/, early);
    callerOf(await resolver.resolve(bearer(await login.token('alice', { nbf: now() + 10 }))));
  });

  it('a token for another audience is refused', async () => {
    const token = await login.token('alice', { aud: 'another-service' });
    assertRefused(await resolver.resolve(bearer(token)), /audience/, token);
  });

  it('a token whose iss is not the issuer exactly is refused', async () => {
    const token = await login.token('alice', { iss: `${login.url}/` });
    assertRefused(await resolver.resolve(bearer(token)), /issuer .* is not trusted/, token);
  });

  it('a token without exp is refused', async () => {
    const token = await login.sign({ sub: 'alice', aud: 'ga4gh-server', exp: undefined });
    assertRefused(await resolver.resolve(bearer(token)), /exp/, token);
  });

  it('alg none is refused', async () => {
    const token = login.unsigned({ sub: 'alice', aud: 'ga4gh-server' });
    assertRefused(await resolver.resolve(bearer(token)), /unsigned \(alg none\)/, token);
  });

  it('HS256 signed with the bytes of the issuer\'s public key is refused', async () => {
    const token = await login.hmacWithPublicKey({ sub: 'alice', aud: 'ga4gh-server' });
    assertRefused(await resolver.resolve(bearer(token)), /HS256: HMAC is refused/, token);
  });

  it('a token of an issuer the policy does not trust is refused', async () => {
    const token = await untrusted.token('alice');
    assertRefused(await resolver.resolve(bearer(token)), /issuer .* is not trusted/, token);
  });

  it('a token naming a trusted issuer but signed with another issuer\'s key of the same kid is refused', async () => {
    const token = await untrusted.token('alice', { iss: login.url });
    assertRefused(await resolver.resolve(bearer(token)), /signature does not verify/, token);
  });

  it('a tampered signature is refused', async () => {
    const token = tampered(await login.token('alice'));
    assertRefused(await resolver.resolve(bearer(token)), /signature does not verify/, token);
  });

  it('a token with a kid the JWKS does not hold is refused', async () => {
    const token = await login.token('alice', {}, { kid: 'unpublished' });
    assertRefused(await resolver.resolve(bearer(token)), /kid/, token);
  });

  it('an algorithm the issuer\'s entry does not allow is refused', async () => {
    const { resolver: rsOnly } = resolverOf(basePolicy(issuerEntry(login, '\n    algorithms: [RS256]')));
    const token = await login.token('alice', {}, { kid: 'es-1' });
    assertRefused(await rsOnly.resolve(bearer(token)), /ES256, not one of RS256/, token);
  });

  it('an Authorization header that is not one bearer token, or a bearer that is neither a JWT nor a key, is refused', async () => {
    assertRefused(await resolver.resolve({ headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' }, queryKeys: [] }), /not of the Bearer scheme/, 'YWxpY2U6c2VjcmV0');
    assertRefused(await resolver.resolve(bearer('not-a-token')), /neither a JWT nor a key/, 'not-a-token');
  });

  it('the issuer\'s keys are found by OpenID Connect discovery; a discovery document naming another issuer is refused', async () => {
    const discovered = await TestIssuer.start();
    const { resolver: byDiscovery } = resolverOf(basePolicy(`\n  - { issuer: ${discovered.url}, discovery: true, audience: ga4gh-server }`));
    callerOf(await byDiscovery.resolve(bearer(await discovered.token('alice'))));
    assert.equal(discovered.discoveryFetches, 1);
    assert.equal(discovered.jwksFetches, 1);

    const lying = await TestIssuer.start();
    lying.discoveredIssuer = 'https://someone-else.example.org';
    const { resolver: misled } = resolverOf(basePolicy(`\n  - { issuer: ${lying.url}, discovery: true, audience: ga4gh-server }`));
    const token = await lying.token('alice');
    assertRefused(await misled.resolve(bearer(token)), /discovery document .* names issuer https:\/\/someone-else\.example\.org/, token);
    assert.equal(lying.jwksFetches, 0);
  });

  it('an unknown kid makes the keys be fetched again, at most once per cool-down', async () => {
    const rotating = await TestIssuer.start();
    const eager = resolverOf(basePolicy(issuerEntry(rotating, '\n    jwksCooldownSeconds: 0'))).resolver;
    const patient = resolverOf(basePolicy(issuerEntry(rotating, '\n    jwksCooldownSeconds: 600'))).resolver;
    callerOf(await eager.resolve(bearer(await rotating.token('alice'))));
    callerOf(await patient.resolve(bearer(await rotating.token('alice'))));
    assert.equal(rotating.jwksFetches, 2);
    await rotating.addKey('key-2');
    const rotated = await rotating.token('alice', {}, { kid: 'key-2' });
    callerOf(await eager.resolve(bearer(rotated)));
    assert.equal(rotating.jwksFetches, 3, 'the unknown kid fetched the keys again');
    assertRefused(await patient.resolve(bearer(rotated)), /kid/, rotated);
    assert.equal(rotating.jwksFetches, 3, 'not within the cool-down');
  });

  it('with the JWKS server down, cached keys still verify and a new kid is refused, never thrown', async () => {
    const flaky = await TestIssuer.start();
    const refetching = resolverOf(basePolicy(issuerEntry(flaky, '\n    jwksCooldownSeconds: 0'))).resolver;
    const coolingDown = resolverOf(basePolicy(issuerEntry(flaky, '\n    jwksCooldownSeconds: 600'))).resolver;
    callerOf(await refetching.resolve(bearer(await flaky.token('alice'))));
    callerOf(await coolingDown.resolve(bearer(await flaky.token('alice'))));
    await flaky.addKey('key-2');
    await flaky.stop();
    callerOf(await refetching.resolve(bearer(await flaky.token('bob'))));
    callerOf(await coolingDown.resolve(bearer(await flaky.token('bob'))));
    const newKid = await flaky.token('bob', {}, { kid: 'key-2' });
    assertRefused(await refetching.resolve(bearer(newKid)), /JWKS of .* cannot be fetched/, newKid);
    assertRefused(await coolingDown.resolve(bearer(newKid)), /kid/, newKid);
  });

  it('a JWKS that cannot be fetched at all refuses every token of its issuer', async () => {
    const gone = await TestIssuer.start();
    const { resolver: unreachable } = resolverOf(basePolicy(issuerEntry(gone)));
    const token = await gone.token('alice');
    await gone.stop();
    assertRefused(await unreachable.resolve(bearer(token)), /JWKS of .* cannot be fetched/, token);
  });
});

describe('passports and visas', () => {
  const { policy, resolver } = resolverOf(basePolicy(issuerEntry(login)));
  const grant = (value: string, extra: Record<string, unknown> = {}) => ({ type: 'ControlledAccessGrants', value, ...extra });
  const passport = (visas: string[], claims: Record<string, unknown> = {}) => login.token('alice', { ga4gh_passport_v1: visas, ...claims });
  /** The caller of a passport, and the levels it gets for both datasets. */
  async function levelsOf(request: RequestCredentials): Promise<{ cohort1: string; cohort2: string; ignored: string[] }> {
    const result = await resolver.resolve(request);
    const caller = callerOf(result);
    return { cohort1: levelOf(policy, caller, 'cohort1'), cohort2: levelOf(policy, caller, 'cohort2'), ignored: result.ok ? result.ignoredVisas : [] };
  }
  const withPassport = async (visas: string[]) => levelsOf(bearer(await passport(visas)));

  it('without visas, an authenticated caller has the authenticated levels', async () => {
    assert.deepEqual(await levelsOf(bearer(await login.token('alice'))), { cohort1: 'count', cohort2: 'boolean', ignored: [] });
  });

  it('a ControlledAccessGrants visa for a dataset\'s url grants that dataset, and only it', async () => {
    const visa = await visaIssuer.visa('alice', grant(COHORT1_URL));
    const caller = callerOf(await resolver.resolve(bearer(await passport([visa]))));
    assert.equal(caller.kind === 'identity' && caller.visas[0].value, COHORT1_URL);
    assert.deepEqual(await withPassport([visa]), { cohort1: 'data', cohort2: 'boolean', ignored: [] });
    assert.deepEqual(await withPassport([await visaIssuer.visa('alice', grant(COHORT2_URL))]), { cohort1: 'count', cohort2: 'record', ignored: [] });
  });

  it('a visa whose value is the url but not exactly, or of another type, grants nothing', async () => {
    const levels = await withPassport([
      await visaIssuer.visa('alice', grant(`${COHORT1_URL}/`)),
      await visaIssuer.visa('alice', grant(COHORT1_URL.toUpperCase())),
      await visaIssuer.visa('alice', { type: 'AffiliationAndRole', value: COHORT1_URL }),
    ]);
    assert.deepEqual([levels.cohort1, levels.cohort2], ['count', 'boolean']);
  });

  it('an expired visa, one asserted in the future, an untrusted visa issuer\'s, a token issuer\'s: none counts', async () => {
    const cases: Array<[string, RegExp]> = [
      [await visaIssuer.visa('alice', grant(COHORT1_URL), { exp: now() - 120 }), /expired/],
      [await visaIssuer.visa('alice', grant(COHORT1_URL, { asserted: now() + 3600 })), /asserted in the future/],
      [await rogueVisaIssuer.visa('alice', grant(COHORT1_URL)), /not a trusted visa issuer/],
      [await login.visa('alice', grant(COHORT1_URL)), /not a trusted visa issuer/],
      [tampered(await visaIssuer.visa('alice', grant(COHORT1_URL))), /signature does not verify/],
      [await visaIssuer.visa('alice', grant(COHORT1_URL), { exp: undefined }), /exp/],
    ];
    for (const [visa, why] of cases) {
      const levels = await withPassport([visa]);
      assert.equal(levels.cohort1, 'count', `${why}: the visa does not count`);
      assert.equal(levels.ignored.length, 1);
      assert.match(levels.ignored[0], why);
    }
  });

  it('a jku counts only when it is the visa issuer\'s configured JWKS', async () => {
    const good = await visaIssuer.visa('alice', grant(COHORT1_URL), {}, { header: { jku: visaIssuer.jwksUrl } });
    assert.equal((await withPassport([good])).cohort1, 'data');
    const bad = await visaIssuer.visa('alice', grant(COHORT1_URL), {}, { header: { jku: rogueVisaIssuer.jwksUrl } });
    const levels = await withPassport([bad]);
    assert.equal(levels.cohort1, 'count');
    assert.match(levels.ignored[0], /jku .* is not the JWKS of/);
  });

  it('conditions: met by another visa of the same person, the visa counts; unmet, unknown or of another identity, it does not', async () => {
    const affiliation = await visaIssuer.visa('alice', { type: 'AffiliationAndRole', value: 'faculty@example.edu', source: 'https://example.edu', by: 'so' });
    const conditioned = (conditions: unknown) => visaIssuer.visa('alice', grant(COHORT1_URL, { conditions }));
    const faculty = [[{ type: 'AffiliationAndRole', value: 'const:faculty@example.edu', by: 'const:so' }]];
    assert.equal((await withPassport([await conditioned(faculty), affiliation])).cohort1, 'data', 'const conditions met');
    assert.equal((await withPassport([await conditioned([[{ type: 'AffiliationAndRole', value: 'pattern:faculty@*.edu' }]]), affiliation])).cohort1, 'data', 'pattern met');
    assert.equal(
      (await withPassport([await conditioned([[{ type: 'AffiliationAndRole', value: 'const:student@example.edu' }], [{ type: 'AffiliationAndRole', source: 'split_pattern:https://example.?du' }]]), affiliation])).cohort1,
      'data',
      'the second alternative met',
    );
    const unmet = await withPassport([await conditioned(faculty)]);
    assert.equal(unmet.cohort1, 'count');
    assert.match(unmet.ignored[0], /conditions are not met/);
    const unknown = await withPassport([await conditioned([[{ type: 'AffiliationAndRole', value: 'regex:faculty.*' }]]), affiliation]);
    assert.equal(unknown.cohort1, 'count');
    assert.match(unknown.ignored[0], /unknown match type/);
    const timestamp = await withPassport([await conditioned([[{ type: 'AffiliationAndRole', asserted: 'const:1' }]]), affiliation]);
    assert.match(timestamp.ignored[0], /compares asserted/);

    const bobsAffiliation = await visaIssuer.visa('bob', { type: 'AffiliationAndRole', value: 'faculty@example.edu', by: 'so' });
    assert.equal((await withPassport([await conditioned(faculty), bobsAffiliation])).cohort1, 'count', 'another person\'s visa meets no condition');
    const link = await visaIssuer.visa('alice', { type: 'LinkedIdentities', value: `bob,${encodeURIComponent(visaIssuer.url)}` });
    assert.equal((await withPassport([await conditioned(faculty), bobsAffiliation, link])).cohort1, 'data', 'linked identities are one person');
  });

  it('visas beside the access token, in the GA4GH-Passport header: a JSON list, the /userinfo object, visa JWTs separated by commas, a passport JWT', async () => {
    const visa = await visaIssuer.visa('alice', grant(COHORT1_URL));
    const token = await login.token('alice');
    for (const header of [JSON.stringify([visa]), JSON.stringify({ ga4gh_passport_v1: [visa] }), `${await visaIssuer.visa('alice', grant(COHORT2_URL))},${visa}`, await passport([visa])]) {
      assert.equal((await levelsOf(bearer(token, { 'ga4gh-passport': header }))).cohort1, 'data', header.slice(0, 40));
    }
    // A passport JWT alone is a token of a trusted issuer: the caller is its subject.
    assert.equal((await levelsOf({ headers: { 'ga4gh-passport': await passport([visa]) }, queryKeys: [] })).cohort1, 'data');
    const alone = await resolver.resolve({ headers: { 'ga4gh-passport': JSON.stringify([visa]) }, queryKeys: [] });
    assertRefused(alone, /comes with the bearer token/, visa);
  });

  it('a passport whose claim is not a list, or one holding too many visas, is refused whole', async () => {
    const token = await login.token('alice', { ga4gh_passport_v1: 'not a list' });
    assertRefused(await resolver.resolve(bearer(token)), /not a list of visas/, token);
    const visa = await visaIssuer.visa('alice', grant(COHORT1_URL));
    const many = await passport(Array.from({ length: 201 }, () => visa));
    assertRefused(await resolver.resolve(bearer(many)), /more than the 200/, many);
  });
});
