/**
 * The registry: where datasets, reference metadata, variant sets, RNA expression rows and peers are
 * recorded. An embedded SQLite file by default; the same queries run on PostgreSQL (a `postgres://`
 * URL) through Kysely, where only the dialect differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from './kysely.js';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { UserError } from '../user-error.js';
import { appliedVersions, migrate, pendingMigrations, type Dialect, type Migration, type MigrationContext } from './migrations.js';
import { poolDroppingLostClients, ReconnectingPostgresDialect } from './reconnect.js';
import type { Database } from './schema.js';

export type { Dialect };

export interface Registry {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where it lives, as the user named it. */
  location: string;
  /** The SQLite handle under `db` (SQLite only): bulk inserts run prepared statements on it, inside db's transactions. */
  sqlite?: BetterSqlite3.Database;
  /**
   * PostgreSQL only: the pool's client serving the backend with this process id, while it is checked
   * out (a Kysely transaction holds one): bulk loads stream COPY through it, inside that transaction.
   */
  pgClientOf?(backendPid: number): pg.PoolClient | undefined;
  close(): Promise<void>;
}

export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location);

/** The URL without its password, for messages. */
function redactUrl(location: string): string {
  try {
    const url = new URL(location);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://...';
  }
}

// pg returns int8 and numeric as strings; every such column here holds values far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

function connect(location: string, create: boolean): Registry {
  if (isPostgresUrl(location)) {
    const pool = new pg.Pool({ connectionString: location, max: 10, connectionTimeoutMillis: 10_000 });
    // A client that loses its server, idle or checked out, must not take the process down: the
    // query it was running fails (and is retried, reconnect.ts); the pool drops the client.
    pool.on('error', (e) => console.error(`registry connection lost: ${e.message}`));
    pool.on('connect', (client) => client.on('error', () => {}));
    const checkedOut = new Set<pg.PoolClient>();
    pool.on('acquire', (client) => checkedOut.add(client));
    pool.on('release', (_err, client) => checkedOut.delete(client));
    const pgClientOf = (pid: number) => [...checkedOut].find((c) => (c as unknown as { processID: number }).processID === pid);
    const db = new Kysely<Database>({ dialect: new ReconnectingPostgresDialect({ pool: poolDroppingLostClients(pool), cursor: Cursor }) });
    return { db, dialect: 'postgres', location: redactUrl(location), pgClientOf, close: () => db.destroy() };
  }
  if (!create && !fs.existsSync(location)) {
    throw new UserError(`no registry at ${location}; create one with: ga4gh repo init ${location}`);
  }
  if (create) fs.mkdirSync(path.dirname(path.resolve(location)), { recursive: true });
  let sqlite: BetterSqlite3.Database;
  try {
    sqlite = new BetterSqlite3(location);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
  } catch (e) {
    throw new UserError(`cannot open registry ${location}: ${(e as Error).message}`);
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', location, sqlite, close: () => db.destroy() };
}

async function pendingOf(registry: Registry, migrations: Migration[]): Promise<Migration[] | undefined> {
  const applied = await appliedVersions(registry.db);
  return applied && pendingMigrations(migrations, applied);
}

/*
 * Every function that opens a registry takes the schema's migrations: the composition roots (the
 * server assembly and the CLI) gather them from the areas, so that the registry knows no area.
 */

export interface MigratedRegistry {
  registry: Registry;
  /** The migrations just applied, oldest first. */
  applied: Migration[];
}

/** `context` hears the progress and warnings of migrations that read the registered files. */
async function applyMigrations(registry: Registry, migrations: Migration[], context?: MigrationContext): Promise<Migration[]> {
  try {
    return await migrate(registry.db, migrations, registry.dialect, context);
  } catch (e) {
    await registry.close();
    throw new UserError(`cannot initialise registry ${registry.location}: ${(e as Error).message}`);
  }
}

/**
 * Creates the registry, or brings an existing one up to date; returns it open, with what was applied
 * and whether it existed before (a registry has its migrations table from its first migration on).
 */
export async function createOrMigrateRegistry(
  location: string,
  migrations: Migration[],
  context?: MigrationContext,
): Promise<MigratedRegistry & { existed: boolean }> {
  const registry = connect(location, true);
  const existed = (await appliedVersions(registry.db)) !== undefined;
  return { registry, applied: await applyMigrations(registry, migrations, context), existed };
}

/** A registry ready for use: created when missing, brought up to date otherwise. */
export async function initRegistry(location: string, migrations: Migration[], context?: MigrationContext): Promise<Registry> {
  return (await createOrMigrateRegistry(location, migrations, context)).registry;
}

/** An existing registry, open, with the migrations it lacks; refuses a missing or uninitialised one. */
async function openExisting(location: string, migrations: Migration[]): Promise<{ registry: Registry; pending: Migration[] }> {
  const registry = connect(location, false);
  let pending: Migration[] | undefined;
  try {
    await sql`select 1`.execute(registry.db); // connection problems are reported as such, not as "not a registry"
    pending = await pendingOf(registry, migrations);
  } catch (e) {
    await registry.close();
    throw new UserError(`cannot open registry ${location}: ${(e as Error).message}`);
  }
  if (pending === undefined) {
    await registry.close();
    throw new UserError(`${location} is not an initialised registry; run: ga4gh repo init ${location}`);
  }
  return { registry, pending };
}

/**
 * Brings an existing registry up to date. A missing one is refused as every command but `init`
 * refuses it, so that a mistyped path creates nothing.
 */
export async function migrateRegistry(location: string, migrations: Migration[], context?: MigrationContext): Promise<MigratedRegistry> {
  const { registry } = await openExisting(location, migrations);
  return { registry, applied: await applyMigrations(registry, migrations, context) };
}

/** Opens an existing, up-to-date registry; refuses one that is missing or needs `repo migrate`. */
export async function openRegistry(location: string, migrations: Migration[]): Promise<Registry> {
  const { registry, pending } = await openExisting(location, migrations);
  if (pending.length) {
    await registry.close();
    throw new UserError(
      `registry ${location} needs ${pending.length} schema migration(s) (${pending.map((m) => m.name).join(', ')}); run: ga4gh repo migrate ${location}`,
    );
  }
  return registry;
}

/** Runs `fn` with an open registry and closes it afterwards, whatever happens. */
export async function withRegistry<T>(location: string, migrations: Migration[], fn: (registry: Registry) => Promise<T>): Promise<T> {
  const registry = await openRegistry(location, migrations);
  try {
    return await fn(registry);
  } finally {
    await registry.close();
  }
}

