/**
 * Names matched to ontology terms for the sets that hold them (feature types, annotation effects),
 * when the query runs rather than when the set was loaded, so that an ontology added after the set
 * serves its terms too. A set loaded with an ontology (`--ontology`) is matched in that one; a set
 * that names none, in every registered ontology, in the order they were registered: the first that
 * knows a name gives its term, so adding an ontology never changes a term already served, it only
 * gives terms to names that had none.
 */
import type { Ontology, Term } from './ontology.js';

/** What `repo list` and `repo check` say to do when names have no term because no ontology is registered. */
export const NO_ONTOLOGY = 'no ontology is registered; add one (the Sequence Ontology) with: ga4gh repo add-ontology';

/**
 * What `repo list` and `repo check` say to do about names that no term of a set's ontologies
 * (`matcher`, of the set that names `setOntology`, null: none) matches.
 */
export function missingTermsFix(setOntology: string | null, matcher: TermMatcher): string {
  if (setOntology !== null) return `its ontology '${setOntology}' has no such terms`;
  return matcher.ontologies.length ? 'no registered ontology has them; add one that does with: ga4gh repo add-ontology' : NO_ONTOLOGY;
}

export class TermMatcher {
  constructor(
    /** The ontologies names are looked up in, first first. */
    readonly ontologies: readonly Ontology[],
    /** What the matcher was built from (names and load times): equal keys, equal answers. */
    readonly key: string,
  ) {}

  get names(): string[] {
    return this.ontologies.map((o) => o.name);
  }

  /** The term of a name or exact synonym (ignoring case), from the first ontology that has one. */
  termByName(name: string): Term | undefined {
    for (const ontology of this.ontologies) {
      const term = ontology.termByName(name);
      if (term) return term;
    }
    return undefined;
  }

  /** A term id, or a name resolved to its term, from the first ontology that knows it. */
  resolve(idOrName: string): Term | undefined {
    for (const ontology of this.ontologies) {
      const term = ontology.resolve(idOrName);
      if (term) return term;
    }
    return undefined;
  }

  /** `id` and every term below it by `is_a` in any of the ontologies. */
  withSubclasses(id: string): string[] {
    if (this.ontologies.length === 1) return this.ontologies[0].withSubclasses(id);
    const found = new Set<string>([id]);
    for (const ontology of this.ontologies) for (const each of ontology.withSubclasses(id)) found.add(each);
    return [...found];
  }
}
