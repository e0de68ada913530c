/**
 * Beacon v2 under `/beacon`: the framework's informational endpoints, and each entry type's
 * endpoints by GET and POST (its collection, one entry by id, the lookups from one entry to others),
 * every answer in Beacon's envelope and every error in Beacon's error form.
 */
import type { AppContext } from '../../areas/area.js';
import type { Route, RouteInput } from '../../http/router.js';
import type { Reply } from '../../protocol/reply.js';
import { ANONYMOUS } from '../../access/decision.js';
import { BeaconDatasets, datasetRecord } from './datasets.js';
import { ENTRY_TYPES, entryTypeAt, schemaFor, type EntryType } from './entry-types.js';
import { writeBeaconError, badRequest, notFound } from './errors.js';
import { informationalMeta, requestSummaryOf, writeAnswer, type BeaconContext, type DatasetAnswer } from './envelope.js';
import { GenomicVariants } from './genomic-variants.js';
import { variantKeyOf } from './ids.js';
import { variantRecordWriter } from './variant-records.js';
import { VARIANT_PARAMETERS, variantQueryOf } from './variant-query.js';
import { VariantSets } from './variant-sets.js';
import { beaconIdentity, configurationDocument, entryTypesDocument, infoDocument, mapDocument, serviceInfoDocument } from './framework.js';
import { fromBody, fromQuery, type BeaconRequest } from './request.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON answer in pieces of text; `large` ones wait for one of the server's slots for large replies. */
export function jsonPieces(pieces: string[], large = false): Reply {
  return { kind: 'bytes', large, chunks: () => pieces.map((p) => Buffer.from(p)) };
}

export const jsonDocument = (document: unknown): Reply => ({ kind: 'content', contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(document)) });

/** What an endpoint is asked: the request in either form. */
export type Asked = (input: RouteInput, takes: readonly string[], nested?: string) => BeaconRequest;

export function beaconRoutes({ registry, config }: AppContext): Route[] {
  const context: BeaconContext = { beaconId: beaconIdentity(config, undefined).beaconId };
  const datasets = new BeaconDatasets(registry, config.registryCacheMs);
  const variantSets = new VariantSets(registry, config.registryCacheMs);
  const variants = new GenomicVariants(variantSets);
  // A GET's body is empty (its parameters are in the query); so is a POST's without a body.
  const asked: Asked = (input, takes, nested) =>
    Object.keys(input.body ?? {}).length > 0 ? fromBody(input.body, takes, nested, config.paging) : fromQuery(input.query, takes, config.paging);

  /** The datasets as a collection (beaconCollectionsResponse), or only whether they exist and how many. */
  async function datasetCollection(request: BeaconRequest, id?: string): Promise<Reply> {
    if (request.filters.length) throw badRequest(`filters: datasets are not filtered; ask ${ENTRY_TYPES.individual.path} or ${ENTRY_TYPES.biosample.path} with filters and datasetIds`);
    const reached = await datasets.reached(ANONYMOUS, 'record', id === undefined ? request.datasetIds : [id]);
    if (id !== undefined && reached.datasets.length === 0) throw notFound(`no dataset '${id}'`);
    const rows = reached.datasets.map((d) => d.row);
    const { skip, limit } = request.pagination;
    const granularity = request.requestedGranularity;
    const meta = {
      ...informationalMeta(context, [{ entityType: 'dataset', schema: ENTRY_TYPES.dataset.defaultSchema.id }]),
      returnedGranularity: granularity,
      receivedRequestSummary: requestSummaryOf(request, context),
    };
    const document: Record<string, unknown> = { meta, responseSummary: { exists: rows.length > 0, ...(granularity === 'boolean' ? {} : { numTotalResults: rows.length }) } };
    if (reached.unknownIds.length) document.info = { warnings: { unknownDatasetIds: reached.unknownIds } };
    if (granularity === 'record') document.response = { collections: rows.slice(skip * limit, skip * limit + limit).map(datasetRecord) };
    return jsonDocument(document);
  }

  /** Every filter is reported as one this beacon cannot apply, and matches nothing: they are ANDed. */
  function unknownFilters(request: BeaconRequest): Record<string, string[]> {
    return { unknownFilters: request.filters.map((f) => f.id) };
  }

  /** Genomic variants answering a query, one result set per dataset, or the one a variantInternalId names. */
  async function genomicVariants(request: BeaconRequest, id?: string): Promise<Reply> {
    const entry = ENTRY_TYPES.genomicVariant;
    const schema = schemaFor(entry, request.requestedSchemas);
    const write = variantRecordWriter(schema);
    const returnedSchemas = [{ entityType: entry.id, schema: schema.id }];
    const answers: DatasetAnswer[] = [];
    const warnings = unknownFilters(request);
    if (id !== undefined) {
      const key = variantKeyOf(id);
      const dataset = key && (await datasets.one(ANONYMOUS, request.requestedGranularity, key.datasetName));
      const hit = dataset ? await variants.byId(id) : undefined;
      if (!dataset || !hit) throw notFound(`no genomic variant with id '${id}'`);
      const found = request.filters.length === 0;
      answers.push({ id: dataset.row.name, granted: dataset.granted, exists: found, count: found ? 1 : 0, records: found && dataset.granted === 'record' ? [write(hit)] : [] });
    } else {
      const query = variantQueryOf(request.parameters, request.form);
      const reached = await datasets.reached(ANONYMOUS, request.requestedGranularity, request.datasetIds);
      if (reached.unknownIds.length) warnings.unknownDatasetIds = reached.unknownIds;
      for (const { row, granted } of reached.datasets) {
        answers.push(
          request.filters.length
            ? { id: row.name, granted, exists: false, count: 0, records: [] }
            : await variants.answer(row.name, granted, query, request.pagination, write),
        );
      }
    }
    const pieces = writeAnswer(context, answers, { request, returnedSchemas, parametersKey: 'g_variant', warnings });
    return jsonPieces(pieces, answers.some((a) => a.records.length > 0));
  }

  /** Requests under /beacon that name no endpoint: an entry type or a lookup this beacon does not serve. */
  async function unknownPath(input: RouteInput): Promise<Reply> {
    const [segment, id, lookup] = input.params.path.split('/');
    const entry: EntryType | undefined = entryTypeAt(segment);
    const served = Object.values(ENTRY_TYPES).map((e) => e.path).join(', ');
    if (!entry) throw badRequest(`unknown entry type '${segment}': this beacon serves ${served}`);
    if (lookup !== undefined && id !== undefined) {
      throw badRequest(`unknown entry type '${lookup}' for one ${entry.id}: /beacon/${entry.path}/{id}/ leads to ${entry.lookups.map((l) => ENTRY_TYPES[l].path).join(', ')}`);
    }
    throw badRequest(`/beacon/${input.params.path} is no endpoint of entry type ${entry.id}`);
  }

  const get = (path: string, handle: (input: RouteInput) => Promise<Reply>): Route => ({ method: 'GET', path, ownQuery: true, handle });
  const both = (path: string, handle: (input: RouteInput) => Promise<Reply>): Route[] => [get(path, handle), { method: 'POST', path, handle }];
  const info = async (input: RouteInput) => jsonDocument(infoDocument(config, input.remote.host, context));

  const routes: Route[] = [
    get('/beacon', info),
    get('/beacon/info', info),
    get('/beacon/service-info', async (input) => jsonDocument(serviceInfoDocument(config, input.remote.host))),
    get('/beacon/configuration', async (input) => jsonDocument(configurationDocument(config, input.remote.host, context))),
    get('/beacon/map', async (input) => jsonDocument(mapDocument(config, input.remote.host, context))),
    get('/beacon/entry_types', async () => jsonDocument(entryTypesDocument(context))),
    ...both('/beacon/g_variants', async (input) => genomicVariants(asked(input, VARIANT_PARAMETERS, 'g_variant'))),
    ...both('/beacon/g_variants/{id}', async (input) => genomicVariants(asked(input, []), input.params.id)),
    ...both('/beacon/datasets', async (input) => datasetCollection(asked(input, []))),
    ...both('/beacon/datasets/{id}', async (input) => datasetCollection(asked(input, []), input.params.id)),
    ...both('/beacon/{path+}', unknownPath),
  ];
  return routes.map((route) => ({ ...route, writeError: (error) => writeBeaconError(error, context) }));
}
