/**
 * A `geneId` as the places of its gene: the features of type gene (SO:0000704, or typed `gene` where
 * the set has no ontology) whose gene symbol or name it is, in the registered GFF3 feature sets on a
 * variant set's reference set, whatever their dataset: a gene is a fact of the reference, not of the
 * data. A gene query is then a range query over each place.
 */
import { listAllFeatureSets, listFeatureRows, referencesWithFeatures, type FeatureSetRow } from '../../areas/features/store.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';

export interface GenePlace {
  referenceName: string;
  start: number;
  end: number;
}

const GENE_TYPES = { ids: ['SO:0000704'], terms: ['gene'] };
const MOST_PLACES = 100;

export class Genes {
  private readonly sets: RegistryCache<FeatureSetRow[]>;
  private readonly places: RegistryCache<GenePlace[]>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.sets = new RegistryCache(cacheMs, 1);
    this.places = new RegistryCache(cacheMs, 10_000);
  }

  /** The places of a gene on a reference set, each once, in reference and position order. */
  async placesOf(referenceSetName: string, geneId: string): Promise<GenePlace[]> {
    return (await this.places.get(JSON.stringify([referenceSetName, geneId]), async () => {
      const sets = ((await this.sets.get('', () => listAllFeatureSets(this.registry))) ?? []).filter((s) => s.reference_set_name === referenceSetName);
      const found = new Map<string, GenePlace>();
      for (const set of sets) {
        const references = referencesWithFeatures(set);
        for (const by of [{ geneSymbol: geneId }, { name: geneId }]) {
          const rows = await listFeatureRows(this.registry, { set, references, range: { start: 0 }, types: GENE_TYPES, limit: MOST_PLACES, ...by });
          for (const row of rows) {
            if (row.reference_name === null) continue;
            const place = { referenceName: row.reference_name, start: Number(row.start), end: Number(row.end) };
            found.set(JSON.stringify(place), place);
          }
        }
      }
      // A miss is kept too (as an empty list): the cache keeps no undefined.
      return [...found.values()].sort((a, b) => a.referenceName.localeCompare(b.referenceName) || a.start - b.start);
    }))!;
  }
}
