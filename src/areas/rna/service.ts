/** RNA quantification sets, quantifications and expression levels: searches and gets, as typed records. */
import { readableRows } from '../../access/request-access.js';
import { attributesOf, type AttributesRecord } from '../../protocol/common.js';
import { GAException, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import { isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import type { Registry } from '../../registry/registry.js';
import { biosampleId, biosampleNameIn } from '../biometadata/service.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import type { OptionalField } from './formats.js';
import type {
  ExpressionLevelRecord,
  ExpressionLevelsQuery,
  ExpressionUnit,
  ProgramRecord,
  RnaQuantificationRecord,
  RnaQuantificationSetRecord,
} from './messages.js';
import {
  fieldsOf,
  getExpressionRow,
  getQuantification,
  getQuantificationSet,
  listExpressionRows,
  listQuantifications,
  listQuantificationSets,
  type ExpressionRowStored,
  type QuantificationRow,
  type QuantificationSetRow,
} from './store.js';

export const quantificationSetId = (datasetName: string, name: string) => encodeId([datasetName, name]);
export const quantificationId = (datasetName: string, setName: string, name: string) => encodeId([datasetName, setName, name]);

/** The most names one expression level search may list. */
export const MAX_NAMES = 10000;

export function toQuantificationSetRecord(row: QuantificationSetRow): RnaQuantificationSetRecord {
  return {
    id: quantificationSetId(row.dataset_name, row.name),
    datasetId: datasetId(row.dataset_name),
    name: row.name,
    // RnaQuantificationSet has no description field: the one given at load travels in attributes.
    attributes: row.description !== null ? attributesOf({ description: [row.description] }) : undefined,
  };
}

export function toQuantificationRecord(row: QuantificationRow): RnaQuantificationRecord {
  return {
    id: quantificationId(row.dataset_name, row.set_name, row.name),
    name: row.name,
    biosampleId: row.biosample_id !== null ? biosampleId(row.dataset_name, row.biosample_id) : undefined,
    description: row.description ?? undefined,
    readGroupIds: JSON.parse(row.read_group_ids) as string[],
    programs: JSON.parse(row.programs) as ProgramRecord[],
    featureSetIds: JSON.parse(row.feature_set_ids) as string[],
    rnaQuantificationSetId: quantificationSetId(row.dataset_name, row.set_name),
    attributes: attributesOf({ format: [row.format] }),
  };
}

/** Turns stored rows of one quantification into ExpressionLevel records, leaving out what the source lacks. */
function expressionWriter(quantification: QuantificationRow): (row: ExpressionRowStored) => ExpressionLevelRecord {
  const { dataset_name, set_name, name } = quantification;
  const rnaQuantificationId = quantificationId(dataset_name, set_name, name);
  const units = quantification.units as ExpressionUnit;
  const fields = new Set(fieldsOf(quantification));
  const optional = (field: OptionalField, value: number | null) =>
    fields.has(field) && value !== null ? Number(value) : undefined;
  return (row) => ({
    id: encodeId([dataset_name, set_name, name, row.name]),
    name: row.name,
    rnaQuantificationId,
    rawReadCount: optional('rawReadCount', row.raw_read_count),
    expression: Number(row.expression),
    // Every supported format gives TPM or FPKM: values normalised for depth and feature length.
    isNormalized: true,
    units,
    confIntervalLow: optional('confIntervalLow', row.conf_interval_low),
    confIntervalHigh: optional('confIntervalHigh', row.conf_interval_high),
    attributes: row.attributes !== null ? textAttributes(row.attributes) : undefined,
  });
}

function textAttributes(json: string): AttributesRecord | undefined {
  const entries = Object.entries(JSON.parse(json) as Record<string, string>);
  return entries.length ? attributesOf(Object.fromEntries(entries.map(([k, v]) => [k, [v]]))) : undefined;
}

type SetPosition = [string, string];
const isSetPosition = (p: unknown): p is SetPosition => Array.isArray(p) && p.length === 2 && p.every(isString);

export function rnaService(registry: Registry, limits: PagingLimits) {
  async function setNamed(id: string): Promise<QuantificationSetRow> {
    const [datasetName, name] = decodeId(id, IdKinds.rnaQuantificationSet);
    const row = await getQuantificationSet(registry, datasetName, name);
    if (!row) throw notFound('RNA quantification set', id);
    return row;
  }

  async function quantificationNamed(id: string): Promise<QuantificationRow> {
    const [datasetName, setName, name] = decodeId(id, IdKinds.rnaQuantification);
    const row = await getQuantification(registry, datasetName, setName, name);
    if (!row) throw notFound('RNA quantification', id);
    return row;
  }

  return {
    async searchSets(request: { datasetId?: string } & PageQuery): Promise<SearchPage<RnaQuantificationSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('rnaquantificationsets', request, limits, isSetPosition);
      // Without a datasetId, the sets of every dataset.
      const datasetName = request.datasetId !== undefined ? await datasetNameOf(registry, request.datasetId) : undefined;
      const setPosition = (r: { dataset_name: string; name: string }): SetPosition => [r.dataset_name, r.name];
      // Only the rows of datasets the caller may read records of.
      const rows = await readableRows((from, limit) => listQuantificationSets(registry, datasetName, from, limit), after, pageSize, (r) => r.dataset_name, setPosition);
      return keysetPage(rows, pageSize, fingerprint, toQuantificationSetRecord, setPosition);
    },

    getSet: async (id: string) => toQuantificationSetRecord(await setNamed(id)),

    async searchQuantifications(
      request: { rnaQuantificationSetId: string; biosampleId?: string } & PageQuery,
    ): Promise<SearchPage<RnaQuantificationRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('rnaquantifications', request, limits, isString);
      const set = await setNamed(request.rnaQuantificationSetId);
      // The registry keeps the biosample's name; a biosample of another dataset matches nothing.
      const biosampleName = request.biosampleId !== undefined ? (biosampleNameIn(set.dataset_name, request.biosampleId) ?? null) : undefined;
      const rows =
        biosampleName === null
          ? []
          : await listQuantifications(
              registry,
              { datasetName: set.dataset_name, setName: set.name, biosampleId: biosampleName },
              after,
              pageSize + 1,
            );
      return keysetPage(rows, pageSize, fingerprint, toQuantificationRecord, (r) => r.name);
    },

    getQuantification: async (id: string) => toQuantificationRecord(await quantificationNamed(id)),

    async searchExpressionLevels(request: ExpressionLevelsQuery): Promise<SearchPage<ExpressionLevelRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('expressionlevels', request, limits, isString);
      const threshold = request.threshold ?? 0.0;
      if (Number.isNaN(threshold)) throw new GAException('invalidRequest', "field 'threshold' must be a number, not NaN");
      const names = request.names && [...new Set(request.names)];
      if (names && names.length > MAX_NAMES) {
        throw new GAException('invalidRequest', `field 'names' lists ${names.length} names; at most ${MAX_NAMES} per search`);
      }
      const quantification = await quantificationNamed(request.rnaQuantificationId);
      const rows = await listExpressionRows(registry, {
        quantification,
        names,
        above: threshold === -Infinity ? undefined : threshold,
        after,
        limit: pageSize + 1,
      });
      return keysetPage(rows, pageSize, fingerprint, expressionWriter(quantification), (r) => r.name);
    },

    /** A level is looked up inside the quantification its id names, never by feature name alone. */
    async getExpressionLevel(id: string): Promise<ExpressionLevelRecord> {
      const [datasetName, setName, quantName, featureName] = decodeId(id, IdKinds.expressionLevel);
      const quantification = await getQuantification(registry, datasetName, setName, quantName);
      const row = quantification && (await getExpressionRow(registry, quantification.id, featureName));
      if (!quantification || !row) throw notFound('expression level', id);
      return expressionWriter(quantification)(row);
    },
  };
}

export type RnaService = ReturnType<typeof rnaService>;
