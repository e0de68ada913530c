/**
 * Variant sets in the registry: the set (with its header metadata), its files (VCF or BCF) with the
 * contigs each holds, and its call sets (samples, in column order). The files themselves stay where
 * they are.
 */
import type { Kysely } from 'kysely';
import type { Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import type { Database } from '../../registry/schema.js';
import { UserError } from '../../user-error.js';

export interface VariantTables {
  variant_set: {
    dataset_name: string;
    name: string;
    reference_set_name: string;
    /** JSON array of MetadataEntry (vcf-header.ts), one per header line. */
    metadata: string;
    created_at: string;
  };
  variant_set_file: {
    dataset_name: string;
    variant_set_name: string;
    /** Position in the set, from 0: files are searched in this order. */
    ordinal: number;
    path: string;
    index_path: string;
    /** 'tbi' or 'csi' ('csi' for a BCF). */
    index_kind: string;
    /** JSON array of the reference names that hold records (a VCF's index lists those; a BCF's holds them). */
    contigs: string;
    /** 'VCF' or 'BCF'. */
    format: string;
    /** A BCF's contig dictionary: JSON array of the contig names by the number its records and index give them; null for a VCF. */
    reference_names: string | null;
  };
  /**
   * Another encoding of a set's files (`add-variantset --alternate`): a BCF beside each VCF, or a VCF
   * beside each BCF, with the same contigs and samples. htsget serves the set in that format from
   * these; the 0.6.0a10 searches read the set's own files.
   */
  variant_set_alternate_file: {
    dataset_name: string;
    variant_set_name: string;
    /** 'BCF' or 'VCF'. */
    format: string;
    /** The place of the file of the set it encodes (variant_set_file.ordinal). */
    ordinal: number;
    path: string;
    index_path: string;
    /** 'csi' for a BCF; 'tbi' or 'csi' for a VCF. */
    index_kind: string;
    /**
     * JSON array of the contig names by the number the file's records and index give them (a BCF's
     * contig dictionary; for a VCF, the names its index lists).
     */
    reference_names: string;
  };
  call_set: {
    dataset_name: string;
    variant_set_name: string;
    /** The sample's column in the VCF, from 0: call sets and calls are in this order. */
    ordinal: number;
    name: string;
  };
  /**
   * The INFO fields of a set that hold allele frequencies in a population (`repo
   * set-beacon-frequencies`: AF for everyone, EAS_AF for East Asians), which Beacon answers as
   * `frequencyInPopulations`, and the study they come from.
   */
  variant_set_beacon_frequency: {
    dataset_name: string;
    variant_set_name: string;
    info_field: string;
    population: string;
    /** The study, its URL and version: one per set, repeated on each row. */
    source: string;
    source_reference: string;
    version: string | null;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends VariantTables {}
}

const setKey = ['dataset_name', 'variant_set_name'] as const;

export const variantMigrations: Migration[] = [
  {
    version: 3,
    name: 'variant sets',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('variant_set')
        .addColumn('dataset_name', 'text', (c) => c.notNull().references('dataset.name').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('reference_set_name', 'text', (c) => c.notNull().references('reference_set.name').onDelete('restrict'))
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('variant_set_pk', ['dataset_name', 'name'])
        .execute();
      await db.schema.createIndex('variant_set_by_reference_set').on('variant_set').column('reference_set_name').execute();
      await db.schema
        .createTable('variant_set_file')
        .addColumn('dataset_name', 'text', (c) => c.notNull())
        .addColumn('variant_set_name', 'text', (c) => c.notNull())
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('index_path', 'text', (c) => c.notNull())
        .addColumn('index_kind', 'text', (c) => c.notNull())
        .addColumn('contigs', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('variant_set_file_pk', [...setKey, 'ordinal'])
        .addForeignKeyConstraint('variant_set_file_set', [...setKey], 'variant_set', ['dataset_name', 'name'], (fk) => fk.onDelete('cascade'))
        .execute();
      await db.schema
        .createTable('call_set')
        .addColumn('dataset_name', 'text', (c) => c.notNull())
        .addColumn('variant_set_name', 'text', (c) => c.notNull())
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('call_set_pk', [...setKey, 'ordinal'])
        .addUniqueConstraint('call_set_name_unique', [...setKey, 'name'])
        .addForeignKeyConstraint('call_set_set', [...setKey], 'variant_set', ['dataset_name', 'name'], (fk) => fk.onDelete('cascade'))
        .execute();
    },
  },
  {
    version: 22,
    name: 'variant set alternates',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('variant_set_alternate_file')
        .addColumn('dataset_name', 'text', (c) => c.notNull())
        .addColumn('variant_set_name', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('index_path', 'text', (c) => c.notNull())
        .addColumn('index_kind', 'text', (c) => c.notNull())
        .addColumn('reference_names', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('variant_set_alternate_file_pk', [...setKey, 'format', 'ordinal'])
        .addForeignKeyConstraint('variant_set_alternate_file_set', [...setKey], 'variant_set', ['dataset_name', 'name'], (fk) => fk.onDelete('cascade'))
        .execute();
    },
  },
  {
    version: 52,
    name: 'variant set files in BCF',
    async up(db: Kysely<any>) {
      await db.schema.alterTable('variant_set_file').addColumn('format', 'text', (c) => c.notNull().defaultTo('VCF')).execute();
      await db.schema.alterTable('variant_set_file').addColumn('reference_names', 'text').execute();
    },
  },
  {
    version: 62,
    name: 'variant set beacon frequencies',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('variant_set_beacon_frequency')
        .addColumn('dataset_name', 'text', (c) => c.notNull())
        .addColumn('variant_set_name', 'text', (c) => c.notNull())
        .addColumn('info_field', 'text', (c) => c.notNull())
        .addColumn('population', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('source_reference', 'text', (c) => c.notNull())
        .addColumn('version', 'text')
        .addPrimaryKeyConstraint('variant_set_beacon_frequency_pk', [...setKey, 'info_field'])
        .addForeignKeyConstraint('variant_set_beacon_frequency_set', [...setKey], 'variant_set', ['dataset_name', 'name'], (fk) => fk.onDelete('cascade'))
        .execute();
    },
  },
];

export type VariantSetRow = VariantTables['variant_set'];
export type VariantSetFileRow = VariantTables['variant_set_file'];
export type CallSetRow = VariantTables['call_set'];
export type VariantSetAlternateFileRow = VariantTables['variant_set_alternate_file'];

export interface NewVariantSet {
  set: Omit<VariantSetRow, 'created_at'>;
  files: Array<Omit<VariantSetFileRow, 'dataset_name' | 'variant_set_name'>>;
  /** Alternate encodings of the files, one for each when given. */
  alternates?: Array<Omit<VariantSetAlternateFileRow, 'dataset_name' | 'variant_set_name'>>;
  samples: string[];
}

/** Records a variant set, its files and call sets in one transaction (with what `also` records beside them). */
export async function insertVariantSet(registry: Registry, input: NewVariantSet, also?: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
  const { set, files, alternates = [], samples } = input;
  const owner = { dataset_name: set.dataset_name, variant_set_name: set.name };
  await registry.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('variant_set')
      .select('name')
      .where('dataset_name', '=', set.dataset_name)
      .where('name', '=', set.name)
      .executeTakeFirst();
    if (existing) throw new UserError(`variant set '${set.name}' already exists in dataset '${set.dataset_name}'; choose another with --name`);
    await trx.insertInto('variant_set').values({ ...set, created_at: new Date().toISOString() }).execute();
    await trx
      .insertInto('variant_set_file')
      .values(files.map((f) => ({ ...f, ...owner })))
      .execute();
    if (alternates.length) {
      await trx
        .insertInto('variant_set_alternate_file')
        .values(alternates.map((f) => ({ ...f, ...owner })))
        .execute();
    }
    for (let i = 0; i < samples.length; i += 500) {
      await trx
        .insertInto('call_set')
        .values(samples.slice(i, i + 500).map((name, j) => ({ ...owner, ordinal: i + j, name })))
        .execute();
    }
    await also?.(trx);
  });
}

export async function getVariantSetRow(registry: Registry, datasetName: string, name: string): Promise<VariantSetRow | undefined> {
  return registry.db
    .selectFrom('variant_set')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Variant sets by (dataset, name); `after` is the name of the last one seen within the dataset. */
export async function listVariantSets(
  registry: Registry,
  datasetName: string | undefined,
  after: string | undefined,
  limit?: number,
): Promise<VariantSetRow[]> {
  let q = registry.db.selectFrom('variant_set').selectAll().orderBy('dataset_name').orderBy('name');
  if (datasetName !== undefined) q = q.where('dataset_name', '=', datasetName);
  if (after !== undefined) q = q.where('name', '>', after);
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

export async function listVariantSetFiles(registry: Registry, datasetName: string, setName: string): Promise<VariantSetFileRow[]> {
  return registry.db
    .selectFrom('variant_set_file')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('variant_set_name', '=', setName)
    .orderBy('ordinal')
    .execute();
}

/** The alternate files of one variant set (or of every set), by format and then in the order of the files they encode. */
export async function listVariantSetAlternateFiles(registry: Registry, set?: { datasetName: string; name: string }): Promise<VariantSetAlternateFileRow[]> {
  let q = registry.db
    .selectFrom('variant_set_alternate_file')
    .selectAll()
    .orderBy('dataset_name')
    .orderBy('variant_set_name')
    .orderBy('format')
    .orderBy('ordinal');
  if (set) q = q.where('dataset_name', '=', set.datasetName).where('variant_set_name', '=', set.name);
  return q.execute();
}

/** The call sets of a variant set, in VCF column order. */
export async function listCallSets(registry: Registry, datasetName: string, setName: string): Promise<CallSetRow[]> {
  return registry.db
    .selectFrom('call_set')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('variant_set_name', '=', setName)
    .orderBy('ordinal')
    .execute();
}

export async function getCallSetRow(registry: Registry, datasetName: string, setName: string, name: string): Promise<CallSetRow | undefined> {
  return registry.db
    .selectFrom('call_set')
    .selectAll()
    .where('dataset_name', '=', datasetName)
    .where('variant_set_name', '=', setName)
    .where('name', '=', name)
    .executeTakeFirst();
}

export type BeaconFrequencyRow = VariantTables['variant_set_beacon_frequency'];

/** The frequency fields of one set (or of every set), in (dataset, set, field) order. */
export async function listBeaconFrequencies(registry: Registry, set?: { datasetName: string; name: string }): Promise<BeaconFrequencyRow[]> {
  let q = registry.db.selectFrom('variant_set_beacon_frequency').selectAll().orderBy('dataset_name').orderBy('variant_set_name').orderBy('info_field');
  if (set) q = q.where('dataset_name', '=', set.datasetName).where('variant_set_name', '=', set.name);
  return q.execute();
}

export interface BeaconFrequencies {
  /** INFO field -> population. */
  fields: Array<[string, string]>;
  source: string;
  sourceReference: string;
  version?: string;
}

/**
 * Replaces the frequency fields of a set. Each must be an INFO field its header declares as one
 * Float per alternate allele (Number=A), or one Float (Number=1) for a set of biallelic lines.
 */
export async function setBeaconFrequencies(registry: Registry, datasetName: string, name: string, frequencies: BeaconFrequencies): Promise<void> {
  const row = await getVariantSetRow(registry, datasetName, name);
  if (!row) throw new UserError(`no variant set '${name}' in dataset '${datasetName}' of ${registry.location}`);
  const declared = new Map((JSON.parse(row.metadata) as Array<{ key: string; type?: string; number?: string }>).map((m) => [m.key, m]));
  for (const [field] of frequencies.fields) {
    const info = declared.get(`INFO.${field}`);
    if (!info) throw new UserError(`variant set '${name}' declares no INFO field '${field}' in its header`);
    if (info.type !== 'Float' || (info.number !== 'A' && info.number !== '1')) {
      throw new UserError(`INFO field '${field}' of variant set '${name}' is Number=${info.number} Type=${info.type}; an allele frequency is Number=A (or 1) Type=Float`);
    }
  }
  await registry.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('variant_set_beacon_frequency').where('dataset_name', '=', datasetName).where('variant_set_name', '=', name).execute();
    await trx
      .insertInto('variant_set_beacon_frequency')
      .values(
        frequencies.fields.map(([info_field, population]) => ({
          dataset_name: datasetName,
          variant_set_name: name,
          info_field,
          population,
          source: frequencies.source,
          source_reference: frequencies.sourceReference,
          version: frequencies.version ?? null,
        })),
      )
      .execute();
  });
}

export async function removeBeaconFrequencies(registry: Registry, datasetName: string, name: string): Promise<void> {
  const result = await registry.db.deleteFrom('variant_set_beacon_frequency').where('dataset_name', '=', datasetName).where('variant_set_name', '=', name).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new UserError(`variant set '${name}' of dataset '${datasetName}' has no Beacon frequency fields`);
}

export async function removeVariantSet(registry: Registry, datasetName: string, name: string): Promise<void> {
  const result = await registry.db
    .deleteFrom('variant_set')
    .where('dataset_name', '=', datasetName)
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) {
    throw new UserError(`no variant set '${name}' in dataset '${datasetName}' of ${registry.location}`);
  }
}
