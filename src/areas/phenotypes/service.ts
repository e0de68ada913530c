/**
 * Phenotype association sets, phenotypes and feature-phenotype associations: searches as typed pages.
 * Rows are read from the registry in id order, in batches; criteria the database cannot test cheaply
 * (patterns, ontology terms with their subclasses) are tested here on each row, and a page ends once
 * it holds pageSize records (plus one, to know whether more follow).
 */
import { readableRows } from '../../access/request-access.js';
import { GAException, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds, namesOfId } from '../../protocol/ids.js';
import { isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import type { Ontology } from '../ontologies/ontology.js';
import { OntologyCache } from '../ontologies/cache.js';
import type {
  AssociationsQuery,
  EvidenceQueryValue,
  FeaturePhenotypeAssociationRecord,
  PhenotypeAssociationSetRecord,
  PhenotypeInstanceRecord,
  PhenotypesQuery,
  Term,
} from './messages.js';
import { PatternError, SafePattern } from './pattern.js';
import {
  getPhenotypeSet,
  listAssociations,
  listPhenotypes,
  listPhenotypeSets,
  setOntologies,
  termsLabelled,
  type AssociationRow,
  type PhenotypeAssociationSetRow,
  type PhenotypeRow,
} from './store.js';
import { Curies } from './terms.js';

export const phenotypeSetId = (datasetName: string, name: string) =>
  encodeId([datasetName, IdKinds.phenotypeAssociationSet.tag, name]);

/** The most ids one association search may list per field. */
export const MAX_IDS = 1000;
/** Rows read per registry query while filtering. */
const BATCH = 500;

export function toPhenotypeSetRecord(row: PhenotypeAssociationSetRow): PhenotypeAssociationSetRecord {
  return {
    id: phenotypeSetId(row.dataset_name, row.name),
    name: row.name,
    datasetId: datasetId(row.dataset_name),
    info: row.version !== null ? { version: [row.version] } : undefined,
  };
}

interface SetContext {
  row: PhenotypeAssociationSetRow;
  curies: Curies;
  /** The set's ontologies by name: read only by searches with a term to widen. */
  ontologyNames: string[];
}

type SetPosition = [string, string];
const isSetPosition = (p: unknown): p is SetPosition => Array.isArray(p) && p.length === 2 && p.every(isString);

function patternOf(source: string | undefined, field: string): SafePattern | undefined {
  if (source === undefined) return undefined;
  try {
    return new SafePattern(source);
  } catch (e) {
    if (e instanceof PatternError) throw new GAException('invalidRequest', `field '${field}' is not a supported pattern: ${e.message}`);
    throw e;
  }
}

const given = (term: Term | undefined): term is Term => term !== undefined && Boolean(term.termId || term.term);

/**
 * Reads rows in id order after `after`, keeping those `keep` accepts, until pageSize + 1 are kept or
 * the rows run out (each batch is its own query, so a long scan never holds the event loop).
 */
async function scan<Row extends { id: string }>(
  fetch: (after: string | undefined, limit: number) => Promise<Row[]>,
  keep: ((row: Row) => boolean) | undefined,
  pageSize: number,
  after: string | undefined,
): Promise<Row[]> {
  const wanted = pageSize + 1;
  if (!keep) return fetch(after, wanted);
  const kept: Row[] = [];
  const batch = Math.max(wanted, BATCH);
  let cursor = after;
  for (;;) {
    const rows = await fetch(cursor, batch);
    for (const row of rows) {
      if (keep(row)) {
        kept.push(row);
        if (kept.length === wanted) return kept;
      }
    }
    if (rows.length < batch) return kept;
    cursor = rows[rows.length - 1].id;
  }
}

export function phenotypeService(registry: Registry, limits: PagingLimits, cacheMs: number) {
  const contexts = new RegistryCache<SetContext>(cacheMs, 1000);
  const ontologies = new OntologyCache(registry, cacheMs);

  async function setNamed(id: string | undefined): Promise<SetContext> {
    if (id === undefined) {
      throw new GAException('notFound', "field 'phenotypeAssociationSetId' is required: no phenotype association set named");
    }
    const [datasetName, , name] = decodeId(id, IdKinds.phenotypeAssociationSet);
    const context = await contexts.get(`${datasetName}\u0000${name}`, async () => {
      const row = await getPhenotypeSet(registry, datasetName, name);
      if (!row) return undefined;
      const ontologyNames = await setOntologies(registry, datasetName, name);
      return { row, curies: new Curies(JSON.parse(row.prefixes) as Record<string, string>), ontologyNames };
    });
    if (!context) throw notFound('phenotype association set', id);
    return context;
  }

  /**
   * The term ids a query term stands for: its id (or the terms its label names, in the set's Turtle or
   * its ontologies) with every subclass the set's ontologies know. Empty when nothing is known by it.
   */
  async function termsOf(context: SetContext, term: Term): Promise<Set<string>> {
    const { row, curies } = context;
    const loaded: Ontology[] = [];
    for (const n of context.ontologyNames) {
      const found = await ontologies.get(n);
      if (found) loaded.push(found.ontology);
    }
    const ids: string[] = [];
    if (term.termId) ids.push(curies.normalize(term.termId));
    else if (term.term) {
      ids.push(...(await termsLabelled(registry, row.dataset_name, row.name, term.term)));
      for (const o of loaded) {
        const found = o.termByName(term.term);
        if (found) ids.push(found.id);
      }
      if (ids.length === 0 && term.term.includes(':')) ids.push(curies.normalize(term.term));
    }
    const all = new Set<string>();
    for (const id of ids) {
      all.add(id);
      for (const o of loaded) if (o.term(id)) for (const sub of o.withSubclasses(id)) all.add(sub);
    }
    return all;
  }

  async function evidenceTest(context: SetContext, query: EvidenceQueryValue, index: number) {
    const types = given(query.evidenceType) ? await termsOf(context, query.evidenceType) : undefined;
    const pattern = patternOf(query.description, `evidence[${index}].description`);
    const externals = (query.externalIdentifiers ?? []).flatMap((x) => {
      const db = x.database ?? '';
      const id = x.identifier ?? '';
      return db && id ? [`${db}:${id}`, db + id, context.curies.normalize(`${db}:${id}`)] : [];
    });
    const wantsExternal = (query.externalIdentifiers ?? []).length > 0;
    return (record: FeaturePhenotypeAssociationRecord, externalIds: () => Set<string>): boolean => {
      const evidence = record.evidence ?? [];
      if (types && !evidence.some((e) => e.evidenceType?.termId !== undefined && types.has(e.evidenceType.termId))) return false;
      if (pattern) {
        const texts = [
          ...evidence.flatMap((e) => [e.description, e.evidenceType?.term]),
          ...(record.environmentalContexts ?? []).map((c) => c.description),
        ];
        if (!texts.some((t) => t !== undefined && pattern.test(t))) return false;
      }
      if (wantsExternal) {
        const ids = externalIds();
        if (!externals.some((x) => ids.has(x))) return false;
      }
      return true;
    };
  }

  return {
    async searchSets(request: { datasetId?: string } & PageQuery): Promise<SearchPage<PhenotypeAssociationSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('phenotypeassociationsets', request, limits, isSetPosition);
      // Without a datasetId, the sets of every dataset.
      const datasetName = request.datasetId !== undefined ? await datasetNameOf(registry, request.datasetId) : undefined;
      const setPosition = (r: { dataset_name: string; name: string }): SetPosition => [r.dataset_name, r.name];
      // Only the rows of datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listPhenotypeSets(registry, datasetName, from, limit), after, pageSize, (r) => r.dataset_name, setPosition);
      return keysetPage(rows, pageSize, fingerprint, toPhenotypeSetRecord, setPosition);
    },

    async searchPhenotypes(request: PhenotypesQuery): Promise<SearchPage<PhenotypeInstanceRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('phenotypes', request, limits, isString);
      const context = await setNamed(request.phenotypeAssociationSetId);
      const pattern = patternOf(request.description, 'description');
      const types = given(request.type) ? await termsOf(context, request.type) : undefined;
      const onsets = given(request.ageOfOnset) ? await termsOf(context, request.ageOfOnset) : undefined;
      const qualifierTerms = (request.qualifiers ?? []).filter(given);
      let qualifiers: Set<string> | undefined;
      if (qualifierTerms.length) {
        qualifiers = new Set();
        for (const q of qualifierTerms) for (const id of await termsOf(context, q)) qualifiers.add(id);
      }
      const filtered = pattern || types || onsets || qualifiers;
      const keep = filtered
        ? (row: PhenotypeRow) =>
            (!pattern || (row.description !== null && pattern.test(row.description))) &&
            (!types || (row.type_id !== null && types.has(row.type_id))) &&
            (!onsets || (row.age_of_onset_id !== null && onsets.has(row.age_of_onset_id))) &&
            (!qualifiers || (JSON.parse(row.qualifier_ids) as string[]).some((q) => qualifiers.has(q)))
        : undefined;
      const { dataset_name: datasetName, name: setName } = context.row;
      const rows = await scan(
        (from, limit) => listPhenotypes(registry, { datasetName, setName, id: request.id }, from, limit),
        keep,
        pageSize,
        after,
      );
      return keysetPage(rows, pageSize, fingerprint, (r) => JSON.parse(r.record) as PhenotypeInstanceRecord, (r) => r.id);
    },

    async searchAssociations(request: AssociationsQuery): Promise<SearchPage<FeaturePhenotypeAssociationRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('featurephenotypeassociations', request, limits, isString);
      const context = await setNamed(request.phenotypeAssociationSetId);
      const { dataset_name: datasetName, name: setName } = context.row;
      for (const field of ['featureIds', 'phenotypeIds', 'evidence'] as const) {
        const n = request[field]?.length ?? 0;
        if (n > MAX_IDS) throw new GAException('invalidRequest', `field '${field}' lists ${n} entries; at most ${MAX_IDS} per search`);
      }
      let featureKeys: string[] | undefined;
      if (request.featureIds?.length) {
        // Features of this set's own feature set. Any other id (a feature of another set, a foreign IRI
        // such as a COSMIC gene's, text that is no id) is associated with nothing here.
        featureKeys = request.featureIds.flatMap((id) => {
          const names = namesOfId(id, IdKinds.feature);
          return names && names[0] === datasetName && names[2] === setName ? [names[3]] : [];
        });
      }
      const phenotypeIds = request.phenotypeIds?.length ? [...new Set(request.phenotypeIds)] : undefined;
      const tests = await Promise.all((request.evidence ?? []).map((q, i) => evidenceTest(context, q, i)));
      const empty = { records: [], positionAfter: () => undefined, more: false, fingerprint };
      if (featureKeys?.length === 0) return empty;
      // Rows a scan rejects are dropped with their batch, so their records need not be kept.
      const parsed = new WeakMap<AssociationRow, FeaturePhenotypeAssociationRecord>();
      const recordOf = (row: AssociationRow) => {
        let record = parsed.get(row);
        if (!record) parsed.set(row, (record = JSON.parse(row.record) as FeaturePhenotypeAssociationRecord));
        return record;
      };
      // Evidence queries: an association matches when any one of them matches it.
      const keep = tests.length
        ? (row: AssociationRow) => {
            // Parsed only when an evidence query names external identifiers, once per row.
            let ids: Set<string> | undefined;
            const externalIds = () => (ids ??= new Set(JSON.parse(row.external_ids) as string[]));
            return tests.some((test) => test(recordOf(row), externalIds));
          }
        : undefined;
      const rows = await scan(
        (from, limit) => listAssociations(registry, { datasetName, setName, featureKeys, phenotypeIds }, from, limit),
        keep,
        pageSize,
        after,
      );
      return keysetPage(rows, pageSize, fingerprint, recordOf, (r) => r.id);
    },
  };
}

export type PhenotypeService = ReturnType<typeof phenotypeService>;
