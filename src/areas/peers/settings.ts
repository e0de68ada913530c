/**
 * The peer settings of `ga4gh serve` and their defaults: apart from the service, because the options
 * are declared at every start of the CLI, which loads no service (src/areas/area.ts).
 */
export const PEER_POLICIES = ['log', 'verify', 'open'] as const;
export type PeerPolicy = (typeof PEER_POLICIES)[number];

export interface PeerSettings {
  /** log: record only; verify: add once GET /info answers our major.minor; open: add every valid URL. */
  policy: PeerPolicy;
  /** Let the verify step reach loopback, private and link-local addresses (local testing). */
  allowPrivatePeers: boolean;
  /** Announcements stop adding peers once the list holds this many. */
  maxPeers: number;
  /** Announcements accepted per remote address per minute. */
  announceRate: number;
  /** Announcement log entries kept (about; pruning runs every 1% of that many entries). */
  announcementLogSize: number;
  verifyTimeoutMs: number;
  /** Verifications running at once; announcements beyond are refused (logged) rather than queued. */
  maxConcurrentVerifications: number;
  /** This server's own public URL (normalised), never listed as its own peer. */
  ownUrl?: string;
}

export const defaultPeerSettings: PeerSettings = {
  policy: 'verify',
  allowPrivatePeers: false,
  maxPeers: 1000,
  announceRate: 10,
  announcementLogSize: 10_000,
  verifyTimeoutMs: 3000,
  maxConcurrentVerifications: 16,
};
