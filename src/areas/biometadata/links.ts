/**
 * Records linked to the biosample of their dataset named like their sample: a call set by its VCF
 * sample column, a read group by its `@RG SM` tag. Looked up when the query runs, whichever was
 * registered first, and kept for the registry cache time, so either load order links them and a
 * running server sees a biosample added later within that time.
 */
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { biosampleNamesAmong } from './store.js';

export class SampleLinks {
  private readonly found: RegistryCache<Set<string>>;

  constructor(
    private readonly registry: Registry,
    registryCacheMs: number,
  ) {
    this.found = new RegistryCache<Set<string>>(registryCacheMs);
  }

  /**
   * Of `names`, those naming a biosample of the dataset. `holder` names what asks and its
   * registration (a set's kind, name and load time): the answer is kept under it.
   */
  async linked(datasetName: string, holder: readonly string[], names: readonly string[]): Promise<Set<string>> {
    return (await this.found.get(JSON.stringify([datasetName, ...holder]), () => biosampleNamesAmong(this.registry, datasetName, names)))!;
  }

  /** Of `names`, in their order, those naming no biosample of the dataset: what `repo list` calls unresolved. */
  async unlinked(datasetName: string, holder: readonly string[], names: readonly string[]): Promise<string[]> {
    const linked = await this.linked(datasetName, holder, names);
    return names.filter((name) => !linked.has(name));
  }
}
