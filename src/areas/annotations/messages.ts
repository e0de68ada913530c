/** Variant annotation messages of 0.6.0a10 (allele_annotations.proto, allele_annotation_service.proto), every field. */
import { Analysis, Attributes, OntologyTerm, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const AnalysisResult = message('AnalysisResult', {
  analysisId: t.string,
  result: t.string,
  score: t.int32,
});

export const AlleleLocation = message('AlleleLocation', {
  start: t.int32,
  end: t.int32,
  referenceSequence: t.string,
  alternateSequence: t.string,
});

export const VariantAnnotationSet = message('VariantAnnotationSet', {
  id: t.string,
  variantSetId: t.string,
  name: t.string,
  analysis: t.msg(() => Analysis),
  attributes: t.msg(() => Attributes),
});

export const HgvsAnnotation = message('HGVSAnnotation', {
  genomic: t.string,
  transcript: t.string,
  protein: t.string,
});

export const TranscriptEffect = message('TranscriptEffect', {
  id: t.string,
  featureId: t.string,
  alternateBases: t.string,
  effects: t.list(t.msg(() => OntologyTerm)),
  hgvsAnnotation: t.msg(() => HgvsAnnotation),
  cdnaLocation: t.msg(() => AlleleLocation),
  cdsLocation: t.msg(() => AlleleLocation),
  proteinLocation: t.msg(() => AlleleLocation),
  analysisResults: t.list(t.msg(() => AnalysisResult)),
  attributes: t.msg(() => Attributes),
});

export const VariantAnnotation = message('VariantAnnotation', {
  id: t.string,
  variantId: t.string,
  variantAnnotationSetId: t.string,
  created: t.string,
  transcriptEffects: t.list(t.msg(() => TranscriptEffect)),
  attributes: t.msg(() => Attributes),
});

export const SearchVariantAnnotationSetsRequest = message('SearchVariantAnnotationSetsRequest', {
  variantSetId: t.required(t.string),
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchVariantAnnotationSetsResponse = searchResponse(
  'SearchVariantAnnotationSetsResponse',
  'variantAnnotationSets',
  VariantAnnotationSet,
);

export const SearchVariantAnnotationsRequest = message('SearchVariantAnnotationsRequest', {
  variantAnnotationSetId: t.required(t.string),
  referenceName: t.string,
  referenceId: t.string,
  start: t.int64,
  end: t.int64,
  effects: t.list(t.msg(() => OntologyTerm)),
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchVariantAnnotationsResponse = searchResponse('SearchVariantAnnotationsResponse', 'variantAnnotations', VariantAnnotation);

export interface OntologyTermRecord {
  termId?: string;
  term?: string;
}

export interface AnalysisRecord {
  id?: string;
  name?: string;
  description?: string;
  created?: string;
  updated?: string;
  type?: string;
  software?: string[];
  attributes?: AttributesRecord;
}

export interface VariantAnnotationSetRecord {
  id: string;
  variantSetId: string;
  name: string;
  analysis: AnalysisRecord;
  attributes?: AttributesRecord;
}

export interface AlleleLocationRecord {
  start?: number;
  end?: number;
  referenceSequence?: string;
  alternateSequence?: string;
}

export interface TranscriptEffectRecord {
  id: string;
  featureId?: string;
  alternateBases?: string;
  effects?: OntologyTermRecord[];
  hgvsAnnotation?: { genomic?: string; transcript?: string; protein?: string };
  cdnaLocation?: AlleleLocationRecord;
  cdsLocation?: AlleleLocationRecord;
  proteinLocation?: AlleleLocationRecord;
  analysisResults?: Array<{ analysisId: string; result?: string; score?: number }>;
  attributes?: AttributesRecord;
}

export interface VariantAnnotationRecord {
  id: string;
  variantId: string;
  variantAnnotationSetId: string;
  created?: string;
  transcriptEffects?: TranscriptEffectRecord[];
}

export interface SearchVariantAnnotationsQuery {
  variantAnnotationSetId: string;
  referenceName?: string;
  referenceId?: string;
  start?: number;
  end?: number;
  effects?: OntologyTermRecord[];
  pageSize?: number;
  pageToken?: string;
}
