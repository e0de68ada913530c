/** Datasets: search and get, as typed records. */
import { readableRows } from '../../access/request-access.js';
import type { AttributesRecord } from '../../protocol/common.js';
import type { PagingLimits } from '../../protocol/paging.js';
import { isString, keysetCursor, type PageQuery } from '../../protocol/paging.js';
import { notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import type { Registry } from '../../registry/registry.js';
import type { DatasetRecord } from './messages.js';
import { getDataset, listDatasets, type DatasetRow } from './store.js';

export const datasetId = (name: string) => encodeId([name]);

const toRecord = (row: DatasetRow): DatasetRecord => ({
  id: datasetId(row.name),
  name: row.name,
  description: row.description ?? undefined,
  attributes: row.attributes !== null ? (JSON.parse(row.attributes) as AttributesRecord) : undefined,
});

export function datasetService(registry: Registry, limits: PagingLimits) {
  return {
    async search(request: PageQuery): Promise<SearchPage<DatasetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('datasets', request, limits, isString);
      // Only the datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listDatasets(registry, from, limit), after, pageSize, (r) => r.name, (r) => r.name);
      return keysetPage(rows, pageSize, fingerprint, toRecord, (r) => r.name);
    },

    async get(id: string): Promise<DatasetRecord> {
      const [name] = decodeId(id, IdKinds.dataset);
      const row = await getDataset(registry, name);
      if (!row) throw notFound('dataset', id);
      return toRecord(row);
    },
  };
}

/**
 * The dataset named by a request's datasetId field: 404 when it does not exist, since a search naming a
 * missing resource is a 404, not an empty list.
 */
export async function datasetNameOf(registry: Registry, id: string): Promise<string> {
  const [name] = decodeId(id, IdKinds.dataset);
  if (!(await getDataset(registry, name))) throw notFound('dataset', id);
  return name;
}
