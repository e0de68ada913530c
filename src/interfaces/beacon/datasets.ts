/**
 * The datasets a request reaches, each with the granularity granted for it: the lower of what was
 * asked and what the access decision allows the request's caller (the level the access policy gives
 * them, capped by the dataset's Beacon granularity). The decision is asked once per dataset per
 * request, here, before anything of the dataset is read; a dataset it answers `none` for does not
 * exist for the caller. A Beacon dataset's id is the dataset's name.
 */
import { lowerLevel } from '../../access/decision.js';
import { levelInRequest } from '../../access/request-access.js';
import type { BeaconGranularity, DatasetRow } from '../../areas/datasets/store.js';
import { listDatasets } from '../../areas/datasets/store.js';
import type { AttributesRecord } from '../../protocol/common.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';

export interface ReachedDataset {
  row: DatasetRow;
  granted: BeaconGranularity;
}

export interface Reached {
  datasets: ReachedDataset[];
  /** Ids the request named that are no dataset the caller can see. */
  unknownIds: string[];
}

export class BeaconDatasets {
  private readonly rows: RegistryCache<DatasetRow[]>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.rows = new RegistryCache(cacheMs, 1);
  }

  private all(): Promise<DatasetRow[]> {
    return this.rows.get('', () => listDatasets(this.registry, undefined, Number.MAX_SAFE_INTEGER)) as Promise<DatasetRow[]>;
  }

  /** The datasets `ids` names (every one when undefined) that the request's caller may see, with what is granted of each. */
  async reached(requested: BeaconGranularity, ids?: string[]): Promise<Reached> {
    const rows = await this.all();
    const wanted = ids === undefined ? rows : rows.filter((r) => ids.includes(r.name));
    const datasets: ReachedDataset[] = [];
    for (const row of wanted) {
      const level = levelInRequest({ name: row.name, beaconGranularity: row.beacon_granularity });
      if (level === 'none') continue;
      datasets.push({ row, granted: lowerLevel(requested, level) as BeaconGranularity });
    }
    const seen = new Set(datasets.map((d) => d.row.name));
    return { datasets, unknownIds: (ids ?? []).filter((id) => !seen.has(id)) };
  }

  /** One dataset by its Beacon id, when the request's caller may see it. */
  async one(requested: BeaconGranularity, id: string): Promise<ReachedDataset | undefined> {
    return (await this.reached(requested, [id])).datasets[0];
  }
}

/** A dataset as a Beacon dataset record (default model `datasets/defaultSchema.json`). */
export function datasetRecord(row: DatasetRow): Record<string, unknown> {
  const record: Record<string, unknown> = { id: row.name, name: row.name, createDateTime: row.created_at };
  if (row.description) record.description = row.description;
  if (row.attributes) {
    const attributes = JSON.parse(row.attributes) as AttributesRecord;
    const version = attributes.attr?.version?.values?.[0]?.stringValue;
    if (typeof version === 'string') record.version = version;
    record.info = { attributes };
  }
  return record;
}
