/** Variant-area messages, with the 0.6.0a10 field set (schema digest sections 6 and 7). */
import { Attributes, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const VariantSetMetadata = message('VariantSetMetadata', {
  key: t.string,
  value: t.string,
  id: t.string,
  type: t.string,
  number: t.string,
  description: t.string,
  attributes: t.msg(() => Attributes),
});

export const VariantSet = message('VariantSet', {
  id: t.string,
  name: t.string,
  datasetId: t.string,
  referenceSetId: t.string,
  metadata: t.list(t.msg(() => VariantSetMetadata)),
});

export const CallSet = message('CallSet', {
  id: t.string,
  name: t.string,
  biosampleId: t.string,
  variantSetIds: t.list(t.string),
  created: t.int64,
  updated: t.int64,
  attributes: t.msg(() => Attributes),
});

/**
 * Call and Variant are written as text by variant-writer.ts (the hot path); these descriptions give
 * the field names in both forms and document the shape.
 */
export const Call = message('Call', {
  callSetName: t.string,
  callSetId: t.string,
  genotype: t.json,
  phaseset: t.string,
  genotypeLikelihood: t.list(t.double),
  attributes: t.msg(() => Attributes),
});

export const Variant = message('Variant', {
  id: t.string,
  variantSetId: t.string,
  names: t.list(t.string),
  created: t.int64,
  updated: t.int64,
  referenceName: t.string,
  start: t.int64,
  end: t.int64,
  referenceBases: t.string,
  alternateBases: t.list(t.string),
  attributes: t.msg(() => Attributes),
  calls: t.list(t.msg(() => Call)),
  variantType: t.string,
  svlen: t.int64,
  cipos: t.list(t.int32),
  ciend: t.list(t.int32),
  filtersApplied: t.bool,
  filtersPassed: t.bool,
  filtersFailed: t.list(t.string),
});

export const SearchVariantSetsRequest = message('SearchVariantSetsRequest', {
  datasetId: t.required(t.string),
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchVariantSetsResponse = searchResponse('SearchVariantSetsResponse', 'variantSets', VariantSet);

export const SearchCallSetsRequest = message('SearchCallSetsRequest', {
  variantSetId: t.required(t.string),
  name: t.string,
  biosampleId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchCallSetsResponse = searchResponse('SearchCallSetsResponse', 'callSets', CallSet);

export const SearchVariantsRequest = message('SearchVariantsRequest', {
  variantSetId: t.required(t.string),
  callSetIds: t.list(t.string),
  referenceName: t.required(t.string),
  start: t.int64,
  end: t.int64,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchVariantsResponse = searchResponse('SearchVariantsResponse', 'variants', Variant);

export interface VariantSetMetadataRecord {
  key: string;
  value?: string;
  id?: string;
  type?: string;
  number?: string;
  description?: string;
  attributes?: AttributesRecord;
}

export interface VariantSetRecord {
  id: string;
  name: string;
  datasetId: string;
  referenceSetId: string;
  metadata: VariantSetMetadataRecord[];
}

export interface CallSetRecord {
  id: string;
  name: string;
  biosampleId?: string;
  variantSetIds: string[];
}

export interface SearchVariantsQuery {
  variantSetId: string;
  callSetIds?: string[];
  referenceName: string;
  start?: number;
  end?: number;
  pageSize?: number;
  pageToken?: string;
}
