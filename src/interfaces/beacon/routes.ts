/**
 * Beacon v2 under `/beacon`: the framework's informational endpoints, and each entry type's
 * endpoints by GET and POST (its collection, one entry by id, the lookups from one entry to others
 * that the map declares), every answer in Beacon's envelope and every error in Beacon's error form.
 */
import type { AppContext } from '../../areas/area.js';
import type { Route, RouteInput } from '../../http/router.js';
import type { Reply } from '../../protocol/reply.js';
import { BeaconAnswers, jsonDocument, type Origin } from './answers.js';
import { ENTRY_TYPES, entryTypeAt, type EntryType, type EntryTypeId } from './entry-types.js';
import { badRequest, writeBeaconError } from './errors.js';
import type { BeaconContext } from './envelope.js';
import type { Scope } from './filters.js';
import { beaconIdentity, configurationDocument, entryTypesDocument, infoDocument, mapDocument, serviceInfoDocument } from './framework.js';
import { fromBody, fromQuery, type BeaconRequest } from './request.js';
import { VARIANT_PARAMETERS } from './variant-query.js';

/** The entry types filters apply to, as /beacon/{entry}/filtering_terms lists them. */
const FILTERED: Partial<Record<EntryTypeId, Scope[]>> = { genomicVariant: ['biosample', 'individual'], individual: ['individual', 'biosample'], biosample: ['biosample', 'individual'] };

export function beaconRoutes({ registry, config }: AppContext): Route[] {
  const context: BeaconContext = { beaconId: beaconIdentity(config, undefined).beaconId };
  const answers = new BeaconAnswers(registry, config.registryCacheMs, context);
  // A GET's body is empty (its parameters are in the query); so is a POST's without a body.
  const asked = (input: RouteInput, takes: readonly string[], nested?: string): BeaconRequest =>
    Object.keys(input.body ?? {}).length > 0 ? fromBody(input.body, takes, nested, config.paging) : fromQuery(input.query, takes, config.paging);

  /** The answer of entry type `target` from an origin: its own parameters are taken where it is variants. */
  function answer(target: EntryTypeId, input: RouteInput, origin: Origin): Promise<Reply> {
    const variantsAsked = target === 'genomicVariant' && origin.kind !== 'entry';
    const request = variantsAsked ? asked(input, VARIANT_PARAMETERS, 'g_variant') : asked(input, []);
    switch (target) {
      case 'genomicVariant':
        return answers.genomicVariants(request, origin, beaconIdentity(config, input.remote.host).base);
      case 'individual':
      case 'biosample':
        return answers.bioEntries(request, origin, target);
      case 'dataset':
        return answers.datasetCollection(request, origin.kind === 'entry' ? origin.id : undefined);
    }
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
  const allScopes: Scope[] = ['individual', 'biosample'];

  const routes: Route[] = [
    get('/beacon', info),
    get('/beacon/info', info),
    get('/beacon/service-info', async (input) => jsonDocument(serviceInfoDocument(config, input.remote.host))),
    get('/beacon/configuration', async (input) => jsonDocument(configurationDocument(config, input.remote.host, context))),
    get('/beacon/map', async (input) => jsonDocument(mapDocument(config, input.remote.host, context))),
    get('/beacon/entry_types', async () => jsonDocument(entryTypesDocument(context))),
    get('/beacon/filtering_terms', async () => answers.filteringTerms(allScopes)),
  ];
  for (const entry of Object.values(ENTRY_TYPES)) {
    const root = `/beacon/${entry.path}`;
    routes.push(
      get(`${root}/filtering_terms`, async () => answers.filteringTerms(FILTERED[entry.id] ?? [])),
      ...both(root, (input) => answer(entry.id, input, { kind: 'all' })),
      ...both(`${root}/{id}`, (input) => answer(entry.id, input, { kind: 'entry', id: input.params.id })),
    );
    for (const target of entry.lookups) {
      routes.push(...both(`${root}/{id}/${ENTRY_TYPES[target].path}`, (input) => answer(target, input, { kind: 'from', type: entry.id, id: input.params.id })));
    }
  }
  routes.push(...both('/beacon/{path+}', unknownPath));
  return routes.map((route) => ({ ...route, writeError: (error) => writeBeaconError(error, context) }));
}
