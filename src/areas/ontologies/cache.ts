/**
 * Ontologies in memory for the areas that read terms through one (feature types, annotation effects,
 * phenotype terms): each is read and parsed once and kept while its registration is unchanged (its
 * load time, read through the registry cache), so an ontology loaded again is seen everywhere within
 * the registry cache time, and no area keeps an ontology that another has already replaced.
 */
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import type { Ontology } from './ontology.js';
import { ontologyLoadedAt, readOntology } from './store.js';

/** Ontologies kept at most (the Sequence Ontology takes a few MB); the least recently used go first. */
const KEPT = 16;

export class OntologyCache {
  private readonly loadTimes: RegistryCache<string>;
  private readonly parsed = new Map<string, { loadedAt: string; ontology: Promise<Ontology | undefined> }>();

  constructor(
    private readonly registry: Registry,
    registryCacheMs: number,
  ) {
    this.loadTimes = new RegistryCache<string>(registryCacheMs, 1000);
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
