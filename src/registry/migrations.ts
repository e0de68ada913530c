/**
 * Versioned schema migrations. Each area owns its own, with version numbers that never change once
 * released; the registry records which have run, so `repo migrate` and `serve` know where it stands.
 */
import type { Kysely, RawBuilder } from 'kysely';
import { sql } from './kysely.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<any>, dialect: Dialect, context: MigrationContext): Promise<void>;
}

/**
 * What a migration that reads the registered files (to fill in a new column) is handed. A file it
 * cannot read is a warning, not a failure: a registry that cannot be migrated cannot be mended with
 * the commands that need it migrated first.
 */
export interface MigrationContext {
  /** Hears how far the reading of a file has got: what is read, its bytes read so far, its size (0 when unknown). */
  progress(what: string, bytesRead: number, size: number): void;
  /** Something the user should know: what could not be filled in, and why. */
  warn(message: string): void;
}

const quietly: MigrationContext = { progress() {}, warn() {} };

/**
 * The column type for text that records are ordered and paged by (names, URLs): byte order on both
 * backends, so that a PostgreSQL registry with a locale collation pages exactly as SQLite does.
 */
export function sortableText(dialect: Dialect): 'text' | RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`text collate "C"` : 'text';
}

export const MIGRATIONS_TABLE = 'ga4gh_schema_version';

export async function appliedVersions(db: Kysely<any>): Promise<Set<number> | undefined> {
  try {
    const rows = await db.selectFrom(MIGRATIONS_TABLE).select('version').execute();
    return new Set(rows.map((r) => Number(r.version)));
  } catch {
    return undefined; // no such table: not a registry (yet)
  }
}

export function pendingMigrations(all: Migration[], applied: Set<number>): Migration[] {
  return all.filter((m) => !applied.has(m.version)).sort((a, b) => a.version - b.version);
}

/** Runs the pending migrations, each in its own transaction, and returns the ones applied. */
export async function migrate(db: Kysely<any>, all: Migration[], dialect: Dialect, context = quietly): Promise<Migration[]> {
  await db.schema
    .createTable(MIGRATIONS_TABLE)
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const pending = pendingMigrations(all, (await appliedVersions(db)) ?? new Set());
  for (const m of pending) {
    await db.transaction().execute(async (trx) => {
      await m.up(trx, dialect, context);
      await trx
        .insertInto(MIGRATIONS_TABLE)
        .values({ version: m.version, name: m.name, applied_at: new Date().toISOString() })
        .execute();
    });
  }
  return pending;
}
