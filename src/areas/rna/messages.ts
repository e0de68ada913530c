/** The RNA quantification messages of 0.6.0a10 (schema digest section 8), every field. */
import { Attributes, Program, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const EXPRESSION_UNITS = ['EXPRESSION_UNIT_UNSPECIFIED', 'FPKM', 'TPM'] as const;
export type ExpressionUnit = (typeof EXPRESSION_UNITS)[number];

export const RnaQuantificationSet = message('RnaQuantificationSet', {
  id: t.string,
  datasetId: t.string,
  name: t.string,
  attributes: t.msg(() => Attributes),
});

export const RnaQuantification = message('RnaQuantification', {
  id: t.string,
  name: t.string,
  biosampleId: t.string,
  description: t.string,
  readGroupIds: t.list(t.string),
  programs: t.list(t.msg(() => Program)),
  featureSetIds: t.list(t.string),
  rnaQuantificationSetId: t.string,
  attributes: t.msg(() => Attributes),
});

export const ExpressionLevel = message('ExpressionLevel', {
  id: t.string,
  name: t.string,
  rnaQuantificationId: t.string,
  rawReadCount: t.double,
  expression: t.double,
  isNormalized: t.bool,
  units: t.enumOf(...EXPRESSION_UNITS),
  score: t.double,
  confIntervalLow: t.double,
  confIntervalHigh: t.double,
  attributes: t.msg(() => Attributes),
});

export const SearchRnaQuantificationSetsRequest = message('SearchRnaQuantificationSetsRequest', {
  datasetId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchRnaQuantificationSetsResponse = searchResponse(
  'SearchRnaQuantificationSetsResponse',
  'rnaQuantificationSets',
  RnaQuantificationSet,
);

export const SearchRnaQuantificationsRequest = message('SearchRnaQuantificationsRequest', {
  rnaQuantificationSetId: t.required(t.string),
  biosampleId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchRnaQuantificationsResponse = searchResponse('SearchRnaQuantificationsResponse', 'rnaQuantifications', RnaQuantification);

export const SearchExpressionLevelsRequest = message('SearchExpressionLevelsRequest', {
  rnaQuantificationId: t.required(t.string),
  // A single string is read as a one-element list (the service specification types it as a string).
  names: t.list(t.string, { acceptSingle: true }),
  threshold: t.double,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchExpressionLevelsResponse = searchResponse('SearchExpressionLevelsResponse', 'expressionLevels', ExpressionLevel);

export interface RnaQuantificationSetRecord {
  id: string;
  datasetId: string;
  name: string;
  attributes?: AttributesRecord;
}

export interface ProgramRecord {
  name: string;
  version?: string;
}

export interface RnaQuantificationRecord {
  id: string;
  name: string;
  biosampleId?: string;
  description?: string;
  readGroupIds: string[];
  programs: ProgramRecord[];
  featureSetIds: string[];
  rnaQuantificationSetId: string;
  attributes?: AttributesRecord;
}

export interface ExpressionLevelRecord {
  id: string;
  name: string;
  rnaQuantificationId: string;
  rawReadCount?: number;
  expression: number;
  isNormalized: boolean;
  units: ExpressionUnit;
  confIntervalLow?: number;
  confIntervalHigh?: number;
  attributes?: AttributesRecord;
}

export interface ExpressionLevelsQuery {
  rnaQuantificationId: string;
  names?: string[];
  threshold?: number;
  pageSize?: number;
  pageToken?: string;
}
