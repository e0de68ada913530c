/**
 * Inserting many rows into one table, the fastest way each backend offers inside a Kysely
 * transaction: on SQLite, one prepared statement run per row on the raw handle (no SQL text built per
 * batch); on PostgreSQL, one `INSERT ... SELECT * FROM unnest(array, array, ...)` per batch (one
 * parameter per column, however many rows). Figures in the README, "RNA quantifications".
 *
 * COPY FROM STDIN would be faster still on PostgreSQL, but it needs the raw client of the transaction,
 * which Kysely does not hand out; unnest keeps the load inside the one transaction a failure rolls back.
 */
import { sql, type Kysely } from 'kysely';
import type { Registry } from './registry.js';

export interface BulkColumn {
  name: string;
  /** The PostgreSQL element type of the column's array parameter: text, int4, int8, float8, ... */
  pgType: string;
}

/** Rows per unnest statement on PostgreSQL: bigger batches gain little and cost memory. */
export const PG_BULK_BATCH = 20_000;

/**
 * Inserts `rows` (each an array of values in `columns` order) through `trx`, a transaction of
 * `registry`. On SQLite the statements run on the same connection, so they are part of that transaction.
 */
export async function insertRows(
  registry: Registry,
  trx: Kysely<any>,
  table: string,
  columns: readonly BulkColumn[],
  rows: readonly unknown[][],
): Promise<void> {
  if (rows.length === 0) return;
  if (registry.sqlite) {
    const quoted = columns.map((c) => `"${c.name.replaceAll('"', '""')}"`).join(', ');
    const statement = registry.sqlite.prepare(
      `INSERT INTO "${table.replaceAll('"', '""')}" (${quoted}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    for (const row of rows) statement.run(row);
    return;
  }
  for (let start = 0; start < rows.length; start += PG_BULK_BATCH) {
    const batch = rows.slice(start, start + PG_BULK_BATCH);
    const arrays = columns.map((c, i) => sql`${batch.map((row) => row[i])}::${sql.raw(pgArrayType(c.pgType))}`);
    await sql`INSERT INTO ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c.name)))}) SELECT * FROM unnest(${sql.join(arrays)})`.execute(trx);
  }
}

function pgArrayType(pgType: string): string {
  if (!/^[a-z0-9_ ]+$/i.test(pgType)) throw new Error(`unexpected column type ${pgType}`);
  return `${pgType}[]`;
}
