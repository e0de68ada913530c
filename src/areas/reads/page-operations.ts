/** The reads operation built in page workers (src/workers): pages of alignments. */
import type { PageOperationsFactory } from '../../workers/operations.js';
import type { SearchReadsQuery } from './messages.js';
import { readService } from './service.js';

export const pageOperations: PageOperationsFactory = (registry, settings) => {
  const service = readService(registry, settings.paging, settings.registryCacheMs);
  return {
    searchReads: {
      start: (request: SearchReadsQuery) => service.searchReads(request),
      // A page depends on the registrations of the sets of the read groups asked for.
      registration: (request: SearchReadsQuery) => service.registrationOf(request.readGroupIds),
    },
  };
};
