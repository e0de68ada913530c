/**
 * A token issuer for the access tests: key pairs made with jose, their public JWKS and an OpenID
 * Connect discovery document served by a node:http server on a loopback port, and tokens, passports
 * and visas signed here. It can stop answering (its server closed) to play a JWKS that is down.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { atEnd } from './helpers.js';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** In the JWKS the issuer serves (false: a key only this test knows). */
  published: boolean;
}

export interface SignOptions {
  kid?: string;
  /** Extra protected header parameters (jku, typ...). */
  header?: Record<string, unknown>;
}

export const now = () => Math.floor(Date.now() / 1000);

export class TestIssuer {
  private readonly keys: SigningKey[] = [];
  /** How many times its JWKS was fetched. */
  jwksFetches = 0;
  discoveryFetches = 0;
  /** What its discovery document says its issuer is (the issuer itself unless a test changes it). */
  discoveredIssuer: string | undefined;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  get jwksUrl(): string {
    return `${this.url}/jwks`;
  }

  static async start(): Promise<TestIssuer> {
    let issuer: TestIssuer | undefined;
    const server = http.createServer((req, res) => void issuer!.answer(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = new TestIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    atEnd(() => issuer!.stop());
    await issuer.addKey('key-1', 'RS256');
    return issuer;
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/jwks') {
      this.jwksFetches++;
      const published = this.keys.filter((k) => k.published);
      json({ keys: await Promise.all(published.map(async (k) => ({ ...(await exportJWK(k.publicKey)), kid: k.kid, alg: k.alg, use: 'sig' }) as JWK)) });
    } else if (req.url === '/.well-known/openid-configuration') {
      this.discoveryFetches++;
      json({ issuer: this.discoveredIssuer ?? this.url, jwks_uri: this.jwksUrl, id_token_signing_alg_values_supported: ['RS256', 'ES256'] });
    } else {
      res.writeHead(404).end();
    }
  }

  /** A new key pair; published in the JWKS unless `published` is false. */
  async addKey(kid: string, alg = 'RS256', published = true): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    this.keys.push({ kid, alg, privateKey, publicKey, published });
  }

  private key(kid = this.keys[0].kid): SigningKey {
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`the test issuer has no key ${kid}`);
    return key;
  }

  /** A JWT signed with one of its keys: `iss` is this issuer, `iat` now and `exp` in five minutes unless the claims say otherwise. */
  async sign(claims: JWTPayload & Record<string, unknown>, options: SignOptions = {}): Promise<string> {
    const key = this.key(options.kid);
    return new SignJWT({ iss: this.url, iat: now(), exp: now() + 300, ...claims })
      .setProtectedHeader({ ...options.header, alg: key.alg, kid: key.kid })
      .sign(key.privateKey);
  }

  /** An access token for `subject` with audience `ga4gh-server`, and `claims` on top. */
  token(subject: string, claims: Record<string, unknown> = {}, options: SignOptions = {}): Promise<string> {
    return this.sign({ sub: subject, aud: 'ga4gh-server', ...claims }, options);
  }

  /** A visa of this issuer for `subject`, as the Passport specification forms one. */
  visa(subject: string, visa: Record<string, unknown>, claims: Record<string, unknown> = {}, options: SignOptions = {}): Promise<string> {
    return this.sign(
      { sub: subject, jti: `visa-${Math.random().toString(36).slice(2)}`, ga4gh_visa_v1: { asserted: now() - 3600, source: 'https://dac.example.org', by: 'dac', ...visa }, ...claims },
      { ...options, header: { typ: 'vnd.ga4gh.visa+jwt', ...options.header } },
    );
  }

  /** An HS256 token whose secret is its RSA public key in PEM: the algorithm-confusion attack. */
  async hmacWithPublicKey(claims: Record<string, unknown>): Promise<string> {
    const key = this.key();
    const secret = new TextEncoder().encode(await exportSPKI(key.publicKey));
    return new SignJWT({ iss: this.url, iat: now(), exp: now() + 300, ...claims }).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(secret);
  }

  /** An unsigned token (`alg: none`). */
  unsigned(claims: Record<string, unknown>): string {
    return new UnsecuredJWT({ iss: this.url, iat: now(), exp: now() + 300, ...claims }).encode();
  }

  /** Stops answering: the JWKS and discovery document cannot be fetched any more. */
  async stop(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The token with one character of its signature changed. */
export function tampered(token: string): string {
  const [header, payload, signature] = token.split('.');
  const at = Math.floor(signature.length / 2);
  const changed = signature[at] === 'A' ? 'B' : 'A';
  return `${header}.${payload}.${signature.slice(0, at)}${changed}${signature.slice(at + 1)}`;
}
