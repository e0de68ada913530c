/**
 * RNA quantification sets, quantifications and their expression levels in the registry: tables,
 * migration and queries.
 *
 * Expression levels are the one big table of the registry (a quantification holds up to millions of
 * rows), so each row names its quantification by an integer key rather than three text names, and the
 * searches are shaped for two indexes: (quantification, name) for name order, keyset pages and the
 * names filter; (quantification, expression, name) for thresholds that only a few rows pass.
 */
import type { Kysely, RawBuilder, Transaction } from 'kysely';
import { sql } from '../../registry/kysely.js';
import { insertRows } from '../../registry/bulk.js';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { listSetsOfDatasets } from '../datasets/store.js';
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
    /**
     * JSON [rank, expression] pairs: the expression of the row at each rank of a geometric ladder of
     * ranks, highest value first (expressionRanks). The threshold search plans with it (rowsAboveEstimate).
     */
    expression_ranks: string;
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

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends RnaTables {}
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
  {
    version: 6,
    name: 'rna threshold plans',
    async up(db: Kysely<any>) {
      // The value index also holds the name, so the rows above a threshold are picked and ordered by
      // name from the index alone, without reading each table row (docs/performance.md, "References,
      // small requests and searches").
      await db.schema.dropIndex('rna_expression_by_value').execute();
      await db.schema
        .createIndex('rna_expression_by_value_name')
        .on('rna_expression')
        .columns(['quantification_id', 'expression', 'name'])
        .where(sql.ref('expression'), '>', sql.lit(0))
        .execute();
      await db.schema.alterTable('rna_quantification').addColumn('expression_ranks', 'text', (c) => c.notNull().defaultTo('[]')).execute();
      const quantifications = await db.selectFrom('rna_quantification').select('id').execute();
      for (const { id } of quantifications) {
        const values = await db.selectFrom('rna_expression').select('expression').where('quantification_id', '=', id).execute();
        const ranks = expressionRanks(Float64Array.from(values, (v) => Number(v.expression)));
        await db.updateTable('rna_quantification').set({ expression_ranks: JSON.stringify(ranks) }).where('id', '=', id).execute();
      }
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
export const listQuantificationSets = (registry: Registry, datasetName: string | undefined, after: [string, string] | undefined, limit?: number) =>
  listSetsOfDatasets(registry, 'rna_quantification_set', datasetName, after, limit);

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

export type NewQuantification = Omit<QuantificationRow, 'id' | 'row_count' | 'expression_ranks' | 'created_at'>;

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
      .values({
        ...quantification,
        id,
        row_count: rows.length,
        expression_ranks: JSON.stringify(expressionRanks(Float64Array.from(rows, (r) => r.expression))),
        created_at: new Date().toISOString(),
      })
      .execute();
    await insertExpressionRows(registry, trx, id, rows, progress);
  });
  if (registry.dialect === 'postgres') {
    // PostgreSQL reads the value index alone only for pages its visibility map marks all-visible, and
    // plans with statistics: both come from VACUUM ANALYZE, which autovacuum would run some time later
    // (or never, where it is off). Without it, thresholds few rows pass took 10-17 ms a page instead of
    // 2-4 ms on 1,000,000 rows. It cannot run inside the load's transaction, so it follows the commit.
    await sql`vacuum analyze rna_expression`.execute(registry.db);
  }
}

/** The columns of an expression row, in the order insertExpressionRows hands them over. */
const EXPRESSION_COLUMNS = [
  'quantification_id',
  'name',
  'expression',
  'raw_read_count',
  'conf_interval_low',
  'conf_interval_high',
  'attributes',
];

/** Rows handed to the bulk insert at a time (progress is reported between them). */
const INSERT_BATCH = 20_000;

/**
 * The bulk path of a load: the registry's bulk insert (prepared statement on SQLite, COPY on PostgreSQL;
 * src/registry/bulk.ts), in batches so that progress shows and memory stays bounded.
 */
async function insertExpressionRows(
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

/** [rank, expression]: the expression of the row at that rank (1 = highest) of a quantification. */
export type ExpressionRank = [number, number];

/**
 * The expressions at ranks 1, 2, 3, 4, 6, 8, 11, ... (each about √2 times the one before) and at the
 * last rank: about 40 pairs for a million rows, from which the count of rows above any threshold is
 * known within a factor of √2 without reading a row.
 */
export function expressionRanks(values: Float64Array): ExpressionRank[] {
  const highestFirst = Float64Array.from(values).sort().reverse();
  const ranks: ExpressionRank[] = [];
  for (let rank = 1; rank <= highestFirst.length; rank = Math.max(rank + 1, Math.round(rank * Math.SQRT2))) {
    ranks.push([rank, highestFirst[rank - 1]]);
  }
  const last = highestFirst.length;
  if (last > 0 && ranks.at(-1)![0] !== last) ranks.push([last, highestFirst[last - 1]]);
  return ranks;
}

/**
 * How many rows have an expression strictly above the threshold, from the rank ladder: the count lies
 * between the last rank whose expression is above the threshold and the next rank; the estimate is their
 * geometric mean.
 */
export function rowsAboveEstimate(ranks: readonly ExpressionRank[], threshold: number): number {
  let below = 0;
  for (const [rank, expression] of ranks) {
    if (!(expression > threshold)) return below === 0 ? 0 : Math.sqrt(below * (rank - 1));
    below = rank;
  }
  return below;
}

/** What the threshold search needs to know of a quantification. */
export type QuantificationStats = Pick<QuantificationRow, 'id' | 'row_count' | 'expression_ranks'>;

export interface ExpressionQuery {
  quantification: QuantificationStats;
  /** Only rows with one of these names (exact); undefined or empty: no name filter. */
  names?: string[];
  /** Only rows whose expression is strictly greater; undefined: no threshold. */
  above?: number;
  /** The last name of the previous page. */
  after?: string;
  limit: number;
}

/**
 * What reading one row of the value index costs (taking it, keeping it in the sort by name), relative to
 * stepping over one row in name order. Measured on a 1,000,000-row quantification on SQLite, where both
 * plans take the same time near 8,000 rows passing for pages of 100 (docs/performance.md,
 * "References, small requests and searches").
 */
export const VALUE_INDEX_ROW_COST = 1.5;

export type ThresholdPlan = 'name order' | 'value index';

/**
 * How a page of `limit` rows above a threshold is best found. In name order, skipping the rows at or
 * under the threshold: about limit × rows / passing rows are stepped over (all of them when few pass).
 * Through the value index: every passing row is read, from the index alone, and the ones after the
 * page token sorted by name. The first costs rows·limit/passing, the second passing rows × its row cost:
 * the value index wins below about √(limit × rows ÷ VALUE_INDEX_ROW_COST) passing rows. The passing rows
 * are estimated from the rank ladder. The index holds only rows above 0, so serves thresholds ≥ 0 only.
 */
export function thresholdPlan(quantification: QuantificationStats, above: number, limit: number): ThresholdPlan {
  if (!(above >= 0)) return 'name order';
  const rows = Number(quantification.row_count);
  const passing = rowsAboveEstimate(JSON.parse(quantification.expression_ranks) as ExpressionRank[], above);
  const nameOrderCost = Math.min(rows, (limit * (rows + 1)) / (passing + 1));
  return passing * VALUE_INDEX_ROW_COST <= nameOrderCost ? 'value index' : 'name order';
}

/**
 * One page of expression rows in name order. Without a threshold, or with a names filter, the
 * (quantification, name) index answers directly. With a threshold, the plan thresholdPlan picks from the
 * quantification's rank ladder, without counting rows at query time.
 */
export async function listExpressionRows(registry: Registry, query: ExpressionQuery): Promise<ExpressionRowStored[]> {
  const db = registry.db;
  const { quantification, names, above, after, limit } = query;
  const base = () => {
    let q = db.selectFrom('rna_expression').selectAll().where('quantification_id', '=', quantification.id);
    if (after !== undefined) q = q.where('name', '>', after);
    return q;
  };

  if (names !== undefined && names.length > 0) {
    let q = base().where('name', 'in', names);
    if (above !== undefined) q = q.where(notIndexed('expression'), '>', above);
    return q.orderBy('name').limit(limit).execute();
  }
  if (above === undefined) return base().orderBy('name').limit(limit).execute();

  if (thresholdPlan(quantification, above, limit) === 'value index') {
    // The page's names come from the value index alone (it holds the name); then their rows by key.
    // `expression > 0` is the index's own condition, which lets the planner use it; it comes after the
    // threshold since SQLite bounds the index range by the first of the two terms. The name is compared
    // and sorted as `name || ''`, so that no planner walks the name index instead (SQLite would for the
    // token, PostgreSQL without statistics for the order).
    let page = db
      .selectFrom('rna_expression')
      .select('name')
      .where('quantification_id', '=', quantification.id)
      .where('expression', '>', above)
      .where('expression', '>', sql.lit(0));
    if (after !== undefined) page = page.where(notIndexed('name'), '>', after);
    return db
      .selectFrom('rna_expression')
      .selectAll()
      .where('quantification_id', '=', quantification.id)
      .where('name', 'in', page.orderBy(notIndexed('name')).limit(limit))
      .orderBy('name')
      .execute();
  }
  return base().where(notIndexed('expression'), '>', above).orderBy('name').limit(limit).execute();
}

/**
 * `expression + 0`, `name || ''`: the same value (and, for the name, the same byte order), but a term no
 * index can serve, which keeps the planner on the index the plan is made for. Plain SQL on both dialects.
 */
function notIndexed(column: 'expression'): RawBuilder<number>;
function notIndexed(column: 'name'): RawBuilder<string>;
function notIndexed(column: 'expression' | 'name') {
  return column === 'expression' ? sql<number>`${sql.ref(column)} + 0` : sql<string>`${sql.ref(column)} || ''`;
}
