/**
 * The peer service: the list (paged), announcements under the configured policy, and the operator's
 * ways into the list (CLI, seed file). Knows no HTTP: announcements arrive as decoded JSON with the
 * sender's address and user agent, and failures are GAExceptions carrying `success: false`.
 */
import fs from 'node:fs';
import { PROTOCOL_VERSION } from '../../config.js';
import type { AttributesRecord } from '../../protocol/common.js';
import { GAException, type ErrorKindName } from '../../protocol/errors.js';
import { isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import { parseMessage } from '../../protocol/schema.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { AnnouncePeerRequest, type AnnouncePeerBody, type PeerRecord } from './messages.js';
import { AnnounceRateLimiter } from './rate-limit.js';
import {
  countPeers,
  getPeer,
  insertPeer,
  listPeers,
  logAnnouncement,
  pruneAnnouncements,
  setAnnouncementOutcome,
  type PeerRow,
} from './store.js';
import { defaultPeerSettings, type PeerPolicy, type PeerSettings } from './settings.js';
import { normalisePeerUrl, operatorUrl } from './url.js';
import { verifyPeer } from './verify.js';

/** Largest announced Attributes kept, as JSON text. */
export const MAX_ANNOUNCED_ATTRIBUTES = 16 * 1024;

/**
 * The settings from `ga4gh serve` options (camelCase), defaults for those not given. The values are
 * checked where they are parsed (the choices and integerAtLeast of the options in index.ts).
 */
export function peerSettingsOf(options: Record<string, unknown>): PeerSettings {
  return {
    policy: (options.peerPolicy as PeerPolicy | undefined) ?? defaultPeerSettings.policy,
    allowPrivatePeers: Boolean(options.allowPrivatePeers),
    maxPeers: (options.maxPeers as number | undefined) ?? defaultPeerSettings.maxPeers,
    announceRate: (options.announceRate as number | undefined) ?? defaultPeerSettings.announceRate,
    announcementLogSize: (options.announcementLogSize as number | undefined) ?? defaultPeerSettings.announcementLogSize,
    verifyTimeoutMs: (options.peerVerifyTimeout as number | undefined) ?? defaultPeerSettings.verifyTimeoutMs,
    maxConcurrentVerifications: defaultPeerSettings.maxConcurrentVerifications,
    ownUrl: typeof options.publicUrl === 'string' ? operatorUrl(options.publicUrl, '--public-url') : undefined,
  };
}

export function peerRecordOf(row: PeerRow): PeerRecord {
  return { url: row.url, attributes: row.attributes ? (JSON.parse(row.attributes) as AttributesRecord) : undefined };
}

/** The same error with `success: false` beside its code and message, as AnnouncePeerResponse wants. */
function unsuccessful(error: GAException): GAException {
  return error.with({ success: false });
}

/** The announced URL as far as it can be read from a body that may be malformed, for the log. */
function announcedUrlOf(input: unknown): string | null {
  const peer = (input as { peer?: unknown } | null)?.peer;
  const url = typeof peer === 'object' && peer !== null ? (peer as { url?: unknown }).url : undefined;
  return typeof url === 'string' ? url : null;
}

export interface Remote {
  address: string;
  userAgent: string;
}

export function peerService(registry: Registry, limits: PagingLimits, settings: PeerSettings) {
  const limiter = new AnnounceRateLimiter(settings.announceRate);
  /**
   * Verifications running, by URL: one per URL at a time. Announcements of a URL being checked join
   * the running check, and its outcome is written to each of their log entries.
   */
  const running = new Map<string, Array<Promise<string>>>();
  /** Every verification not yet finished, including the writing of its outcome. */
  const settling = new Set<Promise<void>>();
  const stopping = new AbortController();
  const pruneEvery = Math.max(1, Math.floor(settings.announcementLogSize / 100));
  let loggedSincePrune = 0;

  async function log(url: string | null, remote: Remote, outcome: string, detail?: string): Promise<string> {
    const id = await logAnnouncement(registry, { url, remoteAddress: remote.address, userAgent: remote.userAgent, outcome, detail });
    if (++loggedSincePrune >= pruneEvery) {
      loggedSincePrune = 0;
      await pruneAnnouncements(registry, settings.announcementLogSize);
    }
    return id;
  }

  /** Takes a token of the sender's announcement rate; when none is left, logs and throws the 429. */
  async function admit(url: string | null, remote: Remote): Promise<void> {
    if (limiter.take(remote.address)) return;
    await log(url, remote, 'rate-limited');
    throw new GAException(
      'tooManyRequests',
      `too many announcements from ${remote.address}; at most ${settings.announceRate} a minute are accepted`,
      { success: false },
    );
  }

  /** Reads and checks an announcement; throws the 400 that answers a malformed one. */
  function readAnnouncement(input: unknown): { url: string; attributes?: AttributesRecord } {
    let body: AnnouncePeerBody;
    try {
      body = parseMessage<AnnouncePeerBody>(AnnouncePeerRequest, input).value;
    } catch (e) {
      throw e instanceof GAException ? unsuccessful(e) : e;
    }
    const fail = (kind: ErrorKindName, message: string) => new GAException(kind, message, { success: false });
    const checked = normalisePeerUrl(body.peer.url);
    if (!checked.ok) throw fail('invalidRequest', `field 'peer.url' ${checked.reason}`);
    const attributes = body.peer.attributes;
    if (attributes && JSON.stringify(attributes).length > MAX_ANNOUNCED_ATTRIBUTES) {
      throw fail('invalidRequest', `field 'peer.attributes' is larger than ${MAX_ANNOUNCED_ATTRIBUTES} bytes`);
    }
    return { url: checked.url, attributes };
  }

  function startVerification(url: string, attributes: AttributesRecord | undefined, logId: string): void {
    // Promises of ids: an announcement joining the check adds its entry before that entry is written.
    const logIds = [Promise.resolve(logId)];
    const settle = async (outcome: string, detail: string) => {
      for (const id of logIds) await setAnnouncementOutcome(registry, await id, outcome, detail);
    };
    const job = (async () => {
      const verdict = await verifyPeer(url, {
        protocolVersion: PROTOCOL_VERSION,
        timeoutMs: settings.verifyTimeoutMs,
        allowPrivate: settings.allowPrivatePeers,
        signal: stopping.signal,
      });
      // From here on, later announcements of this URL start a check of their own (verifyPeer never
      // throws, so this always runs).
      running.delete(url);
      if (!verdict.ok) return settle('refused', verdict.reason);
      if ((await countPeers(registry)) >= settings.maxPeers) {
        return settle('full', `verified, but the list holds the maximum of ${settings.maxPeers} peers`);
      }
      const added = await insertPeer(registry, url, attributes, 'announcement');
      await settle(
        added ? 'verified' : 'listed',
        added ? `added: GET /info reports protocol version ${verdict.protocolVersion}` : 'verified; already in the peer list',
      );
    })()
      .catch((e) => {
        process.stderr.write(`ga4gh: verifying peer ${url} failed: ${(e as Error).message}\n`);
      })
      .finally(() => settling.delete(job));
    running.set(url, logIds);
    settling.add(job);
  }

  return {
    settings,

    async list(request: PageQuery): Promise<SearchPage<PeerRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('peers', request, limits, isString);
      const rows = await listPeers(registry, after, pageSize + 1);
      return keysetPage(rows, pageSize, fingerprint, peerRecordOf, (r) => r.url);
    },

    /**
     * Handles one announcement: logged whatever happens; a well-formed one resolves (the reply is
     * `success: true`) before any verification finishes.
     */
    async announce(input: unknown, remote: Remote): Promise<void> {
      // The log keeps the URL as it was announced; the list keeps its normal form.
      const said = announcedUrlOf(input);
      await admit(said, remote);
      let announced: { url: string; attributes?: AttributesRecord };
      try {
        announced = readAnnouncement(input);
      } catch (e) {
        await log(said, remote, 'invalid', (e as Error).message);
        throw e;
      }
      const { url, attributes } = announced;
      if (settings.policy === 'log') {
        await log(said, remote, 'logged', 'policy log: announcements are recorded only');
        return;
      }
      if (url === settings.ownUrl) {
        await log(said, remote, 'refused', "this server's own public URL");
        return;
      }
      if (await getPeer(registry, url)) {
        await log(said, remote, 'listed', 'already in the peer list');
        return;
      }
      if ((await countPeers(registry)) >= settings.maxPeers) {
        await log(said, remote, 'full', `the list holds the maximum of ${settings.maxPeers} peers`);
        return;
      }
      if (settings.policy === 'open') {
        const added = await insertPeer(registry, url, attributes, 'announcement');
        await log(said, remote, added ? 'added' : 'listed', added ? 'policy open' : 'already in the peer list');
        return;
      }
      const joined = running.get(url);
      if (joined) {
        const entry = log(said, remote, 'pending', 'joined the check of this URL already running');
        joined.push(entry);
        await entry;
        return;
      }
      if (running.size >= settings.maxConcurrentVerifications) {
        await log(said, remote, 'refused', 'too many checks running; announce again later');
        return;
      }
      const logId = await log(said, remote, 'pending', 'checking GET /info');
      startVerification(url, attributes, logId);
    },

    /** A body that could not be read at all (not JSON, wrong content type): logged, then refused. */
    async refuseUnreadable(error: GAException, remote: Remote): Promise<never> {
      await admit(null, remote);
      await log(null, remote, 'invalid', error.message);
      throw unsuccessful(error);
    },

    /** Stops running verifications (they record why) and waits for them. */
    async close(): Promise<void> {
      stopping.abort();
      await Promise.allSettled([...settling]);
    },
  };
}

/** The URLs of a seed file (`serve --peers`): one a line; blank lines and `#` comments are skipped. */
export function readSeedFile(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read peer file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const urls: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const entry = line.replace(/#.*/, '').trim();
    if (entry) urls.push(operatorUrl(entry, `${file}:${i + 1}: URL`));
  });
  return urls;
}

/** Adds the seed file's URLs that are not listed yet (an operator's attributes are kept). */
export async function seedPeers(registry: Registry, urls: string[]): Promise<void> {
  for (const url of urls) await insertPeer(registry, url, undefined, 'seed');
}
