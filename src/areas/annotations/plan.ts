/**
 * The annotation set `repo add-variantset` registers beside a variant set whose VCF declares VEP or
 * SnpEff annotations, recorded in the same transaction (see insertAnnotationSet).
 */
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireOntology } from '../ontologies/store.js';
import type { MetadataEntry } from '../variants/vcf-header.js';
import { analysisOf, layoutOf } from './layout.js';
import { ontologyNames, type NewAnnotationSet } from './store.js';

export interface AnnotationOptions {
  /** false with --no-annotations. */
  annotations?: boolean;
  /** --ontology NAME: the ontology effects are looked up in. */
  ontology?: string;
}

export interface AnnotationPlan {
  set: NewAnnotationSet;
  /** Something the user should know (how its effects get their terms). */
  note?: string;
}

/**
 * The annotation set to register for a variant set with this header metadata, or undefined when the
 * VCF declares no annotations (or --no-annotations). The ontology is the one --ontology names, else the
 * registry's only ontology; with none or several, the set names none and its effects are matched in
 * every registered ontology when they are served (ontologies/matcher.ts), so one added later counts.
 */
export async function planAnnotationSet(
  registry: Registry,
  metadata: readonly MetadataEntry[],
  setName: string,
  options: AnnotationOptions,
): Promise<AnnotationPlan | undefined> {
  if (options.annotations === false) return undefined;
  const { layout, problem } = layoutOf(metadata);
  if (problem) throw new UserError(`cannot read the annotations of the VCF: ${problem}; register it without them with --no-annotations`);
  if (!layout) {
    if (options.ontology !== undefined) throw new UserError('--ontology is for annotated VCFs, and this VCF declares no CSQ or ANN INFO field');
    return undefined;
  }
  let ontology = options.ontology;
  let note: string | undefined;
  if (ontology !== undefined) await requireOntology(registry, ontology);
  else {
    const names = await ontologyNames(registry);
    if (names.length === 1) ontology = names[0];
    else if (names.length > 1) {
      note = `effects are matched in every registered ontology (${names.join(', ')}), the first registered that knows a name giving its term; choose one with --ontology NAME`;
    } else {
      note = `no ontology is loaded: effects are served by name, without term ids, until one is added (the Sequence Ontology, with ga4gh repo add-ontology)`;
    }
  }
  return {
    set: {
      info_field: layout.field,
      columns: JSON.stringify(layout.columns),
      analysis: JSON.stringify(analysisOf(metadata, setName)),
      ontology_name: ontology ?? null,
    },
    note,
  };
}
