/** The continuous-data messages of 0.6.0a10 (sequence_annotations.proto, schema digest section 10), every field. */
import { Attributes, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const ContinuousSet = message('ContinuousSet', {
  id: t.string,
  datasetId: t.string,
  referenceSetId: t.string,
  name: t.string,
  sourceUri: t.string,
  attributes: t.msg(() => Attributes),
});

export const Continuous = message('Continuous', {
  start: t.int64,
  values: t.list(t.double),
  continuousSetId: t.string,
  referenceName: t.string,
});

export const SearchContinuousSetsRequest = message('SearchContinuousSetsRequest', {
  datasetId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchContinuousSetsResponse = searchResponse('SearchContinuousSetsResponse', 'continuousSets', ContinuousSet);

export const SearchContinuousRequest = message('SearchContinuousRequest', {
  continuousSetId: t.required(t.string),
  referenceName: t.required(t.string),
  start: t.int64,
  end: t.int64,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchContinuousResponse = searchResponse('SearchContinuousResponse', 'continuous', Continuous);

export interface ContinuousSetRecord {
  id: string;
  datasetId: string;
  referenceSetId: string;
  name: string;
  sourceUri?: string;
  attributes?: AttributesRecord;
}

export interface ContinuousRecord {
  start: number;
  values: number[];
  continuousSetId: string;
  referenceName: string;
}

export interface ContinuousQuery {
  continuousSetId: string;
  referenceName: string;
  start?: number;
  end?: number;
  pageSize?: number;
  pageToken?: string;
}
