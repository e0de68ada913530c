/**
 * Peer URLs: the one normal form they are stored in, and the reasons a URL is refused. Shared by the
 * announce endpoint, the CLI and the seed file, so every way into the list applies the same rules.
 */
import { UserError } from '../../user-error.js';

/** Longest announced URL accepted; real base URLs are far shorter. */
export const MAX_PEER_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/**
 * The normal form of a peer's base URL: lower-case scheme and host (the WHATWG parser does both and
 * also drops the default port), no trailing slash. Refuses anything that is not an absolute http(s)
 * URL, carries credentials, a query or a fragment, or is longer than MAX_PEER_URL_LENGTH.
 */
export function normalisePeerUrl(raw: string): UrlCheck {
  if (raw.length > MAX_PEER_URL_LENGTH) return { ok: false, reason: `is longer than ${MAX_PEER_URL_LENGTH} characters` };
  const text = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return { ok: false, reason: 'is not an absolute URL (scheme://host...)' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `has scheme ${url.protocol.slice(0, -1)}; only http and https are accepted` };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not contain credentials' };
  if (!url.hostname) return { ok: false, reason: 'has no host' };
  if (url.search || text.includes('?')) return { ok: false, reason: 'must not have a query string (a base URL is expected)' };
  if (url.hash || text.includes('#')) return { ok: false, reason: 'must not have a fragment (a base URL is expected)' };
  const path = url.pathname.replace(/\/+$/, '');
  return { ok: true, url: `${url.protocol}//${url.host}${path}` };
}

/** A URL the operator typed, normalised, or a UserError saying what is wrong with it. */
export function operatorUrl(raw: string, where = 'URL'): string {
  const checked = normalisePeerUrl(raw);
  if (!checked.ok) throw new UserError(`${where} ${JSON.stringify(raw.length > 80 ? raw.slice(0, 80) + '...' : raw)} ${checked.reason}`);
  return checked.url;
}
