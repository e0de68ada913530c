import { Attributes, OntologyTerm } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const Reference = message('Reference', {
  id: t.string,
  length: t.int64,
  md5checksum: t.string,
  name: t.string,
  sourceUri: t.string,
  sourceAccessions: t.list(t.string),
  isDerived: t.bool,
  sourceDivergence: t.double,
  species: t.msg(() => OntologyTerm),
  attributes: t.msg(() => Attributes),
});

export const ReferenceSet = message('ReferenceSet', {
  id: t.string,
  name: t.string,
  md5checksum: t.string,
  species: t.msg(() => OntologyTerm),
  description: t.string,
  assemblyId: t.string,
  sourceUri: t.string,
  sourceAccessions: t.list(t.string),
  isDerived: t.bool,
  attributes: t.msg(() => Attributes),
});

export const SearchReferenceSetsRequest = message('SearchReferenceSetsRequest', {
  md5checksum: t.string,
  accession: t.string,
  assemblyId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchReferenceSetsResponse = searchResponse('SearchReferenceSetsResponse', 'referenceSets', ReferenceSet);

export const SearchReferencesRequest = message('SearchReferencesRequest', {
  referenceSetId: t.string,
  md5checksum: t.string,
  accession: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchReferencesResponse = searchResponse('SearchReferencesResponse', 'references', Reference);

const basesRange = { start: t.int64, end: t.int64, pageToken: t.string };
/** Form 1: `GET /references/{id}/bases?start=&end=&pageToken=`. */
export const ListReferenceBasesQuery = message('ListReferenceBasesQuery', basesRange);
/** The schema's `POST /references/{id}/bases`: the id is in the path, and the body may repeat it. */
export const ListReferenceBasesRequest = message('ListReferenceBasesRequest', { referenceId: t.string, ...basesRange });
/** Form 2, `POST /listreferencebases`: the body names the reference. */
export const ListReferenceBasesByIdRequest = message('ListReferenceBasesRequest', { referenceId: t.required(t.string), ...basesRange });
export const ListReferenceBasesResponse = message('ListReferenceBasesResponse', {
  offset: t.int64,
  sequence: t.string,
  nextPageToken: t.string,
});

export interface OntologyTermRecord {
  termId: string;
  term: string;
}

export interface ReferenceRecord {
  id: string;
  length: number;
  /** Absent for a reference of a sequence dictionary that gives no MD5. */
  md5checksum?: string;
  name: string;
  sourceAccessions: string[];
  isDerived: boolean;
  species?: OntologyTermRecord;
}

export interface ReferenceSetRecord {
  id: string;
  name: string;
  /** Absent for a set whose dictionary lacks some reference's MD5. */
  md5checksum?: string;
  species?: OntologyTermRecord;
  description?: string;
  assemblyId?: string;
  sourceUri?: string;
  sourceAccessions: string[];
  isDerived: boolean;
}

export interface BasesRequest {
  start?: number;
  end?: number;
  pageToken?: string;
}

export interface BasesPage {
  offset: number;
  /** Upper-case bases as ASCII bytes, with no character that JSON would escape. */
  sequence: Buffer;
  nextPageToken?: string;
}
