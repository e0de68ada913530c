/**
 * Bio-metadata: individuals and biosamples, registered from JSON files (one message each) and served by
 * search and get. Call sets, RNA quantifications and read group sets name their biosample (links in
 * docs/data.md, "Individuals and biosamples").
 */
import type { Command } from 'commander';
import { action, say } from '../../cli/output.js';
import { pageReply, recordReply } from '../../protocol/reply.js';
import type { Area, CommandContext } from '../area.js';
import { biometadataMigrations, listBiosamples, listIndividuals, removeBiosample, removeIndividual } from './store.js';


export const biometadataArea: Area = {
  name: 'biometadata',
  migrations: biometadataMigrations,

  async routes({ registry, config }) {
    const [{ Biosample, Individual, SearchBiosamplesRequest, SearchBiosamplesResponse, SearchIndividualsRequest, SearchIndividualsResponse }, { biometadataService }] =
      await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = biometadataService(registry, config.paging);
    return [
      {
        method: 'POST',
        path: '/individuals/search',
        request: SearchIndividualsRequest,
        handle: async ({ body }) => pageReply(SearchIndividualsResponse, await service.searchIndividuals(body)),
      },
      {
        method: 'GET',
        path: '/individuals/{id}',
        handle: async ({ params }) => recordReply(Individual, await service.getIndividual(params.id)),
      },
      {
        method: 'POST',
        path: '/biosamples/search',
        request: SearchBiosamplesRequest,
        handle: async ({ body }) => pageReply(SearchBiosamplesResponse, await service.searchBiosamples(body)),
      },
      {
        method: 'GET',
        path: '/biosamples/{id}',
        handle: async ({ params }) => recordReply(Biosample, await service.getBiosample(params.id)),
      },
    ];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-individual')
      .description('register an individual of a dataset from a JSON file holding one Individual message')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<json>', 'JSON file: one Individual (camelCase or snake_case fields)')
      .action(
        action(async (location: string, dataset: string, file: string) => {
          const { addIndividualFromFile } = await import('./loader.js');
          const name = await withRegistry(location, (registry) => addIndividualFromFile(registry, dataset, file));
          say(`added individual '${name}' to dataset '${dataset}'`);
        }),
      );
    repo
      .command('add-biosample')
      .description('register a biosample of a dataset from a JSON file holding one Biosample message')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<json>', 'JSON file: one Biosample; individualId may name an individual of the dataset')
      .action(
        action(async (location: string, dataset: string, file: string) => {
          const { addBiosampleFromFile } = await import('./loader.js');
          const added = await withRegistry(location, (registry) => addBiosampleFromFile(registry, dataset, file));
          say(`added biosample '${added.name}' to dataset '${dataset}'${added.individual ? ` (individual '${added.individual}')` : ''}`);
        }),
      );
    repo
      .command('remove-individual')
      .description('remove an individual (refused while a biosample names it)')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeIndividual(registry, dataset, name));
          say(`removed individual '${name}' from dataset '${dataset}'`);
        }),
      );
    repo
      .command('remove-biosample')
      .description('remove a biosample (refused while an RNA quantification names it)')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeBiosample(registry, dataset, name));
          say(`removed biosample '${name}' from dataset '${dataset}'`);
        }),
      );
  },

  async datasetContents(registry, datasetName) {
    return [
      ['individual(s)', (await listIndividuals(registry, { datasetName })).length],
      ['biosample(s)', (await listBiosamples(registry, { datasetName })).length],
    ];
  },

  async inventory(registry) {
    const { biosampleId, individualId } = await import('./service.js');
    const individuals = await listIndividuals(registry, {});
    const biosamples = await listBiosamples(registry, {});
    const described = (fields: string) => (JSON.parse(fields) as { description?: string }).description ?? '';
    return [
      {
        title: 'Individuals',
        columns: ['id', 'dataset', 'name', 'biosamples', 'description'],
        rows: individuals.map((i) => [
          individualId(i.dataset_name, i.name),
          i.dataset_name,
          i.name,
          biosamples.filter((b) => b.dataset_name === i.dataset_name && b.individual_name === i.name).length,
          described(i.fields),
        ]),
      },
      {
        title: 'Biosamples',
        columns: ['id', 'dataset', 'name', 'individual', 'description'],
        rows: biosamples.map((b) => [biosampleId(b.dataset_name, b.name), b.dataset_name, b.name, b.individual_name, described(b.fields)]),
      },
    ];
  },
};
