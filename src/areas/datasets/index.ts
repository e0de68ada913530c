import type { Command } from 'commander';
import { attributesFromJson } from '../../cli/attributes.js';
import { action, say } from '../../cli/output.js';
import { pageReply, recordReply } from '../../protocol/reply.js';
import type { Area, CommandContext } from '../area.js';
import {
  addDataset,
  BEACON_GRANULARITIES,
  DEFAULT_BEACON_GRANULARITY,
  listDatasets,
  datasetMigrations,
  removeDataset,
  requireDatasetToRemove,
  setBeaconGranularity,
} from './store.js';

export const datasetsArea: Area = {
  name: 'datasets',
  migrations: datasetMigrations,

  async routes({ registry, config }) {
    const [{ Dataset, SearchDatasetsRequest, SearchDatasetsResponse }, { datasetService }] =
      await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = datasetService(registry, config.paging);
    return [
      {
        method: 'POST',
        path: '/datasets/search',
        request: SearchDatasetsRequest,
        handle: async ({ body }) => pageReply(SearchDatasetsResponse, await service.search(body)),
      },
      {
        method: 'GET',
        path: '/datasets/{id}',
        handle: async ({ params }) => recordReply(Dataset, await service.get(params.id)),
      },
    ];
  },

  commands(repo: Command, { withRegistry, areas }: CommandContext) {
    repo
      .command('add-dataset')
      .description('register a dataset, the container of sets, individuals and biosamples')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<name>', 'dataset name')
      .option('--description <text>', 'free-text description')
      .option('--attributes <json>', 'attributes: {"key": "value" or [values]}, or the wire form {"attr": {...}}')
      .option('--beacon-granularity <level>', `the most Beacon answers of it to anyone: ${BEACON_GRANULARITIES.join(', ')}`, DEFAULT_BEACON_GRANULARITY)
      .action(
        action(async (location: string, name: string, opts: { description?: string; attributes?: string; beaconGranularity: string }) => {
          const attributes = opts.attributes === undefined ? undefined : attributesFromJson(opts.attributes);
          await withRegistry(location, (registry) => addDataset(registry, name, opts.description, attributes, opts.beaconGranularity));
          say(`added dataset '${name}' (Beacon granularity ${opts.beaconGranularity})`);
        }),
      );
    repo
      .command('set-beacon-granularity')
      .description('change the most Beacon answers of a dataset to anyone: whether a record exists, how many, or the records')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<level>', BEACON_GRANULARITIES.join(', '))
      .action(
        action(async (location: string, name: string, level: string) => {
          await withRegistry(location, (registry) => setBeaconGranularity(registry, name, level));
          say(`dataset '${name}' now answers Beacon queries up to ${level}`);
        }),
      );
    repo
      .command('remove-dataset')
      .description('remove a dataset and everything registered under it')
      .argument('<registry>')
      .argument('<name>')
      .action(
        action(async (location: string, name: string) => {
          const contents = await withRegistry(location, async (registry) => {
            const counts: Array<[string, number]> = [];
            await requireDatasetToRemove(registry, name);
            for (const area of areas) if (area.datasetContents) counts.push(...(await area.datasetContents(registry, name)));
            await removeDataset(registry, name);
            return counts.filter(([, n]) => n > 0);
          });
          const what = contents.map(([kind, n]) => `${n} ${kind}`).join(', ');
          say(`removed dataset '${name}'${what ? ` with ${what}` : ' (it held nothing)'}`);
        }),
      );
  },

  async inventory(registry) {
    const { datasetId } = await import('./service.js');
    const rows = await listDatasets(registry, undefined, Number.MAX_SAFE_INTEGER);
    return [
      {
        title: 'Datasets',
        columns: ['id', 'name', 'description', 'beacon granularity'],
        rows: rows.map((r) => [datasetId(r.name), r.name, r.description, r.beacon_granularity]),
      },
    ];
  },
};
