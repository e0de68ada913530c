/**
 * Individuals and biosamples in the registry. Each row keeps the record's fields as the JSON file gave
 * them (`fields`, camelCase); the id and dataset come from where it is registered. A biosample names its
 * individual by name, inside the same dataset.
 */
import type { Kysely } from 'kysely';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';

export interface BiometadataTables {
  individual: {
    dataset_name: string;
    name: string;
    /** JSON of BioFields. */
    fields: string;
    created_at: string;
  };
  biosample: {
    dataset_name: string;
    name: string;
    individual_name: string | null;
    /** JSON of BioFields. */
    fields: string;
    created_at: string;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends BiometadataTables {}
}

export const biometadataMigrations: Migration[] = [
  {
    version: 40,
    name: 'individuals and biosamples',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      await db.schema
        .createTable('individual')
        .addColumn('dataset_name', key, (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('fields', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('individual_pk', ['dataset_name', 'name'])
        .execute();
      // The individual link is checked at the end of each statement (no ON DELETE action), so removing a
      // dataset removes its biosamples and individuals together, while removing a used individual fails.
      await db.schema
        .createTable('biosample')
        .addColumn('dataset_name', key, (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('individual_name', key)
        .addColumn('fields', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('biosample_pk', ['dataset_name', 'name'])
        .addForeignKeyConstraint('biosample_individual_fk', ['dataset_name', 'individual_name'], 'individual', ['dataset_name', 'name'])
        .execute();
      await db.schema.createIndex('biosample_by_individual').on('biosample').columns(['dataset_name', 'individual_name']).execute();
    },
  },
];

export type IndividualRow = BiometadataTables['individual'];
export type BiosampleRow = BiometadataTables['biosample'];
export type BioTable = 'individual' | 'biosample';

const label = (table: BioTable) => (table === 'individual' ? 'individual' : 'biosample');

export async function insertIndividual(registry: Registry, row: Omit<IndividualRow, 'created_at'>): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    if (await trx.selectFrom('individual').select('name').where('dataset_name', '=', row.dataset_name).where('name', '=', row.name).executeTakeFirst()) {
      throw new UserError(`individual '${row.name}' already exists in dataset '${row.dataset_name}'`);
    }
    await trx.insertInto('individual').values({ ...row, created_at: new Date().toISOString() }).execute();
  });
}

export async function insertBiosample(registry: Registry, row: Omit<BiosampleRow, 'created_at'>): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    if (await trx.selectFrom('biosample').select('name').where('dataset_name', '=', row.dataset_name).where('name', '=', row.name).executeTakeFirst()) {
      throw new UserError(`biosample '${row.name}' already exists in dataset '${row.dataset_name}'`);
    }
    if (
      row.individual_name !== null &&
      !(await trx.selectFrom('individual').select('name').where('dataset_name', '=', row.dataset_name).where('name', '=', row.individual_name).executeTakeFirst())
    ) {
      throw new UserError(`field 'individualId' names individual '${row.individual_name}', which is not in dataset '${row.dataset_name}'; add it first with: ga4gh repo add-individual`);
    }
    await trx.insertInto('biosample').values({ ...row, created_at: new Date().toISOString() }).execute();
  });
}

export async function getIndividualRow(registry: Registry, datasetName: string, name: string): Promise<IndividualRow | undefined> {
  return registry.db.selectFrom('individual').selectAll().where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();
}

export async function getBiosampleRow(registry: Registry, datasetName: string, name: string): Promise<BiosampleRow | undefined> {
  return registry.db.selectFrom('biosample').selectAll().where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();
}

export interface BioFilter {
  datasetName?: string;
  name?: string;
  /** Biosamples only: of this individual (in the filter's dataset). */
  individualName?: string;
}

/** Rows in (dataset, name) order; `after` is the last [dataset, name] seen. */
export async function listIndividuals(registry: Registry, filter: BioFilter, after?: [string, string], limit?: number): Promise<IndividualRow[]> {
  let q = registry.db.selectFrom('individual').selectAll().orderBy('dataset_name').orderBy('name');
  if (filter.datasetName !== undefined) q = q.where('dataset_name', '=', filter.datasetName);
  if (filter.name !== undefined) q = q.where('name', '=', filter.name);
  if (after !== undefined) {
    const [dataset, name] = after;
    q = q.where((eb) => eb.or([eb('dataset_name', '>', dataset), eb.and([eb('dataset_name', '=', dataset), eb('name', '>', name)])]));
  }
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

export async function listBiosamples(registry: Registry, filter: BioFilter, after?: [string, string], limit?: number): Promise<BiosampleRow[]> {
  let q = registry.db.selectFrom('biosample').selectAll().orderBy('dataset_name').orderBy('name');
  if (filter.datasetName !== undefined) q = q.where('dataset_name', '=', filter.datasetName);
  if (filter.name !== undefined) q = q.where('name', '=', filter.name);
  if (filter.individualName !== undefined) q = q.where('individual_name', '=', filter.individualName);
  if (after !== undefined) {
    const [dataset, name] = after;
    q = q.where((eb) => eb.or([eb('dataset_name', '>', dataset), eb.and([eb('dataset_name', '=', dataset), eb('name', '>', name)])]));
  }
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

/** Of `names`, those that name a biosample of the dataset (call sets are linked to biosamples by name). */
export async function biosampleNamesAmong(registry: Registry, datasetName: string, names: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < names.length; i += 500) {
    const rows = await registry.db
      .selectFrom('biosample')
      .select('name')
      .where('dataset_name', '=', datasetName)
      .where('name', 'in', names.slice(i, i + 500))
      .execute();
    for (const r of rows) found.add(r.name);
  }
  return found;
}

/** A biosample name given on the command line (`--biosample-id`), checked to exist in the dataset. */
export async function requireBiosample(registry: Registry, datasetName: string, name: string): Promise<void> {
  if (!(await getBiosampleRow(registry, datasetName, name))) {
    throw new UserError(`--biosample-id: no biosample '${name}' in dataset '${datasetName}'; add it first with: ga4gh repo add-biosample`);
  }
}

export async function removeIndividual(registry: Registry, datasetName: string, name: string): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    const users = await trx
      .selectFrom('biosample')
      .select('name')
      .where('dataset_name', '=', datasetName)
      .where('individual_name', '=', name)
      .orderBy('name')
      .execute();
    if (users.length) {
      throw new UserError(`individual '${name}' is the individual of biosample(s) ${users.map((u) => `'${u.name}'`).join(', ')}; remove those first`);
    }
    await removeRow(trx, registry, 'individual', datasetName, name);
  });
}

export async function removeBiosample(registry: Registry, datasetName: string, name: string): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    // RNA quantifications name their biosample; removing it would leave them pointing nowhere.
    const users = await trx
      .selectFrom('rna_quantification')
      .select(['set_name', 'name'])
      .where('dataset_name', '=', datasetName)
      .where('biosample_id', '=', name)
      .orderBy('set_name')
      .orderBy('name')
      .execute();
    if (users.length) {
      throw new UserError(
        `biosample '${name}' is the biosample of RNA quantification(s) ${users.map((u) => `'${u.set_name}/${u.name}'`).join(', ')}; remove those first`,
      );
    }
    const readGroupSets = await trx
      .selectFrom('read_group_set')
      .select('name')
      .where('dataset_name', '=', datasetName)
      .where('biosample_name', '=', name)
      .orderBy('name')
      .execute();
    if (readGroupSets.length) {
      throw new UserError(
        `biosample '${name}' is the biosample of read group set(s) ${readGroupSets.map((u) => `'${u.name}'`).join(', ')}; remove those first`,
      );
    }
    await removeRow(trx, registry, 'biosample', datasetName, name);
  });
}

async function removeRow(trx: Kysely<any>, registry: Registry, table: BioTable, datasetName: string, name: string): Promise<void> {
  const result = await trx.deleteFrom(table).where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new UserError(`no ${label(table)} '${name}' in dataset '${datasetName}' of ${registry.location}`);
}
