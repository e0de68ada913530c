/** The variant annotation operation built in page workers (src/workers): pages of annotations. */
import type { PageOperationsFactory } from '../../workers/operations.js';
import type { SearchVariantAnnotationsQuery } from './messages.js';
import { annotationService } from './service.js';

export const pageOperations: PageOperationsFactory = (registry, settings) => {
  const service = annotationService(registry, settings.paging, settings.registryCacheMs);
  return {
    searchAnnotations: {
      start: (request: SearchVariantAnnotationsQuery) => service.searchAnnotations(request),
      // A page depends on the annotation set's registration and on the ontology its effects are read with.
      registration: (request: SearchVariantAnnotationsQuery) => service.registrationOf(request.variantAnnotationSetId),
    },
  };
};
