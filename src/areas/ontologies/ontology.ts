/**
 * One ontology held in memory: term lookup by id, by name (or exact synonym), and subclass closure
 * over `is_a`, which feature type filters and variant-annotation effect filters use.
 */
import type { OboTerm } from './obo.js';

export interface Term {
  id: string;
  name: string;
}

export class Ontology {
  private readonly byId = new Map<string, OboTerm>();
  private readonly byName = new Map<string, OboTerm>();
  private readonly children = new Map<string, string[]>();

  constructor(
    readonly name: string,
    terms: readonly OboTerm[],
  ) {
    for (const term of terms) this.byId.set(term.id, term);
    // Names of current terms win over obsolete ones and over synonyms; lookups are case-insensitive.
    const ranked = [...terms].sort((a, b) => Number(a.obsolete) - Number(b.obsolete));
    for (const term of ranked) {
      const key = term.name.toLowerCase();
      if (term.name && !this.byName.has(key)) this.byName.set(key, term);
    }
    for (const term of ranked) {
      for (const synonym of term.synonyms) if (!this.byName.has(synonym.toLowerCase())) this.byName.set(synonym.toLowerCase(), term);
    }
    for (const term of terms) {
      for (const parent of term.parents) {
        const list = this.children.get(parent);
        if (list) list.push(term.id);
        else this.children.set(parent, [term.id]);
      }
    }
  }

  /** Every term, as read (to rebuild the ontology on another thread). */
  terms(): OboTerm[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  term(id: string): Term | undefined {
    const term = this.byId.get(id);
    return term && { id: term.id, name: term.name };
  }

  /** The term with this name or exact synonym (`gene`, `five_prime_UTR`), ignoring case. */
  termByName(name: string): Term | undefined {
    const term = this.byName.get(name.toLowerCase());
    return term && { id: term.id, name: term.name };
  }

  /** A term id, or a name resolved to its term; undefined when the ontology has neither. */
  resolve(idOrName: string): Term | undefined {
    return this.term(idOrName) ?? this.termByName(idOrName);
  }

  /** `id` and every term below it by `is_a`, each once (the ontology is a DAG; cycles are not followed twice). */
  withSubclasses(id: string): string[] {
    const found = new Set<string>([id]);
    const pending = [id];
    while (pending.length) {
      for (const child of this.children.get(pending.pop()!) ?? []) {
        if (!found.has(child)) {
          found.add(child);
          pending.push(child);
        }
      }
    }
    return [...found];
  }

  /** Whether `id` is `ancestor` or lies below it. */
  isA(id: string, ancestor: string): boolean {
    const seen = new Set<string>();
    const pending = [id];
    while (pending.length) {
      const current = pending.pop()!;
      if (current === ancestor) return true;
      if (seen.has(current)) continue;
      seen.add(current);
      pending.push(...(this.byId.get(current)?.parents ?? []));
    }
    return false;
  }
}
