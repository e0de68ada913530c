/** The variant operations built in page workers (src/workers): pages of variants with their calls, and a variant by id. */
import type { PageOperationsFactory } from '../../workers/operations.js';
import type { SearchVariantsQuery } from './messages.js';
import { variantService, type VariantService } from './service.js';

/**
 * A search of variants as an operation whose next pages may be built ahead: in a page worker, or on
 * the main thread (src/workers/main-thread-pages.ts).
 */
export const searchVariantsOperation = (service: VariantService) => ({
  start: (request: SearchVariantsQuery) => service.searchVariants(request),
  registration: (request: SearchVariantsQuery) => service.registrationOf(request.variantSetId),
});

export const pageOperations: PageOperationsFactory = (registry, settings) => {
  const service = variantService(registry, settings.paging, settings.registryCacheMs);
  return {
    searchVariants: searchVariantsOperation(service),
    getVariant: { start: (id: string) => service.getVariant(id) },
  };
};
