/**
 * Ontologies (the Sequence Ontology first): loaded from OBO files with `repo add-ontology`, kept in the
 * registry, and used by other areas to serve types and effects as OntologyTerms and to widen term
 * queries to subclasses. No endpoints of their own: the protocol serves terms inside other records.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { action, say } from '../../cli/output.js';
import type { Area, CommandContext } from '../area.js';
import { addOntology, listOntologies, ontologyMigrations, removeOntology } from './store.js';

export { Ontology, type Term } from './ontology.js';
export { readOntology, requireOntology } from './store.js';

/** `so-xp-simple.obo` or `so.obo.gz` -> `so-xp-simple`, `so`. */
const defaultName = (file: string) => path.basename(file).replace(/\.gz$/, '').replace(/\.obo$/, '');

export const ontologiesArea: Area = {
  name: 'ontologies',
  migrations: ontologyMigrations,

  routes: () => [],

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-ontology')
      .description('load an OBO ontology (such as the Sequence Ontology) for feature types, annotation effects and phenotype terms')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<obo>', 'OBO file, plain or gzipped')
      .option('--name <name>', 'ontology name (default: the file name without .obo)')
      .action(
        action(async (location: string, file: string, opts: { name?: string }) => {
          const { readOboTerms } = await import('./obo.js');
          const name = opts.name ?? defaultName(file);
          const header: Record<string, string> = {};
          const count = await withRegistry(location, (registry) =>
            addOntology(registry, name, file, readOboTerms(file, header), header),
          );
          say(`added ontology '${name}' with ${count} terms`);
        }),
      );
    repo
      .command('remove-ontology')
      .description('remove an ontology (refused while a registered set uses it)')
      .argument('<registry>')
      .argument('<name>')
      .action(
        action(async (location: string, name: string) => {
          await withRegistry(location, (registry) => removeOntology(registry, name));
          say(`removed ontology '${name}'`);
        }),
      );
  },

  async inventory(registry) {
    const rows = await listOntologies(registry);
    return [
      {
        title: 'Ontologies',
        columns: ['name', 'terms', 'version', 'source'],
        rows: rows.map((r) => [r.name, r.term_count, r.version, r.source]),
      },
    ];
  },
};
