/**
 * How an association's evidence is described: by the phenotype's quality, as the reference server
 * wrote it (CGD qualifies each drug response, `decreased_sensitivity`, `resistance`, ...). Used at load
 * and by the migration that describes the evidence of sets loaded before.
 */
import type { EvidenceRecord, PhenotypeInstanceRecord } from './messages.js';
import type { Curies } from './terms.js';

/**
 * The evidence with each entry described by the label of the phenotype's first qualifier (the age of
 * onset is none): its label when the file or an ontology gives one, else the local part of its CURIE.
 * An association with no evidence type and no source gets one entry holding the description alone;
 * undefined when nothing is known at all.
 */
export function describedEvidence(
  evidence: EvidenceRecord[] | undefined,
  phenotype: PhenotypeInstanceRecord,
  curies: Curies,
): EvidenceRecord[] | undefined {
  const quality = phenotype.qualifier?.[0];
  const description = quality && (quality.term ?? (quality.termId !== undefined ? curies.localName(quality.termId) : undefined));
  const described = (evidence?.length ? evidence : [{}]).map((e) => (description ? { ...e, description } : e));
  return described.some((e) => e.evidenceType || e.description || e.info) ? described : undefined;
}
