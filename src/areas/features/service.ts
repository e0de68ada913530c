/** Feature sets and features: searches and gets, as typed records. */
import { readableRows } from '../../access/request-access.js';
import { attributesOf, type AttributesRecord } from '../../protocol/common.js';
import { GAException, invalid, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, idEncoder, IdKinds } from '../../protocol/ids.js';
import { isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import { searchWindow } from '../../protocol/window.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import { OntologyCache } from '../ontologies/cache.js';
import type { TermMatcher } from '../ontologies/matcher.js';
import type { Term } from '../ontologies/ontology.js';
import { referenceSetId } from '../references/service.js';
import { listReferences } from '../references/store.js';
import type { FeatureSetRecord, FeaturesQuery } from './messages.js';
import type { NamingForm } from '../../protocol/schema.js';
import { featureJsonWriter, memoized } from './wire.js';
import {
  getFeatureRow,
  getFeatureSet,
  listFeatureRows,
  listFeatureSets,
  positionOf,
  referencesWithFeatures,
  type AttributeValues,
  type FeaturePosition,
  type FeatureQuery,
  type FeatureRow,
  type FeatureSetRow,
} from './store.js';

export const featureSetId = (datasetName: string, name: string) => encodeId([datasetName, 'fs', name]);
export const featureId = (datasetName: string, setName: string, key: string) => encodeId([datasetName, 'fs', setName, key]);

/** The most feature types one search may list. */
export const MAX_FEATURE_TYPES = 100;

const attributesRecord = (json: string | null): AttributesRecord | undefined =>
  json !== null ? attributesOf(JSON.parse(json) as AttributeValues) : undefined;

export function toFeatureSetRecord(row: FeatureSetRow): FeatureSetRecord {
  return {
    id: featureSetId(row.dataset_name, row.name),
    datasetId: datasetId(row.dataset_name),
    referenceSetId: row.reference_set_name !== null ? referenceSetId(row.reference_set_name) : undefined,
    name: row.name,
    sourceUri: row.source_uri ?? undefined,
    attributes: attributesRecord(row.attributes),
  };
}

interface SetWriters {
  idOf: (key: string) => string;
  /** What the writers match stored type names with, and its answers. */
  terms: TermMatcher;
  termOf: (name: string) => Term | undefined;
  forms: Partial<Record<NamingForm, (row: FeatureRow, idOf: (key: string) => string) => string>>;
}
/** Each set row's id encoder and writers (set rows are kept a while by the service's cache). */
const writersOf = new WeakMap<FeatureSetRow, SetWriters>();

/** Writes stored rows of `set` as Feature JSON, types matched by `terms`; one writer per page, or per record. */
export function featureWriter(set: FeatureSetRow, terms: TermMatcher): (row: FeatureRow, form: NamingForm) => string {
  let writers = writersOf.get(set);
  if (!writers || writers.terms !== terms) {
    const idOf = writers?.idOf ?? idEncoder([set.dataset_name, 'fs', set.name]);
    writers = { idOf, terms, termOf: memoized((name) => terms.resolve(name)), forms: {} };
    writersOf.set(set, writers);
  }
  const { forms, termOf } = writers;
  const idOf = memoized(writers.idOf);
  return (row, form) => (forms[form] ??= featureJsonWriter(featureSetId(set.dataset_name, set.name), form, termOf))(row, idOf);
}

type SetPosition = [string, string];
const isSetPosition = (p: unknown): p is SetPosition => Array.isArray(p) && p.length === 2 && p.every(isString);
const isFeaturePosition = (p: unknown): p is FeaturePosition =>
  Array.isArray(p) &&
  p.length === 3 &&
  (p[0] === null || isString(p[0])) &&
  p.slice(1).every((n) => Number.isSafeInteger(n) && n >= 0);

/** Reference orders of feature sets kept at most (each a list of reference names). */
const REFERENCE_ORDERS_KEPT = 256;

export function featureService(registry: Registry, limits: PagingLimits, registryCacheMs = 0) {
  // Set rows are read by every search and get: kept briefly, as the other areas keep theirs.
  const setRows = new RegistryCache<FeatureSetRow>(registryCacheMs);
  const setRow = (datasetName: string, name: string) =>
    setRows.get(JSON.stringify([datasetName, name]), () => getFeatureSet(registry, datasetName, name));
  // Types are matched to terms when the search runs: a set loaded before its ontology gets them too.
  const ontologies = new OntologyCache(registry, registryCacheMs);

  /**
   * The references a set has features on, in the order of its reference set (the FASTA's), as the
   * reference server searched them; any outside it after those, by name. Neither changes while the set
   * exists, so the order is kept by set (a set added again has a new creation time).
   */
  const referenceOrders = new Map<string, Promise<string[]>>();
  function referenceOrderOf(set: FeatureSetRow): Promise<string[]> {
    const key = `${set.id}\0${set.created_at}`;
    let order = referenceOrders.get(key);
    if (!order) {
      order = (async () => {
        const holding = new Set(referencesWithFeatures(set));
        const references = set.reference_set_name !== null ? await listReferences(registry, { referenceSetName: set.reference_set_name }, undefined) : [];
        const inSet = references.map((r) => r.name).filter((n) => holding.has(n));
        const placed = new Set(inSet);
        return [...inSet, ...[...holding].filter((n) => !placed.has(n)).sort()];
      })();
      if (referenceOrders.size >= REFERENCE_ORDERS_KEPT) referenceOrders.delete(referenceOrders.keys().next().value!);
      referenceOrders.set(key, order);
      order.catch(() => referenceOrders.delete(key));
    }
    return order;
  }

  async function setNamed(id: string): Promise<FeatureSetRow> {
    const [datasetName, , name] = decodeId(id, IdKinds.featureSet);
    const row = await setRow(datasetName, name);
    if (!row) throw notFound('feature set', id);
    return row;
  }

  /**
   * The type filter: each requested type as an ontology term id or name, widened to its subclasses,
   * when the set's ontologies know it; otherwise matched against the type names of the file. Type
   * names stored without a term id that the ontologies now match to one of those terms match too.
   */
  function typeFilter(set: FeatureSetRow, terms: TermMatcher, requested: string[]): FeatureQuery['types'] {
    if (requested.length > MAX_FEATURE_TYPES) {
      throw invalid(`field 'featureTypes' lists ${requested.length} types; at most ${MAX_FEATURE_TYPES} per search`);
    }
    const ids = new Set<string>();
    const names = new Set<string>();
    for (const type of requested) {
      const term = terms.resolve(type);
      if (term) for (const id of terms.withSubclasses(term.id)) ids.add(id);
      else {
        ids.add(type);
        names.add(type);
      }
    }
    for (const name of JSON.parse(set.unmatched_types) as string[]) {
      const term = terms.resolve(name);
      if (term && ids.has(term.id)) names.add(name);
    }
    return { ids: [...ids], terms: [...names] };
  }

  return {
    async searchSets(request: { datasetId?: string } & PageQuery): Promise<SearchPage<FeatureSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('featuresets', request, limits, isSetPosition);
      const datasetName = request.datasetId !== undefined ? await datasetNameOf(registry, request.datasetId) : undefined;
      const setPosition = (r: { dataset_name: string; name: string }): SetPosition => [r.dataset_name, r.name];
      // Only the rows of datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listFeatureSets(registry, datasetName, from, limit), after, pageSize, (r) => r.dataset_name, setPosition);
      return keysetPage(rows, pageSize, fingerprint, toFeatureSetRecord, setPosition);
    },

    getSet: async (id: string) => toFeatureSetRecord(await setNamed(id)),

    async searchFeatures(request: FeaturesQuery): Promise<SearchPage<FeatureRow>> {
      const { pageSize, fingerprint, after } = keysetCursor('features', request, limits, isFeaturePosition);
      const { featureSetId: setIdText, parentId, name, geneSymbol, referenceName } = request;
      if (setIdText === undefined && parentId === undefined) {
        throw new GAException('missingField', "field 'featureSetId' is required (or 'parentId')");
      }
      const { start, end } = searchWindow(request);

      let set: FeatureSetRow | undefined;
      let parentKey: string | undefined;
      if (parentId !== undefined) {
        const [datasetName, , setName, key] = decodeId(parentId, IdKinds.feature);
        set = await setRow(datasetName, setName);
        if (!set || !(await getFeatureRow(registry, set.id, key))) throw notFound('feature', parentId);
        parentKey = key;
      }
      if (setIdText !== undefined) {
        const named = await setNamed(setIdText);
        if (set && named.id !== set.id) {
          throw invalid(`field 'parentId' names a feature of another feature set than 'featureSetId'`);
        }
        set = named;
      }
      // No referenceName: every reference in order; and, when the window is the whole of each, the
      // features without a location after them.
      const whole = start === 0 && end === Number.POSITIVE_INFINITY;
      const references =
        referenceName !== undefined ? [referenceName] : [...(await referenceOrderOf(set!)), ...(whole ? [null] : [])];
      if (after && !references.includes(after[0])) throw new GAException('invalidPageToken', "field 'pageToken' is not valid: bad position");
      const terms = await ontologies.matcher(set!.ontology_name);
      const rows = await listFeatureRows(registry, {
        set: set!,
        references,
        range: { start, end: Number.isFinite(end) ? end : undefined },
        name,
        geneSymbol,
        parentKey,
        types: request.featureTypes?.length ? typeFilter(set!, terms, [...new Set(request.featureTypes)]) : undefined,
        after,
        limit: pageSize + 1,
      });
      const page = keysetPage(rows, pageSize, fingerprint, (r) => r, positionOf);
      return { ...page, write: featureWriter(set!, terms) };
    },

    /** The feature's JSON in a naming form: the same text as in a search page. */
    async getFeature(id: string): Promise<(form: NamingForm) => string> {
      const [datasetName, , setName, key] = decodeId(id, IdKinds.feature);
      const set = await setRow(datasetName, setName);
      const row = set && (await getFeatureRow(registry, set.id, key));
      if (!set || !row) throw notFound('feature', id);
      const write = featureWriter(set, await ontologies.matcher(set.ontology_name));
      return (form) => write(row, form);
    },
  };
}

export type FeatureService = ReturnType<typeof featureService>;
