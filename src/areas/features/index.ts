/**
 * Sequence annotations (spec 4.5): feature sets loaded from GFF3 files into the registry, and their
 * features, searched by region, name, gene symbol, parent and type.
 */
import type { Command } from 'commander';
import { action, progressReporter, say } from '../../cli/output.js';
import { pageReply, recordReply, writtenRecordReply } from '../../protocol/reply.js';
import type { Area, CommandContext } from '../area.js';
import type { FeatureSetOptions } from './loader.js';
import { featureMigrations, listAllFeatureSets, removeFeatureSet } from './store.js';

export const featuresArea: Area = {
  name: 'features',
  migrations: featureMigrations,

  async routes({ registry, config }) {
    const [{ FeatureSet, SearchFeatureSetsRequest, SearchFeatureSetsResponse, SearchFeaturesRequest, SearchFeaturesResponse }, { featureService }] =
      await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = featureService(registry, config.paging, config.registryCacheMs);
    return [
      {
        method: 'POST',
        path: '/featuresets/search',
        request: SearchFeatureSetsRequest,
        handle: async ({ body }) => pageReply(SearchFeatureSetsResponse, await service.searchSets(body)),
      },
      {
        method: 'GET',
        path: '/featuresets/{id}',
        handle: async ({ params }) => recordReply(FeatureSet, await service.getSet(params.id)),
      },
      {
        method: 'POST',
        path: '/features/search',
        request: SearchFeaturesRequest,
        handle: async ({ body }) => pageReply(SearchFeaturesResponse, await service.searchFeatures(body)),
      },
      {
        method: 'GET',
        path: '/features/{id}',
        handle: async ({ params }) => writtenRecordReply(await service.getFeature(params.id)),
      },
    ];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-featureset')
      .description('load a GFF3 file (plain or gzipped) as a feature set of a dataset')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<gff3>', 'GFF3 file, plain or gzipped (or a URL)')
      .requiredOption('--referenceset <name>', 'reference set holding every sequence the GFF3 names')
      .option('--name <name>', 'feature set name (default: the file name without .gff3 and .gz)')
      .option('--ontology <name>', 'ontology (added with repo add-ontology) giving feature types their term ids, e.g. the Sequence Ontology')
      .option('--source-uri <uri>', 'where the GFF3 came from (served as sourceUri)')
      .action(
        action(async (location: string, dataset: string, file: string, opts: { referenceset: string; name?: string; ontology?: string; sourceUri?: string }) => {
          const { loadFeatureSet } = await import('./loader.js');
          const progress = progressReporter(`loading ${file}`);
          const options: FeatureSetOptions = {
            referenceSet: opts.referenceset,
            name: opts.name,
            ontology: opts.ontology,
            sourceUri: opts.sourceUri,
            progress: progress.update,
          };
          const loaded = await withRegistry(location, (registry) => loadFeatureSet(registry, dataset, file, options)).finally(progress.done);
          say(`added feature set '${loaded.name}' to dataset '${dataset}': ${loaded.features} feature(s)`);
        }),
      );
    repo
      .command('remove-featureset')
      .description('remove a feature set and its features')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeFeatureSet(registry, dataset, name));
          say(`removed feature set '${name}' from dataset '${dataset}'`);
        }),
      );
  },

  async referenceSetUsers(registry, referenceSetName) {
    const sets = await listAllFeatureSets(registry);
    return sets.filter((s) => s.reference_set_name === referenceSetName).map((s) => `feature set '${s.name}' of dataset '${s.dataset_name}'`);
  },

  async datasetContents(registry, datasetName) {
    return [['feature set(s)', (await listAllFeatureSets(registry)).filter((s) => s.dataset_name === datasetName).length]];
  },

  async inventory(registry) {
    const { featureSetId } = await import('./service.js');
    const sets = await listAllFeatureSets(registry);
    return [
      {
        title: 'Feature sets',
        columns: ['id', 'dataset', 'name', 'features', 'reference set', 'ontology', 'source'],
        rows: sets.map((s) => [
          featureSetId(s.dataset_name, s.name),
          s.dataset_name,
          s.name,
          s.feature_count,
          s.reference_set_name,
          s.ontology_name,
          s.source,
        ]),
      },
    ];
  },

  async unresolved(registry) {
    const [{ featureSetId }, { OntologyCache }, { missingTermsFix }] = await Promise.all([
      import('./service.js'),
      import('../ontologies/cache.js'),
      import('../ontologies/matcher.js'),
    ]);
    const ontologies = new OntologyCache(registry, 0);
    const found = [];
    for (const s of await listAllFeatureSets(registry)) {
      const terms = await ontologies.matcher(s.ontology_name);
      const names = (JSON.parse(s.unmatched_types) as string[]).filter((name) => !terms.resolve(name));
      if (!names.length) continue;
      found.push({
        id: featureSetId(s.dataset_name, s.name),
        set: `feature set '${s.name}' of dataset '${s.dataset_name}'`,
        what: 'feature types without an ontology term',
        names,
        fix: missingTermsFix(s.ontology_name, terms),
      });
    }
    return found;
  },

  /** Features live in the registry, so there is no file to open: each set's rows must still be there. */
  async check(registry) {
    const problems: string[] = [];
    for (const set of await listAllFeatureSets(registry)) {
      const counted = await registry.db
        .selectFrom('feature')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('set_id', '=', set.id)
        .executeTakeFirstOrThrow();
      if (Number(counted.n) !== Number(set.feature_count)) {
        problems.push(`feature set '${set.name}' of dataset '${set.dataset_name}': ${counted.n} features stored, ${set.feature_count} loaded`);
      }
    }
    return problems;
  },
};
