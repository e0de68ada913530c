/**
 * The answers of the entry types: genomic variants, individuals, biosamples and datasets, for a
 * collection (`/beacon/individuals`), one entry (`/beacon/individuals/{id}`) or the entries of
 * another one (`/beacon/individuals/{id}/g_variants`, the lookups the map declares). Each reaches
 * its datasets through the access decision first (datasets.ts), then reads them, and answers one
 * result set per dataset at the granularity granted for it.
 */
import { IdKinds, namesOfId } from '../../protocol/ids.js';
import type { Reply } from '../../protocol/reply.js';
import type { Registry } from '../../registry/registry.js';
import { VariantAnnotations } from './annotations.js';
import { BioMetadata, type BioEntries, type BioEntry } from './biometadata.js';
import { Genes } from './genes.js';
import { BeaconDatasets, datasetRecord, type ReachedDataset } from './datasets.js';
import { ENTRY_TYPES, schemaFor, type EntryTypeId } from './entry-types.js';
import { badRequest, notFound } from './errors.js';
import { informationalMeta, requestSummaryOf, writeAnswer, type BeaconContext, type DatasetAnswer, type Handover } from './envelope.js';
import { biosampleMatches, FilterTerms, filterableOf, individualMatches, type ResolvedFilter, type Scope } from './filters.js';
import { GenomicVariants, type Hit, type SampleLimit } from './genomic-variants.js';
import { handoversOf } from './handovers.js';
import { variantIdOf, variantKeyOf } from './ids.js';
import type { BeaconRequest } from './request.js';
import { variantRecordWriter, type RecordPart } from './variant-records.js';
import { variantQueryOf } from './variant-query.js';
import { VariantSets } from './variant-sets.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON answer in pieces of text, built before any is sent (an error found halfway is an error, not a
 * 200 cut short). `large` ones (records with their calls) are streamed: they wait for one of the
 * server's slots for large replies and are written in slices, as other large replies are.
 */
export function jsonPieces(pieces: string[], large = false): Reply {
  if (!large) return { kind: 'bytes', chunks: () => pieces.map((p) => Buffer.from(p)) };
  return {
    kind: 'stream',
    async write(sink) {
      for (const piece of pieces) await sink.write(piece);
    },
  };
}

export const jsonDocument = (document: unknown): Reply => ({ kind: 'content', contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(document)) });

/** What an entry of each type is called in messages. */
const LABEL: Record<EntryTypeId, string> = { genomicVariant: 'genomic variant', individual: 'individual', biosample: 'biosample', dataset: 'dataset' };

/** Which entries an endpoint answers with: all of a collection, one by id, or those of another entry. */
export type Origin = { kind: 'all' } | { kind: 'entry'; id: string } | { kind: 'from'; type: EntryTypeId; id: string };

interface Reach {
  datasets: ReachedDataset[];
  warnings: Record<string, string[]>;
}

export class BeaconAnswers {
  private readonly datasets: BeaconDatasets;
  private readonly variantSets: VariantSets;
  private readonly variants: GenomicVariants;
  private readonly bio: BioMetadata;
  private readonly filters: FilterTerms;

  constructor(
    registry: Registry,
    cacheMs: number,
    private readonly context: BeaconContext,
    private readonly recordParts: RecordPart[] = [],
  ) {
    this.datasets = new BeaconDatasets(registry, cacheMs);
    this.variantSets = new VariantSets(registry, cacheMs);
    this.variants = new GenomicVariants(this.variantSets, new Genes(registry, cacheMs), new VariantAnnotations(registry, cacheMs));
    this.bio = new BioMetadata(registry, cacheMs);
    this.filters = new FilterTerms(registry, cacheMs);
  }

  get sets(): VariantSets {
    return this.variantSets;
  }

  /** The dataset an entry id belongs to, or undefined when the id names no entry of that type. */
  private datasetOfId(type: EntryTypeId, id: string): string | undefined {
    switch (type) {
      case 'dataset':
        return id;
      case 'genomicVariant':
        return variantKeyOf(id)?.datasetName;
      case 'individual':
        return namesOfId(id, IdKinds.individual)?.[0];
      case 'biosample':
        return namesOfId(id, IdKinds.biosample)?.[0];
    }
  }

  /** The datasets an endpoint reaches: the one its entry belongs to, else those the request names (every one). */
  private async reach(request: BeaconRequest, origin: Origin, type: EntryTypeId): Promise<Reach> {
    if (origin.kind === 'all') {
      const reached = await this.datasets.reached(request.requestedGranularity, request.datasetIds);
      return { datasets: reached.datasets, warnings: reached.unknownIds.length ? { unknownDatasetIds: reached.unknownIds } : {} };
    }
    const entryType = origin.kind === 'from' ? origin.type : type;
    const name = this.datasetOfId(entryType, origin.id);
    const dataset = name === undefined ? undefined : await this.datasets.one(request.requestedGranularity, name);
    if (!dataset) throw notFound(`no ${LABEL[entryType]} with id '${origin.id}'`);
    return { datasets: [dataset], warnings: {} };
  }

  /** The request's filters, resolved against the records of the datasets reached; unknown ones go into the warnings. */
  private async filtersOf(request: BeaconRequest, reach: Reach): Promise<ResolvedFilter[]> {
    if (!request.filters.length) return [];
    const entries = await Promise.all(reach.datasets.map((d) => this.bio.of(d.row.name)));
    const { resolved, unknown } = await this.filters.resolve(request.filters, entries);
    if (unknown.length) reach.warnings.unknownFilters = unknown;
    return resolved;
  }

  /** The sample columns of a set that stand for biosamples answering the filters (and among `names` when given). */
  private sampleLimit(entries: BioEntries, filters: ResolvedFilter[], names?: Set<string>): SampleLimit | undefined {
    if (!filters.length && !names) return undefined;
    return (set) => {
      const chosen = new Set<number>();
      set.samples.forEach((sample, s) => {
        if (names && !names.has(sample)) return;
        if (filters.length) {
          const biosample = entries.biosamples.get(sample);
          if (!biosample || !biosampleMatches(entries, biosample, filters)) return;
        }
        chosen.add(s);
      });
      return chosen;
    };
  }

  /** The variant an id names (404 when none), for the lookups from one variant. */
  private async hitOf(id: string): Promise<Hit> {
    const hit = await this.variants.byId(id);
    if (!hit) throw notFound(`no genomic variant with id '${id}'`);
    return hit;
  }

  /** Genomic variants: those a query finds (of the samples of an individual or biosample when asked from one), or the one an id names. */
  async genomicVariants(request: BeaconRequest, origin: Origin, base: string): Promise<Reply> {
    const entry = ENTRY_TYPES.genomicVariant;
    const schema = schemaFor(entry, request.requestedSchemas);
    const writeRecord = variantRecordWriter(schema, this.recordParts);
    // Each record written hands over to the htsget ticket of its region and its 0.6.0a10 record.
    const handovers: Handover[] = [];
    const write = (hit: Hit) => {
      handovers.push(...handoversOf(base, hit, variantIdOf(hit.key)));
      return writeRecord(hit);
    };
    const reach = await this.reach(request, origin, entry.id);
    const filters = await this.filtersOf(request, reach);
    const answers: DatasetAnswer[] = [];
    if (origin.kind === 'entry') {
      const hit = await this.hitOf(origin.id);
      const { row, granted } = reach.datasets[0];
      const limit = this.sampleLimit(await this.bio.of(row.name), filters);
      const allowed = limit?.(hit.set);
      const carried = !allowed || (hit.carriers ?? []).some((c) => allowed.has(c.sample));
      const shown = allowed ? { ...hit, carriers: hit.carriers?.filter((c) => allowed.has(c.sample)) } : hit;
      answers.push({ id: row.name, granted, exists: carried, count: carried ? 1 : 0, records: carried && granted === 'record' ? [write(shown)] : [] });
    } else {
      const query = variantQueryOf(request.parameters, request.form);
      for (const { row, granted } of reach.datasets) {
        const entries = await this.bio.of(row.name);
        let names: Set<string> | undefined;
        if (origin.kind === 'from' && origin.type === 'individual') {
          const individual = entries.individuals.get(namesOfId(origin.id, IdKinds.individual)![2]);
          if (!individual) throw notFound(`no individual with id '${origin.id}'`);
          names = new Set(individual.biosamples);
        } else if (origin.kind === 'from' && origin.type === 'biosample') {
          const name = namesOfId(origin.id, IdKinds.biosample)![2];
          if (!entries.biosamples.has(name)) throw notFound(`no biosample with id '${origin.id}'`);
          names = new Set([name]);
        }
        answers.push(await this.variants.answer(row.name, granted, query, request.pagination, write, this.sampleLimit(entries, filters, names)));
      }
    }
    const pieces = writeAnswer(this.context, answers, {
      request,
      returnedSchemas: [{ entityType: entry.id, schema: schema.id }],
      parametersKey: 'g_variant',
      warnings: reach.warnings,
      handovers,
    });
    return jsonPieces(pieces, answers.some((a) => a.records.length > 0));
  }

  /** The biosample names of the samples that carry a variant, in its dataset. */
  private async carriersOf(id: string): Promise<Set<string>> {
    const hit = await this.hitOf(id);
    return new Set((hit.carriers ?? []).map((c) => hit.set.samples[c.sample]));
  }

  /** Individuals or biosamples, one result set per dataset. */
  async bioEntries(request: BeaconRequest, origin: Origin, type: 'individual' | 'biosample'): Promise<Reply> {
    const entry = ENTRY_TYPES[type];
    const schema = schemaFor(entry, request.requestedSchemas);
    const reach = await this.reach(request, origin, type);
    const filters = await this.filtersOf(request, reach);
    const { skip, limit } = request.pagination;
    const answers: DatasetAnswer[] = [];
    for (const { row, granted } of reach.datasets) {
      const entries = await this.bio.of(row.name);
      const candidates = await this.candidates(entries, origin, type);
      const matched = candidates.filter((e) =>
        e.kind === 'individual' ? individualMatches(entries, e as never, filters) : biosampleMatches(entries, e as never, filters),
      );
      const records = granted === 'record' ? matched.slice(skip * limit, skip * limit + limit).map((e) => JSON.stringify(e.record)) : [];
      answers.push({ id: row.name, granted, exists: matched.length > 0, count: granted === 'boolean' ? Math.min(1, matched.length) : matched.length, records });
    }
    return jsonPieces(writeAnswer(this.context, answers, { request, returnedSchemas: [{ entityType: entry.id, schema: schema.id }], warnings: reach.warnings }));
  }

  /** The individuals or biosamples an endpoint starts from, before filters. */
  private async candidates(entries: BioEntries, origin: Origin, type: 'individual' | 'biosample'): Promise<BioEntry[]> {
    const all = type === 'individual' ? entries.individuals : entries.biosamples;
    if (origin.kind === 'all' || (origin.kind === 'from' && origin.type === 'dataset')) return [...all.values()];
    if (origin.kind === 'entry') {
      const names = namesOfId(origin.id, type === 'individual' ? IdKinds.individual : IdKinds.biosample);
      const found = names && all.get(names[2]);
      if (!found) throw notFound(`no ${type} with id '${origin.id}'`);
      return [found];
    }
    if (origin.type === 'individual') {
      const individual = entries.individuals.get(namesOfId(origin.id, IdKinds.individual)![2]);
      if (!individual) throw notFound(`no individual with id '${origin.id}'`);
      return individual.biosamples.map((n) => entries.biosamples.get(n)!);
    }
    if (origin.type === 'genomicVariant') {
      const biosamples = [...(await this.carriersOf(origin.id))].flatMap((n) => (entries.biosamples.has(n) ? [entries.biosamples.get(n)!] : []));
      if (type === 'biosample') return biosamples;
      const individuals = new Set(biosamples.flatMap((b) => (b.individual === undefined ? [] : [b.individual])));
      return [...individuals].flatMap((n) => (entries.individuals.has(n) ? [entries.individuals.get(n)!] : []));
    }
    throw badRequest(`/beacon/${ENTRY_TYPES[origin.type].path}/{id}/ does not lead to ${ENTRY_TYPES[type].path}`);
  }

  /** The datasets as a collection (beaconCollectionsResponse), or only whether they exist and how many. */
  async datasetCollection(request: BeaconRequest, id?: string): Promise<Reply> {
    if (request.filters.length) throw badRequest(`filters: datasets are not filtered; ask ${ENTRY_TYPES.individual.path} or ${ENTRY_TYPES.biosample.path} with filters and datasetIds`);
    const reached = await this.datasets.reached('record', id === undefined ? request.datasetIds : [id]);
    if (id !== undefined && reached.datasets.length === 0) throw notFound(`no dataset '${id}'`);
    const rows = reached.datasets.map((d) => d.row);
    const { skip, limit } = request.pagination;
    const granularity = request.requestedGranularity;
    const meta = {
      ...informationalMeta(this.context, [{ entityType: 'dataset', schema: ENTRY_TYPES.dataset.defaultSchema.id }]),
      returnedGranularity: granularity,
      receivedRequestSummary: requestSummaryOf(request),
    };
    const document: Record<string, unknown> = { meta, responseSummary: { exists: rows.length > 0, ...(granularity === 'boolean' ? {} : { numTotalResults: rows.length }) } };
    if (reached.unknownIds.length) document.info = { warnings: { unknownDatasetIds: reached.unknownIds } };
    if (granularity === 'record') document.response = { collections: rows.slice(skip * limit, skip * limit + limit).map(datasetRecord) };
    return jsonDocument(document);
  }

  /** What the records of the datasets a caller may see can be filtered on (`/beacon/filtering_terms`), of some entry types. */
  async filteringTerms(scopes: Scope[]): Promise<Reply> {
    const reached = await this.datasets.reached('boolean');
    const entries = await Promise.all(reached.datasets.map((d) => this.bio.of(d.row.name)));
    const { terms, fields } = filterableOf(entries, scopes);
    const filteringTerms: Array<Record<string, unknown>> = [];
    for (const { term, scopes: where } of terms.values()) {
      const label = term.label ?? (await this.filters.labelOf(term.id));
      filteringTerms.push({ type: 'ontologyTerm', id: term.id, ...(label ? { label } : {}), scopes: [...where] });
    }
    for (const [field, where] of fields) filteringTerms.push({ type: 'alphanumeric', id: field, scopes: [...where] });
    const resources = (await this.filters.ontologyList()).map(({ name }) => ({ id: name, name }));
    return jsonDocument({ meta: informationalMeta(this.context), response: { filteringTerms, resources } });
  }
}
