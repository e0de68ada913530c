/** The reads operation built in page workers (src/workers): pages of alignments. */
import { decodeId, IdKinds } from '../../protocol/ids.js';
import { RegistryCache } from '../../registry/cache.js';
import type { PageOperationsFactory } from '../../workers/operations.js';
import type { SearchReadsQuery } from './messages.js';
import { readService } from './service.js';
import { getReadGroupSetRow } from './store.js';

export const pageOperations: PageOperationsFactory = (registry, settings) => {
  const service = readService(registry, settings.paging, settings.registryCacheMs);
  const registered = new RegistryCache<string>(settings.registryCacheMs);
  /** When a read group set was registered, as the registry cache knows it ('' when it is not). */
  const registrationOfSet = async (datasetName: string, name: string) =>
    (await registered.get(JSON.stringify([datasetName, name]), async () => (await getReadGroupSetRow(registry, datasetName, name))?.created_at)) ?? '';
  return {
    searchReads: {
      start: (request: SearchReadsQuery) => service.searchReads(request),
      // A page depends on the registrations of the sets of the read groups asked for.
      async registration(request: SearchReadsQuery) {
        const sets = new Set(request.readGroupIds.map((id) => JSON.stringify(decodeId(id, IdKinds.readGroup).slice(0, 3))));
        const times = await Promise.all([...sets].sort().map((set) => {
          const [datasetName, , name] = JSON.parse(set) as string[];
          return registrationOfSet(datasetName, name);
        }));
        return JSON.stringify(times);
      },
    },
  };
};
