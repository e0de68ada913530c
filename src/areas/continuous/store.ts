/** Continuous sets in the registry: one row per bigWig file, which is read in place. */
import type { Kysely } from 'kysely';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { listSetsOfDatasets } from '../datasets/store.js';
import { UserError } from '../../user-error.js';

export interface ContinuousTables {
  continuous_set: {
    dataset_name: string;
    name: string;
    reference_set_name: string;
    /** The bigWig file: an absolute path or an http(s) URL. */
    path: string;
    source_uri: string | null;
    /** Bytes of the file when it was registered: a file of another size is not served. */
    size: number;
    created_at: string;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends ContinuousTables {}
}

export type ContinuousSetRow = ContinuousTables['continuous_set'];

export const continuousMigrations: Migration[] = [
  {
    version: 31,
    name: 'continuous sets',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      await db.schema
        .createTable('continuous_set')
        .addColumn('dataset_name', key, (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('reference_set_name', 'text', (c) => c.notNull().references('reference_set.name').onDelete('restrict'))
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('source_uri', 'text')
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('continuous_set_pk', ['dataset_name', 'name'])
        .execute();
    },
  },
];

export async function insertContinuousSet(registry: Registry, row: Omit<ContinuousSetRow, 'created_at'>): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    if (await trx.selectFrom('continuous_set').select('name').where('dataset_name', '=', row.dataset_name).where('name', '=', row.name).executeTakeFirst()) {
      throw new UserError(`continuous set '${row.name}' already exists in dataset '${row.dataset_name}'; choose another with --name`);
    }
    await trx.insertInto('continuous_set').values({ ...row, created_at: new Date().toISOString() }).execute();
  });
}

export const getContinuousSet = (registry: Registry, datasetName: string, name: string) =>
  registry.db.selectFrom('continuous_set').selectAll().where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();

/** Sets in (dataset, name) order, optionally of one dataset; `after` is the last [dataset, name] seen. */
export const listContinuousSets = (registry: Registry, datasetName: string | undefined, after: [string, string] | undefined, limit?: number) =>
  listSetsOfDatasets(registry, 'continuous_set', datasetName, after, limit);

export async function removeContinuousSet(registry: Registry, datasetName: string, name: string): Promise<void> {
  const result = await registry.db.deleteFrom('continuous_set').where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new UserError(`no continuous set '${name}' in dataset '${datasetName}'`);
}
