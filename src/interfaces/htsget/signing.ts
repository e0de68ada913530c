/**
 * Signed data URLs: a ticket's URLs carry when they expire and an HMAC-SHA256 of their path and that
 * time, under the server's signing key. Any replica with the same key serves any ticket (nothing is
 * kept between the ticket and its URLs), and a ticket handed to a tool works without the caller's
 * credentials until it expires. An expired, altered or unsigned URL is PermissionDenied (403).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { HtsgetError } from './errors.js';

/**
 * How long a ticket's URLs stay valid by default: htslib fetches a ticket's URLs one after another,
 * so the last part of a whole large file is asked for long after the ticket was made.
 */
export const DEFAULT_SIGNED_URL_SECONDS = 3600;

export class UrlSigner {
  private readonly key: Buffer;

  /** `key`: the configured signing key, or undefined for one made at random for this process alone. */
  constructor(
    key: string | undefined,
    private readonly lifetimeSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key, 'utf8');
  }

  private signature(path: string, expires: string): Buffer {
    return createHmac('sha256', this.key).update(`${path}\n${expires}`).digest();
  }

  /** `path` with the query that makes it valid for the lifetime from now. */
  sign(path: string): string {
    const expires = String(Math.floor(this.now() / 1000) + this.lifetimeSeconds);
    return `${path}?expires=${expires}&signature=${this.signature(path, expires).toString('base64url')}`;
  }

  /** Throws PermissionDenied unless `query` signs `path` and has not expired. */
  verify(path: string, query: Record<string, string>): void {
    const { expires, signature } = query;
    if (expires === undefined || signature === undefined) throw new HtsgetError('PermissionDenied', 'this data URL is not signed; ask for a ticket');
    const given = Buffer.from(signature, 'base64url');
    const expected = this.signature(path, expires);
    if (!/^\d+$/.test(expires) || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new HtsgetError('PermissionDenied', 'the signature of this data URL does not match it (altered, or signed with another key); ask for a new ticket');
    }
    if (Number(expires) * 1000 <= this.now()) throw new HtsgetError('PermissionDenied', `this data URL expired at ${new Date(Number(expires) * 1000).toISOString()}; ask for a new ticket`);
  }
}
