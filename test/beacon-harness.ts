/**
 * The Beacon tests' client: every answer it receives is validated against the Beacon v2 schemas kept
 * in testdata/beacon-v2/ (the framework's, and the default model's dereferenced entry type schemas),
 * with ajv's draft 2020-12 build. Each schema file is loaded under its own file:// URL as its `$id`,
 * so that the relative `$ref`s between them resolve to the local copies; nothing is fetched. An
 * answer that does not validate fails the test that received it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { TESTDATA } from './helpers.js';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

const SCHEMAS = path.join(TESTDATA, 'beacon-v2');

const filesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.name.endsWith('.json') ? [path.join(dir, e.name)] : []));

const urlOf = (relative: string) => pathToFileURL(path.join(SCHEMAS, relative)).href;

// validateSchema off: the dereferenced copies carry a non-boolean `deprecated`, which the meta-schema refuses.
const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: false, validateFormats: true });
addFormats(ajv);
for (const file of filesUnder(SCHEMAS)) {
  const schema = JSON.parse(fs.readFileSync(file, 'utf8'));
  ajv.addSchema({ ...schema, $id: pathToFileURL(file).href });
}

const compiled = new Map<string, ValidateFunction>();
function validator(relative: string): ValidateFunction {
  let fn = compiled.get(relative);
  if (!fn) {
    fn = ajv.getSchema(urlOf(relative));
    if (!fn) throw new Error(`no schema ${relative} in testdata/beacon-v2`);
    compiled.set(relative, fn);
  }
  return fn;
}

/** Throws unless `value` validates against the schema at `relative` (under testdata/beacon-v2/). */
export function assertValid(relative: string, value: unknown, where = ''): void {
  const fn = validator(relative);
  if (fn(value)) return;
  const e = fn.errors?.[0];
  throw new Error(`${where}: does not validate against ${relative} at ${e?.instancePath || '/'}: ${e?.message} ${JSON.stringify(e?.params)}; ${JSON.stringify(value).slice(0, 600)}`);
}

const RECORD_SCHEMAS: Record<string, string> = {
  g_variants: 'dereferenced/genomicVariations.json',
  individuals: 'dereferenced/individuals.json',
  biosamples: 'dereferenced/biosamples.json',
  datasets: 'dereferenced/datasets.json',
};

const INFORMATIONAL: Record<string, string> = {
  '': 'framework/responses/beaconInfoResponse.json',
  info: 'framework/responses/beaconInfoResponse.json',
  'service-info': 'framework/responses/ga4gh-service-info-1-0-0-schema.json',
  configuration: 'framework/responses/beaconConfigurationResponse.json',
  map: 'framework/responses/beaconMapResponse.json',
  entry_types: 'framework/responses/beaconEntryTypesResponse.json',
  filtering_terms: 'framework/responses/beaconFilteringTermsResponse.json',
};

/** The entry type whose records an answer to this path holds: `ENTRY`, `ENTRY/{id}` or `ENTRY/{id}/OTHER`. */
const recordsAt = (segments: string[]): string | undefined => (segments.length === 3 ? segments[2] : segments[0]);

/**
 * Validates a Beacon answer to `pathname` (under /beacon) as the schemas say it must be: the error form
 * for an error; the informational documents by endpoint; for entry types the boolean, count or result
 * sets response by the granularity it says it returns, and every record against its entry type's schema.
 */
export function validateAnswer(pathname: string, status: number, body: any): void {
  const where = `${pathname} -> ${status}`;
  if (status >= 400) return assertValid('framework/responses/beaconErrorResponse.json', body, where);
  const segments = pathname.replace(/^\/beacon\/?/, '').split('/').filter(Boolean);
  const last = segments[segments.length - 1] ?? '';
  if (last === 'filtering_terms') return assertValid(INFORMATIONAL.filtering_terms, body, where);
  if (segments.length <= 1 && last in INFORMATIONAL) return assertValid(INFORMATIONAL[last], body, where);
  const entry = recordsAt(segments);
  if (!entry || !(entry in RECORD_SCHEMAS)) throw new Error(`${where}: no schema for this path`);
  const granularity = body?.meta?.returnedGranularity;
  if (granularity === 'boolean') return assertValid('framework/responses/beaconBooleanResponse.json', body, where);
  if (granularity === 'count') {
    assertValid('framework/responses/beaconCountResponse.json', body, where);
    if (body.response !== undefined) assertValid('framework/responses/sections/beaconResultsets.json', body.response, where);
    return;
  }
  if (granularity !== 'record') throw new Error(`${where}: meta.returnedGranularity is ${JSON.stringify(granularity)}`);
  if (entry === 'datasets' && body.response?.collections) {
    assertValid('framework/responses/beaconCollectionsResponse.json', body, where);
    body.response.collections.forEach((r: unknown, i: number) => assertValid(RECORD_SCHEMAS.datasets, r, `${where} collections[${i}]`));
    return;
  }
  assertValid('framework/responses/beaconResultsetsResponse.json', body, where);
  for (const set of body.response.resultSets) {
    set.results.forEach((r: unknown, i: number) => assertValid(RECORD_SCHEMAS[entry], r, `${where} resultSets[${set.id}].results[${i}]`));
  }
}

export interface BeaconAnswer {
  status: number;
  headers: Headers;
  body: any;
}

export interface BeaconClient {
  get(pathAndQuery: string): Promise<BeaconAnswer>;
  post(pathName: string, body: unknown): Promise<BeaconAnswer>;
}

/** A client of the beacon at `url` whose every answer is validated (validateAnswer) before it is returned. */
export function beaconClient(url: string): BeaconClient {
  const call = async (pathAndQuery: string, init: RequestInit): Promise<BeaconAnswer> => {
    // A connection left idle past the server's keep-alive timeout (a test running the CLI between two
    // requests) may be closed as it is reused: such a request never reached the server, and is sent again.
    const res = await fetch(url + pathAndQuery, init).catch((e) => {
      if ((e as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET' && !/other side closed|ECONNRESET/.test(String((e as { cause?: unknown }).cause))) throw e;
      return fetch(url + pathAndQuery, init);
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${init.method ?? 'GET'} ${pathAndQuery} -> ${res.status}: not JSON: ${text.slice(0, 300)}`);
    }
    if (!/^application\/json/.test(res.headers.get('content-type') ?? '')) throw new Error(`${pathAndQuery}: content type ${res.headers.get('content-type')}`);
    validateAnswer(new URL(url + pathAndQuery).pathname, res.status, body);
    return { status: res.status, headers: res.headers, body };
  };
  return {
    get: (pathAndQuery) => call(pathAndQuery, {}),
    post: (pathName, body) =>
      call(pathName, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  };
}
