/** Reference sets and references in the registry: tables, migration and queries. */
import type { Kysely } from 'kysely';
import { sortableText, type Migration, type MigrationContext } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';

export interface ReferenceTables {
  reference_set: {
    name: string;
    md5checksum: string;
    description: string | null;
    assembly_id: string | null;
    species_term_id: string | null;
    species_term: string | null;
    source_uri: string | null;
    /** JSON array of accessions. */
    source_accessions: string;
    is_derived: number;
    /** '' for a set registered from a sequence dictionary, which holds no bases. */
    fasta_path: string;
    fai_path: string;
    gzi_path: string | null;
    /** The header or dictionary (SAM/BAM/CRAM/VCF/BCF, `.dict`, `.fai`) a set without bases was read from; null for a FASTA. */
    dictionary_path: string | null;
    created_at: string;
  };
  reference: {
    reference_set_name: string;
    /** Position in the FASTA file, from 0: references are listed in file order. */
    ordinal: number;
    name: string;
    length: number;
    /** '' when the dictionary a set was registered from gives none. */
    md5checksum: string;
    /** The refget digest: the first 24 bytes of the SHA-512 of the upper-cased letters, base64url; null without bases. */
    sha512t24u: string | null;
    /** 1 for a circular sequence (a plasmid, a mitochondrion): ranges across its origin are served. */
    circular: number;
  };
  reference_accession: {
    reference_set_name: string;
    reference_name: string;
    accession: string;
  };
  /**
   * Names of one assembly (`repo set-assembly-aliases`: GRCh37, hg19, hs37d5): a query naming any of
   * them reaches the reference sets whose assembly id is another. Each name is in one group at most.
   */
  assembly_alias: {
    /** As the operator spelt it; matched ignoring case. */
    name: string;
    /** The group's first name when it was made: what ties the names together. */
    assembly_group: string;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends ReferenceTables {}
}

export const referenceMigrations: Migration[] = [
  {
    version: 2,
    name: 'reference sets',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      await db.schema
        .createTable('reference_set')
        .addColumn('name', key, (c) => c.primaryKey())
        .addColumn('md5checksum', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('assembly_id', 'text')
        .addColumn('species_term_id', 'text')
        .addColumn('species_term', 'text')
        .addColumn('source_uri', 'text')
        .addColumn('source_accessions', 'text', (c) => c.notNull())
        .addColumn('is_derived', 'integer', (c) => c.notNull())
        .addColumn('fasta_path', 'text', (c) => c.notNull())
        .addColumn('fai_path', 'text', (c) => c.notNull())
        .addColumn('gzi_path', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('reference_set_md5').on('reference_set').column('md5checksum').execute();
      await db.schema.createIndex('reference_set_assembly').on('reference_set').column('assembly_id').execute();
      await db.schema
        .createTable('reference')
        .addColumn('reference_set_name', key, (c) => c.notNull().references('reference_set.name').onDelete('cascade'))
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('name', key, (c) => c.notNull())
        .addColumn('length', 'bigint', (c) => c.notNull())
        .addColumn('md5checksum', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('reference_pk', ['reference_set_name', 'ordinal'])
        .addUniqueConstraint('reference_name_unique', ['reference_set_name', 'name'])
        .execute();
      await db.schema.createIndex('reference_md5').on('reference').column('md5checksum').execute();
      // No longer read or written (set accessions are searched in memory from source_accessions);
      // kept so that released migrations stay as they ran.
      await db.schema
        .createTable('reference_set_accession')
        .addColumn('reference_set_name', key, (c) => c.notNull().references('reference_set.name').onDelete('cascade'))
        .addColumn('accession', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('reference_set_accession_pk', ['reference_set_name', 'accession'])
        .execute();
      await db.schema.createIndex('reference_set_accession_by_value').on('reference_set_accession').column('accession').execute();
    },
  },
  {
    version: 7,
    name: 'reference accessions',
    async up(db: Kysely<any>, dialect) {
      const key = sortableText(dialect);
      await db.schema
        .createTable('reference_accession')
        .addColumn('reference_set_name', key, (c) => c.notNull())
        .addColumn('reference_name', key, (c) => c.notNull())
        .addColumn('accession', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('reference_accession_pk', ['reference_set_name', 'reference_name', 'accession'])
        .addForeignKeyConstraint('reference_accession_reference', ['reference_set_name', 'reference_name'], 'reference', ['reference_set_name', 'name'], (fk) =>
          fk.onDelete('cascade'),
        )
        .execute();
      await db.schema.createIndex('reference_accession_by_value').on('reference_accession').column('accession').execute();
    },
  },
  {
    version: 8,
    name: 'refget digests, circular sequences and sets without bases',
    async up(db: Kysely<any>, _dialect, context) {
      await db.schema.alterTable('reference').addColumn('sha512t24u', 'text').execute();
      await db.schema.alterTable('reference').addColumn('circular', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('reference_set').addColumn('dictionary_path', 'text').execute();
      await db.schema.createIndex('reference_sha512t24u').on('reference').column('sha512t24u').execute();
      await fillDigests(db, context);
    },
  },
  {
    version: 61,
    name: 'assembly aliases',
    async up(db: Kysely<any>, dialect) {
      await db.schema
        .createTable('assembly_alias')
        .addColumn('name', sortableText(dialect), (c) => c.primaryKey())
        .addColumn('assembly_group', 'text', (c) => c.notNull())
        .execute();
    },
  },
];

/**
 * Computes the refget digest of every reference registered before there was one, reading each FASTA
 * once. A file that cannot be read, or whose sequence no longer has its registered MD5, is reported
 * and its references keep no digest (they are found by MD5 and accession): `repo migrate` must not
 * fail on a file away for a while, since every other command waits for it.
 */
async function fillDigests(db: Kysely<any>, context: MigrationContext): Promise<void> {
  const { scanFasta } = await import('./fasta-scan.js');
  const sets: Array<{ name: string; fasta_path: string }> = await db.selectFrom('reference_set').select(['name', 'fasta_path']).orderBy('name').execute();
  for (const set of sets) {
    const registered: Array<{ name: string; md5checksum: string }> = await db
      .selectFrom('reference')
      .select(['name', 'md5checksum'])
      .where('reference_set_name', '=', set.name)
      .execute();
    let found: Map<string, { md5checksum: string; sha512t24u: string }>;
    try {
      const scan = await scanFasta(set.fasta_path, (read, size) => context.progress(set.fasta_path, read, size));
      found = new Map(scan.sequences.map((s) => [s.name, s]));
    } catch (e) {
      context.warn(`reference set '${set.name}': no refget digests, its FASTA cannot be read (${(e as Error).message}); register it again to have them`);
      continue;
    }
    for (const ref of registered) {
      const sequence = found.get(ref.name);
      if (sequence?.md5checksum !== ref.md5checksum) {
        context.warn(`reference '${ref.name}' of set '${set.name}': no refget digest, the FASTA no longer holds the sequence registered (MD5 ${ref.md5checksum})`);
        continue;
      }
      await db
        .updateTable('reference')
        .set({ sha512t24u: sequence.sha512t24u })
        .where('reference_set_name', '=', set.name)
        .where('name', '=', ref.name)
        .execute();
    }
  }
}

/** Whether a set's references have bases to serve (false for a set registered from a sequence dictionary). */
export const holdsSequence = (set: ReferenceSetRow) => set.dictionary_path === null;


export type ReferenceSetRow = ReferenceTables['reference_set'];
export type ReferenceRow = ReferenceTables['reference'];

export interface NewReferenceSet {
  set: Omit<ReferenceSetRow, 'created_at'>;
  references: Array<Omit<ReferenceRow, 'reference_set_name'>>;
  /** Accessions of single references, by reference name. */
  referenceAccessions: Map<string, string[]>;
}

export async function insertReferenceSet(registry: Registry, input: NewReferenceSet): Promise<void> {
  const { set, references, referenceAccessions } = input;
  await registry.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('reference_set').select('name').where('name', '=', set.name).executeTakeFirst();
    if (existing) throw new UserError(`reference set '${set.name}' already exists in ${registry.location}`);
    await trx.insertInto('reference_set').values({ ...set, created_at: new Date().toISOString() }).execute();
    for (let i = 0; i < references.length; i += 500) {
      await trx
        .insertInto('reference')
        .values(references.slice(i, i + 500).map((r) => ({ ...r, reference_set_name: set.name })))
        .execute();
    }
    const perReference = [...referenceAccessions].flatMap(([reference_name, list]) =>
      [...new Set(list)].map((accession) => ({ reference_set_name: set.name, reference_name, accession })),
    );
    for (let i = 0; i < perReference.length; i += 500) {
      await trx.insertInto('reference_accession').values(perReference.slice(i, i + 500)).execute();
    }
  });
}

export async function getReferenceSetRow(registry: Registry, name: string): Promise<ReferenceSetRow | undefined> {
  return registry.db.selectFrom('reference_set').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Every reference set, by name (searches filter them in memory: there is one set per assembly). */
export async function listReferenceSets(registry: Registry): Promise<ReferenceSetRow[]> {
  return registry.db.selectFrom('reference_set').selectAll().orderBy('name').execute();
}

export async function getReferenceRow(registry: Registry, setName: string, name: string): Promise<ReferenceRow | undefined> {
  return registry.db
    .selectFrom('reference')
    .selectAll()
    .where('reference_set_name', '=', setName)
    .where('name', '=', name)
    .executeTakeFirst();
}

export interface ReferenceFilter {
  referenceSetName?: string;
  md5checksum?: string;
  sha512t24u?: string;
  accession?: string;
}

/** References in (set name, file order); `after` is the [set name, ordinal] of the last one seen. */
export async function listReferences(
  registry: Registry,
  filter: ReferenceFilter,
  after: [string, number] | undefined,
  limit?: number,
): Promise<ReferenceRow[]> {
  let q = registry.db.selectFrom('reference').selectAll().orderBy('reference_set_name').orderBy('ordinal');
  if (filter.referenceSetName !== undefined) q = q.where('reference_set_name', '=', filter.referenceSetName);
  if (filter.md5checksum !== undefined) q = q.where('md5checksum', '=', filter.md5checksum);
  if (filter.sha512t24u !== undefined) q = q.where('sha512t24u', '=', filter.sha512t24u);
  if (filter.accession !== undefined) {
    const accession = filter.accession;
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('reference_accession as a')
          .select('a.accession')
          .whereRef('a.reference_set_name', '=', 'reference.reference_set_name')
          .whereRef('a.reference_name', '=', 'reference.name')
          .where('a.accession', '=', accession),
      ),
    );
  }
  if (after !== undefined) {
    const [setName, ordinal] = after;
    q = q.where((eb) =>
      eb.or([
        eb('reference_set_name', '>', setName),
        eb.and([eb('reference_set_name', '=', setName), eb('ordinal', '>', ordinal)]),
      ]),
    );
  }
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

/** The accessions of each of `names` (references of one set), in accession order. */
export async function referenceAccessions(registry: Registry, setName: string, names: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(names.map((n) => [n, []]));
  if (!names.length) return out;
  const rows = await registry.db
    .selectFrom('reference_accession')
    .select(['reference_name', 'accession'])
    .where('reference_set_name', '=', setName)
    .where('reference_name', 'in', names)
    .orderBy('accession')
    .execute();
  for (const r of rows) out.get(r.reference_name)?.push(r.accession);
  return out;
}

export type AssemblyAliasRow = ReferenceTables['assembly_alias'];

export async function listAssemblyAliases(registry: Registry): Promise<AssemblyAliasRow[]> {
  return registry.db.selectFrom('assembly_alias').selectAll().orderBy('assembly_group').orderBy('name').execute();
}

/**
 * Makes `names` spellings of one assembly: with the names already in a group with any of them, they
 * become one group. Returns every name of the group, in order.
 */
export async function setAssemblyAliases(registry: Registry, names: string[]): Promise<string[]> {
  const given = [...new Set(names.map((n) => n.trim()))];
  if (given.length < 2 || given.some((n) => n === '')) throw new UserError('name at least two spellings of one assembly, none of them empty');
  return registry.db.transaction().execute(async (trx) => {
    const all = await trx.selectFrom('assembly_alias').selectAll().execute();
    const lower = new Set(given.map((n) => n.toLowerCase()));
    const groups = new Set(all.filter((r) => lower.has(r.name.toLowerCase())).map((r) => r.assembly_group));
    const members = new Map<string, string>(all.filter((r) => groups.has(r.assembly_group)).map((r) => [r.name.toLowerCase(), r.name]));
    for (const name of given) if (!members.has(name.toLowerCase())) members.set(name.toLowerCase(), name);
    const group = [...groups].sort()[0] ?? given[0];
    const names = [...members.values()];
    await trx.deleteFrom('assembly_alias').where('name', 'in', names).execute();
    await trx.insertInto('assembly_alias').values(names.map((name) => ({ name, assembly_group: group }))).execute();
    return names.sort();
  });
}

/** Takes a name out of its group of aliases. */
export async function removeAssemblyAlias(registry: Registry, name: string): Promise<void> {
  const all = await listAssemblyAliases(registry);
  const row = all.find((r) => r.name.toLowerCase() === name.toLowerCase());
  if (!row) throw new UserError(`'${name}' is no assembly alias in ${registry.location}`);
  await registry.db.deleteFrom('assembly_alias').where('name', '=', row.name).execute();
}

export async function removeReferenceSet(registry: Registry, name: string): Promise<void> {
  try {
    const result = await registry.db.deleteFrom('reference_set').where('name', '=', name).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw new UserError(`no reference set '${name}' in ${registry.location}`);
  } catch (e) {
    if (e instanceof UserError) throw e;
    if (/foreign key/i.test((e as Error).message)) {
      throw new UserError(`reference set '${name}' is used by a registered variant set or read group set; remove those first`);
    }
    throw e;
  }
}
