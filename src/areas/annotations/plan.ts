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
  /** Something the user should know (no ontology to look effects up in). */
  note?: string;
}

/**
 * The annotation set to register for a variant set with this header metadata, or undefined when the
 * VCF declares no annotations (or --no-annotations). The ontology is the one --ontology names, else the
 * registry's only ontology; with none loaded, effects are served by name without term ids.
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
      throw new UserError(`the VCF is annotated (INFO ${layout.field}) and the registry holds several ontologies (${names.join(', ')}); choose the one its effects use with --ontology NAME`);
    } else {
      note = `no ontology is loaded: effects are served by name only, without term ids (load the Sequence Ontology with ga4gh repo add-ontology first to have them)`;
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
