/** Individuals and biosamples of 0.6.0a10 (bio_metadata.proto, schema digest section 3), every field. */
import { Attributes, OntologyTerm, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const Age = message('Age', {
  age: t.string,
  ageClass: t.msg(() => OntologyTerm),
});

export const Individual = message('Individual', {
  id: t.string,
  datasetId: t.string,
  name: t.string,
  description: t.string,
  created: t.string,
  updated: t.string,
  species: t.msg(() => OntologyTerm),
  sex: t.msg(() => OntologyTerm),
  attributes: t.msg(() => Attributes),
});

export const Biosample = message('Biosample', {
  id: t.string,
  datasetId: t.string,
  name: t.string,
  description: t.string,
  disease: t.msg(() => OntologyTerm),
  created: t.string,
  updated: t.string,
  individualId: t.string,
  attributes: t.msg(() => Attributes),
  individualAgeAtCollection: t.msg(() => Age),
});

export const SearchIndividualsRequest = message('SearchIndividualsRequest', {
  datasetId: t.string,
  name: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchIndividualsResponse = searchResponse('SearchIndividualsResponse', 'individuals', Individual);

export const SearchBiosamplesRequest = message('SearchBiosamplesRequest', {
  datasetId: t.string,
  name: t.string,
  individualId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchBiosamplesResponse = searchResponse('SearchBiosamplesResponse', 'biosamples', Biosample);

interface OntologyTermRecord {
  termId?: string;
  term?: string;
}

/** What a JSON file describes of an individual or biosample, besides its name (kept as given). */
export interface BioFields {
  description?: string;
  created?: string;
  updated?: string;
  species?: OntologyTermRecord;
  sex?: OntologyTermRecord;
  disease?: OntologyTermRecord;
  attributes?: AttributesRecord;
  individualAgeAtCollection?: { age?: string; ageClass?: OntologyTermRecord };
}

export interface IndividualRecord extends BioFields {
  id: string;
  datasetId: string;
  name: string;
}

export interface BiosampleRecord extends BioFields {
  id: string;
  datasetId: string;
  name: string;
  individualId?: string;
}
