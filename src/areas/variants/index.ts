import type { Command } from 'commander';
import { action, say } from '../../cli/output.js';
import { checkedBeforeHandOff, IdKinds } from '../../protocol/ids.js';
import { pageReply, recordReply, streamReply, type ContentCoding, type Reply } from '../../protocol/reply.js';
import type { NamingForm } from '../../protocol/schema.js';
import type { Area, CommandContext, InventoryValue } from '../area.js';
import type { VariantSetOptions } from './loader.js';
import type { SearchVariantsQuery } from './messages.js';
import {
  listBeaconFrequencies,
  listCallSets,
  listVariantSetAlternateFiles,
  listVariantSetFiles,
  listVariantSets,
  removeBeaconFrequencies,
  removeVariantSet,
  setBeaconFrequencies,
  variantMigrations,
} from './store.js';
import { UserError } from '../../user-error.js';

export const variantsArea: Area = {
  name: 'variants',
  migrations: variantMigrations,

  async routes({ registry, config, pageWorkers }) {
    const [
      { CallSet, SearchCallSetsRequest, SearchCallSetsResponse, SearchVariantSetsRequest, SearchVariantSetsResponse, SearchVariantsRequest, VariantSet },
      { variantService },
    ] = await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = variantService(registry, config.paging, config.registryCacheMs);
    const workers = pageWorkers?.operations(new URL('./page-operations.ts', import.meta.url).href);
    /**
     * Where a page of variants with their calls is built (docs/performance.md, "How large pages are
     * built"): in a page worker, which builds the next two pages of the query ahead, compressed for a
     * client that takes gzip or br, while the client reads this one. Without page workers: streamed
     * from the main thread in slices.
     */
    const searchVariants = async (body: SearchVariantsQuery, form: NamingForm, coding: ContentCoding | undefined): Promise<Reply> => {
      // Page workers run outside the request's access context: its ids are checked here first.
      checkedBeforeHandOff([body.variantSetId], IdKinds.variantSet);
      return workers ? workers.run('searchVariants', body, form, coding) : streamReply(await service.searchVariants(body));
    };
    return [
      {
        method: 'POST',
        path: '/variantsets/search',
        request: SearchVariantSetsRequest,
        handle: async ({ body }) => pageReply(SearchVariantSetsResponse, await service.searchVariantSets(body)),
      },
      {
        method: 'GET',
        path: '/variantsets/{id}',
        handle: async ({ params }) => recordReply(VariantSet, await service.getVariantSet(params.id)),
      },
      {
        method: 'POST',
        path: '/callsets/search',
        request: SearchCallSetsRequest,
        handle: async ({ body }) => pageReply(SearchCallSetsResponse, await service.searchCallSets(body)),
      },
      {
        method: 'GET',
        path: '/callsets/{id}',
        handle: async ({ params }) => recordReply(CallSet, await service.getCallSet(params.id)),
      },
      {
        method: 'POST',
        path: '/variants/search',
        request: SearchVariantsRequest,
        handle: ({ body, form, coding }) => searchVariants(body, form, coding),
      },
      {
        method: 'GET',
        path: '/variants/{id}',
        handle: async ({ params, form }) => {
          checkedBeforeHandOff([params.id], IdKinds.variant);
          return workers ? workers.run('getVariant', params.id, form) : streamReply(await service.getVariant(params.id));
        },
      },
    ];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-variantset')
      .description('register bgzipped, indexed VCF files, or BCF files with their .csi (or folders of either), as one variant set of a dataset')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset the variant set belongs to')
      .argument('<paths...>', '.vcf.gz/.vcf.bgz files with .tbi or .csi indexes, .bcf files with .csi indexes, folders of them, or plain .vcf files (bgzipped and indexed beside themselves)')
      .requiredOption('--referenceset <name>', 'the registered reference set the variants are called against')
      .option('--name <name>', 'variant set name (default: the first file name without .vcf.gz, or the folder name)')
      .option('--allow-missing-contigs', 'register even when the VCF has contigs the reference set lacks')
      .option('--no-annotations', 'do not register the VEP/SnpEff annotations of the VCF as a variant annotation set')
      .option('--ontology <name>', 'ontology the annotation effects are looked up in (default: the only one loaded, else every one registered)')
      .option(
        '--alternate <path>',
        'the other encoding of the same records as a file of the set, served by htsget in that format: a BCF (with its .csi) beside a VCF, a bgzipped, indexed VCF beside a BCF; once for each file, in the same order',
        (value: string, previous: string[]) => [...previous, value],
        [] as string[],
      )
      .action(
        action(async (location: string, dataset: string, paths: string[], opts: VariantSetOptions) => {
          const { loadVariantSet } = await import('./loader.js');
          const loaded = await withRegistry(location, (registry) => loadVariantSet(registry, dataset, paths, opts));
          for (const note of loaded.notes) say(note);
          for (const file of loaded.createdFiles) say(`created ${file}`);
          if (loaded.missingContigs.length) say(`note: contig(s) not in the reference set: ${loaded.missingContigs.join(', ')}`);
          const alternates = loaded.alternates ? ` (and ${loaded.alternates} ${loaded.format === 'BCF' ? 'VCF' : 'BCF'} alternate(s))` : '';
          const files = `${loaded.files} ${loaded.format === 'BCF' ? 'BCF ' : ''}file(s)`;
          say(
            `added variant set '${loaded.name}' to dataset '${dataset}': ${files}${alternates}, ${loaded.samples} call set(s), contigs ${loaded.contigs.join(', ') || '(none)'}`,
          );
          const annotations = loaded.annotations;
          if (annotations) {
            say(`added variant annotation set '${loaded.name}' (INFO ${annotations.field}, effects ${annotations.ontology ? `from ontology '${annotations.ontology}'` : 'from the ontologies registered when served'})`);
            if (annotations.note) say(`note: ${annotations.note}`);
          }
        }),
      );
    repo
      .command('remove-variantset')
      .description('remove a variant set with its call sets, annotation set and alternates (the VCF and BCF files stay where they are)')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeVariantSet(registry, dataset, name));
          say(`removed variant set '${name}' from dataset '${dataset}'`);
        }),
      );
    repo
      .command('set-beacon-frequencies')
      .description("name the INFO fields of a variant set that hold allele frequencies, and their populations, for Beacon's frequencyInPopulations")
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>')
      .argument('<name>', 'the variant set')
      .argument('<fields...>', 'FIELD=POPULATION, e.g. AF=All EAS_AF="East Asian"')
      .requiredOption('--source <text>', 'the study the frequencies come from, e.g. "1000 Genomes Project phase 3"')
      .requiredOption('--source-reference <url>', 'where the study is described')
      .option('--source-version <text>', 'the version of the study')
      .action(
        action(async (location: string, dataset: string, name: string, given: string[], opts: { source: string; sourceReference: string; sourceVersion?: string }) => {
          const fields = given.map((text): [string, string] => {
            const eq = text.indexOf('=');
            if (eq <= 0 || eq === text.length - 1) throw new UserError(`'${text}' is not FIELD=POPULATION`);
            return [text.slice(0, eq), text.slice(eq + 1)];
          });
          await withRegistry(location, (registry) =>
            setBeaconFrequencies(registry, dataset, name, { fields, source: opts.source, sourceReference: opts.sourceReference, version: opts.sourceVersion }),
          );
          say(`variant set '${name}' of dataset '${dataset}': Beacon frequencies from ${fields.map(([f, p]) => `${f} (${p})`).join(', ')}`);
        }),
      );
    repo
      .command('remove-beacon-frequencies')
      .description('stop answering frequencyInPopulations for a variant set')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeBeaconFrequencies(registry, dataset, name));
          say(`variant set '${name}' of dataset '${dataset}': no Beacon frequencies`);
        }),
      );
  },

  async inventory(registry) {
    const { variantSetId } = await import('./service.js');
    const rows: InventoryValue[][] = [];
    for (const set of await listVariantSets(registry, undefined, undefined)) {
      const files = await listVariantSetFiles(registry, set.dataset_name, set.name);
      const callSets = await listCallSets(registry, set.dataset_name, set.name);
      const contigs = [...new Set(files.flatMap((f) => JSON.parse(f.contigs) as string[]))];
      rows.push([variantSetId(set.dataset_name, set.name), set.dataset_name, set.name, set.reference_set_name, files.length, callSets.length, contigs]);
    }
    const alternates = (await listVariantSetAlternateFiles(registry)).map((a) => [
      variantSetId(a.dataset_name, a.variant_set_name),
      a.dataset_name,
      a.variant_set_name,
      a.format,
      a.ordinal,
      a.path,
    ]);
    const frequencies = (await listBeaconFrequencies(registry)).map((f) => [
      variantSetId(f.dataset_name, f.variant_set_name),
      f.dataset_name,
      f.variant_set_name,
      f.info_field,
      f.population,
      f.source,
    ]);
    return [
      { title: 'Variant sets', columns: ['id', 'dataset', 'name', 'reference set', 'files', 'call sets', 'contigs'], rows },
      { title: 'Variant set alternates', columns: ['id', 'dataset', 'name', 'format', 'file', 'path'], rows: alternates },
      { title: 'Variant set Beacon frequencies', columns: ['id', 'dataset', 'name', 'info field', 'population', 'source'], rows: frequencies },
    ];
  },

  async unresolved(registry) {
    const [{ variantSetId }, { SampleLinks }] = await Promise.all([import('./service.js'), import('../biometadata/links.js')]);
    const links = new SampleLinks(registry, 0);
    const found = [];
    for (const set of await listVariantSets(registry, undefined, undefined)) {
      const samples = (await listCallSets(registry, set.dataset_name, set.name)).map((c) => c.name);
      const names = await links.unlinked(set.dataset_name, ['variant set', set.name, set.created_at], samples);
      if (!names.length) continue;
      found.push({
        id: variantSetId(set.dataset_name, set.name),
        set: `variant set '${set.name}' of dataset '${set.dataset_name}'`,
        what: 'call set samples that name no biosample',
        names,
        fix: `add biosamples of these names to dataset '${set.dataset_name}' with: ga4gh repo add-biosample`,
      });
    }
    return found;
  },

  async referenceSetUsers(registry, referenceSetName) {
    const sets = await listVariantSets(registry, undefined, undefined);
    return sets.filter((s) => s.reference_set_name === referenceSetName).map((s) => `variant set '${s.name}' of dataset '${s.dataset_name}'`);
  },

  async datasetContents(registry, datasetName) {
    const sets = await listVariantSets(registry, datasetName, undefined);
    let callSets = 0;
    for (const set of sets) callSets += (await listCallSets(registry, datasetName, set.name)).length;
    return [
      ['variant set(s)', sets.length],
      ['call set(s)', callSets],
    ];
  },

  async check(registry, options) {
    const { checkVariantSets } = await import('./check.js');
    return checkVariantSets(registry, options);
  },
};
