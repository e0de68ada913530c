/** The registry's bulk insert (prepared statements on SQLite, COPY on PostgreSQL) keeps every value as given. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { insertRows } from '../src/registry/bulk.js';
import { backends } from './backends.js';
import { newRegistry, tempDir } from './helpers.js';

const dir = tempDir();

// Text COPY reserves tab, newline, carriage return and backslash, and spells null \N.
const rows: unknown[][] = [
  ['plain', 1.5, 1],
  ['tab\there', -0.25, 2],
  ['new\nline and \r return', 1e-7, 3],
  ['back\\slash and \\N and \\t', 0, 4],
  ['\\N', null, 5],
  [null, 123456.789, 6],
  ['ünïcødé ✓', 3, 7],
];

for (const backend of backends) {
  describe(`bulk insert on ${backend.name}`, { skip: backend.skip }, () => {
    it('stores every value as given, in one transaction that a failure rolls back', async () => {
      const { registry } = await newRegistry(await backend.newLocation(dir));
      const db = registry.db as any;
      await db.schema.createTable('bulk_probe').addColumn('a', 'text').addColumn('b', 'double precision').addColumn('c', 'integer').execute();
      await db.transaction().execute((trx: any) => insertRows(registry, trx, 'bulk_probe', ['a', 'b', 'c'], rows));
      const back = await db.selectFrom('bulk_probe').select(['a', 'b', 'c']).orderBy('c').execute();
      assert.deepEqual(back.map((r: any) => [r.a, r.b, Number(r.c)]), rows);

      await assert.rejects(
        db.transaction().execute(async (trx: any) => {
          await insertRows(registry, trx, 'bulk_probe', ['a', 'b', 'c'], [['kept?', 1, 100]]);
          throw new Error('load failed after the insert');
        }),
        /load failed/,
      );
      assert.equal((await db.selectFrom('bulk_probe').select('a').where('c', '=', 100).execute()).length, 0);
    });
  });
}
