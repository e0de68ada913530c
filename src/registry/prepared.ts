/**
 * Hot read queries given as SQL text with `?` parameters, run without building the query each time:
 * on SQLite, a statement prepared once per text and kept (Kysely prepares a statement on every call,
 * which cost more than the query itself for a page found by an index in a few microseconds); on
 * PostgreSQL, through Kysely's executor with numbered parameters, so that it takes part in the
 * registry's reconnection like any other query. The caller writes SQL both backends accept.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery } from './kysely.js';
import type { Registry } from './registry.js';

/** A bound on the statements kept: query texts vary with the number of values in IN lists. */
const MAX_STATEMENTS = 256;

export type SelectRunner = <Row>(text: string, params: readonly unknown[]) => Promise<Row[]>;

export function preparedSelects(registry: Registry): SelectRunner {
  const sqlite = registry.sqlite;
  if (sqlite) {
    const statements = new Map<string, BetterSqlite3.Statement>();
    return async <Row>(text: string, params: readonly unknown[]) => {
      let statement = statements.get(text);
      if (!statement) {
        if (statements.size >= MAX_STATEMENTS) statements.clear();
        statement = sqlite.prepare(text);
        statements.set(text, statement);
      }
      return statement.all(...params) as Row[];
    };
  }
  const numbered = new Map<string, string>();
  return async <Row>(text: string, params: readonly unknown[]) => {
    let pgText = numbered.get(text);
    if (pgText === undefined) {
      let n = 0;
      pgText = text.replace(/\?/g, () => `$${++n}`);
      if (numbered.size >= MAX_STATEMENTS) numbered.clear();
      numbered.set(text, pgText);
    }
    const result = await registry.db.executeQuery<Row>(CompiledQuery.raw(pgText, [...params]));
    return result.rows as Row[];
  };
}
