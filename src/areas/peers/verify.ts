/**
 * The verify step of the peer policy: ask a candidate peer for `GET /info` and check that it speaks the
 * same protocol major.minor. The request goes out from the server to an address a stranger chose, so
 * it refuses loopback, private, link-local and metadata addresses (unless the operator allows them),
 * judging the addresses the name resolves to, and then connects to the very address it judged: the
 * request's `lookup` is pinned to it, so a second DNS answer cannot swap in an internal address.
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';

export interface VerifyOptions {
  /** Our protocol version; the peer must share its major.minor. */
  protocolVersion: string;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

export type Verdict = { ok: true; protocolVersion: string } | { ok: false; reason: string };

/** Largest /info body read; a real one is a few hundred bytes. */
const MAX_INFO_BYTES = 64 * 1024;

/** Address ranges a server must not be steered into reaching on a stranger's word. */
const NON_PUBLIC = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (also some cloud metadata services)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including the 169.254.169.254 metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: could reach any IPv4 address, private ones included
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local, including fd00:ec2::254 (a metadata service)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, 'ipv6');
}

/** Whether an IP address is on the public internet (IPv4-mapped IPv6 addresses judged as IPv4). */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !NON_PUBLIC.check(mapped[1], 'ipv4');
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1], 16);
    const lo = parseInt(hexMapped[2], 16);
    return isPublicAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  return !NON_PUBLIC.check(address, 'ipv6');
}

/**
 * The address to connect to for a host name: every address it resolves to must be public (a name
 * with one internal address among public ones is refused), unless private addresses are allowed.
 */
export async function vetHost(hostname: string, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await dns.lookup(bare, { all: true, verbatim: true });
  } catch (e) {
    throw new Error(`cannot resolve ${bare} (${(e as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  }
  if (!addresses.length) throw new Error(`${bare} resolves to no address`);
  if (!allowPrivate) {
    const internal = addresses.find((a) => !isPublicAddress(a.address));
    if (internal) throw new Error(`${bare} resolves to ${internal.address}, a loopback, private, link-local or reserved address`);
  }
  return addresses[0];
}

/** "0.6.0a10" → "0.6"; undefined when the text is not a version. */
export function majorMinor(version: string): string | undefined {
  const m = /^\s*(\d+)\.(\d+)(?:[.a-z0-9-]*)\s*$/i.exec(version);
  return m ? `${Number(m[1])}.${Number(m[2])}` : undefined;
}

/** A `lookup` that answers every name with the one address already vetted. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/** GET `<baseUrl>/info` from the pinned address; resolves with the body text or fails with a reason. */
function fetchInfo(baseUrl: URL, address: { address: string; family: number }, options: VerifyOptions): Promise<string> {
  const client = baseUrl.protocol === 'https:' ? https : http;
  const target = new URL(baseUrl.pathname.replace(/\/+$/, '') + '/info', baseUrl);
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'ga4gh-server peer verification' },
        lookup: pinnedLookup(address.address, address.family),
        signal: options.signal,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`GET /info answered HTTP ${res.statusCode}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_INFO_BYTES) {
            req.destroy(new Error(`GET /info answered more than ${MAX_INFO_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      },
    );
    // One deadline for the whole exchange (connecting included), not a socket idle timeout: a peer
    // that trickles bytes must not hold a verification open.
    const deadline = setTimeout(() => req.destroy(new Error(`GET /info took longer than ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', (e) => reject(e));
    req.on('close', () => clearTimeout(deadline));
    req.end();
  });
}

/** Checks a peer (a normalised base URL): never throws, answers a verdict with the reason. */
export async function verifyPeer(url: string, options: VerifyOptions): Promise<Verdict> {
  try {
    const base = new URL(url);
    const address = await vetHost(base.hostname, options.allowPrivate);
    const text = await fetchInfo(base, address, options);
    let info: unknown;
    try {
      info = JSON.parse(text);
    } catch {
      return { ok: false, reason: 'GET /info did not answer JSON' };
    }
    const record = (typeof info === 'object' && info !== null ? info : {}) as Record<string, unknown>;
    const version = record.protocolVersion ?? record.protocol_version;
    if (typeof version !== 'string') return { ok: false, reason: 'GET /info gave no protocolVersion' };
    const theirs = majorMinor(version);
    const ours = majorMinor(options.protocolVersion);
    if (theirs === undefined || theirs !== ours) {
      return { ok: false, reason: `protocol version ${JSON.stringify(version.slice(0, 40))} is not ${ours}.x` };
    }
    return { ok: true, protocolVersion: version };
  } catch (e) {
    const error = e as NodeJS.ErrnoException;
    const reason = error.name === 'AbortError' ? 'the server stopped before the check finished' : error.message || String(e);
    return { ok: false, reason: error.code && !reason.includes(error.code) ? `${reason} (${error.code})` : reason };
  }
}
