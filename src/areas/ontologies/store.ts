/**
 * Ontologies in the registry: one row per ontology and one per term, with the term's `is_a` parents and
 * exact synonyms as JSON. Ontologies are small (the Sequence Ontology has ~2,300 terms), so readers load
 * a whole one into memory (`Ontology`) and answer name lookups and subclass queries there.
 */
import type { Kysely } from 'kysely';
import { insertRows } from '../../registry/bulk.js';
import { sortableText, type Migration } from '../../registry/migrations.js';
import type { Registry } from '../../registry/registry.js';
import type { Database } from '../../registry/schema.js';
import { UserError } from '../../user-error.js';
import { Ontology } from './ontology.js';
import type { OboTerm } from './obo.js';

export interface OntologyTables {
  ontology: {
    name: string;
    /** The OBO file it was loaded from, as the user named it. */
    source: string;
    /** The OBO header's `data-version`, or null. */
    version: string | null;
    term_count: number;
    created_at: string;
  };
  ontology_term: {
    ontology_name: string;
    term_id: string;
    name: string;
    /** JSON arrays of term ids and of names. */
    parents: string;
    synonyms: string;
    obsolete: number;
  };
}

// The registry's Database type holds every area's tables: these are this area's.
declare module '../../registry/schema.js' {
  interface Database extends OntologyTables {}
}

export const ontologyMigrations: Migration[] = [
  {
    version: 12,
    name: 'ontologies',
    async up(db: Kysely<any>, dialect) {
      await db.schema
        .createTable('ontology')
        .addColumn('name', sortableText(dialect), (c) => c.primaryKey())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('version', 'text')
        .addColumn('term_count', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ontology_term')
        .addColumn('ontology_name', sortableText(dialect), (c) => c.notNull().references('ontology.name').onDelete('cascade'))
        .addColumn('term_id', sortableText(dialect), (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('parents', 'text', (c) => c.notNull())
        .addColumn('synonyms', 'text', (c) => c.notNull())
        .addColumn('obsolete', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('ontology_term_pk', ['ontology_name', 'term_id'])
        .execute();
    },
  },
];

export type OntologyRow = OntologyTables['ontology'];

/** Records the terms of one OBO file as ontology `name`, in one transaction; refuses a duplicate name or id. */
export async function addOntology(
  registry: Registry,
  name: string,
  source: string,
  terms: AsyncIterable<OboTerm>,
  /** The file's header tags, complete once `terms` has been read. */
  header: Record<string, string>,
): Promise<number> {
  if (!name.trim()) throw new UserError('an ontology name must not be empty');
  return registry.db.transaction().execute(async (trx) => {
    if (await trx.selectFrom('ontology').select('name').where('name', '=', name).executeTakeFirst()) {
      throw new UserError(`ontology '${name}' already exists in ${registry.location}; remove it first with: ga4gh repo remove-ontology`);
    }
    const rows: unknown[][] = [];
    const seen = new Set<string>();
    for await (const term of terms) {
      if (seen.has(term.id)) throw new UserError(`${source}: term ${term.id} is defined twice`);
      seen.add(term.id);
      rows.push([name, term.id, term.name, JSON.stringify(term.parents), JSON.stringify(term.synonyms), term.obsolete ? 1 : 0]);
    }
    if (rows.length === 0) throw new UserError(`${source}: no [Term] stanzas found`);
    await trx
      .insertInto('ontology')
      .values({ name, source, version: header['data-version'] ?? null, term_count: rows.length, created_at: new Date().toISOString() })
      .execute();
    await insertRows(registry, trx, 'ontology_term', ['ontology_name', 'term_id', 'name', 'parents', 'synonyms', 'obsolete'], rows);
    return rows.length;
  });
}

export async function listOntologies(registry: Registry): Promise<OntologyRow[]> {
  return registry.db.selectFrom('ontology').selectAll().orderBy('name').execute();
}

/** The whole ontology in memory, or undefined when none has that name. */
export async function readOntology(registry: Registry, name: string): Promise<Ontology | undefined> {
  const row = await registry.db.selectFrom('ontology').select('name').where('name', '=', name).executeTakeFirst();
  if (!row) return undefined;
  const terms = await registry.db.selectFrom('ontology_term').selectAll().where('ontology_name', '=', name).execute();
  return new Ontology(
    name,
    terms.map((t) => ({
      id: t.term_id,
      name: t.name,
      parents: JSON.parse(t.parents) as string[],
      synonyms: JSON.parse(t.synonyms) as string[],
      obsolete: Boolean(t.obsolete),
    })),
  );
}

/** Every registered ontology's name and load time, in the order they were registered. */
export async function ontologyLoadTimes(registry: Registry): Promise<Array<{ name: string; loadedAt: string }>> {
  const rows = await registry.db.selectFrom('ontology').select(['name', 'created_at']).orderBy('created_at').orderBy('name').execute();
  return rows.map((r) => ({ name: r.name, loadedAt: r.created_at }));
}

/** The ontology's load time, to know when a copy in memory is stale; undefined when it is gone. */
export async function ontologyLoadedAt(registry: Registry, name: string): Promise<string | undefined> {
  const row = await registry.db.selectFrom('ontology').select('created_at').where('name', '=', name).executeTakeFirst();
  return row?.created_at;
}

/**
 * The refusal of a name no ontology is registered under. It lists the names that are, because an
 * ontology is named after its file unless --name says otherwise (so-xp-simple.obo is 'so-xp-simple').
 */
async function noSuchOntology(db: Kysely<Database>, location: string, name: string): Promise<string> {
  const names = (await db.selectFrom('ontology').select('name').orderBy('name').execute()).map((o) => o.name);
  return `no ontology '${name}' in ${location} (${names.length ? `registered: ${names.join(', ')}` : 'none is registered'})`;
}

/** The ontology, or a UserError naming the registered ones and saying how to load it: for loaders that name one. */
export async function requireOntology(registry: Registry, name: string): Promise<Ontology> {
  const ontology = await readOntology(registry, name);
  if (!ontology) {
    throw new UserError(`${await noSuchOntology(registry.db, registry.location, name)}; add it with: ga4gh repo add-ontology ${registry.location} OBO_FILE --name ${name}`);
  }
  return ontology;
}

/**
 * Removes an ontology. Tables of other areas that name an ontology reference `ontology.name` without
 * cascade, so the database refuses the removal while anything registered uses it.
 */
export async function removeOntology(registry: Registry, name: string): Promise<void> {
  try {
    await registry.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('ontology').select('name').where('name', '=', name).executeTakeFirst();
      if (!row) throw new UserError(await noSuchOntology(trx, registry.location, name));
      await trx.deleteFrom('ontology_term').where('ontology_name', '=', name).execute();
      await trx.deleteFrom('ontology').where('name', '=', name).execute();
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) {
      throw new UserError(`ontology '${name}' is used by registered sets (feature or variant annotation sets); remove those first`);
    }
    throw e;
  }
}

function isForeignKeyViolation(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
