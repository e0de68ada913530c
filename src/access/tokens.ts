/**
 * JWT verification against the signing keys trusted issuers publish (a JWKS URL, or the one their
 * OpenID Connect discovery document names). Keys are fetched when first needed, kept for
 * `jwksCacheSeconds`, and fetched again on an unknown `kid` at most once per `jwksCooldownSeconds`
 * (jose's remote key set); the key sets outlive policy reloads. Every refusal is a CredentialsRefused
 * whose reason names why, for a log line, and never holds the token.
 */
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type ProtectedHeaderParameters,
} from 'jose';
import { loggable } from './callers.js';
import type { KeyCaching, KeySource, TrustedIssuer } from './policy.js';
import { discoveryUrlOf, fetchableUrlProblem } from './urls.js';

/**
 * Credentials that do not prove who the caller is: a bad, expired or untrusted token, a wrong key.
 * The HTTP layer answers 401 with `WWW-Authenticate: Bearer error="invalid_token"`.
 */
export class CredentialsRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CredentialsRefused';
  }
}

/** The challenge of a 401 for refused credentials (RFC 6750). */
export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

/** The signing keys could not be had (fetch failed, timed out, not a JWKS): the token cannot be checked, so it is refused. */
export class KeysUnavailable extends Error {}

const FETCH_TIMEOUT_MS = 5000;
const JWT_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** True when `text` has the form of a compact JWT (three base64url parts). */
export const looksLikeJwt = (text: string) => JWT_FORM.test(text);

/** An issuer whose keys verify tokens: the common part of `issuers:` and `visas:` entries. */
export type KeyedIssuer = KeyCaching & { issuer: string; keys: KeySource; algorithms: string[] };

const causeOf = (e: unknown): string => {
  const error = e as Error & { cause?: { code?: string; message?: string } };
  const cause = error.cause ? ` (${error.cause.code ?? error.cause.message ?? ''})` : '';
  return `${error.message}${cause}`;
};

interface Discovered {
  jwksUrl?: string;
  fetchedAt: number;
  /** When the last attempt failed, and why: no new attempt within the cool-down. */
  failure?: { at: number; reason: string };
  pending?: Promise<void>;
}

/** Reads an issuer's discovery document: its `issuer` must be the issuer exactly, its `jwks_uri` a URL keys may come from. */
async function fetchJwksUrl(issuer: string): Promise<string> {
  const url = discoveryUrlOf(issuer);
  let document: { issuer?: unknown; jwks_uri?: unknown };
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (res.status !== 200) throw new Error(`answered ${res.status}`);
    document = (await res.json()) as typeof document;
  } catch (e) {
    throw new KeysUnavailable(`the discovery document ${url} cannot be read: ${causeOf(e)}`);
  }
  if (document?.issuer !== issuer) throw new KeysUnavailable(`the discovery document ${url} names issuer ${loggable(String(document?.issuer))}, not ${issuer}`);
  const jwksUrl = document.jwks_uri;
  const problem = typeof jwksUrl === 'string' ? fetchableUrlProblem(jwksUrl) : 'it is missing';
  if (problem) throw new KeysUnavailable(`the jwks_uri of ${url} cannot be used: ${problem}`);
  return jwksUrl as string;
}

/** The remote key sets of every issuer, shared by the policies loaded one after the other. */
export class KeySets {
  private readonly remote = new Map<string, JWTVerifyGetKey>();
  private readonly discovered = new Map<string, Discovered>();

  /** The URL of the issuer's JWKS: configured, or read from its discovery document (kept as long as its keys). */
  async jwksUrlOf(issuer: KeyedIssuer): Promise<string> {
    if ('jwks' in issuer.keys) return issuer.keys.jwks;
    const now = Date.now();
    let state = this.discovered.get(issuer.issuer);
    if (!state) this.discovered.set(issuer.issuer, (state = { fetchedAt: 0 }));
    const stale = now - state.fetchedAt > issuer.jwksCacheSeconds * 1000;
    const coolingDown = state.failure && now - state.failure.at < issuer.jwksCooldownSeconds * 1000;
    if ((stale || !state.jwksUrl) && !coolingDown) {
      const current = state;
      current.pending ??= fetchJwksUrl(issuer.issuer)
        .then((url) => {
          Object.assign(current, { jwksUrl: url, fetchedAt: Date.now(), failure: undefined });
        })
        .catch((e: Error) => {
          current.failure = { at: Date.now(), reason: e.message };
        })
        .finally(() => (current.pending = undefined));
      await current.pending;
    }
    // A discovery document that cannot be read again leaves the URL read before in use.
    if (state.jwksUrl) return state.jwksUrl;
    throw new KeysUnavailable(state.failure?.reason ?? `the discovery document of ${issuer.issuer} was not read`);
  }

  /** The key lookup of jose's verification for this issuer. */
  async keysOf(issuer: KeyedIssuer): Promise<JWTVerifyGetKey> {
    const url = await this.jwksUrlOf(issuer);
    const id = `${url} ${issuer.jwksCacheSeconds} ${issuer.jwksCooldownSeconds}`;
    let remote = this.remote.get(id);
    if (!remote) {
      remote = createRemoteJWKSet(new URL(url), {
        timeoutDuration: FETCH_TIMEOUT_MS,
        cacheMaxAge: issuer.jwksCacheSeconds * 1000,
        cooldownDuration: issuer.jwksCooldownSeconds * 1000,
      });
      this.remote.set(id, remote);
    }
    const lookup = remote;
    return async (header, token) => {
      try {
        return await lookup(header, token);
      } catch (e) {
        if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys || e instanceof errors.JOSENotSupported) throw e;
        throw new KeysUnavailable(`the JWKS of ${issuer.issuer} at ${url} cannot be fetched: ${causeOf(e)}`);
      }
    };
  }

  /** Forgets the key sets of issuers the new policy no longer trusts. */
  keepOnly(issuers: readonly KeyedIssuer[]): void {
    const kept = new Set(issuers.map((i) => i.issuer));
    for (const issuer of this.discovered.keys()) if (!kept.has(issuer)) this.discovered.delete(issuer);
    const urls = new Set([...issuers.flatMap((i) => ('jwks' in i.keys ? [i.keys.jwks] : [])), ...[...this.discovered.values()].flatMap((d) => (d.jwksUrl ? [d.jwksUrl] : []))]);
    for (const id of this.remote.keys()) if (!urls.has(id.split(' ')[0])) this.remote.delete(id);
  }
}

/** The protected header of a compact JWT, refusing the algorithms no issuer may use whatever the policy says. */
export function headerOf(token: string, what: string): ProtectedHeaderParameters & { alg: string } {
  if (!looksLikeJwt(token)) throw new CredentialsRefused(`the ${what} is not a compact JWT`);
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new CredentialsRefused(`the ${what}'s header is not base64url JSON`);
  }
  const alg = header.alg;
  if (typeof alg !== 'string') throw new CredentialsRefused(`the ${what}'s header names no alg`);
  if (alg.toLowerCase() === 'none') throw new CredentialsRefused(`the ${what} is unsigned (alg none)`);
  if (/^HS/i.test(alg)) throw new CredentialsRefused(`the ${what} is signed with ${loggable(alg)}: HMAC is refused (a public key is no secret)`);
  return { ...header, alg };
}

/** The payload of a compact JWT before any check: only to choose the issuer that will verify it. */
export function unverifiedPayloadOf(token: string, what: string): JWTPayload {
  try {
    return decodeJwt(token);
  } catch {
    throw new CredentialsRefused(`the ${what}'s payload is not base64url JSON`);
  }
}

/** Why jose refused a token, in words for a log line. */
function reasonOf(e: unknown, issuer: string, what: string): string | undefined {
  if (e instanceof KeysUnavailable) return e.message;
  if (e instanceof errors.JWTExpired) return `the ${what} expired${typeof e.payload.exp === 'number' ? ` at ${new Date(e.payload.exp * 1000).toISOString()}` : ''}`;
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return `the ${what} is not valid before ${typeof e.payload.nbf === 'number' ? new Date(e.payload.nbf * 1000).toISOString() : 'its nbf'}`;
    if (e.claim === 'aud') return `the ${what} is for another audience than the one ${issuer} tokens must name here`;
    return `the ${what}'s ${e.claim} claim fails: ${e.reason}`;
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) return `the ${what}'s signature does not verify with the keys of ${issuer}`;
  if (e instanceof errors.JWKSNoMatchingKey) return `no key of ${issuer}'s JWKS has the ${what}'s kid (and its keys were fetched too recently to fetch them again)`;
  if (e instanceof errors.JWKSMultipleMatchingKeys) return `the ${what} names no kid and several keys of ${issuer} could verify it`;
  if (e instanceof errors.JOSEAlgNotAllowed) return `the ${what}'s alg is not one allowed for ${issuer}`;
  if (e instanceof errors.JOSEError) return `the ${what} cannot be verified: ${e.message}`;
  return undefined;
}

export interface VerifyOptions {
  /** Claims the token must hold. */
  required: string[];
  /** Only for access tokens: the `aud` one of which it must name. */
  audience?: string[];
  leewaySeconds: number;
}

/** Verifies `token` (its header read by headerOf) with the keys of `issuer`; any failure is a CredentialsRefused. */
export async function verifyWithIssuer(token: string, header: { alg: string }, issuer: KeyedIssuer, keySets: KeySets, what: string, options: VerifyOptions): Promise<JWTPayload> {
  if (!issuer.algorithms.includes(header.alg)) throw new CredentialsRefused(`the ${what} is signed with ${loggable(header.alg)}, not one of ${issuer.algorithms.join(', ')} allowed for ${issuer.issuer}`);
  try {
    const keys = await keySets.keysOf(issuer);
    const { payload } = await jwtVerify(token, keys, {
      issuer: issuer.issuer,
      algorithms: issuer.algorithms,
      clockTolerance: options.leewaySeconds,
      requiredClaims: options.required,
      ...(options.audience ? { audience: options.audience } : {}),
    });
    return payload;
  } catch (e) {
    const reason = reasonOf(e, issuer.issuer, what);
    if (reason === undefined) throw e;
    throw new CredentialsRefused(reason);
  }
}

/** Verifies an access token (or a passport JWT) of one of `issuers`: its issuer exactly, audience, algorithm, signature, exp and nbf. */
export async function verifyAccessToken(
  token: string,
  issuers: readonly TrustedIssuer[],
  keySets: KeySets,
  leewaySeconds: number,
): Promise<{ issuer: TrustedIssuer; payload: JWTPayload }> {
  const header = headerOf(token, 'token');
  const iss = unverifiedPayloadOf(token, 'token').iss;
  const issuer = issuers.find((i) => i.issuer === iss);
  if (!issuer) throw new CredentialsRefused(typeof iss === 'string' ? `the token's issuer ${loggable(iss)} is not trusted` : 'the token names no issuer');
  const payload = await verifyWithIssuer(token, header, issuer, keySets, 'token', { required: ['iss', 'sub', 'exp'], audience: issuer.audience, leewaySeconds });
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new CredentialsRefused('the token\'s sub is not a string');
  return { issuer, payload };
}
