import type { Command } from 'commander';
import { action, byteProgress, commaList, say } from '../../cli/output.js';
import { GAException } from '../../protocol/errors.js';
import { pageReply, recordReply, type Reply } from '../../protocol/reply.js';
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import type { Area, CommandContext, InventoryValue } from '../area.js';
import { UserError } from '../../user-error.js';
import type { DictionaryOptions } from './loader.js';
import type { BasesPage, BasesRequest } from './messages.js';
import { listAssemblyAliases, listReferences, listReferenceSets, referenceMigrations, removeAssemblyAlias, removeReferenceSet, setAssemblyAliases } from './store.js';

/**
 * ListReferenceBasesResponse with the bases written into the JSON as the bytes read from the file:
 * a 1 Mb page as a JavaScript string cost ~2 ms to escape and ~1.5 ms to encode again, more than the
 * whole read (P2: 71-94 -> 190-240 M bases/s in a prototype against samtools' 124-155 M).
 */
function basesReply(page: BasesPage, key: (field: string, form: NamingForm) => string): Reply {
  return {
    kind: 'bytes',
    chunks(form) {
      const head = '{' + key('offset', form) + page.offset + ',' + key('sequence', form) + '"';
      const token = page.nextPageToken ? ',' + key('nextPageToken', form) + JSON.stringify(page.nextPageToken) : '';
      return [Buffer.from(head), page.sequence, Buffer.from('"' + token + '}')];
    },
  };
}

export const referencesArea: Area = {
  name: 'references',
  migrations: referenceMigrations,

  async routes({ registry, config }) {
    const [
      {
        ListReferenceBasesByIdRequest,
        ListReferenceBasesQuery,
        ListReferenceBasesRequest,
        ListReferenceBasesResponse,
        Reference,
        ReferenceSet,
        SearchReferenceSetsRequest,
        SearchReferenceSetsResponse,
        SearchReferencesRequest,
        SearchReferencesResponse,
      },
      { SequenceFiles },
      { referenceService },
    ] = await Promise.all([
      import('./messages.js'),
      import('./sequences.js'),
      import('./service.js'),
    ]);
    const service = referenceService(registry, config, new SequenceFiles());
    const key = (field: string, form: NamingForm) => keyOf(ListReferenceBasesResponse, field, form);
    const bases = async (id: string, request: BasesRequest) => basesReply(await service.listBases(id, request), key);
    return [
      {
        method: 'POST',
        path: '/referencesets/search',
        request: SearchReferenceSetsRequest,
        handle: async ({ body }) => pageReply(SearchReferenceSetsResponse, await service.searchReferenceSets(body)),
      },
      {
        method: 'GET',
        path: '/referencesets/{id}',
        handle: async ({ params }) => recordReply(ReferenceSet, await service.getReferenceSet(params.id)),
      },
      {
        method: 'POST',
        path: '/references/search',
        request: SearchReferencesRequest,
        handle: async ({ body }) => pageReply(SearchReferencesResponse, await service.searchReferences(body)),
      },
      {
        method: 'GET',
        path: '/references/{id}',
        handle: async ({ params }) => recordReply(Reference, await service.getReference(params.id)),
      },
      {
        method: 'GET',
        path: '/references/{id}/bases',
        request: ListReferenceBasesQuery,
        handle: async ({ params, body }) => bases(params.id, body),
      },
      {
        method: 'POST',
        path: '/references/{id}/bases',
        request: ListReferenceBasesRequest,
        handle: async ({ params, body }) => {
          if (body.referenceId !== undefined && body.referenceId !== params.id) {
            throw new GAException('invalidRequest', "field 'referenceId' differs from the reference id in the path");
          }
          return bases(params.id, body);
        },
      },
      {
        method: 'POST',
        path: '/listreferencebases',
        request: ListReferenceBasesByIdRequest,
        handle: async ({ body }) => bases(body.referenceId, body),
      },
    ];
  },

  commands(repo: Command, { withRegistry, areas }: CommandContext) {
    repo
      .command('add-referenceset')
      .description('register a FASTA file (plain with .fai, or bgzipped with .fai and .gzi) as a reference set, or a sequence dictionary as a set without bases')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('[fasta]', 'FASTA file; missing indexes are created beside it')
      .option('--dictionary <file>', 'instead of a FASTA: the names, lengths and MD5s of a SAM/BAM/CRAM header, a .dict, a VCF/BCF header or a .fai; the set holds no bases')
      .option('--md5 <file>', 'with --dictionary: MD5s of its sequences, lines of NAME MD5')
      .option('--name <name>', 'set name (default: the file name without extensions)')
      .option('--description <text>', 'free-text description')
      .option('--assembly-id <id>', 'public assembly id, e.g. GRCh37')
      .option('--species-term-id <curie>', 'species ontology term, e.g. NCBITaxon:9606')
      .option('--species-term <label>', 'species label, e.g. "Homo sapiens"')
      .option('--source-uri <uri>', 'where the FASTA came from')
      .option('--source-accessions <list>', 'comma-separated accessions, with versions', commaList)
      .option('--is-derived', 'the set adds or alters sequences of its source')
      .option('--reference-accessions <file>', 'accessions of single references: lines of NAME ACCESSION[,ACCESSION...]')
      .option('--circular <names>', 'comma-separated names of circular sequences: refget serves ranges across their origin', commaList)
      .action(
        action(async (location: string, fasta: string | undefined, { dictionary, ...opts }: DictionaryOptions & { dictionary?: string }) => {
          if (fasta === undefined && dictionary === undefined) {
            throw new UserError("missing required argument 'fasta': give a FASTA file, or a sequence dictionary with --dictionary FILE");
          }
          if (fasta !== undefined && dictionary !== undefined) throw new UserError('give either a FASTA file or --dictionary FILE, not both');
          if (opts.md5 !== undefined && dictionary === undefined) throw new UserError('--md5 completes the MD5s of a --dictionary; a FASTA gives its own');
          const { loadDictionaryReferenceSet, loadReferenceSet } = await import('./loader.js');
          if (dictionary !== undefined) {
            const loaded = await withRegistry(location, (registry) => loadDictionaryReferenceSet(registry, dictionary, opts));
            say(`added reference set '${loaded.name}' without bases, from ${dictionary}: ${loaded.references} reference(s), md5 ${loaded.md5checksum || 'unknown (some references have no MD5)'}`);
            return;
          }
          const file = fasta!;
          const progress = byteProgress('reading');
          const loaded = await withRegistry(location, (registry) =>
            loadReferenceSet(registry, file, { ...opts, progress: (read, size) => progress.update(file, read, size) }),
          ).finally(progress.done);
          for (const created of loaded.createdIndexes) say(`created index ${created}`);
          say(`added reference set '${loaded.name}': ${loaded.references} reference(s), md5 ${loaded.md5checksum}`);
        }),
      );
    repo
      .command('remove-referenceset')
      .description('remove a reference set (refused while a variant, read group, feature or continuous set uses it)')
      .argument('<registry>')
      .argument('<name>')
      .action(
        action(async (location: string, name: string) => {
          await withRegistry(location, async (registry) => {
            const users: string[] = [];
            for (const area of areas) if (area.referenceSetUsers) users.push(...(await area.referenceSetUsers(registry, name)));
            if (users.length) throw new UserError(`reference set '${name}' is used by ${users.join(', ')}; remove ${users.length > 1 ? 'those' : 'it'} first`);
            await removeReferenceSet(registry, name);
          });
          say(`removed reference set '${name}'`);
        }),
      );
    repo
      .command('set-assembly-aliases')
      .description('name spellings of one assembly (GRCh37 hg19 hs37d5): a Beacon assemblyId of one reaches reference sets whose assembly id is another')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<names...>', 'two or more names of the assembly; they join any group one of them is in')
      .action(
        action(async (location: string, names: string[]) => {
          const group = await withRegistry(location, (registry) => setAssemblyAliases(registry, names));
          say(`assembly aliases: ${group.join(', ')}`);
        }),
      );
    repo
      .command('remove-assembly-alias')
      .description('take a name out of its group of assembly aliases')
      .argument('<registry>')
      .argument('<name>')
      .action(
        action(async (location: string, name: string) => {
          await withRegistry(location, (registry) => removeAssemblyAlias(registry, name));
          say(`removed assembly alias '${name}'`);
        }),
      );
  },

  async inventory(registry) {
    const { referenceSetId } = await import('./service.js');
    const sets = await listReferenceSets(registry);
    const rows: InventoryValue[][] = [];
    for (const set of sets) {
      const refs = await listReferences(registry, { referenceSetName: set.name }, undefined);
      rows.push([referenceSetId(set.name), set.name, refs.length, set.assembly_id, set.md5checksum || null, set.fasta_path || null, set.dictionary_path]);
    }
    const aliases = await listAssemblyAliases(registry);
    const groups = [...new Set(aliases.map((a) => a.assembly_group))].map((group) => [aliases.filter((a) => a.assembly_group === group).map((a) => a.name)]);
    return [
      { title: 'Reference sets', columns: ['id', 'name', 'references', 'assembly', 'md5checksum', 'fasta', 'dictionary'], rows },
      { title: 'Assembly aliases', columns: ['names'], rows: groups },
    ];
  },

  async check(registry, options) {
    const { checkReferenceSets } = await import('./check.js');
    return checkReferenceSets(registry, options);
  },
};
