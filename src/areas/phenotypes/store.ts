/**
 * Phenotype association sets in the registry: the set, the ontologies it uses for subclass queries,
 * its phenotypes and associations (each kept as the record served, beside the columns searches filter
 * on), which association names which feature, and the labels the Turtle gave its terms.
 */
import type { Kysely, Transaction } from 'kysely';
import { insertRows } from '../../registry/bulk.js';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { listSetsOfDatasets } from '../datasets/store.js';
import type { Database } from '../../registry/schema.js';
import { UserError } from '../../user-error.js';
import { describedEvidence } from './evidence.js';
import type { FeaturePhenotypeAssociationRecord } from './messages.js';
import { Curies } from './terms.js';

export interface PhenotypeTables {
  phenotype_association_set: {
    dataset_name: string;
    name: string;
    /** The Turtle file or folder, as the user named it. */
    source: string;
    /** `owl:versionInfo` of the file's ontology header, or null. */
    version: string | null;
    /** JSON object: the Turtle prefixes (name -> namespace), to read CURIEs in queries as the file wrote them. */
    prefixes: string;
    association_count: number;
    phenotype_count: number;
    feature_count: number;
    created_at: string;
  };
  phenotype_association_set_ontology: {
    dataset_name: string;
    set_name: string;
    ontology_name: string;
  };
  phenotype: {
    dataset_name: string;
    set_name: string;
    /** The phenotype's RDF IRI. */
    id: string;
    description: string | null;
    type_id: string | null;
    age_of_onset_id: string | null;
    /** JSON array of term ids. */
    qualifier_ids: string;
    /** The PhenotypeInstance record, as JSON. */
    record: string;
  };
  phenotype_association: {
    dataset_name: string;
    set_name: string;
    /** The association's RDF IRI. */
    id: string;
    phenotype_id: string;
    /** JSON array: IRIs and CURIEs of its environments, evidence types and sources (ExternalIdentifier queries). */
    external_ids: string;
    /** The FeaturePhenotypeAssociation record, as JSON. */
    record: string;
  };
  phenotype_association_feature: {
    dataset_name: string;
    set_name: string;
    feature_key: string;
    association_id: string;
  };
  phenotype_term_label: {
    dataset_name: string;
    set_name: string;
    term_id: string;
    label: string;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends PhenotypeTables {}
}

export const phenotypeMigrations: Migration[] = [
  {
    version: 50,
    name: 'phenotype association sets',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      const setColumns = (table: string) =>
        db.schema
          .createTable(table)
          .addColumn('dataset_name', key, (c) => c.notNull())
          .addColumn('set_name', key, (c) => c.notNull());
      const ofSet = (name: string): [string, any[], string, any[]] => [
        name,
        ['dataset_name', 'set_name'],
        'phenotype_association_set',
        ['dataset_name', 'name'],
      ];
      await db.schema
        .createTable('phenotype_association_set')
        .addColumn('dataset_name', key, (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('version', 'text')
        .addColumn('prefixes', 'text', (c) => c.notNull())
        .addColumn('association_count', 'integer', (c) => c.notNull())
        .addColumn('phenotype_count', 'integer', (c) => c.notNull())
        .addColumn('feature_count', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('phenotype_association_set_pk', ['dataset_name', 'name'])
        .execute();
      // No cascade from the ontology: removing one that a set uses is refused.
      await setColumns('phenotype_association_set_ontology')
        .addColumn('ontology_name', key, (c) => c.notNull().references('ontology.name'))
        .addPrimaryKeyConstraint('phenotype_association_set_ontology_pk', ['dataset_name', 'set_name', 'ontology_name'])
        .addForeignKeyConstraint(...ofSet('phenotype_association_set_ontology_fk'), (c) => c.onDelete('cascade'))
        .execute();
      await setColumns('phenotype')
        .addColumn('id', key, (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('type_id', 'text')
        .addColumn('age_of_onset_id', 'text')
        .addColumn('qualifier_ids', 'text', (c) => c.notNull())
        .addColumn('record', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('phenotype_pk', ['dataset_name', 'set_name', 'id'])
        .addForeignKeyConstraint(...ofSet('phenotype_set_fk'), (c) => c.onDelete('cascade'))
        .execute();
      await setColumns('phenotype_association')
        .addColumn('id', key, (c) => c.notNull())
        .addColumn('phenotype_id', key, (c) => c.notNull())
        .addColumn('external_ids', 'text', (c) => c.notNull())
        .addColumn('record', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('phenotype_association_pk', ['dataset_name', 'set_name', 'id'])
        .addForeignKeyConstraint(...ofSet('phenotype_association_set_fk'), (c) => c.onDelete('cascade'))
        .execute();
      await db.schema
        .createIndex('phenotype_association_by_phenotype')
        .on('phenotype_association')
        .columns(['dataset_name', 'set_name', 'phenotype_id', 'id'])
        .execute();
      await setColumns('phenotype_association_feature')
        .addColumn('feature_key', key, (c) => c.notNull())
        .addColumn('association_id', key, (c) => c.notNull())
        .addPrimaryKeyConstraint('phenotype_association_feature_pk', ['dataset_name', 'set_name', 'feature_key', 'association_id'])
        .addForeignKeyConstraint(...ofSet('phenotype_association_feature_set_fk'), (c) => c.onDelete('cascade'))
        .execute();
      await setColumns('phenotype_term_label')
        .addColumn('term_id', key, (c) => c.notNull())
        .addColumn('label', key, (c) => c.notNull())
        .addPrimaryKeyConstraint('phenotype_term_label_pk', ['dataset_name', 'set_name', 'term_id'])
        .addForeignKeyConstraint(...ofSet('phenotype_term_label_set_fk'), (c) => c.onDelete('cascade'))
        .execute();
      await db.schema
        .createIndex('phenotype_term_label_by_label')
        .on('phenotype_term_label')
        .columns(['dataset_name', 'set_name', 'label'])
        .execute();
    },
  },
  {
    version: 51,
    name: 'evidence described by the phenotype quality',
    // Rewrites the stored association records: each evidence gets the description a load now gives it
    // (evidence.ts), from the phenotype and the prefixes stored with it. Read by key, a batch at a time.
    async up(db: Kysely<any>) {
      const BATCH = 1000;
      const sets = (await db.selectFrom('phenotype_association_set').select(['dataset_name', 'name', 'prefixes']).execute()) as PhenotypeAssociationSetRow[];
      for (const set of sets) {
        const curies = new Curies(JSON.parse(set.prefixes) as Record<string, string>);
        const ofSet = db.selectFrom('phenotype_association').select(['id', 'record']).where('dataset_name', '=', set.dataset_name).where('set_name', '=', set.name);
        let after: string | undefined;
        for (;;) {
          const rows = (await (after === undefined ? ofSet : ofSet.where('id', '>', after)).orderBy('id').limit(BATCH).execute()) as Array<{ id: string; record: string }>;
          for (const row of rows) {
            const record = JSON.parse(row.record) as FeaturePhenotypeAssociationRecord;
            record.evidence = describedEvidence(record.evidence, record.phenotype, curies);
            await db
              .updateTable('phenotype_association')
              .set({ record: JSON.stringify(record) })
              .where('dataset_name', '=', set.dataset_name)
              .where('set_name', '=', set.name)
              .where('id', '=', row.id)
              .execute();
          }
          if (rows.length < BATCH) break;
          after = rows[rows.length - 1].id;
        }
      }
    },
  },
];

export type PhenotypeAssociationSetRow = PhenotypeTables['phenotype_association_set'];
export type PhenotypeRow = PhenotypeTables['phenotype'];
export type AssociationRow = PhenotypeTables['phenotype_association'];

/** Everything one load writes, prepared before the transaction opens. */
export interface PhenotypeSetContent {
  set: Omit<PhenotypeAssociationSetRow, 'created_at'>;
  ontologies: string[];
  phenotypes: Array<Omit<PhenotypeRow, 'dataset_name' | 'set_name'>>;
  associations: Array<Omit<AssociationRow, 'dataset_name' | 'set_name'> & { featureKeys: string[] }>;
  labels: Array<{ termId: string; label: string }>;
}

/**
 * Writes a whole set in one transaction; refuses a duplicate name. `alsoInside` runs in the same
 * transaction (the feature set the associations name is registered there).
 */
export async function addPhenotypeSet(
  registry: Registry,
  content: PhenotypeSetContent,
  alsoInside?: (trx: Transaction<Database>) => Promise<void>,
): Promise<void> {
  const { set } = content;
  const ds = set.dataset_name;
  const name = set.name;
  await registry.db.transaction().execute(async (trx) => {
    if (await getSetIn(trx, ds, name)) {
      throw new UserError(`phenotype association set '${name}' already exists in dataset '${ds}'; remove it first with: ga4gh repo remove-phenotypeassociationset`);
    }
    await trx.insertInto('phenotype_association_set').values({ ...set, created_at: new Date().toISOString() }).execute();
    for (const ontology of content.ontologies) {
      await trx.insertInto('phenotype_association_set_ontology').values({ dataset_name: ds, set_name: name, ontology_name: ontology }).execute();
    }
    await insertRows(
      registry,
      trx,
      'phenotype',
      ['dataset_name', 'set_name', 'id', 'description', 'type_id', 'age_of_onset_id', 'qualifier_ids', 'record'],
      content.phenotypes.map((p) => [ds, name, p.id, p.description, p.type_id, p.age_of_onset_id, p.qualifier_ids, p.record]),
    );
    await insertRows(
      registry,
      trx,
      'phenotype_association',
      ['dataset_name', 'set_name', 'id', 'phenotype_id', 'external_ids', 'record'],
      content.associations.map((a) => [ds, name, a.id, a.phenotype_id, a.external_ids, a.record]),
    );
    await insertRows(
      registry,
      trx,
      'phenotype_association_feature',
      ['dataset_name', 'set_name', 'feature_key', 'association_id'],
      content.associations.flatMap((a) => a.featureKeys.map((k) => [ds, name, k, a.id])),
    );
    await insertRows(
      registry,
      trx,
      'phenotype_term_label',
      ['dataset_name', 'set_name', 'term_id', 'label'],
      content.labels.map((l) => [ds, name, l.termId, l.label]),
    );
    if (alsoInside) await alsoInside(trx);
  });
}

const getSetIn = (db: Kysely<Database>, datasetName: string, name: string) =>
  db
    .selectFrom('phenotype_association_set')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();

export const getPhenotypeSet = (registry: Registry, datasetName: string, name: string) => getSetIn(registry.db, datasetName, name);

/** Sets in (dataset, name) order, optionally of one dataset; `after` is the last [dataset, name] seen. */
export const listPhenotypeSets = (registry: Registry, datasetName: string | undefined, after: [string, string] | undefined, limit?: number) =>
  listSetsOfDatasets(registry, 'phenotype_association_set', datasetName, after, limit);

export async function setOntologies(registry: Registry, datasetName: string, setName: string): Promise<string[]> {
  const rows = await registry.db
    .selectFrom('phenotype_association_set_ontology')
    .select('ontology_name')
    .where('dataset_name', '=', datasetName)
    .where('set_name', '=', setName)
    .orderBy('ontology_name')
    .execute();
  return rows.map((r) => r.ontology_name);
}

/** Term ids the set's Turtle labels `label` (exact). */
export async function termsLabelled(registry: Registry, datasetName: string, setName: string, label: string): Promise<string[]> {
  const rows = await registry.db
    .selectFrom('phenotype_term_label')
    .select('term_id')
    .where('dataset_name', '=', datasetName)
    .where('set_name', '=', setName)
    .where('label', '=', label)
    .execute();
  return rows.map((r) => r.term_id);
}

/** Phenotypes of a set in id order after `after`, optionally only the one with `id`. */
export async function listPhenotypes(
  registry: Registry,
  set: { datasetName: string; setName: string; id?: string },
  after: string | undefined,
  limit: number,
): Promise<PhenotypeRow[]> {
  let q = registry.db
    .selectFrom('phenotype')
    .selectAll()
    .where('dataset_name', '=', set.datasetName)
    .where('set_name', '=', set.setName)
    .orderBy('id')
    .limit(limit);
  if (set.id !== undefined) q = q.where('id', '=', set.id);
  if (after !== undefined) q = q.where('id', '>', after);
  return q.execute();
}

/** Associations of a set in id order after `after`, narrowed to some features and phenotypes when given. */
export async function listAssociations(
  registry: Registry,
  set: { datasetName: string; setName: string; featureKeys?: string[]; phenotypeIds?: string[] },
  after: string | undefined,
  limit: number,
): Promise<AssociationRow[]> {
  const { datasetName, setName, featureKeys, phenotypeIds } = set;
  let q = registry.db
    .selectFrom('phenotype_association')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('set_name', '=', setName)
    .orderBy('id')
    .limit(limit);
  if (phenotypeIds !== undefined) q = q.where('phenotype_id', 'in', phenotypeIds);
  if (featureKeys !== undefined) {
    q = q.where('id', 'in', (eb) =>
      eb
        .selectFrom('phenotype_association_feature')
        .select('association_id')
        .where('dataset_name', '=', datasetName)
        .where('set_name', '=', setName)
        .where('feature_key', 'in', featureKeys),
    );
  }
  if (after !== undefined) q = q.where('id', '>', after);
  return q.execute();
}

export async function removePhenotypeSet(registry: Registry, datasetName: string, name: string, alsoInside?: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await registry.db.transaction().execute(async (trx) => {
    const result = await trx
      .deleteFrom('phenotype_association_set')
      .where('dataset_name', '=', datasetName)
      .where('name', '=', name)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw new UserError(`no phenotype association set '${name}' in dataset '${datasetName}'`);
    if (alsoInside) await alsoInside(trx);
  });
}
