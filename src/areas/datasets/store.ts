/** Datasets in the registry: the table, its migration and its queries. */
import type { ColumnType, Kysely, Selectable } from 'kysely';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { AttributesRecord } from '../../protocol/common.js';
import type { Registry } from '../../registry/registry.js';
import type { Database } from '../../registry/schema.js';
import { UserError } from '../../user-error.js';

export interface DatasetTables {
  dataset: {
    name: string;
    description: string | null;
    /** JSON of the Attributes given with --attributes, or null. */
    attributes: string | null;
    /** The most a Beacon answers of it to anyone: 'boolean', 'count' or 'record' (--beacon-granularity); 'boolean' when not given. */
    beacon_granularity: ColumnType<BeaconGranularity, BeaconGranularity | undefined, BeaconGranularity>;
    created_at: string;
  };
}

/** What a Beacon may say of a dataset, least first: whether a record exists, how many, the records. */
export const BEACON_GRANULARITIES = ['boolean', 'count', 'record'] as const;
export type BeaconGranularity = (typeof BEACON_GRANULARITIES)[number];
export const DEFAULT_BEACON_GRANULARITY: BeaconGranularity = 'boolean';

export const isBeaconGranularity = (value: unknown): value is BeaconGranularity => (BEACON_GRANULARITIES as readonly unknown[]).includes(value);

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends DatasetTables {}
}

export const datasetMigrations: Migration[] = [
  {
    version: 1,
    name: 'datasets',
    async up(db: Kysely<any>, dialect) {
      await db.schema
        .createTable('dataset')
        .addColumn('name', sortableText(dialect), (c) => c.primaryKey())
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 41,
    name: 'dataset attributes',
    async up(db: Kysely<any>) {
      await db.schema.alterTable('dataset').addColumn('attributes', 'text').execute();
    },
  },
  {
    version: 60,
    name: 'dataset beacon granularity',
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('dataset')
        .addColumn('beacon_granularity', 'text', (c) => c.notNull().defaultTo(DEFAULT_BEACON_GRANULARITY))
        .execute();
    },
  },
];

export type DatasetRow = Selectable<DatasetTables['dataset']>;

function checkedGranularity(value: string): BeaconGranularity {
  if (!isBeaconGranularity(value)) throw new UserError(`a Beacon granularity is one of ${BEACON_GRANULARITIES.join(', ')}, not '${value}'`);
  return value;
}

export async function addDataset(
  registry: Registry,
  name: string,
  description?: string,
  attributes?: AttributesRecord,
  beaconGranularity: string = DEFAULT_BEACON_GRANULARITY,
): Promise<void> {
  if (!name.trim()) throw new UserError('a dataset name must not be empty');
  const granularity = checkedGranularity(beaconGranularity);
  await registry.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('dataset').select('name').where('name', '=', name).executeTakeFirst();
    if (existing) throw new UserError(`dataset '${name}' already exists in ${registry.location}`);
    await trx
      .insertInto('dataset')
      .values({
        name,
        description: description ?? null,
        attributes: attributes ? JSON.stringify(attributes) : null,
        beacon_granularity: granularity,
        created_at: new Date().toISOString(),
      })
      .execute();
  });
}

export async function getDataset(registry: Registry, name: string): Promise<DatasetRow | undefined> {
  return registry.db.selectFrom('dataset').selectAll().where('name', '=', name).executeTakeFirst();
}

/** The dataset, or a UserError naming what exists: for loaders that attach things to a dataset. */
export async function requireDataset(registry: Registry, name: string): Promise<DatasetRow> {
  const row = await getDataset(registry, name);
  if (!row) throw new UserError(`no dataset '${name}' in ${registry.location}; add it with: ga4gh repo add-dataset`);
  return row;
}

export async function listDatasets(registry: Registry, after: string | undefined, limit: number): Promise<DatasetRow[]> {
  let q = registry.db.selectFrom('dataset').selectAll().orderBy('name').limit(limit);
  if (after !== undefined) q = q.where('name', '>', after);
  return q.execute();
}

/** Changes what a Beacon may answer of a dataset (`repo set-beacon-granularity`). */
export async function setBeaconGranularity(registry: Registry, name: string, beaconGranularity: string): Promise<void> {
  const granularity = checkedGranularity(beaconGranularity);
  const result = await registry.db.updateTable('dataset').set({ beacon_granularity: granularity }).where('name', '=', name).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new UserError(`no dataset '${name}' in ${registry.location}`);
}

/** The dataset `remove-dataset` names, or a UserError when there is none. */
export async function requireDatasetToRemove(registry: Registry, name: string): Promise<DatasetRow> {
  const row = await getDataset(registry, name);
  if (!row) throw new UserError(`no dataset '${name}' in ${registry.location}`);
  return row;
}

/** Removes a dataset. Tables that hang off a dataset reference it with ON DELETE CASCADE. */
export async function removeDataset(registry: Registry, name: string): Promise<void> {
  const result = await registry.db.deleteFrom('dataset').where('name', '=', name).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new UserError(`no dataset '${name}' in ${registry.location}`);
}

/** Tables of sets that belong to a dataset, named within it: keyed by (dataset_name, name). */
export type SetOfDatasetTable = {
  [T in keyof Database]: Database[T] extends { dataset_name: string; name: string } ? T : never;
}[keyof Database];

/**
 * Rows of a set table in (dataset, name) order, optionally of one dataset; `after` is the last
 * [dataset, name] seen (a keyset page). Every area whose sets hang off a dataset lists them so.
 */
export async function listSetsOfDatasets<T extends SetOfDatasetTable>(
  registry: Registry,
  table: T,
  datasetName: string | undefined,
  after: [string, string] | undefined,
  limit?: number,
): Promise<Array<Selectable<Database[T]>>> {
  let q = (registry.db as Kysely<any>).selectFrom(table).selectAll().orderBy('dataset_name').orderBy('name');
  if (datasetName !== undefined) q = q.where('dataset_name', '=', datasetName);
  if (after !== undefined) {
    const [dataset, name] = after;
    q = q.where((eb) => eb.or([eb('dataset_name', '>', dataset), eb.and([eb('dataset_name', '=', dataset), eb('name', '>', name)])]));
  }
  if (limit !== undefined) q = q.limit(limit);
  return (await q.execute()) as Array<Selectable<Database[T]>>;
}
