/**
 * Features as they are sent: written from stored rows without building records. A page of features is
 * mostly attributes (stored close to their wire form, attributes.ts) and ids (encoded under the set's
 * prefix, protocol/ids.ts idEncoder).
 */
import { OntologyTerm } from '../../protocol/common.js';
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import type { Term } from '../ontologies/ontology.js';
import { attributesJson } from './attributes.js';
import { Feature } from './messages.js';
import { STRANDS, type FeatureRow } from './store.js';

/**
 * Writes stored feature rows of one set as Feature JSON, field for field what writeMessage writes for
 * the record (fields in the message's order, unset ones left out). Ids come from `idOf`, the set's
 * idEncoder; memoized for a page, since the exons of a page share their parents and a transcript's
 * children are mostly on its page. A type stored without a term id is served as the term `termOf`
 * gives its name, when it gives one (an ontology added after the set was loaded).
 */
export function featureJsonWriter(
  setId: string,
  form: NamingForm,
  termOf: (name: string) => Term | undefined,
): (row: FeatureRow, idOf: (key: string) => string) => string {
  const key = (camel: string) => ',' + keyOf(Feature, camel, form);
  const [name, geneSymbol, parentId, childIds, featureSetId, referenceName, start, end, strand, featureType, attributes] = [
    'name',
    'geneSymbol',
    'parentId',
    'childIds',
    'featureSetId',
    'referenceName',
    'start',
    'end',
    'strand',
    'featureType',
    'attributes',
  ].map(key);
  const opening = '{' + keyOf(Feature, 'id', form) + '"';
  const setIdText = featureSetId + JSON.stringify(setId);
  const termId = keyOf(OntologyTerm, 'termId', form);
  const term = ',' + keyOf(OntologyTerm, 'term', form);
  // The unspecified strand (index 0) is left out, as writeMessage leaves out an unset enum.
  const strandTexts = STRANDS.map((s, i) => (i === 0 ? undefined : JSON.stringify(s)));
  return (row, idOf) => {
    let out = opening + idOf(row.key) + '"';
    if (row.name !== null) out += name + JSON.stringify(row.name);
    if (row.gene_symbol !== null) out += geneSymbol + JSON.stringify(row.gene_symbol);
    if (row.parent_key !== null) out += parentId + '"' + idOf(row.parent_key) + '"';
    if (row.child_keys !== null) {
      const keys = JSON.parse(row.child_keys) as string[];
      if (keys.length) {
        out += childIds + '["' + idOf(keys[0]);
        for (let i = 1; i < keys.length; i++) out += '","' + idOf(keys[i]);
        out += '"]';
      }
    }
    out += setIdText;
    if (row.reference_name !== null) out += referenceName + JSON.stringify(row.reference_name) + start + Number(row.start) + end + Number(row.end);
    const strandText = strandTexts[row.strand];
    if (strandText) out += strand + strandText;
    const matched = row.type_id === null && row.type_term !== null ? termOf(row.type_term) : undefined;
    const typeId = matched ? matched.id : row.type_id;
    const typeTerm = matched ? matched.name : row.type_term;
    if (typeId !== null || typeTerm !== null) {
      out += featureType + '{';
      if (typeId !== null) out += termId + JSON.stringify(typeId);
      if (typeTerm !== null) out += (typeId !== null ? term : term.slice(1)) + JSON.stringify(typeTerm);
      out += '}';
    }
    if (row.attributes !== null) out += attributes + attributesJson(row.attributes, form);
    return out + '}';
  };
}

/** `compute` remembering what it gave (ids of one page; terms of type names), undefined answers too. */
export function memoized<V>(compute: (key: string) => V): (key: string) => V {
  const seen = new Map<string, V>();
  return (key) => {
    let value = seen.get(key);
    if (value === undefined && !seen.has(key)) seen.set(key, (value = compute(key)));
    return value as V;
  };
}
