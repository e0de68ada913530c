/**
 * Variant annotations: the VEP (`CSQ`) or SnpEff (`ANN`) annotations of a registered VCF, served as a
 * variant annotation set beside its variant set. `repo add-variantset` registers the set (plan.ts);
 * this area serves it and lists it.
 */
import { checkedBeforeHandOff, IdKinds } from '../../protocol/ids.js';
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
        handle: async ({ body, form, coding }) => {
          checkedBeforeHandOff([body.variantAnnotationSetId], IdKinds.variantAnnotationSet);
          return workers ? workers.run('searchAnnotations', body, form, coding) : streamReply(await service.searchAnnotations(body));
        },
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

  /**
   * Effect names are in the VCF, not the registry: `repo check --deep` reads every record and names
   * the effects no term matches; otherwise what can be known is a set with no ontology to match them in.
   */
  async unresolved(registry, check) {
    const [{ annotationSetId }, { OntologyCache }, { missingTermsFix }, { effectNamesIn }] = await Promise.all([
      import('./service.js'),
      import('../ontologies/cache.js'),
      import('../ontologies/matcher.js'),
      import('./effect-scan.js'),
    ]);
    const ontologies = new OntologyCache(registry, 0);
    const found = [];
    for (const r of await listAnnotationSets(registry)) {
      const terms = await ontologies.matcher(r.ontology_name);
      const names = check?.deep ? (await effectNamesIn(registry, r, check)).filter((name) => !terms.termByName(name)) : [];
      if (check?.deep ? !names.length : terms.ontologies.length) continue;
      found.push({
        id: annotationSetId(r.dataset_name, r.name),
        set: `variant annotation set '${r.name}' of dataset '${r.dataset_name}'`,
        what: 'effects without ontology terms',
        names,
        fix: missingTermsFix(r.ontology_name, terms),
      });
    }
    return found;
  },
};
