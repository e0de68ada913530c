/**
 * `repo add-featureset`: reads a GFF3 file once, in order, turning each line into a feature of the
 * store's load path (store.ts), all in one transaction, so a refused or failed load leaves the registry
 * as it was.
 */
import path from 'node:path';
import { isUrl } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireDataset } from '../datasets/store.js';
import type { Ontology } from '../ontologies/ontology.js';
import { requireOntology } from '../ontologies/store.js';
import { readGff3, type Gff3Line } from './gff3.js';
import { analyzeFeatures, insertFeatureSet, type AttributeValues, type NewFeature } from './store.js';

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

/** Attributes that are fields of Feature rather than attributes (proto comment on Feature.attributes). */
const FIELD_ATTRIBUTES = new Set(['ID', 'Parent']);

/**
 * Turns GFF3 lines into features: 0-based half-open coordinates, the type as an ontology term when the
 * ontology has it, the gene symbol from `gene_name` or else from the enclosing gene's `Name`, every
 * attribute but ID and Parent (which are fields) plus the Score and Phase columns.
 */
export class FeatureBuilder {
  /** Symbols taken from a gene's Name, for its descendants (files without gene_name). */
  private readonly inheritedSymbol = new Map<string, string>();
  private readonly generatedKeys = new Map<string, number>();
  private readonly geneTermId: string | undefined;
  private readonly typeCache = new Map<string, { termId: string; term: string }>();

  constructor(private readonly ontology: Ontology | undefined) {
    this.geneTermId = ontology?.termByName('gene')?.id;
  }

  private typeOf(type: string): { termId: string; term: string } {
    let term = this.typeCache.get(type);
    if (!term) {
      const found = this.ontology?.resolve(type);
      term = found ? { termId: found.id, term: found.name } : { termId: '', term: type };
      this.typeCache.set(type, term);
    }
    return term;
  }

  private isGene(type: { termId: string; term: string }): boolean {
    if (type.term.toLowerCase() === 'gene') return true;
    return this.ontology !== undefined && this.geneTermId !== undefined && type.termId !== '' && this.ontology.isA(type.termId, this.geneTermId);
  }

  /** Lines without ID get a key from what they are: parent (or seqid), type and span; repeats are numbered. */
  private generatedKey(line: Gff3Line, parent: string | undefined): string {
    const base = `${parent ?? line.seqid}:${line.type}:${line.start}-${line.end}`;
    const n = (this.generatedKeys.get(base) ?? 0) + 1;
    this.generatedKeys.set(base, n);
    return n === 1 ? base : `${base}#${n}`;
  }

  feature(line: Gff3Line): NewFeature {
    const { attributes } = line;
    const parentKeys = attributes.Parent ?? [];
    const key = attributes.ID?.[0] || this.generatedKey(line, parentKeys[0]);
    const type = this.typeOf(line.type);
    const name = attributes.Name?.[0] || null;
    let geneSymbol = attributes.gene_name?.[0] || null;
    if (geneSymbol === null) {
      geneSymbol = this.isGene(type) ? name : (parentKeys.length ? this.inheritedSymbol.get(parentKeys[0]) ?? null : null);
      if (geneSymbol !== null) this.inheritedSymbol.set(key, geneSymbol);
    }
    const kept: AttributeValues = {};
    for (const [k, values] of Object.entries(attributes)) if (!FIELD_ATTRIBUTES.has(k)) kept[k] = values;
    if (line.score !== null) kept.Score = [line.score];
    if (line.phase !== null) kept.Phase = [line.phase];
    return {
      key,
      referenceName: line.seqid,
      start: line.start - 1,
      end: line.end,
      strand: line.strand === '+' ? 'POS_STRAND' : line.strand === '-' ? 'NEG_STRAND' : 'STRAND_UNSPECIFIED',
      type,
      name,
      geneSymbol,
      parentKeys,
      attributes: Object.keys(kept).length ? kept : null,
    };
  }
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
  const builder = new FeatureBuilder(ontology);
  let lines = 0;
  // The load inserts into six indexes at places spread over them: a page cache of up to 1 GB (instead
  // of SQLite's 2 MB) keeps them in memory while they are written, rather than read back from the file.
  registry.sqlite?.pragma('cache_size = -1048576');

  async function* features(): AsyncGenerator<NewFeature> {
    for await (const line of readGff3(file)) {
      if (!referenceNames.has(line.seqid)) {
        throw new UserError(
          `${file}, line ${line.lineNumber}: reference '${line.seqid}' is not in reference set '${options.referenceSet}'`,
        );
      }
      lines++;
      yield builder.feature(line);
    }
    if (lines === 0) throw new UserError(`${file}: no feature lines found (is it a GFF3 file?)`);
  }

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
      features(),
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
