/**
 * Read group sets in the registry: one row per alignment file (BAM or CRAM), with what its header and
 * index say. The files themselves stay where they are and are read by range on each request.
 */
import type { Kysely } from 'kysely';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';

export interface ReadTables {
  read_group_set: {
    dataset_name: string;
    name: string;
    reference_set_name: string;
    path: string;
    index_path: string;
    /** 'bai', 'csi' (BAM) or 'crai' (CRAM). */
    index_kind: string;
    /** The name given with --biosample-id, a biosample of the same dataset: every read group's, whatever its SM tag. */
    biosample_name: string | null;
    /** JSON array of the @RG lines' tags, in header order (one entry with ID "default" when it has none). */
    read_groups: string;
    /** JSON array of the @PG lines' tags. */
    programs: string;
    /** JSON array of the file's reference names, by their index in the file. */
    reference_names: string;
    /** From the index, when it counts reads (BAM indexes do; CRAM indexes do not). */
    aligned_count: number | null;
    unaligned_count: number | null;
    created_at: string;
  };
  /**
   * Another encoding of a read group set's records (`add-readgroupset --alternate`): a CRAM beside a
   * BAM, or a BAM beside a CRAM, with the same header references. htsget serves each format from its
   * own file; the 0.6.0a10 searches read the set's own file.
   */
  read_group_set_alternate: {
    dataset_name: string;
    read_group_set_name: string;
    /** 'BAM' or 'CRAM': never the format of the set's own file. */
    format: string;
    path: string;
    index_path: string;
    /** 'bai', 'csi' (BAM) or 'crai' (CRAM). */
    index_kind: string;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends ReadTables {}
}

export const readMigrations: Migration[] = [
  {
    version: 20,
    name: 'read group sets',
    async up(db: Kysely<any>, dialect) {
      await db.schema
        .createTable('read_group_set')
        .addColumn('dataset_name', sortableText(dialect), (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', sortableText(dialect), (c) => c.notNull())
        .addColumn('reference_set_name', 'text', (c) => c.notNull().references('reference_set.name').onDelete('restrict'))
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('index_path', 'text', (c) => c.notNull())
        .addColumn('index_kind', 'text', (c) => c.notNull())
        .addColumn('biosample_name', 'text')
        .addColumn('read_groups', 'text', (c) => c.notNull())
        .addColumn('programs', 'text', (c) => c.notNull())
        .addColumn('reference_names', 'text', (c) => c.notNull())
        .addColumn('aligned_count', 'bigint')
        .addColumn('unaligned_count', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('read_group_set_pk', ['dataset_name', 'name'])
        .execute();
      await db.schema.createIndex('read_group_set_by_reference_set').on('read_group_set').column('reference_set_name').execute();
    },
  },
  {
    version: 21,
    name: 'read group set alternates',
    async up(db: Kysely<any>, dialect) {
      await db.schema
        .createTable('read_group_set_alternate')
        .addColumn('dataset_name', sortableText(dialect), (c) => c.notNull())
        .addColumn('read_group_set_name', sortableText(dialect), (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('index_path', 'text', (c) => c.notNull())
        .addColumn('index_kind', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('read_group_set_alternate_pk', ['dataset_name', 'read_group_set_name', 'format'])
        .addForeignKeyConstraint('read_group_set_alternate_set', ['dataset_name', 'read_group_set_name'], 'read_group_set', ['dataset_name', 'name'], (fk) =>
          fk.onDelete('cascade'),
        )
        .execute();
    },
  },
];

export type ReadGroupSetRow = ReadTables['read_group_set'];
export type ReadGroupSetAlternateRow = ReadTables['read_group_set_alternate'];

/** The format of a read group set's own file. */
export const formatOfRow = (row: Pick<ReadGroupSetRow, 'index_kind'>): 'BAM' | 'CRAM' => (row.index_kind === 'crai' ? 'CRAM' : 'BAM');

/** Records a read group set, with its alternate encoding when it has one, in one transaction. */
export async function insertReadGroupSet(
  registry: Registry,
  row: Omit<ReadGroupSetRow, 'created_at'>,
  alternate?: Omit<ReadGroupSetAlternateRow, 'dataset_name' | 'read_group_set_name'>,
): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('read_group_set')
      .select('name')
      .where('dataset_name', '=', row.dataset_name)
      .where('name', '=', row.name)
      .executeTakeFirst();
    if (existing) throw new UserError(`read group set '${row.name}' already exists in dataset '${row.dataset_name}'; choose another with --name`);
    await trx.insertInto('read_group_set').values({ ...row, created_at: new Date().toISOString() }).execute();
    if (alternate) await trx.insertInto('read_group_set_alternate').values({ ...alternate, dataset_name: row.dataset_name, read_group_set_name: row.name }).execute();
  });
}

/** The alternate encodings of one read group set (at most one a format), or of every set. */
export async function listReadGroupSetAlternates(registry: Registry, set?: { datasetName: string; name: string }): Promise<ReadGroupSetAlternateRow[]> {
  let q = registry.db.selectFrom('read_group_set_alternate').selectAll().orderBy('dataset_name').orderBy('read_group_set_name').orderBy('format');
  if (set) q = q.where('dataset_name', '=', set.datasetName).where('read_group_set_name', '=', set.name);
  return q.execute();
}

export async function getReadGroupSetRow(registry: Registry, datasetName: string, name: string): Promise<ReadGroupSetRow | undefined> {
  return registry.db
    .selectFrom('read_group_set')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();
}

export interface ReadGroupSetFilter {
  datasetName?: string;
  name?: string;
}

/** Read group sets by (dataset, name); `after` is the name of the last one seen within the dataset. */
export async function listReadGroupSets(
  registry: Registry,
  filter: ReadGroupSetFilter,
  after: string | undefined,
  limit?: number,
): Promise<ReadGroupSetRow[]> {
  let q = registry.db.selectFrom('read_group_set').selectAll().orderBy('dataset_name').orderBy('name');
  if (filter.datasetName !== undefined) q = q.where('dataset_name', '=', filter.datasetName);
  if (filter.name !== undefined) q = q.where('name', '=', filter.name);
  if (after !== undefined) q = q.where('name', '>', after);
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

export async function removeReadGroupSet(registry: Registry, datasetName: string, name: string): Promise<void> {
  const result = await registry.db
    .deleteFrom('read_group_set')
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) {
    throw new UserError(`no read group set '${name}' in dataset '${datasetName}' of ${registry.location}`);
  }
}
