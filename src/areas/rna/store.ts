/**
 * RNA quantification sets, quantifications and their expression levels in the registry: tables,
 * migration and queries.
 *
 * Expression levels are the one big table of the registry (a quantification holds up to millions of
 * rows), so each row names its quantification by an integer key rather than three text names, and the
 * searches are shaped for two indexes: (quantification, name) for name order, keyset pages and the
 * names filter; (quantification, expression) for thresholds that only a few rows pass.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { insertRows, type BulkColumn } from '../../registry/bulk.js';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import type { Database } from '../../registry/schema.js';
import { UserError } from '../../user-error.js';
import type { ExpressionRow, OptionalField } from './formats.js';

export interface RnaTables {
  rna_quantification_set: {
    dataset_name: string;
    name: string;
    description: string | null;
    created_at: string;
  };
  rna_quantification: {
    /** Surrogate key the expression rows refer to. */
    id: number;
    dataset_name: string;
    set_name: string;
    name: string;
    description: string | null;
    biosample_id: string | null;
    format: string;
    units: string;
    /** JSON array of the optional ExpressionLevel fields the source has (OptionalField). */
    fields: string;
    /** JSON arrays. */
    programs: string;
    feature_set_ids: string;
    read_group_ids: string;
    row_count: number;
    source: string;
    created_at: string;
  };
  rna_expression: {
    quantification_id: number;
    name: string;
    expression: number;
    raw_read_count: number | null;
    conf_interval_low: number | null;
    conf_interval_high: number | null;
    /** JSON object of text columns kept from the source, or null. */
    attributes: string | null;
  };
}

export const rnaMigrations: Migration[] = [
  {
    version: 4,
    name: 'rna quantifications',
    async up(db: Kysely<any>, dialect) {
      // Names are ordered and paged by: byte order on both backends.
      const key = sortableText(dialect);
      await db.schema
        .createTable('rna_quantification_set')
        .addColumn('dataset_name', key, (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('rna_quantification_set_pk', ['dataset_name', 'name'])
        .execute();
      await db.schema
        .createTable('rna_quantification')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('dataset_name', key, (c) => c.notNull())
        .addColumn('set_name', key, (c) => c.notNull())
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('biosample_id', 'text')
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('units', 'text', (c) => c.notNull())
        .addColumn('fields', 'text', (c) => c.notNull())
        .addColumn('programs', 'text', (c) => c.notNull())
        .addColumn('feature_set_ids', 'text', (c) => c.notNull())
        .addColumn('read_group_ids', 'text', (c) => c.notNull())
        .addColumn('row_count', 'bigint', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('rna_quantification_name_unique', ['dataset_name', 'set_name', 'name'])
        .addForeignKeyConstraint(
          'rna_quantification_set_fk',
          ['dataset_name', 'set_name'],
          'rna_quantification_set',
          ['dataset_name', 'name'],
          (c) => c.onDelete('cascade'),
        )
        .execute();
      await db.schema
        .createTable('rna_expression')
        .addColumn('quantification_id', 'integer', (c) => c.notNull().references('rna_quantification.id').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('expression', 'double precision', (c) => c.notNull())
        .addColumn('raw_read_count', 'double precision')
        .addColumn('conf_interval_low', 'double precision')
        .addColumn('conf_interval_high', 'double precision')
        .addColumn('attributes', 'text')
        .addPrimaryKeyConstraint('rna_expression_pk', ['quantification_id', 'name'])
        .execute();
      // Only the rows above 0 are indexed by value: zero rows are often half of a quantification, and
      // thresholds below 0 pass nearly every row, so the name index serves those.
      await db.schema
        .createIndex('rna_expression_by_value')
        .on('rna_expression')
        .columns(['quantification_id', 'expression'])
        .where(sql.ref('expression'), '>', sql.lit(0))
        .execute();
    },
  },
];

export type QuantificationSetRow = RnaTables['rna_quantification_set'];
export type QuantificationRow = RnaTables['rna_quantification'];
export type ExpressionRowStored = RnaTables['rna_expression'];

// ---------------------------------------------------------------------------------------------------
// Quantification sets

export async function addQuantificationSet(registry: Registry, datasetName: string, name: string, description?: string): Promise<void> {
  if (!name.trim()) throw new UserError('an RNA quantification set name must not be empty');
  await registry.db.transaction().execute(async (trx) => {
    if (await getSetIn(trx, datasetName, name)) {
      throw new UserError(`RNA quantification set '${name}' already exists in dataset '${datasetName}'`);
    }
    await trx
      .insertInto('rna_quantification_set')
      .values({ dataset_name: datasetName, name, description: description ?? null, created_at: new Date().toISOString() })
      .execute();
  });
}

const getSetIn = (db: Kysely<Database>, datasetName: string, name: string) =>
  db.selectFrom('rna_quantification_set').selectAll().where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();

export const getQuantificationSet = (registry: Registry, datasetName: string, name: string) => getSetIn(registry.db, datasetName, name);

/** Sets in (dataset, name) order, optionally of one dataset; `after` is the last [dataset, name] seen. */
export async function listQuantificationSets(
  registry: Registry,
  datasetName: string | undefined,
  after: [string, string] | undefined,
  limit?: number,
): Promise<QuantificationSetRow[]> {
  let q = registry.db.selectFrom('rna_quantification_set').selectAll().orderBy('dataset_name').orderBy('name');
  if (datasetName !== undefined) q = q.where('dataset_name', '=', datasetName);
  if (after !== undefined) {
    const [dataset, name] = after;
    q = q.where((eb) => eb.or([eb('dataset_name', '>', dataset), eb.and([eb('dataset_name', '=', dataset), eb('name', '>', name)])]));
  }
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

export async function removeQuantificationSet(registry: Registry, datasetName: string, name: string): Promise<void> {
  const result = await registry.db
    .deleteFrom('rna_quantification_set')
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new UserError(`no RNA quantification set '${name}' in dataset '${datasetName}'`);
}

// ---------------------------------------------------------------------------------------------------
// Quantifications

export type NewQuantification = Omit<QuantificationRow, 'id' | 'row_count' | 'created_at'>;

/**
 * Records a quantification and its expression rows in one transaction, so a failure leaves the
 * registry as it was. `rows` should come sorted by name: the (quantification, name) key then grows at
 * its end instead of at random places, which makes big loads several times faster.
 */
export async function insertQuantification(
  registry: Registry,
  quantification: NewQuantification,
  rows: readonly ExpressionRow[],
  progress?: (rowsStored: number) => void,
): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    const { dataset_name, set_name, name } = quantification;
    if (!(await getSetIn(trx, dataset_name, set_name))) {
      throw new UserError(`no RNA quantification set '${set_name}' in dataset '${dataset_name}'; add it with: ga4gh repo add-rnaquantificationset`);
    }
    if (await getQuantificationIn(trx, dataset_name, set_name, name)) {
      throw new UserError(`RNA quantification '${name}' already exists in set '${set_name}' of dataset '${dataset_name}'; choose another with --name`);
    }
    // Keys are assigned here rather than by the database, the same way on SQLite and PostgreSQL.
    const last = await trx.selectFrom('rna_quantification').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
    const id = Number(last?.id ?? 0) + 1;
    await trx
      .insertInto('rna_quantification')
      .values({ ...quantification, id, row_count: rows.length, created_at: new Date().toISOString() })
      .execute();
    await insertExpressionRows(registry, trx, id, rows, progress);
  });
}

/** The columns of an expression row, in the order insertExpressionRows hands them over. */
const EXPRESSION_COLUMNS: BulkColumn[] = [
  { name: 'quantification_id', pgType: 'int4' },
  { name: 'name', pgType: 'text' },
  { name: 'expression', pgType: 'float8' },
  { name: 'raw_read_count', pgType: 'float8' },
  { name: 'conf_interval_low', pgType: 'float8' },
  { name: 'conf_interval_high', pgType: 'float8' },
  { name: 'attributes', pgType: 'text' },
];

/** Rows handed to the bulk insert at a time (progress is reported between them). */
export const INSERT_BATCH = 20_000;

/**
 * The bulk path of a load: the registry's bulk insert (prepared statement on SQLite, unnest arrays on
 * PostgreSQL; src/registry/bulk.ts), in batches so that progress shows and memory stays bounded.
 */
export async function insertExpressionRows(
  registry: Registry,
  trx: Transaction<Database>,
  quantificationId: number,
  rows: readonly ExpressionRow[],
  progress?: (rowsStored: number) => void,
): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    progress?.(i);
    const batch = rows
      .slice(i, i + INSERT_BATCH)
      .map((r) => [quantificationId, r.name, r.expression, r.rawReadCount, r.confIntervalLow, r.confIntervalHigh, r.attributes]);
    await insertRows(registry, trx, 'rna_expression', EXPRESSION_COLUMNS, batch);
  }
}

const getQuantificationIn = (db: Kysely<Database>, datasetName: string, setName: string, name: string) =>
  db
    .selectFrom('rna_quantification')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('set_name', '=', setName)
    .where('name', '=', name)
    .executeTakeFirst();

export const getQuantification = (registry: Registry, datasetName: string, setName: string, name: string) =>
  getQuantificationIn(registry.db, datasetName, setName, name);

/** Quantifications of one set by name; `after` is the last name seen. */
export async function listQuantifications(
  registry: Registry,
  filter: { datasetName: string; setName: string; biosampleId?: string },
  after: string | undefined,
  limit?: number,
): Promise<QuantificationRow[]> {
  let q = registry.db
    .selectFrom('rna_quantification')
    .selectAll()
    .where('dataset_name', '=', filter.datasetName)
    .where('set_name', '=', filter.setName)
    .orderBy('name');
  if (filter.biosampleId !== undefined) q = q.where('biosample_id', '=', filter.biosampleId);
  if (after !== undefined) q = q.where('name', '>', after);
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

export async function listAllQuantifications(registry: Registry): Promise<QuantificationRow[]> {
  return registry.db.selectFrom('rna_quantification').selectAll().orderBy('dataset_name').orderBy('set_name').orderBy('name').execute();
}

export async function removeQuantification(registry: Registry, datasetName: string, setName: string, name: string): Promise<void> {
  const result = await registry.db
    .deleteFrom('rna_quantification')
    .where('dataset_name', '=', datasetName)
    .where('set_name', '=', setName)
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) {
    throw new UserError(`no RNA quantification '${name}' in set '${setName}' of dataset '${datasetName}'`);
  }
}

export const fieldsOf = (row: QuantificationRow) => JSON.parse(row.fields) as OptionalField[];

// ---------------------------------------------------------------------------------------------------
// Expression levels

export async function getExpressionRow(registry: Registry, quantificationId: number, name: string): Promise<ExpressionRowStored | undefined> {
  return registry.db
    .selectFrom('rna_expression')
    .selectAll()
    .where('quantification_id', '=', quantificationId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export interface ExpressionQuery {
  quantificationId: number;
  /** Only rows with one of these names (exact); undefined or empty: no name filter. */
  names?: string[];
  /** Only rows whose expression is strictly greater; undefined: no threshold. */
  above?: number;
  /** The last name of the previous page. */
  after?: string;
  limit: number;
}

/**
 * How many rows a name-order scan reads before deciding that the threshold is selective, and how many
 * rows above the threshold the expression index may hand over to be sorted by name. Measured on a
 * 1,000,000-row quantification, every threshold stays under 5 ms a page (numbers in docs/rna.md).
 */
export const NAME_SCAN_BUDGET = 2000;
export const SELECTIVE_THRESHOLD_ROWS = 20000;

/**
 * One page of expression rows in name order. Without a threshold, or with a names filter, the
 * (quantification, name) index answers directly. With a threshold, a scan in name order skips the rows
 * at or under it, which is cheap when many rows pass but reads the whole quantification when few do;
 * so: try a bounded name-order scan first, and when it does not fill the page, count (up to a bound)
 * the rows above the threshold through the expression index. Few: take those rows and sort them by
 * name. Many: the unbounded name-order scan finds a page quickly.
 */
export async function listExpressionRows(registry: Registry, query: ExpressionQuery): Promise<ExpressionRowStored[]> {
  const db = registry.db;
  const { quantificationId, names, above, after, limit } = query;
  const base = () => {
    let q = db.selectFrom('rna_expression').selectAll().where('quantification_id', '=', quantificationId);
    if (after !== undefined) q = q.where('name', '>', after);
    return q;
  };

  if (names !== undefined && names.length > 0) {
    let q = base().where('name', 'in', names);
    if (above !== undefined) q = q.where(notIndexed('expression'), '>', above);
    return q.orderBy('name').limit(limit).execute();
  }
  if (above === undefined) return base().orderBy('name').limit(limit).execute();

  // A name-order scan of at most NAME_SCAN_BUDGET rows (the LIMIT keeps the planner on the name index).
  const bounded = await db
    .selectFrom(base().orderBy('name').limit(NAME_SCAN_BUDGET).as('scan'))
    .selectAll()
    .where('expression', '>', above)
    .orderBy('name')
    .limit(limit)
    .execute();
  if (bounded.length === limit) return bounded;

  if (above >= 0) {
    // The value index holds the rows above 0; the literal `expression > 0` lets the planner use it. It
    // comes after the threshold: SQLite bounds the index range by the first of the two terms.
    const passing = () =>
      db
        .selectFrom('rna_expression')
        .where('quantification_id', '=', quantificationId)
        .where('expression', '>', above)
        .where('expression', '>', sql.lit(0))
        .limit(SELECTIVE_THRESHOLD_ROWS + 1);
    const counted = await db
      .selectFrom(passing().select('quantification_id').as('hits'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(counted.n) <= SELECTIVE_THRESHOLD_ROWS) {
      // Few rows pass: take them through the value index, then sort them by name.
      let q = db.selectFrom(passing().selectAll().as('hits')).selectAll();
      if (after !== undefined) q = q.where('name', '>', after);
      return q.orderBy('name').limit(limit).execute();
    }
  }
  // Many rows pass: the name-order scan finds a page soon.
  return base().where(notIndexed('expression'), '>', above).orderBy('name').limit(limit).execute();
}

/**
 * `column + 0`: the same value, but a term no index can serve, so the planner keeps to the name index
 * (otherwise SQLite may pick the expression index and sort a million rows). Plain SQL on both dialects.
 */
const notIndexed = (column: 'expression') => sql<number>`${sql.ref(column)} + 0`;
