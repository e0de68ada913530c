/**
 * The variant area: variant sets, call sets, and variants with their calls, read from the registered
 * VCF or BCF files on each request. Searches of variants answer as a stream of JSON text (a page of 1000
 * Genomes variants with every call is megabytes), written while the file is read, and stop reading
 * once the page is full and the look-ahead record is found.
 */
import { GAException, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import {
  encodePageToken,
  isNonNegativeInteger,
  isString,
  keysetCursor,
  type PageQuery,
  type PagingLimits,
} from '../../protocol/paging.js';
import { attributesOf } from '../../protocol/common.js';
import { searchWindow } from '../../protocol/window.js';
import { keysetPage, PAUSE_BYTES, type JsonStream, type SearchPage } from '../../protocol/reply.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { SampleLinks } from '../biometadata/links.js';
import { biosampleId, biosampleNameIn } from '../biometadata/service.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import { referenceSetId } from '../references/service.js';
import {
  SearchVariantsResponse,
  type CallSetRecord,
  type SearchVariantsQuery,
  type VariantSetMetadataRecord,
  type VariantSetRecord,
} from './messages.js';
import {
  getCallSetRow,
  getVariantSetRow,
  listCallSets,
  listVariantSetFiles,
  listVariantSets,
  type CallSetRow,
  type VariantSetRow,
} from './store.js';
import { alleleDigest, ByteChunks, VariantWriter } from './variant-writer.js';
import { fieldTypesOf, type MetadataEntry } from './vcf-header.js';
import {
  isRecordPosition,
  recordsInOrder,
  setFileOf,
  VariantFileCache,
  type RecordPlace,
  type RecordPosition,
  type SetFile,
  type VariantRecord,
} from './vcf-files.js';

export const variantSetId = (datasetName: string, name: string) => encodeId([datasetName, 'vs', name]);
export const callSetId = (datasetName: string, setName: string, sample: string) => encodeId([datasetName, 'vs', setName, sample]);
/** A variant's id: its line's reference, 0-based start and the digest of its REF and ALT (alleleDigest). */
export const variantId = (datasetName: string, setName: string, referenceName: string, start: number, digest: string) =>
  encodeId([datasetName, 'vs', setName, referenceName, String(start), digest]);

export type { JsonStream } from '../../protocol/reply.js';

function toMetadataRecord({ extra, ...fields }: MetadataEntry): VariantSetMetadataRecord {
  if (!extra) return fields;
  const values: Record<string, string[]> = {};
  for (const [k, v] of extra) (values[k] ??= []).push(v);
  return { ...fields, attributes: attributesOf(values) };
}

function toVariantSetRecord(row: VariantSetRow): VariantSetRecord {
  return {
    id: variantSetId(row.dataset_name, row.name),
    name: row.name,
    datasetId: datasetId(row.dataset_name),
    referenceSetId: referenceSetId(row.reference_set_name),
    // FORMAT.GT is left out, as the reference server does: clients add GT themselves (the R client
    // would list it twice).
    metadata: (JSON.parse(row.metadata) as MetadataEntry[]).filter((m) => m.key !== 'FORMAT.GT').map(toMetadataRecord),
  };
}

const toCallSetRecord = (row: CallSetRow): CallSetRecord => ({
  id: callSetId(row.dataset_name, row.variant_set_name, row.name),
  name: row.name,
  variantSetIds: [variantSetId(row.dataset_name, row.variant_set_name)],
});

/** What serving one variant set needs, built once from the registry and kept while it is unchanged. */
interface VariantSetContext {
  row: VariantSetRow;
  /** The set as served; kept, so its JSON is written once (see writeRecord). */
  record: VariantSetRecord;
  /** Its call sets in VCF column order, as served (call set searches are answered from here). */
  callSets: Array<{ ordinal: number; record: CallSetRecord }>;
  files: SetFile[];
  sampleOrdinal: Map<string, number>;
  writer: VariantWriter;
}

const CONTEXT_CACHE_SIZE = 32;
const RESUME_POINTS = 4096;
/**
 * Readers kept open where a page stopped, at most. Each holds the text it had inflated (~0.3 MB for a
 * 2,504-sample cohort) and its look-ahead record; one per query being paged is what matters.
 */
const PARKED_READERS = 8;

/** A reader of a query's records, stopped at `next`: the record after a page's last. */
interface ParkedReader {
  records: AsyncGenerator<{ record: VariantRecord; position: RecordPosition }>;
  next: IteratorResult<{ record: VariantRecord; position: RecordPosition }>;
}

export function variantService(registry: Registry, limits: PagingLimits, registryCacheMs: number) {
  const files = new VariantFileCache();
  const contexts = new Map<string, VariantSetContext>();
  const setRows = new RegistryCache<VariantSetRow>(registryCacheMs);
  const callSetRows = new RegistryCache<CallSetRow>(registryCacheMs);
  // A call set's biosample is the biosample of its dataset named like its sample, whichever was
  // registered first (links.ts).
  const links = new SampleLinks(registry, registryCacheMs);
  const linkedCallSetLists = new WeakMap<Set<string>, VariantSetContext['callSets']>();

  /** The set's call sets as served, each with its biosampleId when a biosample of that name exists. */
  async function callSetsWithBiosamples(context: VariantSetContext): Promise<VariantSetContext['callSets']> {
    const { dataset_name: dataset, name, created_at } = context.row;
    const linked = await links.linked(dataset, ['variant set', name, created_at], context.callSets.map((c) => c.record.name));
    if (linked.size === 0) return context.callSets;
    let list = linkedCallSetLists.get(linked);
    if (!list) {
      list = context.callSets.map((c) =>
        linked.has(c.record.name) ? { ordinal: c.ordinal, record: { ...c.record, biosampleId: biosampleId(dataset, c.record.name) } } : c,
      );
      linkedCallSetLists.set(linked, list);
    }
    return list;
  }

  const rowOf = (datasetName: string, name: string) => setRows.get(JSON.stringify([datasetName, name]), () => getVariantSetRow(registry, datasetName, name));

  async function contextOf(datasetName: string, name: string, id: string): Promise<VariantSetContext> {
    const row = await rowOf(datasetName, name);
    if (!row) throw notFound('variant set', id);
    const key = `${datasetName}\0${name}`;
    const cached = contexts.get(key);
    // A set removed and added again has a new created_at: rebuild then.
    if (cached && cached.row.created_at === row.created_at) {
      contexts.delete(key);
      contexts.set(key, cached);
      return cached;
    }
    const [fileRows, sampleRows] = await Promise.all([
      listVariantSetFiles(registry, datasetName, name),
      listCallSets(registry, datasetName, name),
    ]);
    const record = toVariantSetRecord(row);
    const callSets = sampleRows.map((r) => ({ ordinal: r.ordinal, record: toCallSetRecord(r) }));
    const names = callSets.map((c) => c.record.name);
    const context: VariantSetContext = {
      row,
      record,
      callSets,
      files: fileRows.map(setFileOf),
      sampleOrdinal: new Map(names.map((n, i) => [n, i])),
      writer: new VariantWriter(
        datasetName,
        name,
        record.id,
        { names, ids: callSets.map((c) => c.record.id) },
        fieldTypesOf(JSON.parse(row.metadata) as MetadataEntry[]),
      ),
    };
    contexts.set(key, context);
    if (contexts.size > CONTEXT_CACHE_SIZE) contexts.delete(contexts.keys().next().value!);
    return context;
  }

  async function contextOfId(id: string): Promise<VariantSetContext> {
    const [datasetName, kind, name] = decodeId(id, IdKinds.variantSet);
    if (kind !== 'vs') throw notFound('variant set', id);
    return contextOf(datasetName, name, id);
  }

  /**
   * Where the record after a page's last one lies in its file, by that page's last position: the
   * index only knows 16 kb windows, which in a 2,504-sample cohort hold ~5 MB of text to inflate and
   * skip before the next page could begin (~15% of the server's time for paged reads).
   */
  const resumePoints = new Map<string, RecordPlace>();
  // The query's fingerprint is part of the key: which record follows depends on the window too.
  const resumeKey = (context: VariantSetContext, fingerprint: string, position: RecordPosition) =>
    `${context.row.created_at}\0${fingerprint}\0${position.join(',')}`;

  function rememberResumePoint(key: string, point: RecordPlace): void {
    resumePoints.set(key, point);
    if (resumePoints.size > RESUME_POINTS) resumePoints.delete(resumePoints.keys().next().value!);
  }

  /**
   * The reader a page stopped with, kept open at its look-ahead record under the resume key, so the
   * next page of the query goes on reading where it is: a page begun from a resume point reads the
   * file again and inflates again the ~0.3 MB of text its record lies in, ~1 ms of a page worker's
   * ~6 ms per 8 MB page in P1. Taken by one page only; others use the resume point.
   */
  const parkedReaders = new Map<string, ParkedReader>();

  function parkReader(key: string, reader: ParkedReader): void {
    const replaced = parkedReaders.get(key);
    parkedReaders.delete(key);
    parkedReaders.set(key, reader);
    if (replaced) void replaced.records.return(undefined);
    if (parkedReaders.size > PARKED_READERS) {
      const [oldest, old] = parkedReaders.entries().next().value!;
      parkedReaders.delete(oldest);
      void old.records.return(undefined);
    }
  }

  function takeParkedReader(key: string): ParkedReader | undefined {
    const reader = parkedReaders.get(key);
    parkedReaders.delete(key);
    return reader;
  }

  /**
   * The variants of a reference in result order, each with its position, after `after` when given
   * (reading from `point` when known: the record that follows `after`), with the sample columns of
   * `samples` (the others a BCF does not decode).
   */
  const variantsOf = (
    context: VariantSetContext,
    referenceName: string,
    start: number,
    end: number,
    samples: number[] | 'all',
    after?: RecordPosition,
    point?: RecordPlace,
  ) => recordsInOrder(files, context.files, context.row.created_at, referenceName, start, end, after, point, samples);

  /** A failure to read a set's files is the server's (503), named by set; the cause is for the log. */
  const unreadable = (context: VariantSetContext, error: unknown) =>
    GAException.unreadable(`the ${context.files[0]?.format ?? 'VCF'} files`, `variant set '${context.row.name}'`, error);

  /** The sample columns a callSetIds list asks for, in call-set order; 404 for an id of another set. */
  function samplesOf(context: VariantSetContext, ids: string[] | undefined): number[] | 'all' {
    if (ids === undefined) return 'all';
    const chosen = new Set<number>();
    for (const id of ids) {
      const [datasetName, kind, setName, sample] = decodeId(id, IdKinds.callSet);
      const ordinal = context.sampleOrdinal.get(sample);
      if (kind !== 'vs' || datasetName !== context.row.dataset_name || setName !== context.row.name || ordinal === undefined) {
        throw new GAException('notFound', `call set '${id}' in field 'callSetIds' is not a call set of variant set '${context.record.id}'`);
      }
      chosen.add(ordinal);
    }
    return [...chosen].sort((a, b) => a - b);
  }

  return {
    async searchVariantSets(request: { datasetId: string } & PageQuery): Promise<SearchPage<VariantSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('variantsets', request, limits, isString);
      const datasetName = await datasetNameOf(registry, request.datasetId);
      const rows = await listVariantSets(registry, datasetName, after, pageSize + 1);
      return keysetPage(rows, pageSize, fingerprint, toVariantSetRecord, (r) => r.name);
    },

    getVariantSet: async (id: string) => (await contextOfId(id)).record,

    /**
     * When the variant set an id names was registered, as the registry cache knows it ('' when it is
     * not registered): what a page of its variants depends on in the registry.
     */
    async registrationOf(variantSetId: string): Promise<string> {
      const [datasetName, kind, name] = decodeId(variantSetId, IdKinds.variantSet);
      return (kind === 'vs' && (await rowOf(datasetName, name))?.created_at) || '';
    },

    async searchCallSets(
      request: { variantSetId: string; name?: string; biosampleId?: string } & PageQuery,
    ): Promise<SearchPage<CallSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('callsets', request, limits, isNonNegativeInteger);
      const context = await contextOfId(request.variantSetId);
      const callSets = await callSetsWithBiosamples(context);
      const from = after === undefined ? 0 : after + 1; // ordinals are the VCF columns: 0, 1, 2, ...
      // null: a biosample of another dataset, the biosample of none of these call sets.
      const biosample = request.biosampleId !== undefined ? (biosampleNameIn(context.row.dataset_name, request.biosampleId) ?? null) : undefined;
      const rows =
        request.name !== undefined || biosample !== undefined
          ? callSets
              .filter(
                (c) =>
                  c.ordinal >= from &&
                  (request.name === undefined || c.record.name === request.name) &&
                  (biosample === undefined || (c.record.name === biosample && c.record.biosampleId !== undefined)),
              )
              .slice(0, pageSize + 1)
          : callSets.slice(from, from + pageSize + 1);
      return keysetPage(rows, pageSize, fingerprint, (c) => c.record, (c) => c.ordinal);
    },

    async getCallSet(id: string): Promise<CallSetRecord> {
      const [datasetName, kind, setName, sample] = decodeId(id, IdKinds.callSet);
      const row =
        kind === 'vs'
          ? await callSetRows.get(JSON.stringify([datasetName, setName, sample]), () => getCallSetRow(registry, datasetName, setName, sample))
          : undefined;
      if (!row) throw notFound('call set', id);
      const linked = (await links.linked(datasetName, ['sample', sample], [sample])).has(sample);
      const record = toCallSetRecord(row);
      return linked ? { ...record, biosampleId: biosampleId(datasetName, sample) } : record;
    },

    /**
     * Checks the request and opens the set (every 400 and 404 happens here, before any text is
     * written), then returns the page as a stream.
     */
    async searchVariants(request: SearchVariantsQuery): Promise<JsonStream> {
      const { pageSize, fingerprint, after } = keysetCursor('variants', request, limits, isRecordPosition);
      const { start, end } = searchWindow(request);
      const context = await contextOfId(request.variantSetId);
      const samples = samplesOf(context, request.callSetIds);
      const budget = limits.pageByteBudget;
      const response = SearchVariantsResponse;

      // The first record is read before anything is written, so that an unreadable file is a 503
      // rather than a reply cut short.
      const key = after && resumeKey(context, fingerprint, after);
      const parked = key ? takeParkedReader(key) : undefined;
      const point = !parked && key ? resumePoints.get(key) : undefined;
      const variants = parked?.records ?? variantsOf(context, request.referenceName, start, end, samples, after, point);
      const first =
        parked?.next ??
        (await variants.next().catch((e) => {
          throw unreadable(context, e);
        }));

      return {
        async write(sink, form) {
          const out = ByteChunks.forPage();
          out.text('{' + response.listKey[form] + ':[');
          let written = 0;
          let bytes = 0;
          let last: RecordPosition | undefined;
          let more = false;
          let pauseAt = PAUSE_BYTES;
          try {
            for (let next = first; !next.done; next = await variants.next()) {
              const { record, position } = next.value;
              if (written === pageSize || (written > 0 && bytes >= budget)) {
                more = true; // look-ahead: a record follows the last one written
                if (last) {
                  const key = resumeKey(context, fingerprint, last);
                  if (position[0] === last[0]) rememberResumePoint(key, { offset: record.offset, start: record.start, atStart: position[2] });
                  parkReader(key, { records: variants, next });
                }
                break;
              }
              if (written) out.text(',');
              const before = out.total;
              context.writer.write(record, samples, form, out);
              bytes += out.total - before;
              written++;
              last = position;
              if (out.total >= pauseAt && sink.pause) {
                pauseAt = out.total + PAUSE_BYTES;
                await sink.pause();
              }
            }
          } catch (e) {
            throw unreadable(context, e);
          } finally {
            // A page with a next one left its reader for that page (parkReader); any other closes it.
            if (!(more && last)) await variants.return(undefined);
          }
          let closing = ']';
          if (more && last) closing += ',' + response.tokenKey[form] + ':' + JSON.stringify(encodePageToken(fingerprint, last));
          out.text(closing + '}');
          // The page is held until it is complete and only then handed to the sink (the status goes
          // out with its first byte): a damaged block met halfway is a 503, never a 200 cut short. The
          // byte budget bounds what is held.
          for (const chunk of out.finish()) await sink.write(chunk);
        },
      };
    },

    /** Finds the variant an id names (404 when it is gone) and returns it, with every call, as a stream. */
    async getVariant(id: string): Promise<JsonStream> {
      const [datasetName, kind, setName, referenceName, startText, digest] = decodeId(id, IdKinds.variant);
      const start = Number(startText);
      if (kind !== 'vs' || !isNonNegativeInteger(start) || String(start) !== startText) throw notFound('variant', id);
      const context = await contextOf(datasetName, setName, id).catch(() => {
        throw notFound('variant', id);
      });
      let found: VariantRecord | undefined;
      try {
        for await (const { record } of variantsOf(context, referenceName, start, start + 1, 'all')) {
          if (record.start !== start) continue;
          const [, , , ref, alt] = record.line.split('\t', 5);
          if (alleleDigest(ref, alt) === digest) {
            found = record;
            break;
          }
        }
      } catch (e) {
        throw unreadable(context, e);
      }
      if (found === undefined) throw notFound('variant', id);
      const record = found;
      return {
        async write(sink, form) {
          const out = new ByteChunks();
          context.writer.write(record, 'all', form, out);
          for (const chunk of out.finish()) await sink.write(chunk);
        },
      };
    },
  };
}

export type VariantService = ReturnType<typeof variantService>;
