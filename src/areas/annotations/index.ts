/**
 * Variant annotations: the VEP (`CSQ`) or SnpEff (`ANN`) annotations of a registered VCF, served as a
 * variant annotation set beside its variant set. `repo add-variantset` registers the set (plan.ts);
 * this area serves it and lists it.
 */
import { pageReply, recordReply, streamReply } from '../../protocol/reply.js';
import type { Area } from '../area.js';
import type { AnalysisRecord } from './messages.js';
import { annotationMigrations, listAnnotationSets } from './store.js';

export const annotationsArea: Area = {
  name: 'annotations',
  migrations: annotationMigrations,

  async routes({ registry, config, pageWorkers }) {
    const [{ SearchVariantAnnotationSetsRequest, SearchVariantAnnotationSetsResponse, SearchVariantAnnotationsRequest, VariantAnnotationSet }, { annotationService }] =
      await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = annotationService(registry, config.paging, config.registryCacheMs);
    // Pages of annotations are built in the page workers unless told otherwise, as pages of variants are.
    const workers = pageWorkers?.operations(new URL('./page-operations.ts', import.meta.url).href);
    return [
      {
        method: 'POST',
        path: '/variantannotationsets/search',
        request: SearchVariantAnnotationSetsRequest,
        handle: async ({ body }) => pageReply(SearchVariantAnnotationSetsResponse, await service.searchSets(body)),
      },
      {
        method: 'GET',
        path: '/variantannotationsets/{id}',
        handle: async ({ params }) => recordReply(VariantAnnotationSet, await service.getSet(params.id)),
      },
      {
        method: 'POST',
        path: '/variantannotations/search',
        request: SearchVariantAnnotationsRequest,
        handle: async ({ body, form, coding }) => (workers ? workers.run('searchAnnotations', body, form, coding) : streamReply(await service.searchAnnotations(body))),
      },
    ];
  },

  // Annotation sets are registered by `repo add-variantset` and removed with their variant set.
  commands() {},

  async datasetContents(registry, datasetName) {
    return [['variant annotation set(s)', (await listAnnotationSets(registry)).filter((r) => r.dataset_name === datasetName).length]];
  },

  async inventory(registry) {
    const { annotationSetId } = await import('./service.js');
    const rows = await listAnnotationSets(registry);
    return [
      {
        title: 'Variant annotation sets',
        columns: ['id', 'dataset', 'name', 'field', 'software', 'ontology'],
        rows: rows.map((r) => [
          annotationSetId(r.dataset_name, r.name),
          r.dataset_name,
          r.name,
          r.info_field,
          ((JSON.parse(r.analysis) as AnalysisRecord).software ?? []).join('; '),
          r.ontology_name ?? '(every registered)',
        ]),
      },
    ];
  },

  /** Effect names are read from the VCF on each request: what can be known here is a set with no ontology to match them in. */
  async unresolved(registry) {
    const [{ annotationSetId }, { OntologyCache }, { NO_ONTOLOGY }] = await Promise.all([
      import('./service.js'),
      import('../ontologies/cache.js'),
      import('../ontologies/matcher.js'),
    ]);
    const ontologies = new OntologyCache(registry, 0);
    const found = [];
    for (const r of await listAnnotationSets(registry)) {
      if ((await ontologies.matcher(r.ontology_name)).ontologies.length) continue;
      found.push({
        id: annotationSetId(r.dataset_name, r.name),
        set: `variant annotation set '${r.name}' of dataset '${r.dataset_name}'`,
        what: 'effects without ontology terms',
        names: [],
        fix: NO_ONTOLOGY,
      });
    }
    return found;
  },
};
