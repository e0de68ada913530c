/**
 * Feature sets and their features in the registry: tables, migration, the bulk load path and the
 * searches.
 *
 * The load path is shared with other areas (genotype-phenotype serves the genomic features its
 * associations name as a feature set of its dataset). Inside the caller's transaction:
 *
 *   const count = await insertFeatureSet(registry, trx, set, features);
 *
 * where `set` is a NewFeatureSet and `features` an iterable of NewFeature, or an async iterable of
 * arrays of them (a file read in batches):
 *
 *   NewFeature {
 *     key: string;                      // stable and unique in the set; the feature id is
 *                                       // [dataset, "fs", setName, key]
 *     referenceName: string | null;     // null: no location (found by name, symbol, parent or listing)
 *     start: number | null;             // 0-based; with end, [start, end); null when no location
 *     end: number | null;
 *     strand: Strand;                   // 'POS_STRAND' | 'NEG_STRAND' | 'STRAND_UNSPECIFIED'
 *     type: { termId: string; term: string } | null;   // termId '' when the type is no ontology term
 *     name: string | null;
 *     geneSymbol: string | null;
 *     parentKeys: string[];             // keys of the parents in this set; the first is parentId
 *     attributes: Record<string, Array<string | number | boolean>> | null;
 *   }
 *
 * A key given twice is one feature in several parts (a discontinuous GFF3 feature): its span widens to
 * cover every part and attribute values are added to the first part's. childIds are derived from the
 * parent keys, in the order the children were given.
 */
import type { ColumnType, Kysely, Selectable, Transaction } from 'kysely';
import { CompiledQuery, sql } from '../../registry/kysely.js';
import { insertRows } from '../../registry/bulk.js';
import { preparedSelects, type SelectRunner } from '../../registry/prepared.js';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { listSetsOfDatasets } from '../datasets/store.js';
import type { Database } from '../../registry/schema.js';
import { UserError } from '../../user-error.js';
import { attributesFromStored, storedAttributes } from './attributes.js';

export const STRANDS = ['STRAND_UNSPECIFIED', 'NEG_STRAND', 'POS_STRAND'] as const;
export type Strand = (typeof STRANDS)[number];

export type AttributeValues = Record<string, Array<string | number | boolean>>;

export interface NewFeatureSet {
  datasetName: string;
  name: string;
  referenceSetName: string | null;
  ontologyName: string | null;
  sourceUri: string | null;
  attributes: AttributeValues | null;
  /** The file it was loaded from (shown by `repo list`), or null when it comes from no file. */
  source: string | null;
}

export interface NewFeature {
  key: string;
  referenceName: string | null;
  start: number | null;
  end: number | null;
  strand: Strand;
  type: { termId: string; term: string } | null;
  name: string | null;
  geneSymbol: string | null;
  parentKeys: string[];
  attributes: AttributeValues | null;
  /** Attributes already in their stored form (attributes.ts), instead of `attributes`, from loaders that build it. */
  storedAttributes?: string | null;
}

export interface FeatureTables {
  feature_set: {
    /** Surrogate key the feature rows refer to. */
    id: number;
    dataset_name: string;
    name: string;
    reference_set_name: string | null;
    ontology_name: string | null;
    source_uri: string | null;
    /** JSON object of attribute lists, or null. */
    attributes: string | null;
    source: string | null;
    feature_count: number;
    /** JSON object: reference name -> length of its longest feature (bounds region scans). */
    longest: string;
    /**
     * JSON array of the type names its features were stored with and no term id, each once, sorted:
     * what searches match to ontology terms when they run (ontologies/matcher.ts). '[]' by default.
     */
    unmatched_types: ColumnType<string, string | undefined, string>;
    created_at: string;
  };
  feature: {
    set_id: number;
    key: string;
    /** Order in which the features were given: the tie-break after start. */
    seq: number;
    /** Null for a feature without location; start and end are then 0. */
    reference_name: string | null;
    start: number;
    end: number;
    /** Index into STRANDS. */
    strand: number;
    type_id: string | null;
    type_term: string | null;
    name: string | null;
    gene_symbol: string | null;
    parent_key: string | null;
    /** JSON array of child keys in order, or null. */
    child_keys: string | null;
    /** Attribute lists in the form they are sent (wire.ts), or null. */
    attributes: string | null;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends FeatureTables {}
}

export type FeatureSetRow = Selectable<FeatureTables['feature_set']>;
export type FeatureRow = FeatureTables['feature'];

export const featureMigrations: Migration[] = [
  {
    version: 30,
    name: 'feature sets',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      await db.schema
        .createTable('feature_set')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('dataset_name', key, (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('reference_set_name', 'text', (c) => c.references('reference_set.name').onDelete('restrict'))
        // No cascade: an ontology in use cannot be removed (remove-ontology reports it).
        .addColumn('ontology_name', key, (c) => c.references('ontology.name'))
        .addColumn('source_uri', 'text')
        .addColumn('attributes', 'text')
        .addColumn('source', 'text')
        .addColumn('feature_count', 'bigint', (c) => c.notNull())
        .addColumn('longest', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('feature_set_name_unique', ['dataset_name', 'name'])
        .execute();
      await db.schema
        .createTable('feature')
        .addColumn('set_id', 'integer', (c) => c.notNull().references('feature_set.id').onDelete('cascade'))
        .addColumn('key', key, (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('reference_name', key)
        .addColumn('start', 'bigint', (c) => c.notNull())
        .addColumn('end', 'bigint', (c) => c.notNull())
        .addColumn('strand', 'integer', (c) => c.notNull())
        .addColumn('type_id', key)
        .addColumn('type_term', key)
        .addColumn('name', key)
        .addColumn('gene_symbol', key)
        .addColumn('parent_key', key)
        .addColumn('child_keys', 'text')
        .addColumn('attributes', 'text')
        .addPrimaryKeyConstraint('feature_pk', ['set_id', 'key'])
        .execute();
      // Every search pages by (start, seq): each index ends with them so pages come in index order.
      // The region index also holds `end`, so rows ending before the window are skipped from the index.
      await db.schema.createIndex('feature_by_region').on('feature').columns(['set_id', 'reference_name', 'start', 'seq', 'end']).execute();
      await db.schema.createIndex('feature_by_start').on('feature').columns(['set_id', 'start', 'seq']).execute();
      await db.schema
        .createIndex('feature_by_name')
        .on('feature')
        .columns(['set_id', 'name', 'start', 'seq'])
        .where(sql.ref('name'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('feature_by_symbol')
        .on('feature')
        .columns(['set_id', 'gene_symbol', 'start', 'seq'])
        .where(sql.ref('gene_symbol'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('feature_by_parent')
        .on('feature')
        .columns(['set_id', 'parent_key', 'start', 'seq'])
        .where(sql.ref('parent_key'), 'is not', null)
        .execute();
    },
  },
  {
    version: 32,
    name: 'feature attributes in wire form',
    // Attributes were stored as JSON of the value lists; now in the form they are sent (wire.ts).
    async up(db: Kysely<any>, dialect) {
      const BATCH = 2000;
      // The statement's text is the same for every full batch: written once, not built by Kysely each time.
      const placeholder = (i: number) => (dialect === 'postgres' ? `$${i}` : '?');
      const updateText = (rows: number) => {
        const tuples = Array.from({ length: rows }, (_, r) => {
          const [a, b, c] = [3 * r + 1, 3 * r + 2, 3 * r + 3].map(placeholder);
          // The first row names the types, for PostgreSQL's untyped parameters.
          return r === 0 ? `(cast(${a} as integer), cast(${b} as text), cast(${c} as text))` : `(${a}, ${b}, ${c})`;
        });
        return `with converted(set_id, key, attributes) as (values ${tuples.join(', ')})
          update feature set attributes = converted.attributes from converted
          where feature.set_id = converted.set_id and feature.key = converted.key`;
      };
      const fullBatch = updateText(BATCH);
      let after: [number, string] | undefined;
      for (;;) {
        let q = db.selectFrom('feature').select(['set_id', 'key', 'attributes']).where('attributes', 'is not', null);
        if (after) q = q.where(sql<boolean>`(${sql.ref('set_id')}, ${sql.ref('key')}) > (${after[0]}, ${after[1]})`);
        const rows = (await q.orderBy('set_id').orderBy('key').limit(BATCH).execute()) as Array<{ set_id: number; key: string; attributes: string }>;
        if (!rows.length) break;
        const params = rows.flatMap((r) => {
          // JSON wrote NaN and infinities as null: such values held nothing to send.
          const lists = JSON.parse(r.attributes) as Record<string, Array<string | number | boolean | null>>;
          const values = Object.fromEntries(Object.entries(lists).map(([k, list]) => [k, list.filter((v) => v !== null)])) as AttributeValues;
          return [r.set_id, r.key, storedAttributes(values)];
        });
        await db.executeQuery(CompiledQuery.raw(rows.length === BATCH ? fullBatch : updateText(rows.length), params));
        const last = rows[rows.length - 1];
        after = [last.set_id, last.key];
      }
    },
  },
  {
    version: 33,
    name: 'features named by their ID',
    // GFF3 features without Name were stored without a name; a load now names them by their ID, which
    // is their key. Keys the loader made up for lines without ID (FeatureBuilder.generatedKey: parent or
    // seqid, type, 1-based span, then `#n` for a repeat) are no ID and stay unnamed. Only GFF3 sets
    // have a reference set: the feature sets of genotype-phenotype associations keep theirs as stored.
    async up(db: Kysely<any>) {
      const [key, start, end, owner] = [sql.ref('key'), sql.ref('start'), sql.ref('end'), sql`coalesce(${sql.ref('parent_key')}, ${sql.ref('reference_name')})`];
      const span = sql`':' || (${start} + 1) || '-' || ${end}`;
      const madeUp = sql`(substr(${key}, 1, length(${owner}) + 1) = ${owner} || ':' and (${key} like '%' || ${span} or ${key} like '%' || ${span} || '#%'))`;
      await sql`update feature set name = ${key}
        where name is null and not ${madeUp}
          and set_id in (select id from feature_set where reference_set_name is not null)`.execute(db);
    },
  },
  {
    version: 34,
    name: 'feature types without a term',
    // Each set's type names stored without a term id, read once here from its features, so that a
    // search can match them to an ontology added after the set without reading every feature.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('feature_set').addColumn('unmatched_types', 'text', (c) => c.notNull().defaultTo('[]')).execute();
      const rows = (await db
        .selectFrom('feature')
        .select(['set_id', 'type_term'])
        .where('type_id', 'is', null)
        .where('type_term', 'is not', null)
        .groupBy(['set_id', 'type_term'])
        .execute()) as Array<{ set_id: number; type_term: string }>;
      const bySet = new Map<number, string[]>();
      for (const r of rows) {
        const names = bySet.get(r.set_id);
        if (names) names.push(r.type_term);
        else bySet.set(r.set_id, [r.type_term]);
      }
      for (const [setId, names] of bySet) {
        await db.updateTable('feature_set').set({ unmatched_types: JSON.stringify(names.sort()) }).where('id', '=', setId).execute();
      }
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// Loading

const FEATURE_COLUMNS = [
  'set_id',
  'key',
  'seq',
  'reference_name',
  'start',
  'end',
  'strand',
  'type_id',
  'type_term',
  'name',
  'gene_symbol',
  'parent_key',
  'child_keys',
  'attributes',
];

/** Features handed to the bulk insert at a time. */
const INSERT_BATCH = 2_000;

/** Appends the values of `from` that `into` lacks, key by key. */
function mergeAttributes(into: AttributeValues | null, from: AttributeValues | null): AttributeValues | null {
  if (!from) return into;
  const merged: AttributeValues = { ...(into ?? {}) };
  for (const [k, values] of Object.entries(from)) {
    const list = (merged[k] = [...(merged[k] ?? [])]);
    for (const v of values) if (!list.includes(v)) list.push(v);
  }
  return merged;
}

/** One part more of a feature already seen: the span covers both, attributes are merged. Returns the parents it adds. */
function mergePart(feature: NewFeature, part: NewFeature): string[] {
  if (part.referenceName !== null && part.start !== null && part.end !== null) {
    if (feature.referenceName === null || feature.start === null || feature.end === null) {
      feature.referenceName = part.referenceName;
      feature.start = part.start;
      feature.end = part.end;
    } else if (feature.referenceName !== part.referenceName) {
      throw new UserError(`feature '${part.key}' has parts on two references (${feature.referenceName}, ${part.referenceName})`);
    } else {
      feature.start = Math.min(feature.start, part.start);
      feature.end = Math.max(feature.end, part.end);
    }
  }
  const added = part.parentKeys.filter((p, i) => !feature.parentKeys.includes(p) && part.parentKeys.indexOf(p) === i);
  feature.parentKeys.push(...added);
  feature.attributes = mergeAttributes(feature.attributes, part.attributes);
  return added;
}

const jsonOrNull = (value: object | null) => (value && Object.keys(value).length ? JSON.stringify(value) : null);

function checkFeature(f: NewFeature): void {
  if (typeof f.key !== 'string' || f.key === '') throw new UserError('a feature key must not be empty');
  const located = f.referenceName !== null;
  if (located !== (f.start !== null) || located !== (f.end !== null)) {
    throw new UserError(`feature '${f.key}': reference name, start and end go together`);
  }
  if (located && !(Number.isSafeInteger(f.start) && Number.isSafeInteger(f.end) && f.start! >= 0 && f.end! >= f.start!)) {
    throw new UserError(`feature '${f.key}': start ${f.start} and end ${f.end} are not a 0-based half-open range`);
  }
}

/**
 * Creates feature set `set` and stores `features` in it, through `trx` (a transaction of `registry`
 * that the caller commits or rolls back). Returns the number of features stored. Refuses a set name
 * the dataset already has, and an unknown dataset, reference set or ontology.
 */
export async function insertFeatureSet(
  registry: Registry,
  trx: Transaction<Database>,
  set: NewFeatureSet,
  features: Iterable<NewFeature> | AsyncIterable<NewFeature[]>,
  progress?: (featuresStored: number) => void,
): Promise<number> {
  if (!set.name.trim()) throw new UserError('a feature set name must not be empty');
  if (!(await trx.selectFrom('dataset').select('name').where('name', '=', set.datasetName).executeTakeFirst())) {
    throw new UserError(`no dataset '${set.datasetName}' in ${registry.location}`);
  }
  if (await getSetIn(trx, set.datasetName, set.name)) {
    throw new UserError(`feature set '${set.name}' already exists in dataset '${set.datasetName}'; choose another with --name`);
  }
  if (set.referenceSetName !== null && !(await trx.selectFrom('reference_set').select('name').where('name', '=', set.referenceSetName).executeTakeFirst())) {
    throw new UserError(`no reference set '${set.referenceSetName}' in ${registry.location}`);
  }
  if (set.ontologyName !== null && !(await trx.selectFrom('ontology').select('name').where('name', '=', set.ontologyName).executeTakeFirst())) {
    throw new UserError(`no ontology '${set.ontologyName}' in ${registry.location}; add it with: ga4gh repo add-ontology`);
  }
  // Keys are assigned here rather than by the database, the same way on SQLite and PostgreSQL.
  const last = await trx.selectFrom('feature_set').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  const setId = Number(last?.id ?? 0) + 1;
  await trx
    .insertInto('feature_set')
    .values({
      id: setId,
      dataset_name: set.datasetName,
      name: set.name,
      reference_set_name: set.referenceSetName,
      ontology_name: set.ontologyName,
      source_uri: set.sourceUri,
      attributes: jsonOrNull(set.attributes),
      source: set.source,
      feature_count: 0,
      longest: '{}',
      created_at: new Date().toISOString(),
    })
    .execute();

  // Features wait in `pending` (by key, in order) until a batch is full, so that parts given one after
  // the other merge in memory, and so that children given soon after their parent (as files list them)
  // are added to its child list before it is written. Keys already written are remembered by a 52-bit
  // hash only (a few bytes each, where the keys themselves would hold on to every input line); a hash
  // seen before is checked against the table, and a part of a feature already written is merged at the end.
  const writtenHashes = new Set<number>();
  const lateParts: NewFeature[] = [];
  const longest = new Map<string, number>();
  const unmatchedTypes = new Set<string>();
  /** Children in the order given, of parents not waiting in `pending` when the child came: before or after it. */
  const childrenElsewhere = new Map<string, string[]>();
  let pending = new Map<string, PendingFeature>();
  let seq = 0;
  let stored = 0;

  const addChild = (parent: string, child: string) => {
    const waiting = pending.get(parent);
    if (waiting) (waiting.children ??= []).push(child);
    else {
      const list = childrenElsewhere.get(parent);
      if (list) list.push(child);
      else childrenElsewhere.set(parent, [child]);
    }
  };
  const flush = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const rows: unknown[][] = [];
    for (const { feature: f, attributes, children } of batch.values()) {
      if (f.referenceName !== null) longest.set(f.referenceName, Math.max(longest.get(f.referenceName) ?? 0, f.end! - f.start!));
      if (f.type && !f.type.termId && f.type.term) unmatchedTypes.add(f.type.term);
      writtenHashes.add(keyHash(f.key));
      // Children given before the parent come first: the list is in the order the children were given.
      const before = childrenElsewhere.get(f.key);
      if (before) childrenElsewhere.delete(f.key);
      const childKeys = before ? (children ? before.concat(children) : before) : children;
      rows.push([
        setId,
        f.key,
        seq++,
        f.referenceName,
        f.start ?? 0,
        f.end ?? 0,
        STRANDS.indexOf(f.strand),
        f.type?.termId || null,
        f.type?.term || null,
        f.name,
        f.geneSymbol,
        f.parentKeys[0] ?? null,
        childKeys ? JSON.stringify(childKeys) : null,
        attributes,
      ]);
    }
    await insertRows(registry, trx, 'feature', FEATURE_COLUMNS, rows);
    stored += batch.size;
    progress?.(stored);
  };

  const add = (input: NewFeature) => {
    const parentKeys = input.parentKeys.length > 1 ? [...new Set(input.parentKeys)] : [...input.parentKeys];
    // A batch is written before a feature without parent (a gene starting), so that genes stay whole.
    const full = pending.size >= INSERT_BATCH && (parentKeys.length === 0 || pending.size >= 2 * INSERT_BATCH);
    const written = full ? flush() : undefined;
    const attributes = input.storedAttributes !== undefined ? input.storedAttributes : storedAttributes(input.attributes);
    pending.set(input.key, { feature: { ...input, parentKeys, attributes: null, storedAttributes: undefined }, attributes, children: undefined });
    for (const parent of parentKeys) addChild(parent, input.key);
    return written;
  };
  /** A feature whose key hashes like one written: a part of it, or a new feature that shares the hash. */
  const addUnlessWritten = async (input: NewFeature) => {
    if (await getFeatureIn(trx, setId, input.key)) lateParts.push(withAttributes(input));
    else await add(input);
  };
  // Synchronous for most features: a promise only when a batch is written or the table must be asked.
  const take = (input: NewFeature): Promise<void> | undefined => {
    checkFeature(input);
    const earlier = pending.get(input.key);
    if (earlier) {
      const { feature } = earlier;
      feature.attributes = attributesFromStored(earlier.attributes);
      for (const parent of mergePart(feature, withAttributes(input))) addChild(parent, input.key);
      earlier.attributes = storedAttributes(feature.attributes);
      feature.attributes = null;
      return undefined;
    }
    return writtenHashes.has(keyHash(input.key)) ? addUnlessWritten(input) : add(input);
  };
  if (Symbol.asyncIterator in features) {
    for await (const batch of features) {
      for (const input of batch) {
        const work = take(input);
        if (work) await work;
      }
    }
  } else {
    for (const input of features) {
      const work = take(input);
      if (work) await work;
    }
  }
  await flush();
  for (const part of lateParts) await mergeStoredPart(trx, setId, part, childrenElsewhere, longest);
  await appendChildKeys(trx, setId, childrenElsewhere);
  await trx
    .updateTable('feature_set')
    .set({ feature_count: stored, longest: JSON.stringify(Object.fromEntries(longest)), unmatched_types: JSON.stringify([...unmatchedTypes].sort()) })
    .where('id', '=', setId)
    .execute();
  return stored;
}

/**
 * A feature waiting to be written, with the children given after it. Its attributes are kept in their
 * stored form: one string, where thousands of waiting features' objects would outlive the young
 * generation of the heap and make garbage collection a third of the load.
 */
interface PendingFeature {
  feature: NewFeature;
  attributes: string | null;
  children: string[] | undefined;
}

/** A part to merge, with its attributes as lists whichever way they were given. */
const withAttributes = (part: NewFeature): NewFeature =>
  part.storedAttributes === undefined ? part : { ...part, attributes: attributesFromStored(part.storedAttributes), storedAttributes: undefined };

/** FNV-1a over the UTF-16 units, two 26-bit halves: a key's fingerprint, exact enough to rule keys out. */
function keyHash(key: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 6) * 0x4000000 + (b >>> 6);
}

const getFeatureIn = (db: Kysely<Database>, setId: number, key: string) =>
  db.selectFrom('feature').selectAll().where('set_id', '=', setId).where('key', '=', key).executeTakeFirst();

/** Merges a part given after its feature was written (parts of one feature far apart in the input). */
async function mergeStoredPart(
  trx: Transaction<Database>,
  setId: number,
  part: NewFeature,
  childrenElsewhere: Map<string, string[]>,
  longest: Map<string, number>,
): Promise<void> {
  const row = (await getFeatureIn(trx, setId, part.key))!;
  const stored = storedAsNew(row);
  // The first parent stays in the parent column; any other is told of its child.
  for (const parent of mergePart(stored, part)) {
    const list = childrenElsewhere.get(parent);
    if (list) list.push(part.key);
    else childrenElsewhere.set(parent, [part.key]);
  }
  if (stored.referenceName !== null) {
    longest.set(stored.referenceName, Math.max(longest.get(stored.referenceName) ?? 0, stored.end! - stored.start!));
  }
  await trx
    .updateTable('feature')
    .set({
      reference_name: stored.referenceName,
      start: stored.start ?? 0,
      end: stored.end ?? 0,
      attributes: storedAttributes(stored.attributes),
      parent_key: stored.parentKeys[0] ?? null,
    })
    .where('set_id', '=', setId)
    .where('key', '=', part.key)
    .execute();
}

function storedAsNew(row: FeatureRow): NewFeature {
  const located = row.reference_name !== null;
  return {
    key: row.key,
    referenceName: row.reference_name,
    start: located ? Number(row.start) : null,
    end: located ? Number(row.end) : null,
    strand: STRANDS[row.strand] ?? 'STRAND_UNSPECIFIED',
    type: row.type_id || row.type_term ? { termId: row.type_id ?? '', term: row.type_term ?? '' } : null,
    name: row.name,
    geneSymbol: row.gene_symbol,
    parentKeys: row.parent_key !== null ? [row.parent_key] : [],
    attributes: attributesFromStored(row.attributes),
  };
}

/**
 * Children given when their parent was not waiting to be written (after it was, as at the seam of two
 * batches, or long before it): appended to the stored child lists once every feature is in. A parent
 * named by no feature of the set has no row, and its children only their parent id.
 */
async function appendChildKeys(trx: Transaction<Database>, setId: number, childrenOf: Map<string, string[]>): Promise<void> {
  for (const [parent, children] of childrenOf) {
    const row = await trx.selectFrom('feature').select('child_keys').where('set_id', '=', setId).where('key', '=', parent).executeTakeFirst();
    if (!row) continue;
    const list = row.child_keys !== null ? (JSON.parse(row.child_keys) as string[]) : [];
    for (const child of children) if (!list.includes(child)) list.push(child);
    await trx.updateTable('feature').set({ child_keys: JSON.stringify(list) }).where('set_id', '=', setId).where('key', '=', parent).execute();
  }
}

/** After a load has committed: PostgreSQL plans with statistics that only ANALYZE gathers. */
export async function analyzeFeatures(registry: Registry): Promise<void> {
  if (registry.dialect === 'postgres') await sql`analyze feature`.execute(registry.db);
}

// ---------------------------------------------------------------------------------------------------
// Feature sets

const getSetIn = (db: Kysely<Database>, datasetName: string, name: string) =>
  db.selectFrom('feature_set').selectAll().where('dataset_name', '=', datasetName).where('name', '=', name).executeTakeFirst();

export const getFeatureSet = (registry: Registry, datasetName: string, name: string) => getSetIn(registry.db, datasetName, name);

/** Sets in (dataset, name) order, optionally of one dataset; `after` is the last [dataset, name] seen. */
export const listFeatureSets = (registry: Registry, datasetName: string | undefined, after: [string, string] | undefined, limit?: number) =>
  listSetsOfDatasets(registry, 'feature_set', datasetName, after, limit);

export async function removeFeatureSet(registry: Registry, datasetName: string, name: string): Promise<void> {
  await registry.db.transaction().execute((trx) => deleteFeatureSet(trx, datasetName, name));
}

/** Removes a feature set and its features inside the caller's transaction (the other half of insertFeatureSet). */
export async function deleteFeatureSet(trx: Transaction<Database>, datasetName: string, name: string): Promise<void> {
  const set = await getSetIn(trx, datasetName, name);
  if (!set) throw new UserError(`no feature set '${name}' in dataset '${datasetName}'`);
  await trx.deleteFrom('feature').where('set_id', '=', set.id).execute();
  await trx.deleteFrom('feature_set').where('id', '=', set.id).execute();
}

// ---------------------------------------------------------------------------------------------------
// Features

export const getFeatureRow = (registry: Registry, setId: number, key: string) => getFeatureIn(registry.db, setId, key);

/** A search of one feature set; every filter given must hold. */
export interface FeatureQuery {
  set: Pick<FeatureSetRow, 'id' | 'longest'>;
  /**
   * The references to search, in the order pages give them; null stands for the features without a
   * location. Within each, pages come in (start, seq) order.
   */
  references: ReadonlyArray<string | null>;
  /** Overlap with [start, end) on each reference; end undefined: to the end of the reference. */
  range: { start: number; end?: number };
  name?: string;
  geneSymbol?: string;
  parentKey?: string;
  /** Only features of these types: ontology term ids, or type names of features whose type is no term. */
  types?: { ids: string[]; terms: string[] };
  /** The last feature of the previous page. */
  after?: FeaturePosition;
  limit: number;
}

/** Where a feature lies in a search's order: its reference (null: no location), start and seq. */
export type FeaturePosition = [string | null, number, number];

export const positionOf = (row: FeatureRow): FeaturePosition => [row.reference_name, Number(row.start), row.seq];

/** The names of the references the set has features on, in no particular order. */
export const referencesWithFeatures = (set: Pick<FeatureSetRow, 'longest'>) => Object.keys(JSON.parse(set.longest) as Record<string, number>);

/** Each registry's statements for the searches (see prepared.ts). */
const selectsOf = new WeakMap<Registry, SelectRunner>();

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * One page of features: the references of the query one after the other, each read in order from one
 * index, until the page is full; or, for a parent, name or symbol, its few matches on every reference
 * at once. The index is chosen by the most selective filter: parent, name, symbol, or the region. A region scan starts at window start minus the longest feature on that
 * reference, so it never reads features that end long before the window. The SQL is written here
 * rather than built through Kysely: a page by name is a few microseconds of SQLite, and building and
 * preparing the query took twenty times that.
 */
export async function listFeatureRows(registry: Registry, query: FeatureQuery): Promise<FeatureRow[]> {
  const { set, range, name, geneSymbol, parentKey, types, after, limit } = query;
  let select = selectsOf.get(registry);
  if (!select) selectsOf.set(registry, (select = preparedSelects(registry)));
  let filters = '"set_id" = ?';
  const filterParams: unknown[] = [set.id];
  if (parentKey !== undefined) {
    filters += ' AND "parent_key" = ?';
    filterParams.push(parentKey);
  }
  if (name !== undefined) {
    filters += ' AND "name" = ?';
    filterParams.push(name);
  }
  if (geneSymbol !== undefined) {
    filters += ' AND "gene_symbol" = ?';
    filterParams.push(geneSymbol);
  }
  if (types) {
    const alternatives: string[] = [];
    if (types.ids.length) alternatives.push(`"type_id" IN (${placeholders(types.ids.length)})`);
    if (types.terms.length) alternatives.push(`("type_id" IS NULL AND "type_term" IN (${placeholders(types.terms.length)}))`);
    filters += ` AND (${alternatives.length ? alternatives.join(' OR ') : '1 = 0'})`;
    filterParams.push(...types.ids, ...types.terms);
  }

  let references = query.references;
  if (after) references = references.slice(references.indexOf(after[0]));
  const selective = parentKey !== undefined || name !== undefined || geneSymbol !== undefined;
  if (selective && references.length > 1) {
    // A parent, name or symbol has few features, across references: read at once by the filter's own
    // index and put in order here. Many: the references that hold one are read one after the other.
    const matches = await select<FeatureRow>(`SELECT * FROM "feature" WHERE ${filters} LIMIT ?`, [...filterParams, FEW_MATCHES + 1]);
    if (matches.length <= FEW_MATCHES) return inSearchOrder(matches, references, range, after).slice(0, limit);
    // No DISTINCT: the planners would read the region index in order for it rather than this filter's.
    const holding = new Set((await select<Pick<FeatureRow, 'reference_name'>>(`SELECT "reference_name" FROM "feature" WHERE ${filters}`, filterParams)).map((r) => r.reference_name));
    references = references.filter((r) => holding.has(r));
  }

  const longestOn = JSON.parse(set.longest) as Record<string, number>;
  const rows: FeatureRow[] = [];
  for (const referenceName of references) {
    let where = filters;
    const params = [...filterParams];
    if (referenceName === null) where += ' AND "reference_name" IS NULL';
    else {
      const longest = longestOn[referenceName] ?? 0;
      // With a selective filter its index is the one to read, the reference tested on its rows: given
      // as a plain column, the reference has the planners scan the whole reference in order instead.
      where += selective ? ` AND ("reference_name" || '') = ? AND "start" >= ?` : ' AND "reference_name" = ? AND "start" >= ?';
      params.push(referenceName, Math.max(0, range.start - longest));
      if (range.end !== undefined) {
        where += ' AND "start" < ?';
        params.push(range.end);
      }
      where += ' AND "end" > ?';
      params.push(range.start);
    }
    if (after && after[0] === referenceName) {
      where += ' AND ("start", "seq") > (?, ?)';
      params.push(after[1], after[2]);
    }
    params.push(limit - rows.length);
    rows.push(...(await select<FeatureRow>(`SELECT * FROM "feature" WHERE ${where} ORDER BY "start", "seq" LIMIT ?`, params)));
    if (rows.length === limit) break;
  }
  return rows;
}

/** The most features a parent, name or symbol search reads at once to order them itself. */
const FEW_MATCHES = 1000;

/** `rows` in the order of a search over `references` (its window's, after `after`), as the walk reads them. */
function inSearchOrder(rows: FeatureRow[], references: ReadonlyArray<string | null>, range: FeatureQuery['range'], after: FeaturePosition | undefined): FeatureRow[] {
  const rank = new Map(references.map((r, i) => [r, i]));
  const inWindow = (r: FeatureRow) =>
    r.reference_name === null || (Number(r.end) > range.start && (range.end === undefined || Number(r.start) < range.end));
  const keyOf = ([reference, start, seq]: FeaturePosition) => [rank.get(reference)!, start, seq];
  const compare = (a: number[], b: number[]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  const from = after && keyOf(after);
  return rows
    .filter((r) => rank.has(r.reference_name) && inWindow(r))
    .map((row) => ({ row, key: keyOf(positionOf(row)) }))
    .filter(({ key }) => !from || compare(key, from) > 0)
    .sort((a, b) => compare(a.key, b.key))
    .map(({ row }) => row);
}

export async function listAllFeatureSets(registry: Registry): Promise<FeatureSetRow[]> {
  return registry.db.selectFrom('feature_set').selectAll().orderBy('dataset_name').orderBy('name').execute();
}
