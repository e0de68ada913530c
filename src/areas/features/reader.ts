/**
 * The reading half of `repo add-featureset`: GFF3 lines turned into features (FeatureBuilder), on a
 * thread of its own, while the main thread writes them (store.ts). Reading, parsing and building were
 * half the CPU of a load, the inserts the other half: on two cores they now overlap. Features cross
 * over in batches, their attributes already in the stored form (one string each, cheap to copy between
 * threads), with at most a few batches in flight so that a reader faster than the writer holds no more
 * than that in memory.
 */
import { Worker } from 'node:worker_threads';
import { UserError } from '../../user-error.js';
import { Ontology } from '../ontologies/ontology.js';
import type { OboTerm } from '../ontologies/obo.js';
import { storedAttributes } from './attributes.js';
import { readGff3, type Gff3Line } from './gff3.js';
import type { AttributeValues, NewFeature } from './store.js';

/** Attributes that are fields of Feature rather than attributes (proto comment on Feature.attributes). */
const FIELD_ATTRIBUTES = new Set(['ID', 'Parent']);

/**
 * Turns GFF3 lines into features: 0-based half-open coordinates, the type as an ontology term when the
 * ontology has it, the name from `Name` or else from `ID`, the gene symbol from `gene_name` or else from
 * the enclosing gene's `Name`, every attribute but ID and Parent (which are fields) plus the Score and
 * Phase columns.
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

  /**
   * Lines without ID get a key from what they are: parent (or seqid), type and span; repeats are
   * numbered. The migration 'features named by their ID' (store.ts) tells such keys by this shape.
   */
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
    const givenName = attributes.Name?.[0] || null;
    // Files without Name (GENCODE) name a feature by its ID, as the reference server did; clients search
    // them by it. A key made up for a line without ID is no name.
    const name = givenName ?? (attributes.ID?.[0] || null);
    let geneSymbol = attributes.gene_name?.[0] || null;
    if (geneSymbol === null) {
      geneSymbol = this.isGene(type) ? givenName : (parentKeys.length ? this.inheritedSymbol.get(parentKeys[0]) ?? null : null);
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

/** What the reading thread is asked to read. */
export interface ReadRequest {
  file: string;
  referenceSet: string;
  referenceNames: string[];
  ontology?: { name: string; terms: OboTerm[] };
}

export type FromReader =
  | { kind: 'features'; features: NewFeature[] }
  | { kind: 'end' }
  | { kind: 'failed'; message: string; userError: boolean };

/** Batches the reader may send ahead of the writer. */
export const BATCHES_IN_FLIGHT = 4;

/** The features of a GFF3 file in batches, attributes in their stored form; refuses references not in the set. */
export async function* readFeatures(request: ReadRequest): AsyncGenerator<NewFeature[]> {
  const { file, referenceSet } = request;
  const referenceNames = new Set(request.referenceNames);
  const builder = new FeatureBuilder(request.ontology && new Ontology(request.ontology.name, request.ontology.terms));
  let lines = 0;
  const featureOf = (line: Gff3Line): NewFeature => {
    if (!referenceNames.has(line.seqid)) {
      throw new UserError(`${file}, line ${line.lineNumber}: reference '${line.seqid}' is not in reference set '${referenceSet}'`);
    }
    lines++;
    const feature = builder.feature(line);
    feature.storedAttributes = storedAttributes(feature.attributes);
    feature.attributes = null;
    return feature;
  };
  yield* readGff3(file, featureOf);
  if (lines === 0) throw new UserError(`${file}: no feature lines found (is it a GFF3 file?)`);
}

// The thread runs the TypeScript sources as the main thread does: through tsx's loader.
const TSX_API = import.meta.resolve('tsx/esm/api');
const ENTRY = new URL('./reader-thread.ts', import.meta.url).href;
const BOOT = `import(${JSON.stringify(TSX_API)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(ENTRY)}));`;

/** readFeatures on a thread of its own; the thread stops when the caller stops reading (or fails). */
export async function* readFeaturesOnThread(request: ReadRequest): AsyncGenerator<NewFeature[]> {
  const worker = new Worker(BOOT, { eval: true, workerData: request });
  const inbox: FromReader[] = [];
  let wake: (() => void) | undefined;
  let crashed: Error | undefined;
  const arrived = () => {
    wake?.();
    wake = undefined;
  };
  worker.on('message', (m: FromReader) => {
    inbox.push(m);
    arrived();
  });
  worker.on('error', (e) => {
    crashed = e;
    arrived();
  });
  worker.on('exit', (code) => {
    crashed ??= new Error(`the GFF3 reading thread stopped (exit code ${code})`);
    arrived();
  });
  try {
    for (;;) {
      const message = inbox.shift();
      if (!message) {
        if (crashed) throw crashed;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (message.kind === 'end') return;
      if (message.kind === 'failed') throw message.userError ? new UserError(message.message) : new Error(message.message);
      worker.postMessage('taken');
      yield message.features;
    }
  } finally {
    worker.removeAllListeners('exit');
    await worker.terminate();
  }
}
