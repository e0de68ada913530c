/**
 * Inserting many rows into one table, the fastest way each backend offers inside a Kysely
 * transaction: on SQLite, one prepared statement run per row on the raw handle (no SQL text built per
 * batch); on PostgreSQL, `COPY ... FROM STDIN` streamed through the transaction's own connection
 * (found by its backend process id), so a failure still rolls the whole load back. A figure: F1, a
 * GFF3 load, in docs/performance.md, "The figures".
 */
import { once } from 'node:events';
import type { Kysely } from 'kysely';
import { sql } from './kysely.js';
import { from as copyFrom } from 'pg-copy-streams';
import type { Registry } from './registry.js';

/** Text handed to the COPY stream at a time. */
const COPY_CHUNK = 256 * 1024;

/**
 * Inserts `rows` (each an array of values in `columns` order) through `trx`, a transaction of
 * `registry`. On SQLite the statements run on the same connection, so they are part of that transaction.
 */
export async function insertRows(
  registry: Registry,
  trx: Kysely<any>,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
): Promise<void> {
  if (rows.length === 0) return;
  const target = `${quoted(table)} (${columns.map(quoted).join(', ')})`;
  if (registry.sqlite) {
    const statement = registry.sqlite.prepare(`INSERT INTO ${target} VALUES (${columns.map(() => '?').join(', ')})`);
    for (const row of rows) statement.run(row);
    return;
  }
  const { rows: [backend] } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
  const client = registry.pgClientOf?.(backend.pid);
  if (!client) throw new Error('bulk insert: the connection of this transaction is not known');
  const stream = client.query(copyFrom(`COPY ${target} FROM STDIN`));
  const finished = once(stream, 'finish');
  finished.catch(() => {}); // awaited below; a failure while waiting for 'drain' must not leave it unhandled
  let text = '';
  for (const row of rows) {
    text += row.map(copyText).join('\t') + '\n';
    if (text.length >= COPY_CHUNK) {
      if (!stream.write(text)) await once(stream, 'drain');
      text = '';
    }
  }
  stream.end(text);
  await finished;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A value in COPY's text format: \N for null, backslash escapes for the characters it reserves. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'string' ? value : typeof value === 'boolean' ? (value ? 't' : 'f') : String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : text;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
