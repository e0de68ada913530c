/**
 * Variant annotation sets and variant annotations. Annotations are read from the variant set's files
 * (VCF or BCF) on each request (the registry holds only the set's layout), one VariantAnnotation per record,
 * and a page is written as it is read, stopping once it is full and the next match is found.
 */
import type { AttributesRecord } from '../../protocol/common.js';
import { GAException, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import { encodePageToken, isString, keysetCursor, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type JsonStream, type SearchPage } from '../../protocol/reply.js';
import { writeMessage } from '../../protocol/schema.js';
import { searchWindow } from '../../protocol/window.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { OntologyCache } from '../ontologies/cache.js';
import type { TermMatcher } from '../ontologies/matcher.js';
import { variantSetId } from '../variants/service.js';
import { getVariantSetRow, listVariantSetFiles, type VariantSetRow } from '../variants/store.js';
import { isRecordPosition, recordsInOrder, setFileOf, VariantFileCache, type RecordPosition, type SetFile } from '../variants/vcf-files.js';
import { AnnotationReader, fixedColumns, type EffectFilter } from './entries.js';
import type { AnnotationLayout } from './layout.js';
import {
  SearchVariantAnnotationsResponse,
  VariantAnnotation,
  type AnalysisRecord,
  type OntologyTermRecord,
  type SearchVariantAnnotationsQuery,
  type VariantAnnotationRecord,
  type VariantAnnotationSetRecord,
} from './messages.js';
import { getAnnotationSetRow, type AnnotationSetRow } from './store.js';

export const annotationSetId = (datasetName: string, name: string) => encodeId([datasetName, 'vas', name]);

export type { JsonStream } from '../../protocol/reply.js';

/** The set as served; `ontologies` are the ones its effects are matched in. */
function toSetRecord(row: AnnotationSetRow, ontologies: readonly string[]): VariantAnnotationSetRecord {
  const id = annotationSetId(row.dataset_name, row.name);
  const analysis = JSON.parse(row.analysis) as AnalysisRecord;
  const attr: AttributesRecord['attr'] = { infoField: { values: [{ stringValue: row.info_field }] } };
  if (ontologies.length) attr.ontology = { values: ontologies.map((name) => ({ stringValue: name })) };
  return {
    id,
    variantSetId: variantSetId(row.dataset_name, row.name),
    name: row.name,
    analysis: { id, ...analysis },
    attributes: { attr },
  };
}

/** What serving one annotation set needs, built once and kept while its rows are unchanged. */
interface AnnotationContext {
  row: AnnotationSetRow;
  variantSet: VariantSetRow;
  record: VariantAnnotationSetRecord;
  files: SetFile[];
  /** Matches effect names to terms: kept with the context while its key is unchanged. */
  terms: TermMatcher;
  reader: AnnotationReader;
}


const CONTEXT_CACHE_SIZE = 32;

export function annotationService(registry: Registry, limits: PagingLimits, registryCacheMs: number) {
  const files = new VariantFileCache();
  const setRows = new RegistryCache<AnnotationSetRow>(registryCacheMs);
  const ontologies = new OntologyCache(registry, registryCacheMs);
  const contexts = new Map<string, AnnotationContext>();

  const rowOf = (datasetName: string, name: string) =>
    setRows.get(JSON.stringify([datasetName, name]), () => getAnnotationSetRow(registry, datasetName, name));

  async function contextOf(datasetName: string, name: string, id: string): Promise<AnnotationContext> {
    const row = await rowOf(datasetName, name);
    if (!row) throw notFound('variant annotation set', id);
    // Effects are matched to terms here, not at load: a set registered before its ontology gets them too.
    const termsKey = await ontologies.matcherKey(row.ontology_name);
    const key = `${datasetName}\0${name}`;
    const cached = contexts.get(key);
    if (cached && cached.row.created_at === row.created_at && cached.terms.key === termsKey) return cached;
    const [variantSet, fileRows, terms] = await Promise.all([
      getVariantSetRow(registry, datasetName, name),
      listVariantSetFiles(registry, datasetName, name),
      ontologies.matcher(row.ontology_name),
    ]);
    if (!variantSet) throw notFound('variant annotation set', id);
    const record = toSetRecord(row, terms.names);
    const layout: AnnotationLayout = { field: row.info_field, columns: JSON.parse(row.columns) as string[] };
    const termOf = (term: string): OntologyTermRecord => {
      const found = terms.termByName(term);
      return found ? { termId: found.id, term: found.name } : { term };
    };
    const context: AnnotationContext = {
      row,
      variantSet,
      record,
      files: fileRows.map(setFileOf),
      terms,
      reader: new AnnotationReader(layout, { datasetName, setName: name, annotationSetId: record.id, created: record.analysis.created ?? row.created_at }, termOf),
    };
    contexts.delete(key);
    contexts.set(key, context);
    if (contexts.size > CONTEXT_CACHE_SIZE) contexts.delete(contexts.keys().next().value!);
    return context;
  }

  async function contextOfId(id: string): Promise<AnnotationContext> {
    const [datasetName, , name] = decodeId(id, IdKinds.variantAnnotationSet);
    return contextOf(datasetName, name, id);
  }

  /** The reference the search names, or undefined when it lies outside the set's reference set. */
  function referenceNameOf(context: AnnotationContext, request: SearchVariantAnnotationsQuery): string | undefined {
    if (request.referenceId === undefined) {
      if (request.referenceName === undefined) throw new GAException('missingField', "field 'referenceName' or 'referenceId' is required");
      return request.referenceName;
    }
    const [referenceSet, name] = decodeId(request.referenceId, IdKinds.reference);
    if (request.referenceName !== undefined && request.referenceName !== name) {
      throw new GAException('invalidRequest', `field 'referenceName' ('${request.referenceName}') and field 'referenceId' (reference '${name}') name different references`);
    }
    return referenceSet === context.variantSet.reference_set_name ? name : undefined;
  }

  /**
   * The `effects` filter: a transcript effect passes when one of its effects is one of the terms asked
   * for or lies below one (in the set's ontologies); a term given by name only is resolved there too.
   */
  function effectFilterOf(context: AnnotationContext, effects: OntologyTermRecord[] | undefined): EffectFilter | undefined {
    if (!effects || effects.length === 0) return undefined;
    const ids = new Set<string>();
    const names = new Set<string>();
    effects.forEach((term, i) => {
      if (!term.termId && !term.term) throw new GAException('invalidRequest', `field 'effects[${i}]' must give a termId or a term`);
      const id = term.termId || (term.term && context.terms.termByName(term.term)?.id);
      if (id) for (const each of context.terms.withSubclasses(id)) ids.add(each);
      else if (term.term) names.add(term.term.toLowerCase());
    });
    return (found) => found.some((e) => (e.termId !== undefined && ids.has(e.termId)) || (e.term !== undefined && names.has(e.term.toLowerCase())));
  }

  /** The annotations of a reference in result order, each with its position, after `after` when given. */
  async function* annotationsOf(
    context: AnnotationContext,
    referenceName: string,
    start: number,
    end: number,
    filter: EffectFilter | undefined,
    after?: RecordPosition,
  ): AsyncGenerator<{ record: VariantAnnotationRecord; position: RecordPosition }> {
    // The variant set's records in the order variant searches give them; a record without a matching
    // annotation still counts at its position, so positions are those of the variants.
    // No sample column is read: an annotation is made of the first 8 columns.
    for await (const { record: raw, position } of recordsInOrder(files, context.files, context.variantSet.created_at, referenceName, start, end, after, undefined, [])) {
      const record = context.reader.read(fixedColumns(raw.bytes, raw.lineStart, raw.lineEnd), filter);
      if (record) yield { record, position };
    }
  }

  /** A failure to read a set's files is the server's (503), named by set; the cause is for the log. */
  const unreadable = (context: AnnotationContext, error: unknown) =>
    GAException.unreadable(`the ${context.files[0]?.format ?? 'VCF'} files`, `variant annotation set '${context.row.name}'`, error);

  return {
    async searchSets(request: { variantSetId: string } & PageQuery): Promise<SearchPage<VariantAnnotationSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('variantannotationsets', request, limits, isString);
      const [datasetName, , name] = decodeId(request.variantSetId, IdKinds.variantSet);
      if (!(await getVariantSetRow(registry, datasetName, name))) throw notFound('variant set', request.variantSetId);
      // A variant set has at most one annotation set, named after it.
      const row = after === undefined ? await getAnnotationSetRow(registry, datasetName, name) : undefined;
      const records = row ? [(await contextOf(datasetName, name, annotationSetId(datasetName, name))).record] : [];
      return keysetPage(records, pageSize, fingerprint, (r) => r, (r) => r.name);
    },

    getSet: async (id: string) => (await contextOfId(id)).record,

    /**
     * When the annotation set an id names was registered, and what its effects are matched in (the
     * ontologies and their load times), as the registry cache knows them ('' when it is not
     * registered): what a page of its annotations depends on in the registry.
     */
    async registrationOf(id: string): Promise<string> {
      const [datasetName, , name] = decodeId(id, IdKinds.variantAnnotationSet);
      const row = await rowOf(datasetName, name);
      return row ? JSON.stringify([row.created_at, await ontologies.matcherKey(row.ontology_name)]) : '';
    },

    /** Checks the request and reads the first match (every 4xx and 503 happens here), then streams the page. */
    async searchAnnotations(request: SearchVariantAnnotationsQuery): Promise<JsonStream> {
      const { pageSize, fingerprint, after } = keysetCursor('variantannotations', request, limits, isRecordPosition);
      const { start, end } = searchWindow(request);
      const context = await contextOfId(request.variantAnnotationSetId);
      const referenceName = referenceNameOf(context, request);
      const filter = effectFilterOf(context, request.effects);
      const response = SearchVariantAnnotationsResponse;
      const annotations = referenceName === undefined ? undefined : annotationsOf(context, referenceName, start, end, filter, after);
      const first = annotations ? await annotations.next().catch((e) => {
        throw unreadable(context, e);
      }) : undefined;

      return {
        async write(sink, form) {
          let out = '{' + response.listKey[form] + ':[';
          let written = 0;
          let bytes = 0;
          let last: RecordPosition | undefined;
          let more = false;
          try {
            if (annotations && first) {
              for (let next = first; !next.done; next = await annotations.next()) {
                const { record, position } = next.value;
                if (written === pageSize || (written > 0 && bytes >= limits.pageByteBudget)) {
                  more = true; // look-ahead: another match follows the last one written
                  break;
                }
                const text = writeMessage(VariantAnnotation, record as unknown as Record<string, unknown>, form);
                out += (written ? ',' : '') + text;
                bytes += text.length;
                written++;
                last = position;
                if (out.length >= 64 * 1024) {
                  await sink.write(out);
                  out = '';
                }
              }
            }
          } finally {
            await annotations?.return(undefined);
          }
          out += ']';
          if (more && last) out += ',' + response.tokenKey[form] + ':' + JSON.stringify(encodePageToken(fingerprint, last));
          await sink.write(out + '}');
        },
      };
    },
  };
}
