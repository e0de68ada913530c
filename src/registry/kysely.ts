/**
 * Kysely's values (its classes and `sql`), taken from its CommonJS build. The program runs through
 * tsx, whose loader hooks see every ES module import, at about a millisecond a file on a 2-core
 * machine; Kysely's ES module build is 279 files, its CommonJS build loads through Node's `require`
 * without the hooks: 0.3 s sooner at every start of the CLI, of the server and of each page worker.
 * Types still come from 'kysely' itself (`import type`): the same declarations describe both builds.
 */
import { createRequire } from 'node:module';
import type * as KyselyModule from 'kysely';

const kysely = createRequire(import.meta.url)('kysely') as typeof KyselyModule;

export const { Kysely, SqliteDialect, PostgresDialect, CompiledQuery, sql } = kysely;
export type Kysely<DB> = KyselyModule.Kysely<DB>;
export type CompiledQuery<O = unknown> = KyselyModule.CompiledQuery<O>;
