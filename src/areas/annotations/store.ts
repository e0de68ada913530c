/**
 * Variant annotation sets in the registry: one per annotated variant set, named like it, recording
 * which INFO field holds the annotations, its entry columns, the analysis read from the header and the
 * ontology its effects are served from. The annotations themselves are read from the variant set's VCF
 * files on each request.
 */
import type { Kysely } from 'kysely';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import type { Database } from '../../registry/schema.js';
import type { MetadataEntry } from '../variants/vcf-header.js';
import { analysisOf } from './layout.js';

export interface AnnotationTables {
  variant_annotation_set: {
    dataset_name: string;
    /** The variant set's name (the annotation set is named after it). */
    name: string;
    /** INFO field holding the entries: CSQ or ANN. */
    info_field: string;
    /** JSON array of the entry columns, as the header lists them. */
    columns: string;
    /** JSON of the Analysis read from the header (its id is given when served). */
    analysis: string;
    /** The ontology effects are looked up in, or null (effects then carry their names only). */
    ontology_name: string | null;
    created_at: string;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends AnnotationTables {}
}

export const annotationMigrations: Migration[] = [
  {
    version: 42,
    name: 'variant annotation sets',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      await db.schema
        .createTable('variant_annotation_set')
        .addColumn('dataset_name', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('info_field', 'text', (c) => c.notNull())
        .addColumn('columns', 'text', (c) => c.notNull())
        .addColumn('analysis', 'text', (c) => c.notNull())
        // No ON DELETE action: an ontology in use cannot be removed.
        .addColumn('ontology_name', key, (c) => c.references('ontology.name'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('variant_annotation_set_pk', ['dataset_name', 'name'])
        .addForeignKeyConstraint('variant_annotation_set_variant_set', ['dataset_name', 'name'], 'variant_set', ['dataset_name', 'name'], (fk) =>
          fk.onDelete('cascade'),
        )
        .execute();
    },
  },
  {
    version: 43,
    name: 'variant annotation analysis from the header',
    // Rewrites each set's analysis from its variant set's stored header lines, as a load now reads them
    // (the header's own name, description and software lines; dates as ISO 8601 date-times).
    async up(db: Kysely<any>) {
      const sets = (await db
        .selectFrom('variant_annotation_set as a')
        .innerJoin('variant_set as v', (join) => join.onRef('v.dataset_name', '=', 'a.dataset_name').onRef('v.name', '=', 'a.name'))
        .select(['a.dataset_name', 'a.name', 'v.metadata'])
        .execute()) as Array<{ dataset_name: string; name: string; metadata: string }>;
      for (const set of sets) {
        await db
          .updateTable('variant_annotation_set')
          .set({ analysis: JSON.stringify(analysisOf(JSON.parse(set.metadata) as MetadataEntry[], set.name)) })
          .where('dataset_name', '=', set.dataset_name)
          .where('name', '=', set.name)
          .execute();
      }
    },
  },
];

export type AnnotationSetRow = AnnotationTables['variant_annotation_set'];
export type NewAnnotationSet = Omit<AnnotationSetRow, 'dataset_name' | 'name' | 'created_at'>;

/** Records the annotation set of a variant set, inside the transaction that records the variant set. */
export async function insertAnnotationSet(trx: Kysely<Database>, datasetName: string, name: string, set: NewAnnotationSet): Promise<void> {
  await trx
    .insertInto('variant_annotation_set')
    .values({ ...set, dataset_name: datasetName, name, created_at: new Date().toISOString() })
    .execute();
}

export async function getAnnotationSetRow(registry: Registry, datasetName: string, name: string): Promise<AnnotationSetRow | undefined> {
  return registry.db
    .selectFrom('variant_annotation_set')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function listAnnotationSets(registry: Registry): Promise<AnnotationSetRow[]> {
  return registry.db.selectFrom('variant_annotation_set').selectAll().orderBy('dataset_name').orderBy('name').execute();
}

export async function ontologyNames(registry: Registry): Promise<string[]> {
  return (await registry.db.selectFrom('ontology').select('name').orderBy('name').execute()).map((r) => r.name);
}
