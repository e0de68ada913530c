/**
 * Continuous data (spec 4.5): bigWig files registered as continuous sets and read in place, local or
 * over HTTP ranges. The 0.6.0a10 schema annotates these paths under /v0.6.0a8/, so they are served
 * there as well as at the usual places.
 */
import type { Command } from 'commander';
import { action, say } from '../../cli/output.js';
import type { Route } from '../../http/router.js';
import { pageReply, recordReply } from '../../protocol/reply.js';
import type { Area, CommandContext } from '../area.js';
import { continuousMigrations, listContinuousSets, removeContinuousSet } from './store.js';

/** The version prefix the schema's annotations give these three paths. */
const SCHEMA_PREFIX = '/v0.6.0a8';

export const continuousArea: Area = {
  name: 'continuous',
  migrations: continuousMigrations,

  async routes({ registry, config }) {
    const [{ ContinuousSet, SearchContinuousRequest, SearchContinuousResponse, SearchContinuousSetsRequest, SearchContinuousSetsResponse }, { continuousService }] =
      await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = continuousService(registry, config.paging);
    const routes: Route[] = [
      {
        method: 'POST',
        path: '/continuoussets/search',
        request: SearchContinuousSetsRequest,
        handle: async ({ body }) => pageReply(SearchContinuousSetsResponse, await service.searchSets(body)),
      },
      {
        method: 'GET',
        path: '/continuoussets/{id}',
        handle: async ({ params }) => recordReply(ContinuousSet, await service.getSet(params.id)),
      },
      {
        method: 'POST',
        path: '/continuous/search',
        request: SearchContinuousRequest,
        handle: async ({ body }) => pageReply(SearchContinuousResponse, await service.searchContinuous(body)),
      },
    ];
    return [...routes, ...routes.map((r) => ({ ...r, path: SCHEMA_PREFIX + r.path }))];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-continuousset')
      .description('register a bigWig file (local or a URL, read in place) as a continuous set of a dataset')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset name')
      .argument('<bigwig>', 'bigWig file or http(s) URL (wiggle and bedGraph must be converted first)')
      .requiredOption('--referenceset <name>', 'reference set holding every sequence the bigWig names')
      .option('--name <name>', 'continuous set name (default: the file name without .bw)')
      .option('--source-uri <uri>', 'where the data came from (served as sourceUri)')
      .action(
        action(async (location: string, dataset: string, file: string, opts: { referenceset: string; name?: string; sourceUri?: string }) => {
          const { loadContinuousSet } = await import('./loader.js');
          const loaded = await withRegistry(location, (registry) =>
            loadContinuousSet(registry, dataset, file, { referenceSet: opts.referenceset, name: opts.name, sourceUri: opts.sourceUri }),
          );
          say(`added continuous set '${loaded.name}' to dataset '${dataset}': ${loaded.sequences} sequence(s)`);
        }),
      );
    repo
      .command('remove-continuousset')
      .description('remove a continuous set (the bigWig file is left alone)')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeContinuousSet(registry, dataset, name));
          say(`removed continuous set '${name}' from dataset '${dataset}'`);
        }),
      );
  },

  async referenceSetUsers(registry, referenceSetName) {
    const sets = await listContinuousSets(registry, undefined, undefined);
    return sets.filter((s) => s.reference_set_name === referenceSetName).map((s) => `continuous set '${s.name}' of dataset '${s.dataset_name}'`);
  },

  async datasetContents(registry, datasetName) {
    return [['continuous set(s)', (await listContinuousSets(registry, datasetName, undefined)).length]];
  },

  async inventory(registry) {
    const { continuousSetId } = await import('./service.js');
    const sets = await listContinuousSets(registry, undefined, undefined);
    return [
      {
        title: 'Continuous sets',
        columns: ['id', 'dataset', 'name', 'reference set', 'file'],
        rows: sets.map((s) => [continuousSetId(s.dataset_name, s.name), s.dataset_name, s.name, s.reference_set_name, s.path]),
      },
    ];
  },

  async check(registry) {
    const { openBigWig } = await import('./bigwig.js');
    const problems: string[] = [];
    for (const set of await listContinuousSets(registry, undefined, undefined)) {
      try {
        // The header, the chromosome tree and the first values of the first sequence must read.
        const file = await openBigWig(set.path, Number(set.size));
        const [first] = file.sequences;
        if (first) await file.reader.getFeaturesAsArrays(first[0], 0, Math.min(first[1], 1_000_000));
      } catch (e) {
        problems.push(`continuous set '${set.name}' of dataset '${set.dataset_name}': ${(e as Error).message} (${set.path})`);
      }
    }
    return problems;
  },
};
