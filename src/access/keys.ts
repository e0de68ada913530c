/**
 * API keys for scripts: random keys whose salted scrypt hashes the policy holds (`keys:`), made by
 * `ga4gh access add-key`. A key carries its salt, so a request's key is hashed once, against the one
 * entry with that salt, and compared in constant time; a key of no entry costs no hashing at all.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { KeyEntry } from './policy.js';

const KEY_PREFIX = 'ga4gh_';
const SALT_BYTES = 16;
const SECRET_BYTES = 32;
/** The prefix, then the salt and the secret in base64url: no dots, so never mistaken for a JWT. */
const KEY_FORM = /^ga4gh_[A-Za-z0-9_-]{64}$/;

/** True when `text` has the form of a key this server makes (it may still be no key of the policy). */
export const looksLikeApiKey = (text: string) => KEY_FORM.test(text);

/** The cost of new hashes: 2^14 iterations of 8 blocks, 16 MiB and some 50 ms per hash. */
const NEW_HASH_COST = { logN: 14, r: 8, p: 1 };
/** No policy may make one verification take more memory than this. */
const MAX_HASH_MEMORY = 64 * 1024 * 1024;
const DIGEST_BYTES = 32;

interface KeyHash {
  logN: number;
  r: number;
  p: number;
  salt: Buffer;
  digest: Buffer;
}

const base64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
const HASH_FORM = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Reads a `hash` of the policy (`$scrypt$ln=14,r=8,p=1$SALT$DIGEST`, base64 without padding); throws saying what is wrong. */
export function parseKeyHash(text: string): KeyHash {
  const m = HASH_FORM.exec(text);
  if (!m) throw new Error('is not a key hash of the form $scrypt$ln=N,r=N,p=N$SALT$DIGEST that ga4gh access add-key prints');
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const salt = Buffer.from(m[4], 'base64');
  const digest = Buffer.from(m[5], 'base64');
  if (logN < 10 || r < 1 || p < 1 || p > 16 || 128 * 2 ** logN * r > MAX_HASH_MEMORY) throw new Error(`has scrypt parameters out of bounds (ln=${logN}, r=${r}, p=${p})`);
  if (salt.length !== SALT_BYTES) throw new Error(`has a salt of ${salt.length} bytes, not ${SALT_BYTES}`);
  if (digest.length !== DIGEST_BYTES) throw new Error(`has a digest of ${digest.length} bytes, not ${DIGEST_BYTES}`);
  return { logN, r, p, salt, digest };
}

const hashWith = (secret: Buffer, h: Omit<KeyHash, 'digest'>) =>
  new Promise<Buffer>((resolve, reject) => {
    const options: ScryptOptions = { N: 2 ** h.logN, r: h.r, p: h.p, maxmem: 2 * 128 * 2 ** h.logN * h.r };
    scrypt(secret, h.salt, DIGEST_BYTES, options, (error, digest) => (error ? reject(error) : resolve(digest)));
  });

/** A new random key and the `hash` the policy keeps of it. */
export async function newApiKey(): Promise<{ key: string; hash: string }> {
  const salt = randomBytes(SALT_BYTES);
  const secret = randomBytes(SECRET_BYTES);
  const digest = await hashWith(secret, { ...NEW_HASH_COST, salt });
  const { logN, r, p } = NEW_HASH_COST;
  return {
    key: KEY_PREFIX + Buffer.concat([salt, secret]).toString('base64url'),
    hash: `$scrypt$ln=${logN},r=${r},p=${p}$${base64(salt)}$${base64(digest)}`,
  };
}

/** The salt a hash was made with, as the key of the lookup (also for the policy's check that no two keys share one). */
export const saltOfHash = (hash: string) => parseKeyHash(hash).salt.toString('hex');

/** Keys verified once are remembered (by a digest of the key, never the key) up to this many. */
const REMEMBERED_KEYS = 1000;

/** Finds the policy entry of a key. One per policy: a new policy starts with nothing remembered. */
export class KeyVerifier {
  private readonly bySalt = new Map<string, { entry: KeyEntry; hash: KeyHash }>();
  private readonly verified = new Map<string, Promise<KeyEntry | undefined>>();

  constructor(entries: readonly KeyEntry[]) {
    for (const entry of entries) {
      const hash = parseKeyHash(entry.hash);
      this.bySalt.set(hash.salt.toString('hex'), { entry, hash });
    }
  }

  /** The entry whose hash the key matches, or undefined. */
  verify(key: string): Promise<KeyEntry | undefined> {
    if (!looksLikeApiKey(key)) return Promise.resolve(undefined);
    const bytes = Buffer.from(key.slice(KEY_PREFIX.length), 'base64url');
    const found = this.bySalt.get(bytes.subarray(0, SALT_BYTES).toString('hex'));
    if (!found) return Promise.resolve(undefined);
    const id = createHash('sha256').update(key).digest('hex');
    const known = this.verified.get(id);
    if (known) return known;
    const checked = hashWith(bytes.subarray(SALT_BYTES), found.hash).then((digest) => (timingSafeEqual(digest, found.hash.digest) ? found.entry : undefined));
    // Only keys that verify are remembered: a wrong key is hashed again each time, and costs its sender as much.
    void checked.then((entry) => {
      if (!entry) this.verified.delete(id);
    }, () => this.verified.delete(id));
    if (this.verified.size >= REMEMBERED_KEYS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(id, checked);
    return checked;
  }
}
