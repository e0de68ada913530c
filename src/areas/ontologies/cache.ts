/**
 * Ontologies in memory for the areas that read terms through one (feature types, annotation effects,
 * phenotype terms): each is read and parsed once and kept while its registration is unchanged (its
 * load time, read through the registry cache), so an ontology loaded again is seen everywhere within
 * the registry cache time, and no area keeps an ontology that another has already replaced. The same
 * goes for the list of registered ontologies that sets naming none are matched in (matcher.ts).
 */
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { TermMatcher } from './matcher.js';
import type { Ontology } from './ontology.js';
import { ontologyLoadedAt, ontologyLoadTimes, readOntology } from './store.js';

/** Ontologies kept at most (the Sequence Ontology takes a few MB); the least recently used go first. */
const KEPT = 16;
/** Matchers kept at most: one per set ontology, and one for the sets that name none. */
const MATCHERS_KEPT = 32;

type LoadTimes = Array<{ name: string; loadedAt: string }>;

export class OntologyCache {
  private readonly loadTimes: RegistryCache<string>;
  private readonly registered: RegistryCache<LoadTimes>;
  private readonly parsed = new Map<string, { loadedAt: string; ontology: Promise<Ontology | undefined> }>();
  private readonly matchers = new Map<string, Promise<TermMatcher>>();

  constructor(
    private readonly registry: Registry,
    registryCacheMs: number,
  ) {
    this.loadTimes = new RegistryCache<string>(registryCacheMs, 1000);
    this.registered = new RegistryCache<LoadTimes>(registryCacheMs, 1);
  }

  /** The ontologies a set is matched in (its own, or every registered one when it names none), with their load times. */
  private async sourcesOf(setOntology: string | null): Promise<{ sources: LoadTimes; key: string }> {
    let sources: LoadTimes;
    if (setOntology === null) sources = (await this.registered.get('', () => ontologyLoadTimes(this.registry))) ?? [];
    else {
      const loadedAt = await this.loadedAt(setOntology);
      sources = loadedAt === undefined ? [] : [{ name: setOntology, loadedAt }];
    }
    return { sources, key: JSON.stringify([setOntology, sources]) };
  }

  /**
   * What the terms of a set's names depend on in the registry, read without parsing any ontology:
   * the key of its matcher, for the caches of what is built with it and for pages built ahead.
   */
  async matcherKey(setOntology: string | null): Promise<string> {
    return (await this.sourcesOf(setOntology)).key;
  }

  /** The matcher of a set that names `setOntology` (null: none), the same one while its key is unchanged. */
  async matcher(setOntology: string | null): Promise<TermMatcher> {
    const { sources, key } = await this.sourcesOf(setOntology);
    let matcher = this.matchers.get(key);
    if (!matcher) {
      const built = Promise.all(sources.map((s) => this.get(s.name))).then(
        (found) => new TermMatcher(found.flatMap((f) => (f ? [f.ontology] : [])), key),
      );
      // A failed read is not kept: the next request reads again.
      built.catch(() => {
        if (this.matchers.get(key) === built) this.matchers.delete(key);
      });
      if (this.matchers.size >= MATCHERS_KEPT) this.matchers.delete(this.matchers.keys().next().value!);
      this.matchers.set(key, (matcher = built));
    }
    return matcher;
  }

  /** When the ontology named `name` was loaded, as the registry cache knows it; undefined when none is. */
  loadedAt(name: string): Promise<string | undefined> {
    return this.loadTimes.get(name, () => ontologyLoadedAt(this.registry, name));
  }

  /** The ontology named `name` and when it was loaded; undefined when none is registered. */
  async get(name: string): Promise<{ ontology: Ontology; loadedAt: string } | undefined> {
    const loadedAt = await this.loadedAt(name);
    if (loadedAt === undefined) {
      this.parsed.delete(name); // removed: nothing to keep
      return undefined;
    }
    let entry = this.parsed.get(name);
    if (!entry || entry.loadedAt !== loadedAt) {
      const fresh = { loadedAt, ontology: readOntology(this.registry, name) };
      // A failed read is not kept: the next request reads again.
      fresh.ontology.catch(() => {
        if (this.parsed.get(name) === fresh) this.parsed.delete(name);
      });
      entry = fresh;
    }
    this.parsed.delete(name);
    this.parsed.set(name, entry);
    if (this.parsed.size > KEPT) this.parsed.delete(this.parsed.keys().next().value!);
    const ontology = await entry.ontology;
    return ontology && { ontology, loadedAt };
  }
}
