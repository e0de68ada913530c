/**
 * Page sizes and page tokens. Tokens are stateless: they carry the position to continue from, a
 * fingerprint of the query they belong to, and a check digest, so a token the server did not make, or
 * one sent with a different query, is a 400 rather than a wrong page. No secret is involved: a forged
 * token can at most name a position the client could have asked for anyway.
 */
import { GAException } from './errors.js';
import { hashText } from './hash.js';

export interface PagingLimits {
  defaultPageSize: number;
  maxPageSize: number;
  /** A page ends early once its serialized records pass this many bytes (at least one record). */
  pageByteBudget: number;
}

export const defaultPagingLimits: PagingLimits = {
  defaultPageSize: 100,
  maxPageSize: 1000,
  pageByteBudget: 8 * 1024 * 1024,
};

/** Absent or 0 is the default; negative is a 400; above the maximum is clamped. */
export function resolvePageSize(requested: number | undefined, limits: PagingLimits): number {
  if (requested === undefined || requested === 0) return limits.defaultPageSize;
  if (requested < 0) throw new GAException('invalidRequest', `field 'pageSize' must not be negative (got ${requested})`);
  return Math.min(requested, limits.maxPageSize);
}

const TOKEN_VERSION = 1;

/** The first `characters` of the base64url SHA-256 of `text` (4 characters per 3 bytes of digest). */
function digest(text: string, characters: number): string {
  return hashText('sha256', text, 'base64url').slice(0, characters);
}

/**
 * A fingerprint of everything that defines a query except its paging fields. Keys are sorted so the
 * same query in either naming form or field order gives the same fingerprint.
 */
export function queryFingerprint(scope: string, request: object): string {
  const query = request as Record<string, unknown>;
  const canonical = JSON.stringify(
    Object.keys(query)
      .filter((k) => k !== 'pageSize' && k !== 'pageToken' && query[k] !== undefined)
      .sort()
      .map((k) => [k, query[k]]),
  );
  return digest(scope + '\n' + canonical, 12);
}

export function encodePageToken(fingerprint: string, position: unknown): string {
  const body = JSON.stringify([TOKEN_VERSION, fingerprint, position]);
  return Buffer.from(JSON.stringify([body, digest(body, 8)]), 'utf8').toString('base64url');
}

/** Returns the position a token continues from, or throws 400 when it is not this query's token. */
export function decodePageToken(token: string, fingerprint: string): unknown {
  const fail = (why: string) => new GAException('invalidPageToken', `field 'pageToken' is not valid: ${why}`);
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(token)) throw fail('not a token this server issued');
  let outer: unknown;
  try {
    outer = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw fail('not a token this server issued');
  }
  if (!Array.isArray(outer) || outer.length !== 2 || typeof outer[0] !== 'string' || outer[1] !== digest(outer[0], 8)) {
    throw fail('not a token this server issued');
  }
  const [version, tokenFingerprint, position] = JSON.parse(outer[0]) as [unknown, unknown, unknown];
  if (version !== TOKEN_VERSION) throw fail('issued by another version of the server');
  if (tokenFingerprint !== fingerprint) throw fail('it belongs to a different query');
  return position;
}

/** A cursor's position decoded from a token, checked to have the expected shape. */
export function positionAs<T>(position: unknown, isValid: (p: unknown) => p is T): T {
  if (!isValid(position)) throw new GAException('invalidPageToken', "field 'pageToken' is not valid: bad position");
  return position;
}

export interface PageQuery {
  pageSize?: number;
  pageToken?: string;
}

/**
 * Everything a keyset search needs from a request: the page size, the fingerprint tokens are bound
 * to, and the position after which to continue (undefined on the first page).
 */
export function keysetCursor<P>(
  scope: string,
  request: PageQuery,
  limits: PagingLimits,
  isPosition: (p: unknown) => p is P,
): { pageSize: number; fingerprint: string; after: P | undefined } {
  const pageSize = resolvePageSize(request.pageSize, limits);
  const fingerprint = queryFingerprint(scope, request);
  const after = request.pageToken ? positionAs(decodePageToken(request.pageToken, fingerprint), isPosition) : undefined;
  return { pageSize, fingerprint, after };
}

export const isString = (p: unknown): p is string => typeof p === 'string';
export const isNonNegativeInteger = (p: unknown): p is number => Number.isSafeInteger(p) && (p as number) >= 0;
