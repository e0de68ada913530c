/**
 * A Beacon request read from either form (framework `beaconRequestBody`; rest-api.md): GET query
 * parameters, lists comma-separated (`start=100,200`, `filters=A,B`), or a POST body `{meta, query:
 * {requestParameters, filters, pagination, requestedGranularity, includeResultsetResponses, testMode}}`.
 * What each entry type takes in `requestParameters` is read by that entry type (variant-query.ts);
 * here it is checked only to be a parameter the entry type names. Any mistake is a 400 naming the
 * parameter: a parameter or filter this beacon does not know is never ignored, since ignoring it
 * would answer a wider question than the one asked.
 */
import { BEACON_GRANULARITIES, isBeaconGranularity, type BeaconGranularity } from '../../areas/datasets/store.js';
import type { PagingLimits } from '../../protocol/paging.js';
import { badRequest } from './errors.js';

export type IncludeResultsets = 'ALL' | 'HIT' | 'MISS' | 'NONE';
const INCLUDE_RESULTSETS: readonly IncludeResultsets[] = ['ALL', 'HIT', 'MISS', 'NONE'];

export const OPERATORS = ['=', '<', '>', '!', '>=', '<='] as const;
export type Operator = (typeof OPERATORS)[number];

/** A filter as asked (framework `filteringTerms.json`): an ontology term or custom id, or an alphanumeric comparison. */
export type Filter =
  | { kind: 'term'; id: string; includeDescendantTerms: boolean; scope?: string }
  | { kind: 'alphanumeric'; id: string; operator: Operator; value: string; scope?: string };

export interface RequestedSchema {
  entityType?: string;
  schema?: string;
}

export interface BeaconRequest {
  apiVersion?: string;
  requestedSchemas: RequestedSchema[];
  /** What was asked; absent: whatever each dataset allows (GET has no parameter for it in the specification). */
  requestedGranularity: BeaconGranularity;
  includeResultsetResponses: IncludeResultsets;
  /** `skip` counts pages of `limit` results (beaconCommonComponents `Skip`). */
  pagination: { skip: number; limit: number };
  filters: Filter[];
  /** The datasets to answer from, by id (a dataset's id is its name); absent: every one. */
  datasetIds?: string[];
  testMode?: boolean;
  /** The entry type's own parameters, as sent: strings from a GET query, JSON values from a POST body. */
  parameters: Record<string, unknown>;
  form: 'query' | 'body';
}

/** Parameters of the framework, in a GET query. */
const FRAMEWORK_QUERY = new Set(['requestedSchema', 'skip', 'limit', 'includeResultsetResponses', 'requestedGranularity', 'filters', 'datasetIds', 'testMode', 'apiVersion']);

const DEFAULT_LIMIT = 10;

const describe = (value: unknown) => JSON.stringify(value) ?? String(value);

function nonNegativeInteger(name: string, value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw badRequest(`${name} must be a non-negative integer, not ${describe(value)}`);
  return n;
}

function granularityOf(value: unknown): BeaconGranularity {
  if (!isBeaconGranularity(value)) throw badRequest(`requestedGranularity must be one of ${BEACON_GRANULARITIES.join(', ')}, not ${describe(value)}`);
  return value;
}

function includeOf(value: unknown): IncludeResultsets {
  if (!INCLUDE_RESULTSETS.includes(value as IncludeResultsets)) {
    throw badRequest(`includeResultsetResponses must be one of ${INCLUDE_RESULTSETS.join(', ')}, not ${describe(value)}`);
  }
  return value as IncludeResultsets;
}

function booleanOf(name: string, value: unknown): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw badRequest(`${name} must be true or false, not ${describe(value)}`);
}

function stringOf(name: string, value: unknown): string {
  if (typeof value !== 'string') throw badRequest(`${name} must be a string, not ${describe(value)}`);
  return value;
}

function objectOf(name: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${name} must be a JSON object, not ${describe(value)}`);
  return value as Record<string, unknown>;
}

function noOtherKeys(name: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  const other = Object.keys(value).find((k) => !allowed.includes(k));
  if (other !== undefined) throw badRequest(`${name} has no field '${other}' (it takes ${allowed.join(', ')})`);
}

/** `skip` and `limit`; a limit of 0 asks for as many as the beacon gives, above that it is clamped. */
function paginationOf(skip: unknown, limit: unknown, limits: PagingLimits): { skip: number; limit: number } {
  const pages = skip === undefined ? 0 : nonNegativeInteger('skip', skip);
  const asked = limit === undefined ? DEFAULT_LIMIT : nonNegativeInteger('limit', limit);
  return { skip: pages, limit: asked === 0 ? limits.maxPageSize : Math.min(asked, limits.maxPageSize) };
}

/** One filter of a POST body's `filters`: an object (or, leniently, a bare id). */
function filterOf(value: unknown, where: string): Filter {
  if (typeof value === 'string') return termFilter(value, where);
  const filter = objectOf(where, value);
  noOtherKeys(where, filter, ['id', 'operator', 'value', 'includeDescendantTerms', 'similarity', 'scope']);
  const id = stringOf(`${where}.id`, filter.id);
  if (id === '') throw badRequest(`${where}.id must not be empty`);
  const scope = filter.scope === undefined ? undefined : stringOf(`${where}.scope`, filter.scope);
  if (filter.similarity !== undefined && filter.similarity !== 'exact') {
    throw badRequest(`${where}.similarity: only 'exact' is supported, not ${describe(filter.similarity)}`);
  }
  if (filter.operator !== undefined || filter.value !== undefined) {
    if (filter.includeDescendantTerms !== undefined) throw badRequest(`${where}: includeDescendantTerms applies to ontology filters, not to one with an operator and a value`);
    const operator = filter.operator === undefined ? '=' : filter.operator;
    if (!OPERATORS.includes(operator as Operator)) throw badRequest(`${where}.operator must be one of ${OPERATORS.join(' ')}, not ${describe(filter.operator)}`);
    if (filter.value === undefined) throw badRequest(`${where}.value is required with an operator`);
    const text = typeof filter.value === 'number' ? String(filter.value) : stringOf(`${where}.value`, filter.value);
    return { kind: 'alphanumeric', id, operator: operator as Operator, value: text, scope };
  }
  const descendants = filter.includeDescendantTerms === undefined ? true : booleanOf(`${where}.includeDescendantTerms`, filter.includeDescendantTerms);
  return { kind: 'term', id, includeDescendantTerms: descendants, scope };
}

function termFilter(id: string, where: string): Filter {
  if (id.trim() === '') throw badRequest(`${where} must not be empty`);
  return { kind: 'term', id: id.trim(), includeDescendantTerms: true };
}

const commaList = (text: string) => text.split(',').map((s) => s.trim());

/**
 * The request of a GET: `takes` names the entry type's own parameters; a parameter given twice, or
 * one neither the framework nor the entry type takes, is a 400.
 */
export function fromQuery(pairs: Array<[string, string]>, takes: readonly string[], limits: PagingLimits): BeaconRequest {
  const query: Record<string, string> = {};
  for (const [key, value] of pairs) {
    if (key in query) throw badRequest(`parameter '${key}' is given twice; give a list as one comma-separated value`);
    if (!FRAMEWORK_QUERY.has(key) && !takes.includes(key)) {
      throw badRequest(`unknown parameter '${key}'${takes.length ? `: this endpoint takes ${[...takes].join(', ')} and the framework's` : ''}`);
    }
    query[key] = value;
  }
  const parameters: Record<string, unknown> = {};
  for (const name of takes) if (query[name] !== undefined) parameters[name] = query[name];
  const filters = query.filters === undefined ? [] : commaList(query.filters).map((id, i) => termFilter(id, `filters[${i}]`));
  return {
    apiVersion: query.apiVersion,
    requestedSchemas: query.requestedSchema === undefined ? [] : commaList(query.requestedSchema).map((schema) => ({ schema })),
    requestedGranularity: query.requestedGranularity === undefined ? 'record' : granularityOf(query.requestedGranularity),
    includeResultsetResponses: query.includeResultsetResponses === undefined ? 'HIT' : includeOf(query.includeResultsetResponses),
    pagination: paginationOf(query.skip, query.limit, limits),
    filters,
    datasetIds: query.datasetIds === undefined ? undefined : commaList(query.datasetIds).filter(Boolean),
    testMode: query.testMode === undefined ? undefined : booleanOf('testMode', query.testMode),
    parameters,
    form: 'query',
  };
}

const QUERY_KEYS = ['requestParameters', 'filters', 'pagination', 'requestedGranularity', 'includeResultsetResponses', 'testMode'] as const;

/**
 * The request of a POST body. `nested` is the entry type's key inside `requestParameters` (the default
 * model puts genomic variation parameters under `g_variant`); its parameters may also come flat.
 * The query's fields are also taken from the top level, where the specification's own examples put
 * `pagination` and `requestedGranularity`, but not from both places at once.
 */
export function fromBody(body: unknown, takes: readonly string[], nested: string | undefined, limits: PagingLimits): BeaconRequest {
  const top = objectOf('the request body', body);
  noOtherKeys('the request body', top, ['$schema', 'meta', 'query', ...QUERY_KEYS]);
  const meta = top.meta === undefined ? {} : objectOf('meta', top.meta);
  noOtherKeys('meta', meta, ['$schema', 'apiVersion', 'requestedSchemas']);
  const query = top.query === undefined ? {} : objectOf('query', top.query);
  noOtherKeys('query', query, QUERY_KEYS);
  const field = (name: (typeof QUERY_KEYS)[number]): unknown => {
    if (query[name] !== undefined && top[name] !== undefined) throw badRequest(`${name} is given both in query and at the top of the body`);
    return query[name] ?? top[name];
  };

  const requestedSchemas: RequestedSchema[] = [];
  if (meta.requestedSchemas !== undefined) {
    if (!Array.isArray(meta.requestedSchemas)) throw badRequest(`meta.requestedSchemas must be a list, not ${describe(meta.requestedSchemas)}`);
    meta.requestedSchemas.forEach((item, i) => {
      const entry = objectOf(`meta.requestedSchemas[${i}]`, item);
      requestedSchemas.push({
        entityType: entry.entityType === undefined ? undefined : stringOf(`meta.requestedSchemas[${i}].entityType`, entry.entityType),
        schema: entry.schema === undefined ? undefined : stringOf(`meta.requestedSchemas[${i}].schema`, entry.schema),
      });
    });
  }

  const pagination = field('pagination') === undefined ? {} : objectOf('pagination', field('pagination'));
  noOtherKeys('pagination', pagination, ['skip', 'limit', 'currentPage', 'nextPage', 'previousPage']);
  const filters = field('filters');
  if (filters !== undefined && !Array.isArray(filters)) throw badRequest(`filters must be a list, not ${describe(filters)}`);

  const given = field('requestParameters') === undefined ? {} : objectOf('requestParameters', field('requestParameters'));
  const parameters: Record<string, unknown> = {};
  let datasetIds: string[] | undefined;
  for (const [key, value] of Object.entries(given)) {
    if (key === '$schema') continue;
    if (key === 'datasetIds') {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw badRequest(`requestParameters.datasetIds must be a list of strings, not ${describe(value)}`);
      datasetIds = value as string[];
    } else if (nested !== undefined && key === nested) {
      for (const [name, v] of Object.entries(objectOf(`requestParameters.${nested}`, value))) {
        if (!takes.includes(name)) throw badRequest(`unknown parameter 'requestParameters.${nested}.${name}': this endpoint takes ${takes.join(', ')}`);
        if (name in parameters) throw badRequest(`parameter '${name}' is given twice in requestParameters`);
        parameters[name] = v;
      }
    } else if (takes.includes(key)) {
      if (key in parameters) throw badRequest(`parameter '${key}' is given twice in requestParameters`);
      parameters[key] = value;
    } else {
      throw badRequest(`unknown parameter 'requestParameters.${key}'${takes.length ? `: this endpoint takes ${takes.join(', ')}` : ': this endpoint takes none'}`);
    }
  }

  const granularity = field('requestedGranularity');
  const include = field('includeResultsetResponses');
  const testMode = field('testMode');
  return {
    apiVersion: meta.apiVersion === undefined ? undefined : stringOf('meta.apiVersion', meta.apiVersion),
    requestedSchemas,
    requestedGranularity: granularity === undefined ? 'record' : granularityOf(granularity),
    includeResultsetResponses: include === undefined ? 'HIT' : includeOf(include),
    pagination: paginationOf(pagination.skip, pagination.limit, limits),
    filters: (filters ?? []).map((f, i) => filterOf(f, `filters[${i}]`)),
    datasetIds,
    testMode: testMode === undefined ? undefined : booleanOf('testMode', testMode),
    parameters,
    form: 'body',
  };
}
