/** The variant operations built in page workers (src/workers): pages of variants with their calls, and a variant by id. */
import type { PageOperationsFactory } from '../../workers/operations.js';
import type { SearchVariantsQuery } from './messages.js';
import { variantService } from './service.js';

export const pageOperations: PageOperationsFactory = (registry, settings) => {
  const service = variantService(registry, settings.paging, settings.registryCacheMs);
  return {
    searchVariants: {
      start: (request: SearchVariantsQuery) => service.searchVariants(request),
      // A page depends on the variant set's registration.
      registration: (request: SearchVariantsQuery) => service.registrationOf(request.variantSetId),
    },
    getVariant: { start: (id: string) => service.getVariant(id) },
  };
};
