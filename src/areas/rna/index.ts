import { Option, type Command } from 'commander';
import { action, commaList, progressReporter, say } from '../../cli/output.js';
import { pageReply, recordReply } from '../../protocol/reply.js';
import { requireDataset } from '../datasets/store.js';
import type { Area, CommandContext } from '../area.js';
import { FORMATS } from './formats.js';
import type { QuantificationOptions } from './loader.js';
import {
  addQuantificationSet,
  listAllQuantifications,
  listQuantificationSets,
  removeQuantification,
  removeQuantificationSet,
  rnaMigrations,
} from './store.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const rnaArea: Area = {
  name: 'rna',
  migrations: rnaMigrations,

  async routes({ registry, config }) {
    const [
      {
        ExpressionLevel,
        RnaQuantification,
        RnaQuantificationSet,
        SearchExpressionLevelsRequest,
        SearchExpressionLevelsResponse,
        SearchRnaQuantificationSetsRequest,
        SearchRnaQuantificationSetsResponse,
        SearchRnaQuantificationsRequest,
        SearchRnaQuantificationsResponse,
      },
      { rnaService },
    ] = await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = rnaService(registry, config.paging);
    return [
      {
        method: 'POST',
        path: '/rnaquantificationsets/search',
        request: SearchRnaQuantificationSetsRequest,
        handle: async ({ body }) => pageReply(SearchRnaQuantificationSetsResponse, await service.searchSets(body)),
      },
      {
        method: 'GET',
        path: '/rnaquantificationsets/{id}',
        handle: async ({ params }) => recordReply(RnaQuantificationSet, await service.getSet(params.id)),
      },
      {
        method: 'POST',
        path: '/rnaquantifications/search',
        request: SearchRnaQuantificationsRequest,
        handle: async ({ body }) => pageReply(SearchRnaQuantificationsResponse, await service.searchQuantifications(body)),
      },
      {
        method: 'GET',
        path: '/rnaquantifications/{id}',
        handle: async ({ params }) => recordReply(RnaQuantification, await service.getQuantification(params.id)),
      },
      {
        method: 'POST',
        path: '/expressionlevels/search',
        request: SearchExpressionLevelsRequest,
        handle: async ({ body }) => pageReply(SearchExpressionLevelsResponse, await service.searchExpressionLevels(body)),
      },
      {
        method: 'GET',
        path: '/expressionlevels/{id}',
        handle: async ({ params }) => recordReply(ExpressionLevel, await service.getExpressionLevel(params.id)),
      },
    ];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-rnaquantificationset')
      .description('register an RNA quantification set, the container of quantifications, in a dataset')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<name>', 'set name')
      .option('--description <text>', 'free-text description (served in the set\'s attributes)')
      .action(
        action(async (location: string, dataset: string, name: string, opts: { description?: string }) => {
          await withRegistry(location, async (registry) => {
            await requireDataset(registry, dataset);
            await addQuantificationSet(registry, dataset, name, opts.description);
          });
          say(`added RNA quantification set '${name}' to dataset '${dataset}'`);
        }),
      );
    repo
      .command('add-rnaquantification')
      .description('load an RSEM, kallisto, salmon or Cufflinks table into an RNA quantification set')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<set>', 'RNA quantification set name')
      .argument('<file>', 'RSEM *.results, kallisto abundance.tsv, salmon quant.sf or Cufflinks *.fpkm_tracking (may be gzipped, or a URL)')
      .addOption(new Option('--format <format>', 'table format (default: detected from the header)').choices(FORMATS))
      .option('--name <name>', 'quantification name (default: from the file name, or its folder for generic names like quant.sf)')
      .option('--description <text>', 'free-text description')
      .option('--biosample-id <name>', 'name of the biosample (of the dataset) the quantification is of')
      .addOption(new Option('--units <units>', 'expression column of RSEM tables (default: TPM)').choices(['TPM', 'FPKM']))
      .option('--feature-set-ids <list>', 'comma-separated ids of the annotation feature sets used', commaList)
      .option('--read-group-ids <list>', 'comma-separated ids of the input read groups', commaList)
      .option('--program <name:version>', 'program that produced the table (repeatable; default: the format\'s program)', collect)
      .action(
        action(async (location: string, dataset: string, set: string, file: string, opts: QuantificationOptions & { program?: string[] }) => {
          const { loadQuantification } = await import('./loader.js');
          const progress = progressReporter(`loading ${file}`);
          const loaded = await withRegistry(location, (registry) =>
            loadQuantification(registry, dataset, set, file, { ...opts, programs: opts.program, progress: progress.update }),
          ).finally(progress.done);
          say(`added RNA quantification '${loaded.name}' to set '${set}': ${loaded.rows} expression level(s), ${loaded.format}, ${loaded.units}`);
        }),
      );
    repo
      .command('remove-rnaquantificationset')
      .description('remove an RNA quantification set with its quantifications')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeQuantificationSet(registry, dataset, name));
          say(`removed RNA quantification set '${name}' from dataset '${dataset}'`);
        }),
      );
    repo
      .command('remove-rnaquantification')
      .description('remove one RNA quantification and its expression levels')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<set>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, set: string, name: string) => {
          await withRegistry(location, (registry) => removeQuantification(registry, dataset, set, name));
          say(`removed RNA quantification '${name}' from set '${set}'`);
        }),
      );
  },

  async inventory(registry) {
    const { quantificationId, quantificationSetId } = await import('./service.js');
    const sets = await listQuantificationSets(registry, undefined, undefined);
    const quantifications = await listAllQuantifications(registry);
    return [
      {
        title: 'RNA quantification sets',
        columns: ['id', 'dataset', 'name', 'quantifications', 'description'],
        rows: sets.map((s) => [
          quantificationSetId(s.dataset_name, s.name),
          s.dataset_name,
          s.name,
          quantifications.filter((q) => q.dataset_name === s.dataset_name && q.set_name === s.name).length,
          s.description,
        ]),
      },
      {
        title: 'RNA quantifications',
        columns: ['id', 'dataset', 'set', 'name', 'format', 'units', 'levels', 'biosample', 'source'],
        rows: quantifications.map((q) => [
          quantificationId(q.dataset_name, q.set_name, q.name),
          q.dataset_name,
          q.set_name,
          q.name,
          q.format,
          q.units,
          Number(q.row_count),
          q.biosample_id,
          q.source,
        ]),
      },
    ];
  },

  async datasetContents(registry, datasetName) {
    const sets = await listQuantificationSets(registry, datasetName, undefined);
    const quantifications = (await listAllQuantifications(registry)).filter((q) => q.dataset_name === datasetName);
    return [
      ['RNA quantification set(s)', sets.length],
      ['RNA quantification(s)', quantifications.length],
      ['expression level(s)', quantifications.reduce((n, q) => n + Number(q.row_count), 0)],
    ];
  },
};
