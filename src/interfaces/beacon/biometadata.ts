/**
 * Individuals and biosamples as Beacon records (default model `individuals` and `biosamples`), from
 * the bio-metadata area's rows, with the ontology terms and fields filters are tested against.
 *
 * - An individual's `sex` is its 0.6.0a10 `sex` term (`NCIT:C17998`, unknown, without one); its
 *   `diseases` are the `disease` terms of its biosamples (0.6.0a10 puts a disease on the biosample).
 * - A biosample's `histologicalDiagnosis` is its `disease`; `sampleOriginType` and `biosampleStatus`,
 *   which 0.6.0a10 lacks, are the CURIEs of its attributes of those names (`UBERON:0000178`), unknown
 *   without them; `collectionMoment` is `individualAgeAtCollection.age`.
 * - Names, descriptions and attributes are kept under `info`; alphanumeric filters compare them.
 * Ids are the 0.6.0a10 ids of the records.
 */
import type { BioFields } from '../../areas/biometadata/messages.js';
import { biosampleId, individualId } from '../../areas/biometadata/service.js';
import { listBiosamples, listIndividuals, type BiosampleRow, type IndividualRow } from '../../areas/biometadata/store.js';
import type { AttributesRecord } from '../../protocol/common.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';

export interface Term {
  id: string;
  label?: string;
}

export const UNKNOWN: Term = { id: 'NCIT:C17998', label: 'Unknown' };
const CURIE = /^\w[^:]+:.+$/;

/** What a filter tests an individual or biosample by: its own terms and its fields' values. */
export interface BioEntry {
  kind: 'individual' | 'biosample';
  name: string;
  id: string;
  /** Ontology terms it carries, by id (the unknown term left out: no filter means it). */
  terms: Map<string, Term>;
  /** Values of its fields (name, description, each attribute), for alphanumeric filters. */
  fields: Map<string, string[]>;
  record: Record<string, unknown>;
}

export interface IndividualEntry extends BioEntry {
  kind: 'individual';
  biosamples: string[];
}

export interface BiosampleEntry extends BioEntry {
  kind: 'biosample';
  individual?: string;
}

/** A dataset's individuals and biosamples, by name. */
export interface BioEntries {
  individuals: Map<string, IndividualEntry>;
  biosamples: Map<string, BiosampleEntry>;
}

const termOf = (t: { termId?: string; term?: string } | undefined): Term | undefined =>
  t?.termId && CURIE.test(t.termId) ? { id: t.termId, ...(t.term ? { label: t.term } : {}) } : undefined;

/** The values of each attribute, as text. */
function attributeValues(attributes: AttributesRecord | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, { values }] of Object.entries(attributes?.attr ?? {})) {
    const texts = values.flatMap((v) => Object.values(v).filter((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean').map(String));
    out.set(key, texts);
  }
  return out;
}

function fieldsOf(name: string, fields: BioFields): Map<string, string[]> {
  const out = attributeValues(fields.attributes);
  out.set('name', [name]);
  if (fields.description) out.set('description', [fields.description]);
  return out;
}

const info = (name: string, fields: BioFields) => ({
  name,
  ...(fields.description ? { description: fields.description } : {}),
  ...(fields.attributes ? { attributes: fields.attributes } : {}),
});

function biosampleEntry(row: BiosampleRow): BiosampleEntry {
  const fields = JSON.parse(row.fields) as BioFields;
  const attributes = attributeValues(fields.attributes);
  const attributeTerm = (key: string): Term | undefined => {
    const value = attributes.get(key)?.[0];
    return value && CURIE.test(value) ? { id: value } : undefined;
  };
  const diagnosis = termOf(fields.disease);
  const origin = attributeTerm('sampleOriginType');
  const status = attributeTerm('biosampleStatus');
  const record: Record<string, unknown> = { id: biosampleId(row.dataset_name, row.name), biosampleStatus: status ?? UNKNOWN, sampleOriginType: origin ?? UNKNOWN };
  if (row.individual_name !== null) record.individualId = individualId(row.dataset_name, row.individual_name);
  if (diagnosis) record.histologicalDiagnosis = diagnosis;
  if (fields.individualAgeAtCollection?.age) record.collectionMoment = fields.individualAgeAtCollection.age;
  if (fields.description) record.notes = fields.description;
  record.info = info(row.name, fields);
  const terms = new Map<string, Term>();
  for (const t of [diagnosis, origin, status]) if (t) terms.set(t.id, t);
  return { kind: 'biosample', name: row.name, id: record.id as string, terms, fields: fieldsOf(row.name, fields), record, individual: row.individual_name ?? undefined };
}

function individualEntry(row: IndividualRow, biosamples: BiosampleEntry[]): IndividualEntry {
  const fields = JSON.parse(row.fields) as BioFields;
  const sex = termOf(fields.sex);
  const diseases = new Map<string, Term>();
  for (const b of biosamples) {
    const d = b.record.histologicalDiagnosis as Term | undefined;
    if (d) diseases.set(d.id, d);
  }
  const record: Record<string, unknown> = { id: individualId(row.dataset_name, row.name), sex: sex ?? UNKNOWN };
  if (diseases.size) record.diseases = [...diseases.values()].map((diseaseCode) => ({ diseaseCode }));
  record.info = { ...info(row.name, fields), ...(fields.species ? { species: fields.species } : {}) };
  const terms = new Map(diseases);
  if (sex) terms.set(sex.id, sex);
  return { kind: 'individual', name: row.name, id: record.id as string, terms, fields: fieldsOf(row.name, fields), record, biosamples: biosamples.map((b) => b.name) };
}

/** A dataset's individuals and biosamples, read for the registry cache time. */
export class BioMetadata {
  private readonly entries: RegistryCache<BioEntries>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.entries = new RegistryCache(cacheMs, 1000);
  }

  async of(datasetName: string): Promise<BioEntries> {
    return (await this.entries.get(datasetName, async () => {
      const [individualRows, biosampleRows] = await Promise.all([listIndividuals(this.registry, { datasetName }), listBiosamples(this.registry, { datasetName })]);
      const biosamples = new Map(biosampleRows.map((r) => [r.name, biosampleEntry(r)]));
      const individuals = new Map(
        individualRows.map((r) => [r.name, individualEntry(r, [...biosamples.values()].filter((b) => b.individual === r.name))]),
      );
      return { individuals, biosamples };
    }))!;
  }
}
