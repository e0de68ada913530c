/**
 * Who a request comes from, for the HTTP layer: from its `Authorization` header, its
 * `GA4GH-Passport` header and the `key` of its query, under one policy. Credentials that do not
 * verify are refused (never taken for anonymous), so that a caller with an expired token learns it.
 */
import type { JWTPayload } from 'jose';
import { ANONYMOUS, type Caller, type VerifiedVisa } from './callers.js';
import { KeyVerifier, looksLikeApiKey } from './keys.js';
import { passportGiven, verifyVisas, visasInPassport } from './passports.js';
import type { AccessPolicy, TrustedIssuer } from './policy.js';
import { CredentialsRefused, KeySets, looksLikeJwt, verifyAccessToken } from './tokens.js';

/** The header a list of visas (or a passport JWT) comes in beside the access token. */
export const PASSPORT_HEADER = 'ga4gh-passport';

/** What the resolver needs of a request: its headers (lower-case names, as node:http gives them) and its query's `key` values. */
export interface RequestCredentials {
  headers: Record<string, string | string[] | undefined>;
  /** Every `key` parameter of the query string, in order (none: an empty list). */
  queryKeys: readonly string[];
}

export type CallerResolution =
  | { ok: true; caller: Caller; /** Why visas given did not count, for the log. */ ignoredVisas: string[] }
  | { ok: false; refused: CredentialsRefused };

export interface CallerResolver {
  resolve(request: RequestCredentials): Promise<CallerResolution>;
}

/** Without a policy every dataset is open: credentials are not looked at. */
export const OPEN_RESOLVER: CallerResolver = { resolve: async () => ({ ok: true, caller: ANONYMOUS, ignoredVisas: [] }) };

const single = (value: string | string[] | undefined, name: string): string | undefined => {
  if (Array.isArray(value)) {
    if (value.length > 1) throw new CredentialsRefused(`the request has ${value.length} ${name} headers`);
    return value[0];
  }
  return value;
};

/** The token of `Authorization: Bearer TOKEN` (RFC 6750), or undefined without the header. */
function bearerTokenOf(headers: RequestCredentials['headers']): string | undefined {
  const value = single(headers.authorization, 'Authorization');
  if (value === undefined) return undefined;
  const m = /^Bearer +(\S+) *$/i.exec(value);
  if (!m) throw new CredentialsRefused(/^bearer\b/i.test(value) ? 'the Authorization header holds no single bearer token' : 'the Authorization header is not of the Bearer scheme');
  return m[1];
}

/** The groups a token carries in the issuer's groups claim: a list of names, or one name. */
function groupsOf(payload: JWTPayload, issuer: TrustedIssuer): string[] {
  const claim = payload[issuer.groupsClaim];
  if (typeof claim === 'string') return [claim];
  return Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : [];
}

/** The resolver of one policy: its issuers, its visa issuers and its keys. */
export function callerResolver(policy: AccessPolicy, keySets: KeySets): CallerResolver {
  const keyVerifier = new KeyVerifier(policy.keys);

  const keyCaller = async (key: string): Promise<Caller> => {
    const entry = await keyVerifier.verify(key);
    if (!entry) throw new CredentialsRefused('the key is none of the policy\'s keys');
    return { kind: 'key', name: entry.name };
  };

  const identityOf = async (token: string, extraVisas: unknown[]): Promise<{ caller: Caller; ignoredVisas: string[] }> => {
    const { issuer, payload } = await verifyAccessToken(token, policy.issuers, keySets, policy.leewaySeconds);
    const given = [...visasInPassport(payload), ...extraVisas];
    const { visas, ignored } = given.length ? await verifyVisas(given, policy, keySets) : { visas: [] as VerifiedVisa[], ignored: [] };
    const caller: Caller = { kind: 'identity', issuer: issuer.issuer, subject: payload.sub!, groups: groupsOf(payload, issuer), visas };
    return { caller, ignoredVisas: ignored };
  };

  const resolveOrThrow = async ({ headers, queryKeys }: RequestCredentials): Promise<{ caller: Caller; ignoredVisas: string[] }> => {
    const bearer = bearerTokenOf(headers);
    const passportText = single(headers[PASSPORT_HEADER], 'GA4GH-Passport');
    if (queryKeys.length > 1) throw new CredentialsRefused(`the query gives ${queryKeys.length} keys`);
    const queryKey = queryKeys[0];
    if (queryKey !== undefined) {
      if (bearer !== undefined) throw new CredentialsRefused('the request gives both a key and an Authorization token: one caller, one credential');
      if (passportText !== undefined) throw new CredentialsRefused('a key takes no passport');
      return { caller: await keyCaller(queryKey), ignoredVisas: [] };
    }
    if (bearer !== undefined && looksLikeApiKey(bearer)) {
      if (passportText !== undefined) throw new CredentialsRefused('a key takes no passport');
      return { caller: await keyCaller(bearer), ignoredVisas: [] };
    }
    if (bearer !== undefined && !looksLikeJwt(bearer)) throw new CredentialsRefused('the bearer token is neither a JWT nor a key of this server\'s form');
    const passport = passportText === undefined ? undefined : passportGiven(passportText);
    if (bearer !== undefined) {
      if (passport && 'passport' in passport) {
        // A passport JWT beside the access token: it is verified as a token of a trusted issuer, and only its visas are taken.
        const { payload } = await verifyAccessToken(passport.passport, policy.issuers, keySets, policy.leewaySeconds);
        return identityOf(bearer, visasInPassport(payload));
      }
      return identityOf(bearer, passport?.visas ?? []);
    }
    if (passport && 'passport' in passport) return identityOf(passport.passport, []);
    if (passport) throw new CredentialsRefused('a list of visas comes with the bearer token of the person it was issued to');
    return { caller: ANONYMOUS, ignoredVisas: [] };
  };

  return {
    async resolve(request) {
      try {
        return { ok: true, ...(await resolveOrThrow(request)) };
      } catch (e) {
        if (e instanceof CredentialsRefused) return { ok: false, refused: e };
        throw e;
      }
    },
  };
}
