/**
 * `ga4gh repo copy SRC DST`: moves a whole registry between backends (SQLite to PostgreSQL, back, or
 * SQLite to SQLite). The target is created or migrated, must hold no data, and is filled in one
 * transaction: a failed copy leaves it empty. Rows are streamed in batches, so memory stays flat
 * whatever the size of the expression table.
 *
 * The tables and their order come from the source's own schema (its foreign keys), not from a list kept
 * by hand: a table a later migration adds is copied without anyone remembering to name it here.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely, TableMetadata } from 'kysely';
import { sql } from './kysely.js';
import { UserError } from '../user-error.js';
import { insertRows } from './bulk.js';
import { MIGRATIONS_TABLE, type Migration } from './migrations.js';
import { createOrMigrateRegistry, isPostgresUrl, openRegistry, type Registry } from './registry.js';

export interface CopiedTable {
  table: string;
  rows: number;
}

/** Rows read from the source and handed to the target at a time. */
const COPY_BATCH = 10_000;

/** The source's tables (the schema-version table aside) in an order where every table follows the ones it references. */
export async function tablesInDependencyOrder(registry: Registry): Promise<string[]> {
  const tables = (await tablesOf(registry)).map((t) => t.name).filter((t) => t !== MIGRATIONS_TABLE).sort();
  const references = await foreignKeys(registry);
  const ordered: string[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const ready = tables.filter(
      (t) => !placed.has(t) && (references.get(t) ?? []).every((target) => target === t || placed.has(target) || !tables.includes(target)),
    );
    if (ready.length === 0) throw new Error(`the foreign keys of ${tables.filter((t) => !placed.has(t)).join(', ')} form a cycle`);
    for (const t of ready) {
      ordered.push(t);
      placed.add(t);
    }
  }
  return ordered;
}

/** The registry's tables (views aside), with their columns. */
async function tablesOf(registry: Registry): Promise<TableMetadata[]> {
  const schema = await currentSchema(registry);
  const found = await registry.db.introspection.getTables();
  return found.filter((t) => schema === undefined || t.schema === schema).filter((t) => !t.isView);
}

/** PostgreSQL: the schema unqualified names resolve to (public, unless the URL's user says otherwise). */
async function currentSchema(registry: Registry): Promise<string | undefined> {
  if (registry.dialect !== 'postgres') return undefined;
  const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(registry.db);
  return rows[0].name;
}

/** table → the tables its foreign keys reference. */
async function foreignKeys(registry: Registry): Promise<Map<string, string[]>> {
  const pairs =
    registry.dialect === 'postgres'
      ? (
          await sql<{ source: string; target: string }>`
            select src.relname as source, dst.relname as target
            from pg_constraint c
            join pg_class src on src.oid = c.conrelid
            join pg_class dst on dst.oid = c.confrelid
            where c.contype = 'f' and src.relnamespace = current_schema()::regnamespace`.execute(registry.db)
        ).rows
      : (
          await sql<{ source: string; target: string }>`
            select m.name as source, fk."table" as target
            from sqlite_master m, pragma_foreign_key_list(m.name) fk
            where m.type = 'table'`.execute(registry.db)
        ).rows;
  const map = new Map<string, string[]>();
  for (const { source, target } of pairs) map.set(source, [...(map.get(source) ?? []), target]);
  return map;
}

async function rowCount(db: Kysely<any>, table: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The columns filled by a PostgreSQL sequence (none today: keys are assigned by the code, alike on both backends). */
function sequencesOf(registry: Registry, tables: TableMetadata[]): Array<{ table: string; column: string }> {
  if (registry.dialect !== 'postgres') return [];
  return tables.flatMap((t) => t.columns.filter((c) => c.isAutoIncrementing).map((c) => ({ table: t.name, column: c.name })));
}

const sameSqliteFile = (a: string, b: string) => !isPostgresUrl(a) && !isPostgresUrl(b) && path.resolve(a) === path.resolve(b);

export async function copyRegistry(
  sourceLocation: string,
  targetLocation: string,
  migrations: Migration[],
  progress?: (table: string, rows: number) => void,
): Promise<CopiedTable[]> {
  if (sourceLocation === targetLocation || sameSqliteFile(sourceLocation, targetLocation)) {
    throw new UserError('the source and the target are the same registry');
  }
  const source = await openRegistry(sourceLocation, migrations);
  const createdFile = !isPostgresUrl(targetLocation) && !fs.existsSync(targetLocation);
  let target: Registry | undefined;
  let done = false;
  try {
    target = (await createOrMigrateRegistry(targetLocation, migrations)).registry;
    const tables = await tablesInDependencyOrder(source);
    // Read before the transaction: on SQLite the transaction holds the one connection.
    const targetTables = new Map((await tablesOf(target)).map((t) => [t.name, t]));
    const copiedTables: TableMetadata[] = [];
    for (const table of tables) {
      const found = targetTables.get(table);
      if (!found) throw new UserError(`${targetLocation} has no table ${table}; are both registries of the same version?`);
      const n = await rowCount(target.db, table);
      if (n > 0) throw new UserError(`${targetLocation} already holds data (${n} row(s) in ${table}); copy only into a new or empty registry`);
      copiedTables.push(found);
    }
    const sequences = sequencesOf(target, copiedTables);
    const copied: CopiedTable[] = [];
    const into = target;
    await into.db.transaction().execute(async (trx) => {
      for (const { name: table, columns: columnList } of copiedTables) {
        const columns = columnList.map((c) => c.name);
        let rows = 0;
        let batch: unknown[][] = [];
        for await (const row of (source.db as Kysely<any>).selectFrom(table).select(columns).stream(COPY_BATCH)) {
          batch.push(columns.map((n) => (row as Record<string, unknown>)[n]));
          if (batch.length === COPY_BATCH) {
            await insertRows(into, trx, table, columns, batch);
            rows += batch.length;
            batch = [];
            progress?.(table, rows);
          }
        }
        await insertRows(into, trx, table, columns, batch);
        rows += batch.length;
        copied.push({ table, rows });
      }
      // PostgreSQL sequences (serial or identity columns) continue after the copied keys.
      for (const { table, column } of sequences) {
        await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce(max(${sql.ref(column)}), 0) + 1, false) from ${sql.table(table)}`.execute(trx);
      }
    });
    // PostgreSQL plans index-only scans (the RNA threshold plans) from statistics: gather them now.
    if (into.dialect === 'postgres') await sql`ANALYZE`.execute(into.db);
    done = true;
    return copied;
  } finally {
    await source.close();
    await target?.close();
    // A target file this copy created and could not fill is not left behind.
    if (!done && createdFile) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(targetLocation + suffix, { force: true });
  }
}
