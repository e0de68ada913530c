/** Continuous sets and continuous data: searches and gets, as typed records. */
import { readableRows } from '../../access/request-access.js';
import { GAException, invalid, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import { isNonNegativeInteger, isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import { searchWindow } from '../../protocol/window.js';
import type { Registry } from '../../registry/registry.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import { referenceSetId } from '../references/service.js';
import { openBigWig, readRuns, type BigWigFile } from './bigwig.js';
import type { ContinuousQuery, ContinuousRecord, ContinuousSetRecord } from './messages.js';
import { getContinuousSet, listContinuousSets, type ContinuousSetRow } from './store.js';

export const continuousSetId = (datasetName: string, name: string) => encodeId([datasetName, 'cs', name]);

/** The most values one Continuous record holds: longer runs are split into several records. */
export const MAX_VALUES_PER_RECORD = 10_000;

/** How long an opened file is trusted before its size is checked again. */
const FILE_CHECK_MS = 10_000;

export function toContinuousSetRecord(row: ContinuousSetRow): ContinuousSetRecord {
  return {
    id: continuousSetId(row.dataset_name, row.name),
    datasetId: datasetId(row.dataset_name),
    referenceSetId: referenceSetId(row.reference_set_name),
    name: row.name,
    sourceUri: row.source_uri ?? undefined,
  };
}

type SetPosition = [string, string];
const isSetPosition = (p: unknown): p is SetPosition => Array.isArray(p) && p.length === 2 && p.every(isString);

export function continuousService(registry: Registry, limits: PagingLimits) {
  /**
   * Open files by path, with their headers read once and their size checked against the registered one
   * again after a short while; dropped on a read error, so a repaired file is read again.
   */
  const files = new Map<string, { at: number; file: Promise<BigWigFile> }>();
  const fileOf = (set: ContinuousSetRow) => {
    const cached = files.get(set.path);
    if (cached && Date.now() - cached.at < FILE_CHECK_MS) return cached.file;
    const file = openBigWig(set.path, Number(set.size));
    files.set(set.path, { at: Date.now(), file });
    file.catch(() => files.delete(set.path));
    return file;
  };

  async function setNamed(id: string): Promise<ContinuousSetRow> {
    const [datasetName, , name] = decodeId(id, IdKinds.continuousSet);
    const row = await getContinuousSet(registry, datasetName, name);
    if (!row) throw notFound('continuous set', id);
    return row;
  }

  return {
    async searchSets(request: { datasetId?: string } & PageQuery): Promise<SearchPage<ContinuousSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('continuoussets', request, limits, isSetPosition);
      const datasetName = request.datasetId !== undefined ? await datasetNameOf(registry, request.datasetId) : undefined;
      const setPosition = (r: { dataset_name: string; name: string }): SetPosition => [r.dataset_name, r.name];
      // Only the rows of datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listContinuousSets(registry, datasetName, from, limit), after, pageSize, (r) => r.dataset_name, setPosition);
      return keysetPage(rows, pageSize, fingerprint, toContinuousSetRecord, setPosition);
    },

    getSet: async (id: string) => toContinuousSetRecord(await setNamed(id)),

    /**
     * Records over [start, end) in order (end absent: to the end of the reference); a page token is the
     * base the next record starts at or after.
     */
    async searchContinuous(request: ContinuousQuery): Promise<SearchPage<ContinuousRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('continuous', request, limits, isNonNegativeInteger);
      const { referenceName } = request;
      const { start, end } = searchWindow(request);
      if (end <= start) throw invalid(`field 'end' (${end}) must be greater than 'start' (${start})`);
      const set = await setNamed(request.continuousSetId);
      const setId = continuousSetId(set.dataset_name, set.name);
      let runs;
      try {
        const file = await fileOf(set);
        const length = file.sequences.get(referenceName);
        // A reference the file has no values for: nothing to return.
        runs = length === undefined ? [] : await readRuns(file, referenceName, Math.max(start, after ?? 0), Math.min(end, length), MAX_VALUES_PER_RECORD, pageSize + 1);
      } catch (e) {
        files.delete(set.path);
        if (e instanceof GAException) throw e;
        throw new GAException('unavailable', `the bigWig file of continuous set '${set.name}' cannot be read right now`);
      }
      return keysetPage(
        runs,
        pageSize,
        fingerprint,
        (run): ContinuousRecord => ({ start: run.start, values: run.values, continuousSetId: setId, referenceName }),
        (run) => run.start + run.values.length,
      );
    },
  };
}

export type ContinuousService = ReturnType<typeof continuousService>;
