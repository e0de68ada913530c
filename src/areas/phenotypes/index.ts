/**
 * Genotype-phenotype associations (spec section 4.5): Monarch/CGD Turtle files loaded once into the
 * registry and served through the three G2P searches.
 */
import type { Command } from 'commander';
import { action, say } from '../../cli/output.js';
import { pageReply } from '../../protocol/reply.js';
import type { Area, CommandContext } from '../area.js';
import { listPhenotypeSets, phenotypeMigrations } from './store.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const phenotypesArea: Area = {
  name: 'phenotypes',
  migrations: phenotypeMigrations,

  async routes({ registry, config }) {
    const [
      {
        SearchGenotypePhenotypeRequest,
        SearchGenotypePhenotypeResponse,
        SearchPhenotypeAssociationSetsRequest,
        SearchPhenotypeAssociationSetsResponse,
        SearchPhenotypesRequest,
        SearchPhenotypesResponse,
      },
      { phenotypeService },
    ] = await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = phenotypeService(registry, config.paging, config.registryCacheMs);
    return [
      {
        method: 'POST',
        path: '/phenotypeassociationsets/search',
        request: SearchPhenotypeAssociationSetsRequest,
        handle: async ({ body }) => pageReply(SearchPhenotypeAssociationSetsResponse, await service.searchSets(body)),
      },
      {
        method: 'POST',
        path: '/phenotypes/search',
        request: SearchPhenotypesRequest,
        handle: async ({ body }) => pageReply(SearchPhenotypesResponse, await service.searchPhenotypes(body)),
      },
      {
        method: 'POST',
        path: '/featurephenotypeassociations/search',
        request: SearchGenotypePhenotypeRequest,
        handle: async ({ body }) => pageReply(SearchGenotypePhenotypeResponse, await service.searchAssociations(body)),
      },
    ];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-phenotypeassociationset')
      .description('load genotype-phenotype associations from a Monarch/CGD Turtle file (or a folder of them) into a dataset')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<path>', 'Turtle (.ttl) file, or a folder whose .ttl files are read together')
      .option('--name <name>', 'set name (default: the file name without .ttl, or the folder name)')
      .option('--ontology <name>', 'registered ontology whose subclasses term queries include, and whose labels name terms (repeatable)', collect)
      .action(
        action(async (location: string, dataset: string, path: string, opts: { name?: string; ontology?: string[] }) => {
          const { loadPhenotypeSet } = await import('./loader.js');
          const loaded = await withRegistry(location, (registry) =>
            loadPhenotypeSet(registry, dataset, path, { name: opts.name, ontologies: opts.ontology }),
          );
          say(
            `added phenotype association set '${loaded.name}' to dataset '${dataset}': ` +
              `${loaded.associations} association(s), ${loaded.phenotypes} phenotype(s), ${loaded.features.length} feature(s)`,
          );
        }),
      );
    repo
      .command('remove-phenotypeassociationset')
      .description('remove a phenotype association set')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          const { unloadPhenotypeSet } = await import('./loader.js');
          await withRegistry(location, (registry) => unloadPhenotypeSet(registry, dataset, name));
          say(`removed phenotype association set '${name}' from dataset '${dataset}'`);
        }),
      );
  },

  async datasetContents(registry, datasetName) {
    return [['phenotype association set(s)', (await listPhenotypeSets(registry, datasetName, undefined)).length]];
  },

  async inventory(registry) {
    const { phenotypeSetId } = await import('./service.js');
    const sets = await listPhenotypeSets(registry, undefined, undefined);
    const ontologies = await registry.db.selectFrom('phenotype_association_set_ontology').selectAll().execute();
    return [
      {
        title: 'Phenotype association sets',
        columns: ['id', 'dataset', 'name', 'associations', 'phenotypes', 'features', 'ontologies', 'version', 'source'],
        rows: sets.map((s) => [
          phenotypeSetId(s.dataset_name, s.name),
          s.dataset_name,
          s.name,
          s.association_count,
          s.phenotype_count,
          s.feature_count,
          ontologies
            .filter((o) => o.dataset_name === s.dataset_name && o.set_name === s.name)
            .map((o) => o.ontology_name)
            .sort(),
          s.version ?? '',
          s.source,
        ]),
      },
    ];
  },
};
