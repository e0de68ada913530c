import type { Command } from 'commander';
import { action, say } from '../../cli/output.js';
import { checkedBeforeHandOff, IdKinds } from '../../protocol/ids.js';
import { pageReply, recordReply, streamReply, type ContentCoding, type Reply } from '../../protocol/reply.js';
import type { NamingForm } from '../../protocol/schema.js';
import type { Area, CommandContext } from '../area.js';
import type { ReadGroupSetOptions } from './loader.js';
import type { SearchReadsQuery } from './messages.js';
import { formatOfRow, listReadGroupSetAlternates, listReadGroupSets, readMigrations, removeReadGroupSet } from './store.js';

/** Pages of at most this many alignments from BAM files are built on the main thread (routes, below). */
export const MAIN_THREAD_MAX_READS = 128;

export const readsArea: Area = {
  name: 'reads',
  migrations: readMigrations,

  async routes({ registry, config, pageWorkers }) {
    const [{ ReadGroup, ReadGroupSet, SearchReadGroupSetsRequest, SearchReadGroupSetsResponse, SearchReadsRequest }, { readService }] =
      await Promise.all([import('./messages.js'), import('./service.js')]);
    const service = readService(registry, config.paging, config.registryCacheMs);
    const workers = pageWorkers?.operations(new URL('./page-operations.ts', import.meta.url).href);
    /**
     * Where a page of alignments is built (docs/performance.md, "How large pages are built"). At most
     * MAIN_THREAD_MAX_READS from BAM files: streamed from the main thread, in slices, as a page of 100
     * short reads is ~0.1 ms of building, less than its two hand-overs between threads (~20% faster so,
     * with less CPU in all; from 200 reads a page the worker's building beside the sending wins).
     * Larger pages, and any page of a CRAM (tens of ms to decode a slice): in a page worker, which
     * builds the next two ahead (compressed for a client that takes gzip or br) while the client reads
     * this one; streamed from the main thread in slices when there is no page worker.
     */
    const searchReads = async (body: SearchReadsQuery, form: NamingForm, coding: ContentCoding | undefined): Promise<Reply> => {
      // Page workers run outside the request's access context: its ids are checked here first.
      checkedBeforeHandOff(body.readGroupIds ?? [], IdKinds.readGroup, 'readGroupIds');
      if (workers && !(await service.quickPage(body, MAIN_THREAD_MAX_READS))) return workers.run('searchReads', body, form, coding);
      return streamReply(await service.searchReads(body));
    };
    return [
      {
        method: 'POST',
        path: '/readgroupsets/search',
        request: SearchReadGroupSetsRequest,
        handle: async ({ body }) => pageReply(SearchReadGroupSetsResponse, await service.searchReadGroupSets(body)),
      },
      {
        method: 'GET',
        path: '/readgroupsets/{id}',
        handle: async ({ params }) => recordReply(ReadGroupSet, await service.getReadGroupSet(params.id)),
      },
      {
        method: 'GET',
        path: '/readgroups/{id}',
        handle: async ({ params }) => recordReply(ReadGroup, await service.getReadGroup(params.id)),
      },
      {
        method: 'POST',
        path: '/reads/search',
        request: SearchReadsRequest,
        handle: ({ body, form, coding }) => searchReads(body, form, coding),
      },
    ];
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-readgroupset')
      .description('register a BAM (with its .bai or .csi) or a CRAM (with its .crai) as one read group set of a dataset')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<dataset>', 'dataset the read group set belongs to')
      .argument('<path>', 'a coordinate-sorted, indexed .bam or .cram file, or its http(s) URL')
      .requiredOption('--referenceset <name>', 'the registered reference set the reads are aligned to (CRAM is decoded against it)')
      .option('--name <name>', 'read group set name (default: the file name without .bam or .cram)')
      .option('--biosample-id <name>', 'the biosample of the same dataset the reads come from')
      .option('--alternate <path>', 'the same reads in the other encoding (a .cram beside a .bam, or a .bam beside a .cram), indexed: htsget serves each format from its own file')
      .action(
        action(async (location: string, dataset: string, file: string, opts: ReadGroupSetOptions) => {
          const { loadReadGroupSet } = await import('./loader.js');
          const loaded = await withRegistry(location, (registry) => loadReadGroupSet(registry, dataset, file, opts));
          for (const warning of loaded.warnings) say(`warning: ${warning}`);
          const counts = loaded.aligned === undefined ? '' : `, ${loaded.aligned} aligned and ${loaded.unaligned} unaligned read(s)`;
          const formats = loaded.alternate ? `${loaded.format}; alternate ${loaded.alternate}` : loaded.format;
          say(`added read group set '${loaded.name}' (${formats}) to dataset '${dataset}': read group(s) ${loaded.readGroups.join(', ')}${counts}`);
        }),
      );
    repo
      .command('remove-readgroupset')
      .description('remove a read group set and its alternate (the alignment files stay where they are)')
      .argument('<registry>')
      .argument('<dataset>')
      .argument('<name>')
      .action(
        action(async (location: string, dataset: string, name: string) => {
          await withRegistry(location, (registry) => removeReadGroupSet(registry, dataset, name));
          say(`removed read group set '${name}' from dataset '${dataset}'`);
        }),
      );
  },

  async inventory(registry) {
    const { readGroupSetId, toReadGroupSetRecord } = await import('./service.js');
    const rows = (await listReadGroupSets(registry, {}, undefined)).map((row) => {
      const record = toReadGroupSetRecord(row);
      return [
        record.id,
        row.dataset_name,
        row.name,
        row.reference_set_name,
        formatOfRow(row),
        record.readGroups.map((g) => g.name),
        row.aligned_count,
        row.unaligned_count,
        row.biosample_name,
      ];
    });
    const alternates = (await listReadGroupSetAlternates(registry)).map((a) => [
      readGroupSetId(a.dataset_name, a.read_group_set_name),
      a.dataset_name,
      a.read_group_set_name,
      a.format,
      a.path,
    ]);
    return [
      { title: 'Read group sets', columns: ['id', 'dataset', 'name', 'reference set', 'format', 'read groups', 'aligned', 'unaligned', 'biosample'], rows },
      { title: 'Read group set alternates', columns: ['id', 'dataset', 'name', 'format', 'path'], rows: alternates },
    ];
  },

  async unresolved(registry) {
    const [{ readGroupSetId, linkableSamples }, { SampleLinks }] = await Promise.all([import('./service.js'), import('../biometadata/links.js')]);
    const links = new SampleLinks(registry, 0);
    const found = [];
    for (const row of await listReadGroupSets(registry, {}, undefined)) {
      const names = await links.unlinked(row.dataset_name, ['read group set', row.name, row.created_at], linkableSamples(row));
      if (!names.length) continue;
      found.push({
        id: readGroupSetId(row.dataset_name, row.name),
        set: `read group set '${row.name}' of dataset '${row.dataset_name}'`,
        what: 'read group samples (@RG SM) that name no biosample',
        names,
        fix: `add biosamples of these names to dataset '${row.dataset_name}' with: ga4gh repo add-biosample, or choose one with add-readgroupset --biosample-id`,
      });
    }
    return found;
  },

  async referenceSetUsers(registry, referenceSetName) {
    const sets = await listReadGroupSets(registry, {}, undefined);
    return sets.filter((s) => s.reference_set_name === referenceSetName).map((s) => `read group set '${s.name}' of dataset '${s.dataset_name}'`);
  },

  async datasetContents(registry, datasetName) {
    return [['read group set(s)', (await listReadGroupSets(registry, { datasetName }, undefined)).length]];
  },

  async check(registry) {
    const { openAlignmentSource } = await import('./alignment-files.js');
    const problems: string[] = [];
    const alternates = await listReadGroupSetAlternates(registry);
    for (const row of await listReadGroupSets(registry, {}, undefined)) {
      const own = { path: row.path, indexPath: row.index_path, indexKind: row.index_kind };
      const others = alternates.filter((a) => a.dataset_name === row.dataset_name && a.read_group_set_name === row.name);
      for (const file of [own, ...others.map((a) => ({ path: a.path, indexPath: a.index_path, indexKind: a.index_kind }))]) {
        try {
          // The index opens, and the first record of the file's first reference (or of its unplaced reads) reads.
          const names = (JSON.parse(row.read_groups) as Array<{ ID: string }>).map((g) => g.ID);
          const source = openAlignmentSource(file, async (_id, start, end) => 'N'.repeat(end - start + 1), names);
          const references = JSON.parse(row.reference_names) as string[];
          const cursor = await source.records(references.length ? 0 : -1, 0, Number.POSITIVE_INFINITY);
          if (cursor) {
            await cursor.next();
            await cursor.close();
          }
        } catch (e) {
          problems.push(`read group set '${row.name}' of dataset '${row.dataset_name}': ${(e as Error).message} (${file.path})`);
        }
      }
    }
    return problems;
  },
};
