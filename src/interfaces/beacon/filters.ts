/**
 * Filters (framework `filteringTerms.json`), applied to individuals and biosamples, and through them
 * to the variants their call sets carry. Filters are ANDed.
 *
 * - An ontology term matches a record that carries it, or, with `includeDescendantTerms` (the
 *   default), a term below it by the `is_a` relation of a registered ontology.
 * - An alphanumeric filter compares a field (`name`, `description`, an attribute such as
 *   `Population`): `=` and `!` with `%` standing for any text, ignoring case; `<`, `>`, `<=`, `>=`
 *   as numbers.
 * - `scope` names the entry type whose records the filter tests: a biosample filter selects the
 *   individuals with such a biosample, an individual filter the biosamples of such individuals.
 *   Without a scope, a record matches when it or a record linked to it does.
 * - A filter the registry cannot answer (a term neither registered in an ontology nor carried by any
 *   record, a field no record has) matches nothing and is reported in the answer's
 *   `info.warnings.unknownFilters`: it is never ignored, which would widen the answer.
 */
import { OntologyCache } from '../../areas/ontologies/cache.js';
import { ontologyLoadTimes } from '../../areas/ontologies/store.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import type { BioEntries, BioEntry, BiosampleEntry, IndividualEntry, Term } from './biometadata.js';
import { badRequest } from './errors.js';
import type { Filter } from './request.js';

export type Scope = 'individual' | 'biosample';

const SCOPES: Record<string, Scope> = { individual: 'individual', individuals: 'individual', biosample: 'biosample', biosamples: 'biosample' };

export interface ResolvedFilter {
  filter: Filter;
  scope?: Scope;
  /** A term filter's terms: the term and, with descendants, every term below it. */
  terms?: Set<string>;
  /** Known to the registry: an unknown filter matches nothing. */
  known: boolean;
}

/** `%` for any text; the rest as it is, ignoring case. */
function likePattern(value: string): RegExp {
  return new RegExp(`^${value.split('%').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'is');
}

function compares(values: string[], filter: Extract<Filter, { kind: 'alphanumeric' }>): boolean {
  if (filter.operator === '=' || filter.operator === '!') {
    const pattern = likePattern(filter.value);
    const any = values.some((v) => pattern.test(v));
    return filter.operator === '=' ? any : !any;
  }
  const wanted = Number(filter.value);
  if (!Number.isFinite(wanted)) return false;
  return values.some((text) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) return false;
    switch (filter.operator) {
      case '<':
        return n < wanted;
      case '>':
        return n > wanted;
      case '<=':
        return n <= wanted;
      case '>=':
        return n >= wanted;
    }
  });
}

/** Whether a record itself answers a filter. */
function own(entry: BioEntry | undefined, f: ResolvedFilter): boolean {
  if (!entry || !f.known) return false;
  if (f.filter.kind === 'alphanumeric') {
    const values = entry.fields.get(f.filter.id);
    return values === undefined ? false : compares(values, f.filter);
  }
  for (const id of entry.terms.keys()) if (f.terms!.has(id)) return true;
  return false;
}

export function individualMatches(entries: BioEntries, individual: IndividualEntry, filters: ResolvedFilter[]): boolean {
  return filters.every((f) => {
    const ofBiosamples = () => individual.biosamples.some((name) => own(entries.biosamples.get(name), f));
    if (f.scope === 'individual') return own(individual, f);
    if (f.scope === 'biosample') return ofBiosamples();
    return own(individual, f) || ofBiosamples();
  });
}

export function biosampleMatches(entries: BioEntries, biosample: BiosampleEntry, filters: ResolvedFilter[]): boolean {
  return filters.every((f) => {
    const ofIndividual = () => biosample.individual !== undefined && own(entries.individuals.get(biosample.individual), f);
    if (f.scope === 'biosample') return own(biosample, f);
    if (f.scope === 'individual') return ofIndividual();
    return own(biosample, f) || ofIndividual();
  });
}

/** Resolves a request's filters against the registered ontologies and the records of the datasets reached. */
export class FilterTerms {
  private readonly ontologies: OntologyCache;
  private readonly names: RegistryCache<string[]>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.ontologies = new OntologyCache(registry, cacheMs);
    this.names = new RegistryCache(cacheMs, 1);
  }

  /** The registered ontologies, with their versions. */
  async ontologyList() {
    const names = (await this.names.get('', async () => (await ontologyLoadTimes(this.registry)).map((o) => o.name)))!;
    const found = await Promise.all(names.map(async (name) => ({ name, ontology: (await this.ontologies.get(name))?.ontology })));
    return found.filter((f) => f.ontology !== undefined).map((f) => ({ name: f.name, ontology: f.ontology! }));
  }

  /** A term's label in the registered ontologies, if one holds it. */
  async labelOf(id: string): Promise<string | undefined> {
    for (const { ontology } of await this.ontologyList()) {
      const term = ontology.term(id);
      if (term) return term.name;
    }
    return undefined;
  }

  /** Each filter with what it matches; those the registry cannot answer are marked unknown. */
  async resolve(filters: Filter[], entries: BioEntries[]): Promise<{ resolved: ResolvedFilter[]; unknown: string[] }> {
    const ontologies = filters.some((f) => f.kind === 'term') ? await this.ontologyList() : [];
    const carried = new Set<string>();
    const fields = new Set<string>();
    for (const e of entries) {
      for (const entry of [...e.individuals.values(), ...e.biosamples.values()]) {
        for (const id of entry.terms.keys()) carried.add(id);
        for (const field of entry.fields.keys()) fields.add(field);
      }
    }
    const resolved = filters.map((filter, i): ResolvedFilter => {
      let scope: Scope | undefined;
      if (filter.scope !== undefined) {
        scope = SCOPES[filter.scope];
        if (!scope) throw badRequest(`filters[${i}].scope must be individual or biosample (the entry types filters apply to), not '${filter.scope}'`);
      }
      if (filter.kind === 'alphanumeric') return { filter, scope, known: fields.has(filter.id) };
      const terms = new Set([filter.id]);
      let registered = false;
      for (const { ontology } of ontologies) {
        if (!ontology.term(filter.id)) continue;
        registered = true;
        if (filter.includeDescendantTerms) for (const id of ontology.withSubclasses(filter.id)) terms.add(id);
      }
      return { filter, scope, terms, known: registered || carried.has(filter.id) };
    });
    return { resolved, unknown: resolved.filter((r) => !r.known).map((r) => r.filter.id) };
  }
}

/** The terms and fields the records of some datasets can be filtered on, for `/beacon/filtering_terms`. */
export function filterableOf(entries: BioEntries[], scopes: Scope[]): { terms: Map<string, { term: Term; scopes: Set<Scope> }>; fields: Map<string, Set<Scope>> } {
  const terms = new Map<string, { term: Term; scopes: Set<Scope> }>();
  const fields = new Map<string, Set<Scope>>();
  for (const e of entries) {
    for (const entry of [...e.individuals.values(), ...e.biosamples.values()]) {
      if (!scopes.includes(entry.kind)) continue;
      for (const term of entry.terms.values()) {
        const known = terms.get(term.id) ?? { term, scopes: new Set<Scope>() };
        if (!known.term.label && term.label) known.term = term;
        known.scopes.add(entry.kind);
        terms.set(term.id, known);
      }
      for (const field of entry.fields.keys()) fields.set(field, (fields.get(field) ?? new Set<Scope>()).add(entry.kind));
    }
  }
  return { terms, fields };
}
