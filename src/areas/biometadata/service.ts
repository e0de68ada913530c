/** Individuals and biosamples: searches and gets, as typed records. */
import { readableRows } from '../../access/request-access.js';
import { notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import { isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import type { Registry } from '../../registry/registry.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import type { BioFields, BiosampleRecord, IndividualRecord } from './messages.js';
import {
  getBiosampleRow,
  getIndividualRow,
  listBiosamples,
  listIndividuals,
  type BiosampleRow,
  type IndividualRow,
} from './store.js';

export const individualId = (datasetName: string, name: string) => encodeId([datasetName, 'ind', name]);
export const biosampleId = (datasetName: string, name: string) => encodeId([datasetName, 'bs', name]);

/**
 * The biosample name a `biosampleId` search filter names inside `datasetName`, or undefined when it
 * names one of another dataset (which then matches nothing). A malformed id is a 404.
 */
export function biosampleNameIn(datasetName: string, id: string): string | undefined {
  const [dataset, , name] = decodeId(id, IdKinds.biosample);
  return dataset === datasetName ? name : undefined;
}

const toIndividualRecord = (row: IndividualRow): IndividualRecord => ({
  ...(JSON.parse(row.fields) as BioFields),
  id: individualId(row.dataset_name, row.name),
  datasetId: datasetId(row.dataset_name),
  name: row.name,
});

const toBiosampleRecord = (row: BiosampleRow): BiosampleRecord => ({
  ...(JSON.parse(row.fields) as BioFields),
  id: biosampleId(row.dataset_name, row.name),
  datasetId: datasetId(row.dataset_name),
  name: row.name,
  individualId: row.individual_name !== null ? individualId(row.dataset_name, row.individual_name) : undefined,
});

type Position = [string, string];
const isPosition = (p: unknown): p is Position => Array.isArray(p) && p.length === 2 && p.every(isString);
const positionOf = (r: { dataset_name: string; name: string }): Position => [r.dataset_name, r.name];

export function biometadataService(registry: Registry, limits: PagingLimits) {
  return {
    async searchIndividuals(request: { datasetId?: string; name?: string } & PageQuery): Promise<SearchPage<IndividualRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('individuals', request, limits, isPosition);
      // Without a datasetId, the individuals of every dataset.
      const datasetName = request.datasetId !== undefined ? await datasetNameOf(registry, request.datasetId) : undefined;
      // Only the rows of datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listIndividuals(registry, { datasetName, name: request.name }, from, limit), after, pageSize, (r) => r.dataset_name, positionOf);
      return keysetPage(rows, pageSize, fingerprint, toIndividualRecord, positionOf);
    },

    async getIndividual(id: string): Promise<IndividualRecord> {
      const [datasetName, , name] = decodeId(id, IdKinds.individual);
      const row = await getIndividualRow(registry, datasetName, name);
      if (!row) throw notFound('individual', id);
      return toIndividualRecord(row);
    },

    async searchBiosamples(
      request: { datasetId?: string; name?: string; individualId?: string } & PageQuery,
    ): Promise<SearchPage<BiosampleRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('biosamples', request, limits, isPosition);
      let datasetName = request.datasetId !== undefined ? await datasetNameOf(registry, request.datasetId) : undefined;
      let individualName: string | undefined;
      if (request.individualId !== undefined) {
        const [individualDataset, , name] = decodeId(request.individualId, IdKinds.individual);
        // An individual of another dataset than the one asked for has no biosamples there.
        if (datasetName !== undefined && individualDataset !== datasetName) return keysetPage([], pageSize, fingerprint, toBiosampleRecord, positionOf);
        datasetName = individualDataset;
        individualName = name;
      }
      // Only the rows of datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listBiosamples(registry, { datasetName, name: request.name, individualName }, from, limit), after, pageSize, (r) => r.dataset_name, positionOf);
      return keysetPage(rows, pageSize, fingerprint, toBiosampleRecord, positionOf);
    },

    async getBiosample(id: string): Promise<BiosampleRecord> {
      const [datasetName, , name] = decodeId(id, IdKinds.biosample);
      const row = await getBiosampleRow(registry, datasetName, name);
      if (!row) throw notFound('biosample', id);
      return toBiosampleRecord(row);
    },
  };
}
