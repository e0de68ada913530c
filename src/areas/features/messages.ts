/** The feature messages of 0.6.0a10 (sequence_annotations.proto, schema digest section 10), every field. */
import { Attributes, OntologyTerm, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';
import { STRANDS } from './store.js';

export const FeatureSet = message('FeatureSet', {
  id: t.string,
  datasetId: t.string,
  referenceSetId: t.string,
  name: t.string,
  sourceUri: t.string,
  attributes: t.msg(() => Attributes),
});

export const Feature = message('Feature', {
  id: t.string,
  name: t.string,
  geneSymbol: t.string,
  parentId: t.string,
  childIds: t.list(t.string),
  featureSetId: t.string,
  referenceName: t.string,
  start: t.int64,
  end: t.int64,
  strand: t.enumOf(...STRANDS),
  featureType: t.msg(() => OntologyTerm),
  attributes: t.msg(() => Attributes),
});

export const SearchFeatureSetsRequest = message('SearchFeatureSetsRequest', {
  datasetId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchFeatureSetsResponse = searchResponse('SearchFeatureSetsResponse', 'featureSets', FeatureSet);

export const SearchFeaturesRequest = message('SearchFeaturesRequest', {
  featureSetId: t.string,
  name: t.string,
  geneSymbol: t.string,
  parentId: t.string,
  referenceName: t.string,
  start: t.int64,
  end: t.int64,
  featureTypes: t.list(t.string, { acceptSingle: true }),
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchFeaturesResponse = searchResponse('SearchFeaturesResponse', 'features', Feature);

export interface FeatureSetRecord {
  id: string;
  datasetId: string;
  referenceSetId?: string;
  name: string;
  sourceUri?: string;
  attributes?: AttributesRecord;
}

export interface FeaturesQuery {
  featureSetId?: string;
  name?: string;
  geneSymbol?: string;
  parentId?: string;
  referenceName?: string;
  start?: number;
  end?: number;
  featureTypes?: string[];
  pageSize?: number;
  pageToken?: string;
}
