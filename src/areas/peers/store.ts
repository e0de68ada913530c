/**
 * Peers in the registry: the list this server manages and the log of every announcement it received.
 * All peer state lives here (not in memory) so that replicas sharing one registry see one list.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';

export interface PeerTables {
  peer: {
    /** Normalised base URL (see url.ts). */
    url: string;
    /** Attributes as JSON text, or null. */
    attributes: string | null;
    /** How it joined: operator (CLI), seed (serve --peers), announcement. */
    origin: string;
    added_at: string;
  };
  peer_announcement: {
    id: string;
    received_at: string;
    /** The URL as announced (cut to a bound), or null when the body had none. */
    url: string | null;
    remote_address: string;
    user_agent: string;
    /** invalid, rate-limited, logged, added, listed, full, pending, verified, refused. */
    outcome: string;
    detail: string | null;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends PeerTables {}
}

export const peerMigrations: Migration[] = [
  {
    version: 5,
    name: 'peers',
    async up(db: Kysely<any>, dialect) {
      // Byte order for what is paged or pruned by, so every backend orders alike.
      const key = sortableText(dialect);
      await db.schema
        .createTable('peer')
        .addColumn('url', key, (c) => c.primaryKey())
        .addColumn('attributes', 'text')
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('added_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('peer_announcement')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('received_at', key, (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('remote_address', 'text', (c) => c.notNull())
        .addColumn('user_agent', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .execute();
      await db.schema
        .createIndex('peer_announcement_by_time')
        .on('peer_announcement')
        .columns(['received_at', 'id'])
        .execute();
    },
  },
];

export type PeerRow = PeerTables['peer'];
export type AnnouncementRow = PeerTables['peer_announcement'];
export type PeerOrigin = 'operator' | 'seed' | 'announcement';

export async function getPeer(registry: Registry, url: string): Promise<PeerRow | undefined> {
  return registry.db.selectFrom('peer').selectAll().where('url', '=', url).executeTakeFirst();
}

/** Peers in URL order, after a URL (keyset paging). */
export async function listPeers(registry: Registry, after: string | undefined, limit: number): Promise<PeerRow[]> {
  let q = registry.db.selectFrom('peer').selectAll().orderBy('url').limit(limit);
  if (after !== undefined) q = q.where('url', '>', after);
  return q.execute();
}

export async function countPeers(registry: Registry): Promise<number> {
  const row = await registry.db
    .selectFrom('peer')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Adds a peer unless its URL is listed already; true when it was added. */
export async function insertPeer(
  registry: Registry,
  url: string,
  attributes: object | undefined,
  origin: PeerOrigin,
): Promise<boolean> {
  const result = await registry.db
    .insertInto('peer')
    .values({ url, attributes: attributes ? JSON.stringify(attributes) : null, origin, added_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('url').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Adds a peer or replaces its attributes (the operator's word wins); true when it was new. */
export async function upsertPeer(registry: Registry, url: string, attributes: object | undefined, origin: PeerOrigin): Promise<boolean> {
  return registry.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('peer').select('url').where('url', '=', url).executeTakeFirst();
    const json = attributes ? JSON.stringify(attributes) : null;
    if (existing) {
      await trx.updateTable('peer').set({ attributes: json, origin }).where('url', '=', url).execute();
      return false;
    }
    await trx.insertInto('peer').values({ url, attributes: json, origin, added_at: new Date().toISOString() }).execute();
    return true;
  });
}

export async function deletePeer(registry: Registry, url: string): Promise<boolean> {
  const result = await registry.db.deleteFrom('peer').where('url', '=', url).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface AnnouncementEntry {
  url: string | null;
  remoteAddress: string;
  userAgent: string;
  outcome: string;
  detail?: string;
}

/** Bounds on what one log row keeps of text a stranger sent. */
const MAX_LOGGED_URL = 2100;
const MAX_LOGGED_USER_AGENT = 300;
const MAX_LOGGED_DETAIL = 500;
const cut = (text: string, max: number) => (text.length > max ? text.slice(0, max) + '…' : text);

let logSequence = 0;

/**
 * Records an announcement and returns its id (to record the outcome of a later verification). Ids
 * sort in arrival order within one process (a sequence number), and stay unique across replicas.
 */
export async function logAnnouncement(registry: Registry, entry: AnnouncementEntry): Promise<string> {
  const id = `${String(++logSequence).padStart(12, '0')}-${randomUUID()}`;
  await registry.db
    .insertInto('peer_announcement')
    .values({
      id,
      received_at: new Date().toISOString(),
      url: entry.url === null ? null : cut(entry.url, MAX_LOGGED_URL),
      remote_address: cut(entry.remoteAddress, 100),
      user_agent: cut(entry.userAgent, MAX_LOGGED_USER_AGENT),
      outcome: entry.outcome,
      detail: entry.detail === undefined ? null : cut(entry.detail, MAX_LOGGED_DETAIL),
    })
    .execute();
  return id;
}

export async function setAnnouncementOutcome(registry: Registry, id: string, outcome: string, detail: string): Promise<void> {
  await registry.db
    .updateTable('peer_announcement')
    .set({ outcome, detail: cut(detail, MAX_LOGGED_DETAIL) })
    .where('id', '=', id)
    .execute();
}

/** Deletes all but the `keep` newest log entries. */
export async function pruneAnnouncements(registry: Registry, keep: number): Promise<void> {
  const boundary = await registry.db
    .selectFrom('peer_announcement')
    .select(['received_at', 'id'])
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(1)
    .executeTakeFirst();
  if (!boundary) return;
  await registry.db
    .deleteFrom('peer_announcement')
    .where((eb) =>
      eb.or([
        eb('received_at', '<', boundary.received_at),
        eb.and([eb('received_at', '=', boundary.received_at), eb('id', '<=', boundary.id)]),
      ]),
    )
    .execute();
}

/** The newest log entries first. */
export async function listAnnouncements(registry: Registry, limit: number): Promise<AnnouncementRow[]> {
  return registry.db
    .selectFrom('peer_announcement')
    .selectAll()
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
