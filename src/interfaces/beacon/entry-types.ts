/**
 * The entry types this beacon serves (default model's `beaconConfiguration.json`): genomic variants,
 * individuals, biosamples and datasets, with their paths, their schemas and the lookups between them
 * that the map declares (`/beacon/individuals/{id}/g_variants`, ...).
 */
import { badRequest } from './errors.js';

const MODEL = 'https://raw.githubusercontent.com/ga4gh-beacon/beacon-v2/main/models/json/beacon-v2-default-model';

export type EntryTypeId = 'genomicVariant' | 'individual' | 'biosample' | 'dataset';

export interface SchemaReference {
  id: string;
  name: string;
  referenceToSchemaDefinition: string;
  schemaVersion: string;
}

export interface EntryType {
  id: EntryTypeId;
  name: string;
  /** Under /beacon. */
  path: string;
  description: string;
  ontologyTermForThisType: { id: string; label: string };
  defaultSchema: SchemaReference;
  additionallySupportedSchemas: SchemaReference[];
  /** The entry types reachable from one entry of this type, by the path segment that follows its id. */
  lookups: EntryTypeId[];
  /** The entry types a collection of this type holds. */
  collectionOf?: EntryTypeId[];
}

/** Variants as VRS 1.3 Alleles (asked for in `requestedSchemas`), instead of the legacy form. */
export const VRS_ALLELE_SCHEMA: SchemaReference = {
  id: 'ga4gh-vrs-allele-v1.3',
  name: 'Genomic variations with their variation as a GA4GH VRS 1.3 Allele',
  referenceToSchemaDefinition: 'https://raw.githubusercontent.com/ga4gh/vrs/1.3/schema/vrs.json',
  schemaVersion: 'v1.3',
};

const schema = (id: string, name: string, folder: string): SchemaReference => ({
  id,
  name,
  referenceToSchemaDefinition: `${MODEL}/${folder}/defaultSchema.json`,
  schemaVersion: 'v2.0.0',
});

export const ENTRY_TYPES: Record<EntryTypeId, EntryType> = {
  genomicVariant: {
    id: 'genomicVariant',
    name: 'Genomic Variants',
    path: 'g_variants',
    description: 'The alleles of the registered VCF files: one variant per alternate allele of a line, with the calls that carry it.',
    ontologyTermForThisType: { id: 'ENSGLOSSARY:0000092', label: 'Variant' },
    defaultSchema: schema('ga4gh-beacon-variant-v2.0.0', 'Default schema for a genomic variation', 'genomicVariations'),
    additionallySupportedSchemas: [VRS_ALLELE_SCHEMA],
    lookups: ['biosample', 'individual'],
  },
  individual: {
    id: 'individual',
    name: 'Individual',
    path: 'individuals',
    description: 'The registered individuals, with the diseases of their biosamples.',
    ontologyTermForThisType: { id: 'NCIT:C25190', label: 'Person' },
    defaultSchema: schema('ga4gh-beacon-individual-v2.0.0', 'Default schema for an individual', 'individuals'),
    additionallySupportedSchemas: [],
    lookups: ['biosample', 'genomicVariant'],
  },
  biosample: {
    id: 'biosample',
    name: 'Biological Sample',
    path: 'biosamples',
    description: 'The registered biosamples; a VCF sample column of the same name in the same dataset is its call set.',
    ontologyTermForThisType: { id: 'NCIT:C70699', label: 'Biospecimen' },
    defaultSchema: schema('ga4gh-beacon-biosample-v2.0.0', 'Default schema for a biological sample', 'biosamples'),
    additionallySupportedSchemas: [],
    lookups: ['genomicVariant'],
  },
  dataset: {
    id: 'dataset',
    name: 'Dataset',
    path: 'datasets',
    description: 'The registered datasets; every answer has one result set per dataset.',
    ontologyTermForThisType: { id: 'NCIT:C47824', label: 'Data set' },
    defaultSchema: schema('ga4gh-beacon-dataset-v2.0.0', 'Default schema for datasets', 'datasets'),
    additionallySupportedSchemas: [],
    lookups: ['genomicVariant', 'individual', 'biosample'],
    collectionOf: ['genomicVariant', 'individual', 'biosample'],
  },
};

/** The entry type served at a path segment (`g_variants`), if any. */
export const entryTypeAt = (segment: string): EntryType | undefined => Object.values(ENTRY_TYPES).find((e) => e.path === segment);

/** `entryTypes` of the configuration and of `/beacon/entry_types`. */
export function entryTypeDefinitions(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of Object.values(ENTRY_TYPES)) {
    out[e.id] = {
      id: e.id,
      name: e.name,
      description: e.description,
      ontologyTermForThisType: e.ontologyTermForThisType,
      partOfSpecification: 'Beacon v2.0.0',
      defaultSchema: e.defaultSchema,
      additionallySupportedSchemas: e.additionallySupportedSchemas,
      nonFilteredQueriesAllowed: true,
      ...(e.collectionOf ? { aCollectionOf: e.collectionOf.map((id) => ({ id, name: ENTRY_TYPES[id].name })) } : {}),
    };
  }
  return out;
}

const LOOKUP_NAMES: Record<EntryTypeId, string> = {
  genomicVariant: 'genomicVariantLookup',
  individual: 'individualLookup',
  biosample: 'biosampleLookup',
  dataset: 'datasetLookup',
};

/** `/beacon/map`'s endpoint sets, with absolute URLs from `root` (the beacon's own URL). */
export function endpointSets(root: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of Object.values(ENTRY_TYPES)) {
    const endpoints: Record<string, unknown> = {};
    for (const target of e.lookups) {
      endpoints[LOOKUP_NAMES[target]] = { returnedEntryType: target, url: `${root}/${e.path}/{id}/${ENTRY_TYPES[target].path}` };
    }
    out[`${e.id}Endpoints`] = {
      entryType: e.id,
      rootUrl: `${root}/${e.path}`,
      singleEntryUrl: `${root}/${e.path}/{id}`,
      filteringTermsUrl: `${root}/${e.path}/filtering_terms`,
      endpoints,
    };
  }
  return out;
}

/** The entity type names `requestedSchemas` may give an entry type by (the model's folder names among them). */
const ENTITY_NAMES: Record<EntryTypeId, string[]> = {
  genomicVariant: ['genomicvariant', 'genomicvariation', 'genomicvariations', 'g_variants'],
  individual: ['individual', 'individuals'],
  biosample: ['biosample', 'biosamples'],
  dataset: ['dataset', 'datasets'],
};

/**
 * The schema an answer's records of `entry` are written in: the one `requestedSchemas` names for it
 * (by id, or by the URL of its definition), else the default. An entry of `requestedSchemas` for
 * another entity type is not about these records; a schema this beacon does not write is a 400.
 */
export function schemaFor(entry: EntryType, requested: Array<{ entityType?: string; schema?: string }>): SchemaReference {
  const supported = [entry.defaultSchema, ...entry.additionallySupportedSchemas];
  for (const { entityType, schema } of requested) {
    if (entityType !== undefined && !ENTITY_NAMES[entry.id].includes(entityType.toLowerCase())) continue;
    if (schema === undefined) continue;
    // The default schema's file in another copy of the model (a branch, a mirror) is the same schema.
    const modelFile = entry.defaultSchema.referenceToSchemaDefinition.slice(MODEL.length);
    const found = supported.find((s) => s.id === schema || s.referenceToSchemaDefinition === schema) ?? (schema.endsWith(modelFile) ? entry.defaultSchema : undefined);
    if (!found) throw badRequest(`requestedSchemas: ${entry.id} records are written as ${supported.map((s) => s.id).join(' or ')}, not '${schema}'`);
    return found;
  }
  return entry.defaultSchema;
}
