/**
 * `ga4gh repo copy`: a registry holding every kind of record, copied SQLite → PostgreSQL → SQLite (and
 * SQLite → SQLite without PostgreSQL); a server on each copy answers exactly as one on the original,
 * page for page, with the same ids and page tokens. Refusals are one line and change nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { allMigrations } from '../src/areas/index.js';
import { logAnnouncement } from '../src/areas/peers/store.js';
import { copyRegistry, tablesInDependencyOrder } from '../src/registry/copy.js';
import { openRegistry } from '../src/registry/registry.js';
import { backends } from './backends.js';
import { newRegistry, runCli, runCliAsync, startTestServer, tempDir } from './helpers.js';
import { fetchedById, fillRegistry, fixtureFiles, pagesAcross, searches } from './scale-fixture.js';

const postgres = backends.find((b) => b.name === 'postgres')!;
const dir = tempDir();
const files = fixtureFiles(dir);
let original: string;

/** Every page of every search, and every record fetched by id, from a server on `location`. */
async function answersOf(location: string) {
  const server = await startTestServer(location);
  const out: unknown[] = [];
  for (const search of searches) {
    const pages = await pagesAcross([server], search);
    out.push(pages, await fetchedById(server, search, pages));
  }
  await server.close();
  return out;
}

/** Every row of every table, for comparing registries below the API too. */
async function tableContents(location: string) {
  const registry = await openRegistry(location, allMigrations());
  try {
    const out: Record<string, unknown[]> = {};
    for (const table of await tablesInDependencyOrder(registry)) {
      const rows = await (registry.db as any).selectFrom(table).selectAll().execute();
      out[table] = rows.map((r: object) => JSON.stringify(Object.entries(r).sort())).sort();
    }
    return out;
  } finally {
    await registry.close();
  }
}

before(async () => {
  const { location, registry } = await newRegistry(dir, 'original.sqlite');
  await fillRegistry(registry, files, ['https://peer-b.example.org', 'https://peer-a.example.org/ga4gh']);
  await logAnnouncement(registry, { url: 'https://x.example.org', remoteAddress: '192.0.2.1', userAgent: 'test', outcome: 'listed' });
  original = location;
});

describe('repo copy', () => {
  it('orders tables after the tables they reference', async () => {
    const registry = await openRegistry(original, allMigrations());
    const order = await tablesInDependencyOrder(registry);
    await registry.close();
    const before = (a: string, b: string) => assert.ok(order.indexOf(a) < order.indexOf(b), `${a} before ${b}`);
    before('dataset', 'variant_set');
    before('reference_set', 'variant_set');
    before('variant_set', 'call_set');
    before('rna_quantification_set', 'rna_quantification');
    before('rna_quantification', 'rna_expression');
    assert.ok(order.includes('peer') && order.includes('peer_announcement') && order.includes('reference'));
    assert.ok(!order.includes('ga4gh_schema_version'));
  });

  it('SQLite → SQLite: a server on the copy answers as one on the original', async () => {
    const copy = path.join(dir, 'copy.sqlite');
    const r = runCli('repo', 'copy', original, copy);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /copied \d+ row\(s\) in \d+ tables/);
    assert.deepEqual(await tableContents(copy), await tableContents(original));
    assert.deepEqual(await answersOf(copy), await answersOf(original));
  });

  it('SQLite → PostgreSQL → SQLite: the same answers on each, the same rows at the end', { skip: postgres.skip }, async () => {
    const pgLocation = await postgres.newLocation(dir);
    const copied = await copyRegistry(original, pgLocation, allMigrations());
    assert.ok(copied.find((t) => t.table === 'rna_expression')!.rows > 50);
    const back = path.join(dir, 'back.sqlite');
    await copyRegistry(pgLocation, back, allMigrations());
    const expected = await answersOf(original);
    assert.deepEqual(await answersOf(pgLocation), expected);
    assert.deepEqual(await answersOf(back), expected);
    assert.deepEqual(await tableContents(back), await tableContents(original));
  });

  it('refuses a target that holds data, in one line, changing nothing', async () => {
    const target = path.join(dir, 'busy.sqlite');
    const { registry } = await newRegistry(dir, 'busy.sqlite');
    const { addDataset } = await import('../src/areas/datasets/store.js');
    await addDataset(registry, 'mine');
    const r = await runCliAsync('repo', 'copy', original, target);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `ga4gh: ${target} already holds data (1 row(s) in dataset); copy only into a new or empty registry\n`);
    assert.deepEqual((await tableContents(target)).dataset.length, 1);
  });

  it('refuses a missing source or the same registry twice, leaving no file behind', async () => {
    const target = path.join(dir, 'never.sqlite');
    await assert.rejects(copyRegistry(path.join(dir, 'nope.sqlite'), target, allMigrations()), /^UserError: no registry at .*nope\.sqlite/);
    assert.ok(!fs.existsSync(target));
    await assert.rejects(copyRegistry(original, path.join(dir, '.', 'original.sqlite'), allMigrations()), {
      message: 'the source and the target are the same registry',
    });
  });

  it('a copy failing mid-way leaves the target empty, and a new target file uncreated', { skip: postgres.skip }, async () => {
    // A source whose expression table lacks a column the target has: rna_expression is copied late,
    // after rows of several other tables went into the target's transaction.
    const broken = await postgres.newLocation(dir);
    await copyRegistry(original, broken, allMigrations());
    const registry = await openRegistry(broken, allMigrations());
    await registry.db.schema.alterTable('rna_expression').dropColumn('attributes').execute();
    await registry.close();

    const file = path.join(dir, 'failed.sqlite');
    await assert.rejects(copyRegistry(broken, file, allMigrations()), /attributes/);
    assert.ok(!fs.existsSync(file));

    const pgTarget = await postgres.newLocation(dir);
    await assert.rejects(copyRegistry(broken, pgTarget, allMigrations()), /attributes/);
    for (const [table, rows] of Object.entries(await tableContents(pgTarget))) assert.equal(rows.length, 0, table);
    await copyRegistry(original, pgTarget, allMigrations());
    assert.deepEqual(await tableContents(pgTarget), await tableContents(original));
  });
});
