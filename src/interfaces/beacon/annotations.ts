/**
 * What a variant's VEP or SnpEff annotations say of one of its alleles (Beacon `molecularAttributes`):
 * its genes, its molecular effects as Sequence Ontology terms, and its amino acid changes in the
 * one-letter form `aminoacidChange` queries use (V600E), read with the annotations area's own reader
 * from the line's INFO field, in the variant annotation set's layout.
 */
import { AnnotationReader } from '../../areas/annotations/entries.js';
import type { AnnotationLayout } from '../../areas/annotations/layout.js';
import type { TranscriptEffectRecord } from '../../areas/annotations/messages.js';
import { getAnnotationSetRow } from '../../areas/annotations/store.js';
import { OntologyCache } from '../../areas/ontologies/cache.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import type { Allele } from './alleles.js';
import type { LineView } from './genomic-variants.js';
import type { VariantSetContext } from './variant-sets.js';

export interface AlleleEffects {
  geneIds: string[];
  molecularEffects: Array<{ id: string; label: string }>;
  aminoacidChanges: string[];
}

const THREE_LETTERS: Record<string, string> = {
  Ala: 'A', Arg: 'R', Asn: 'N', Asp: 'D', Cys: 'C', Gln: 'Q', Glu: 'E', Gly: 'G', His: 'H', Ile: 'I',
  Leu: 'L', Lys: 'K', Met: 'M', Phe: 'F', Pro: 'P', Ser: 'S', Thr: 'T', Trp: 'W', Tyr: 'Y', Val: 'V',
  Sec: 'U', Pyl: 'O', Ter: '*', Xaa: 'X',
};

/** A protein change in one-letter form: `p.Val600Glu`, `Val600Glu`, `p.V600E` and `V600E` are V600E; `=` keeps the residue. */
export function oneLetterChange(text: string): string | undefined {
  const m = /^(?:p\.)?\(?([A-Z][a-z]{2}|[A-Z*])(\d+)([A-Z][a-z]{2}|[A-Z*]|=)\)?$/.exec(text.trim());
  if (!m) return undefined;
  const one = (aa: string) => (aa.length === 3 ? THREE_LETTERS[aa] : aa);
  const from = one(m[1]);
  const to = m[3] === '=' ? from : one(m[3]);
  return from && to ? `${from}${m[2]}${to}` : undefined;
}

/** An effect's amino acid change: from its HGVS protein notation, else from its protein position and amino acids (VEP's `D/V`). */
function changeOf(effect: TranscriptEffectRecord): string | undefined {
  const protein = effect.hgvsAnnotation?.protein;
  if (protein) {
    const change = oneLetterChange(protein.includes(':') ? protein.slice(protein.indexOf(':') + 1) : protein);
    if (change) return change;
  }
  const location = effect.proteinLocation;
  if (location?.start === undefined || !location.referenceSequence) return undefined;
  const ref = location.referenceSequence;
  const alt = location.alternateSequence ?? ref;
  return ref.length === 1 && alt.length === 1 ? `${ref}${location.start + 1}${alt}` : undefined;
}

/** The columns that name an effect's gene, by the names VEP and SnpEff give them, symbols first. */
const GENE_COLUMNS = ['SYMBOL', 'Gene_Name', 'Gene', 'Gene_ID'];

interface AnnotationContext {
  generation: string;
  reader: AnnotationReader;
}

export class VariantAnnotations {
  private readonly ontologies: OntologyCache;
  private readonly contexts: RegistryCache<AnnotationContext | null>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.ontologies = new OntologyCache(registry, cacheMs);
    this.contexts = new RegistryCache(cacheMs, 1000);
  }

  /** The reader of a variant set's annotations, or null when it has none. */
  async of(set: VariantSetContext): Promise<AnnotationReader | null> {
    const context = await this.contexts.get(JSON.stringify([set.datasetName, set.name, set.generation]), async () => {
      const row = await getAnnotationSetRow(this.registry, set.datasetName, set.name);
      if (!row) return null;
      const terms = await this.ontologies.matcher(row.ontology_name);
      const layout: AnnotationLayout = { field: row.info_field, columns: JSON.parse(row.columns) as string[] };
      const termOf = (name: string) => {
        const found = terms.termByName(name);
        return found ? { termId: found.id, term: found.name } : { term: name };
      };
      return { generation: set.generation, reader: new AnnotationReader(layout, { datasetName: set.datasetName, setName: set.name, annotationSetId: '' }, termOf) };
    });
    return context?.reader ?? null;
  }
}

/**
 * The names an annotation entry may give an allele by: the ALT itself, without its brackets (VEP
 * writes `CN0` for `<CN0>`), or without the base every allele of the line begins with (VEP writes
 * `C` for `A>AC`, `-` for a deletion down to it).
 */
function namesOf(view: LineView, allele: Allele): string[] {
  const names = [allele.alternate];
  if (allele.alternate.startsWith('<')) names.push(allele.alternate.slice(1, -1));
  const first = view.line.ref[0];
  if (allele.sequence && view.line.alts.every((a) => a[0] === first && a !== '*')) names.push(allele.alternate.slice(1) || '-');
  return names;
}

/** What the annotations of a line say of one of its alleles. */
export function effectsOf(reader: AnnotationReader, view: LineView, allele: Allele): AlleleEffects {
  const { line } = view;
  const columns = [line.chrom, String(line.start + 1), line.id, line.ref, view.altColumn, '.', '.', line.info];
  const names = namesOf(view, allele);
  const geneIds = new Set<string>();
  const effects = new Map<string, string>();
  const changes = new Set<string>();
  for (const effect of reader.read(columns)?.transcriptEffects ?? []) {
    if (effect.alternateBases === undefined || !names.includes(effect.alternateBases)) continue;
    const attr = effect.attributes?.attr ?? {};
    const gene = GENE_COLUMNS.map((c) => attr[c]?.values[0]?.stringValue).find((v) => typeof v === 'string' && v !== '');
    if (gene) geneIds.add(gene);
    for (const term of effect.effects ?? []) if (term.termId) effects.set(term.termId, term.term ?? term.termId);
    const change = changeOf(effect);
    if (change) changes.add(change);
  }
  return { geneIds: [...geneIds], molecularEffects: [...effects].map(([id, label]) => ({ id, label })), aminoacidChanges: [...changes] };
}
