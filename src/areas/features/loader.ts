/**
 * `repo add-featureset`: reads a GFF3 file once, in order (reader.ts, on a thread of its own), turning
 * each line into a feature of the store's load path (store.ts), all in one transaction, so a refused or
 * failed load leaves the registry as it was.
 */
import path from 'node:path';
import { isUrl } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireDataset } from '../datasets/store.js';
import { requireOntology } from '../ontologies/store.js';
import { readFeaturesOnThread } from './reader.js';
import { analyzeFeatures, insertFeatureSet } from './store.js';

export interface FeatureSetOptions {
  referenceSet: string;
  name?: string;
  ontology?: string;
  sourceUri?: string;
  progress?: (phase: string, rows: number) => void;
}

/** `gencode.v19.annotation.gff3.gz` -> `gencode.v19.annotation`. */
export function defaultFeatureSetName(file: string): string {
  const base = path.basename(isUrl(file) ? new URL(file).pathname : file);
  return base.replace(/\.(gz|bgz)$/i, '').replace(/\.(gff3|gff)$/i, '');
}

export interface LoadedFeatureSet {
  name: string;
  features: number;
}

export async function loadFeatureSet(registry: Registry, datasetName: string, file: string, options: FeatureSetOptions): Promise<LoadedFeatureSet> {
  await requireDataset(registry, datasetName);
  const referenceNames = await referenceNamesOf(registry, options.referenceSet);
  const ontology = options.ontology !== undefined ? await requireOntology(registry, options.ontology) : undefined;
  const name = options.name ?? defaultFeatureSetName(file);
  // The load inserts into six indexes at places spread over them: a page cache of up to 1 GB (instead
  // of SQLite's 2 MB) keeps them in memory while they are written, rather than read back from the file.
  registry.sqlite?.pragma('cache_size = -1048576');
  const features = readFeaturesOnThread({
    file,
    referenceSet: options.referenceSet,
    referenceNames: [...referenceNames],
    ontology: ontology && { name: ontology.name, terms: ontology.terms() },
  });

  const count = await registry.db.transaction().execute((trx) =>
    insertFeatureSet(
      registry,
      trx,
      {
        datasetName,
        name,
        referenceSetName: options.referenceSet,
        ontologyName: options.ontology ?? null,
        sourceUri: options.sourceUri ?? null,
        attributes: null,
        source: file,
      },
      features,
      (stored) => options.progress?.('stored', stored),
    ),
  );
  await analyzeFeatures(registry);
  return { name, features: count };
}

/** The names of the references of `referenceSet`; refuses an unknown reference set. */
export async function referenceNamesOf(registry: Registry, referenceSet: string): Promise<Set<string>> {
  const set = await registry.db.selectFrom('reference_set').select('name').where('name', '=', referenceSet).executeTakeFirst();
  if (!set) throw new UserError(`no reference set '${referenceSet}' in ${registry.location}; add it with: ga4gh repo add-referenceset`);
  const rows = await registry.db.selectFrom('reference').select('name').where('reference_set_name', '=', referenceSet).execute();
  return new Set(rows.map((r) => r.name));
}
