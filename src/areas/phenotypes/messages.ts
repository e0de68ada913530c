/** Messages of genotype_phenotype.proto and its service at 0.6.0a10 (schema digest, section 10). */
import { ExternalIdentifier, OntologyTerm } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t, type FieldType } from '../../protocol/schema.js';

/** The G2P messages still carry `info`: a map of string to a list of any JSON values. */
const info: FieldType = t.map(t.json);

export const PhenotypeAssociationSet = message('PhenotypeAssociationSet', {
  id: t.string,
  name: t.string,
  datasetId: t.string,
  info,
});

export const EnvironmentalContext = message('EnvironmentalContext', {
  id: t.string,
  environmentType: t.msg(() => OntologyTerm),
  description: t.string,
});

export const PhenotypeInstance = message('PhenotypeInstance', {
  id: t.string,
  type: t.msg(() => OntologyTerm),
  qualifier: t.list(t.msg(() => OntologyTerm)),
  ageOfOnset: t.msg(() => OntologyTerm),
  description: t.string,
  info,
});

export const Evidence = message('Evidence', {
  evidenceType: t.msg(() => OntologyTerm),
  description: t.string,
  info,
});

export const FeaturePhenotypeAssociation = message('FeaturePhenotypeAssociation', {
  id: t.string,
  phenotypeAssociationSetId: t.string,
  featureIds: t.list(t.string),
  evidence: t.list(t.msg(() => Evidence)),
  phenotype: t.msg(() => PhenotypeInstance),
  description: t.string,
  environmentalContexts: t.list(t.msg(() => EnvironmentalContext)),
  info,
});

/** `evidenceType` is spelled in camelCase in the .proto itself, so it has no snake_case form. */
export const EvidenceQuery = message('EvidenceQuery', {
  evidenceType: { type: t.msg(() => OntologyTerm), wireNames: ['evidenceType'] },
  description: t.string,
  externalIdentifiers: t.list(t.msg(() => ExternalIdentifier)),
});

export const SearchPhenotypeAssociationSetsRequest = message('SearchPhenotypeAssociationSetsRequest', {
  datasetId: t.string,
  pageSize: t.int64,
  pageToken: t.string,
});
export const SearchPhenotypeAssociationSetsResponse = searchResponse(
  'SearchPhenotypeAssociationSetsResponse',
  'phenotypeAssociationSets',
  PhenotypeAssociationSet,
);

export const SearchPhenotypesRequest = message('SearchPhenotypesRequest', {
  phenotypeAssociationSetId: t.string,
  id: t.string,
  description: t.string,
  type: t.msg(() => OntologyTerm),
  qualifiers: t.list(t.msg(() => OntologyTerm)),
  ageOfOnset: t.msg(() => OntologyTerm),
  pageSize: t.int64,
  pageToken: t.string,
});
export const SearchPhenotypesResponse = searchResponse('SearchPhenotypesResponse', 'phenotypes', PhenotypeInstance);

export const SearchGenotypePhenotypeRequest = message('SearchGenotypePhenotypeRequest', {
  phenotypeAssociationSetId: t.string,
  featureIds: t.list(t.string),
  phenotypeIds: t.list(t.string),
  evidence: t.list(t.msg(() => EvidenceQuery)),
  pageSize: t.int64,
  pageToken: t.string,
});
export const SearchGenotypePhenotypeResponse = searchResponse(
  'SearchGenotypePhenotypeResponse',
  'associations',
  FeaturePhenotypeAssociation,
);

export interface Term {
  termId?: string;
  term?: string;
}

export interface PhenotypeAssociationSetRecord {
  id: string;
  name: string;
  datasetId: string;
  info?: Record<string, unknown[]>;
}

export interface PhenotypeInstanceRecord {
  id: string;
  type?: Term;
  qualifier?: Term[];
  ageOfOnset?: Term;
  description?: string;
  info?: Record<string, unknown[]>;
}

export interface EvidenceRecord {
  evidenceType?: Term;
  description?: string;
  info?: Record<string, unknown[]>;
}

export interface EnvironmentalContextRecord {
  id: string;
  environmentType?: Term;
  description?: string;
}

export interface FeaturePhenotypeAssociationRecord {
  id: string;
  phenotypeAssociationSetId: string;
  featureIds: string[];
  evidence?: EvidenceRecord[];
  phenotype: PhenotypeInstanceRecord;
  description?: string;
  environmentalContexts?: EnvironmentalContextRecord[];
  info?: Record<string, unknown[]>;
}

export interface EvidenceQueryValue {
  evidenceType?: Term;
  description?: string;
  externalIdentifiers?: Array<{ database?: string; identifier?: string; version?: string }>;
}

export interface PhenotypesQuery {
  phenotypeAssociationSetId?: string;
  id?: string;
  description?: string;
  type?: Term;
  qualifiers?: Term[];
  ageOfOnset?: Term;
  pageSize?: number;
  pageToken?: string;
}

export interface AssociationsQuery {
  phenotypeAssociationSetId?: string;
  featureIds?: string[];
  phenotypeIds?: string[];
  evidence?: EvidenceQueryValue[];
  pageSize?: number;
  pageToken?: string;
}
