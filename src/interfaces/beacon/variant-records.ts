/**
 * A hit as a Beacon genomic variation record (default model `genomicVariations/defaultSchema.json`):
 * its `variantInternalId`; its `variation` in the legacy form (variantType, referenceBases,
 * alternateBases, a VRS SequenceLocation), or as a VRS 1.3 Allele when `requestedSchemas` asks for
 * one; `identifiers` from the VCF ID column; `caseLevelData`, one per call that carries the allele,
 * with its zygosity and the biosample of its call set; `frequencyInPopulations` from the INFO fields
 * the operator named (`repo set-beacon-frequencies`); `molecularAttributes` from its VEP or SnpEff
 * annotations.
 */
import { VRS_ALLELE_SCHEMA, type SchemaReference } from './entry-types.js';
import { frequencyOf, zygosityOf, type Hit, type RecordWriter } from './genomic-variants.js';
import { variantIdOf } from './ids.js';

/** Extra parts of a record from other sources (molecularAttributes from the annotations). */
export type RecordPart = (hit: Hit) => Record<string, unknown> | undefined;

function sequenceLocation(sequenceId: string, start: number, end: number) {
  return {
    type: 'SequenceLocation',
    sequence_id: sequenceId,
    interval: { type: 'SequenceInterval', start: { type: 'Number', value: start }, end: { type: 'Number', value: end } },
  };
}

function legacyVariation(hit: Hit) {
  const { allele } = hit;
  return {
    variantType: allele.variantType,
    referenceBases: allele.referenceBases.toUpperCase(),
    // A symbolic allele (<DEL>) or a breakend has no bases to give: N, some sequence, as the schema allows.
    alternateBases: allele.sequence ? allele.alternate.toUpperCase() : 'N',
    location: sequenceLocation(hit.set.sequenceIdOf(hit.view.line.chrom), allele.start, allele.end),
  };
}

/**
 * A VRS 1.3 Allele: the bases REF and ALT begin and end with in common left out (the VCF's padding
 * base), without shifting the rest (no realignment). A symbolic deletion is the deleted bases
 * replaced by none; other symbolic alleles and breakends have no Allele form, and keep the legacy one.
 */
function vrsVariation(hit: Hit) {
  const { allele } = hit;
  const sequenceId = hit.set.sequenceIdOf(hit.view.line.chrom);
  if (allele.sequence) {
    let ref = allele.referenceBases.toUpperCase();
    let alt = allele.alternate.toUpperCase();
    let start = allele.start;
    while (ref.length && alt.length && ref[0] === alt[0]) {
      ref = ref.slice(1);
      alt = alt.slice(1);
      start++;
    }
    while (ref.length && alt.length && ref[ref.length - 1] === alt[alt.length - 1]) {
      ref = ref.slice(0, -1);
      alt = alt.slice(0, -1);
    }
    return { type: 'Allele', location: sequenceLocation(sequenceId, start, start + ref.length), state: { type: 'LiteralSequenceExpression', sequence: alt } };
  }
  if (allele.variantType === 'DEL' && allele.end > allele.start + 1) {
    return { type: 'Allele', location: sequenceLocation(sequenceId, allele.start + 1, allele.end), state: { type: 'LiteralSequenceExpression', sequence: '' } };
  }
  return legacyVariation(hit);
}

/** The VCF ID column's names: dbSNP ids as CURIEs with their page, others as they are. */
function identifiersOf(hit: Hit): Record<string, unknown> | undefined {
  const names = hit.view.line.id.split(';').filter((n) => n !== '.' && n !== '');
  if (!names.length) return undefined;
  return {
    variantAlternativeIds: names.map((name) =>
      /^rs\d+$/.test(name) ? { id: `dbSNP:${name}`, reference: `https://www.ncbi.nlm.nih.gov/snp/${name}` } : { id: name },
    ),
  };
}

function frequenciesOf(hit: Hit): unknown[] | undefined {
  const rows = hit.set.frequencies;
  if (!rows.length) return undefined;
  const frequencies = rows.flatMap((r) => {
    const value = frequencyOf(hit, r.info_field);
    return value === undefined ? [] : [{ population: r.population, alleleFrequency: value }];
  });
  if (!frequencies.length) return undefined;
  const { source, source_reference: sourceReference, version } = rows[0];
  return [{ source, sourceReference, ...(version === null ? {} : { version }), frequencies }];
}

/** The genes, effects and amino acid changes the set's annotations give the allele. */
function molecularAttributesOf(hit: Hit): Record<string, unknown> | undefined {
  const effects = hit.effects;
  if (!effects) return undefined;
  const out: Record<string, unknown> = {};
  if (effects.geneIds.length) out.geneIds = effects.geneIds;
  if (effects.molecularEffects.length) out.molecularEffects = effects.molecularEffects;
  if (effects.aminoacidChanges.length) out.aminoacidChanges = effects.aminoacidChanges;
  return Object.keys(out).length ? out : undefined;
}

function caseLevelDataOf(hit: Hit): unknown[] | undefined {
  if (!hit.carriers?.length) return undefined;
  return hit.carriers.map(({ sample, alleles }) => {
    const link = hit.set.links[sample];
    const entry: Record<string, unknown> = { biosampleId: link?.biosampleId ?? hit.set.samples[sample], zygosity: zygosityOf(alleles, hit.allele.index) };
    if (link?.individualId) entry.individualId = link.individualId;
    return entry;
  });
}

/** Writes hits as records of `schema` (the default or the VRS Allele one), with `parts` from other sources. */
export function variantRecordWriter(schema: SchemaReference, parts: RecordPart[] = []): RecordWriter {
  const variation = schema.id === VRS_ALLELE_SCHEMA.id ? vrsVariation : legacyVariation;
  return (hit) => {
    const record: Record<string, unknown> = { variantInternalId: variantIdOf(hit.key), variation: variation(hit) };
    const identifiers = identifiersOf(hit);
    if (identifiers) record.identifiers = identifiers;
    const molecular = molecularAttributesOf(hit);
    if (molecular) record.molecularAttributes = molecular;
    for (const part of parts) Object.assign(record, part(hit));
    const frequencies = frequenciesOf(hit);
    if (frequencies) record.frequencyInPopulations = frequencies;
    const cases = caseLevelDataOf(hit);
    if (cases) record.caseLevelData = cases;
    return JSON.stringify(record);
  };
}
