/**
 * `repo add-phenotypeassociationset`: reads Monarch/CGD Turtle (OBAN associations) and turns it into
 * the records served, in one transaction. What is read, by predicate:
 *
 * - associations: subjects typed `OBAN:association`; `association_has_subject` (the genomic features),
 *   `association_has_object` (the phenotype), `RO:0002558` has-evidence (ECO terms), `dc:source`,
 *   `RO_has_environment` (drugs), `dc:description` / `rdfs:label` of the association; each evidence
 *   is described by the phenotype's quality (evidence.ts);
 * - phenotypes: their `rdf:type` (the phenotype term), `rdfs:label` (description), `BFO:0000159`
 *   has-quality (qualifiers; an HP term among them under Onset is the age of onset);
 * - features: `rdfs:label`, `rdf:type`, `faldo:location` (a region on a chromosome), `GENO:0000408`
 *   is-allele-of, and their other statements as attributes;
 * - labels of every term (`rdfs:label`), and the file's `owl:versionInfo`.
 */
import path from 'node:path';
import { encodeId, IdKinds } from '../../protocol/ids.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireDataset } from '../datasets/store.js';
import type { Ontology } from '../ontologies/ontology.js';
import { requireOntology } from '../ontologies/store.js';
import type {
  EnvironmentalContextRecord,
  EvidenceRecord,
  FeaturePhenotypeAssociationRecord,
  PhenotypeInstanceRecord,
  Term,
} from './messages.js';
import { deleteFeatureSet, insertFeatureSet, type NewFeature } from '../features/store.js';
import { addPhenotypeSet, removePhenotypeSet, type PhenotypeSetContent } from './store.js';
import { Graph, RDF_TYPE, readTurtle, turtleFiles, type RdfNode } from './turtle.js';
import { Curies } from './terms.js';
import { describedEvidence } from './evidence.js';

const OBO = 'http://purl.obolibrary.org/obo/';
const OBAN = 'http://purl.org/oban/';
const RDFS_LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';
const OWL = 'http://www.w3.org/2002/07/owl#';
const DC = 'http://purl.org/dc/elements/1.1/';
const DCTERMS = 'http://purl.org/dc/terms/';
const FALDO = 'http://biohackathon.org/resource/faldo#';

export const P = {
  association: OBAN + 'association',
  subject: OBAN + 'association_has_subject',
  object: OBAN + 'association_has_object',
  hasEvidence: OBO + 'RO_0002558',
  hasEnvironment: OBO + 'RO_has_environment',
  hasQuality: OBO + 'BFO_0000159',
  hasPhenotype: OBO + 'RO_0002200',
  alleleOf: OBO + 'GENO_0000408',
  chromosome: OBO + 'SO_0000340',
  label: RDFS_LABEL,
  sources: [DC + 'source', DCTERMS + 'source'],
  descriptions: [DC + 'description', DCTERMS + 'description'],
  versionInfo: OWL + 'versionInfo',
  location: FALDO + 'location',
  begin: FALDO + 'begin',
  end: FALDO + 'end',
  position: FALDO + 'position',
  reference: FALDO + 'reference',
  forward: FALDO + 'ForwardStrandPosition',
  reverse: FALDO + 'ReverseStrandPosition',
};

/** HPO's Onset (HP:0003674) and its former "Age of onset" id: qualifiers below them are ages of onset. */
export const ONSET_TERMS = ['HP:0003674', 'HP:0011007'];

/** A feature the associations name, as handed to the features area (one per association subject). */
export interface PhenotypeFeature {
  /** Stable key within the feature set: the subject's IRI. */
  key: string;
  name?: string;
  geneSymbol?: string;
  featureType?: Term;
  location?: { referenceName: string; start: number; end: number; strand?: 'POS_STRAND' | 'NEG_STRAND' };
  /** Other statements about the feature: predicate CURIE -> values (literals, or CURIEs of IRIs). */
  attributes: Record<string, string[]>;
}

export interface PhenotypeLoadOptions {
  name?: string;
  ontologies?: string[];
}

export interface LoadedPhenotypeSet {
  name: string;
  associations: number;
  phenotypes: number;
  features: PhenotypeFeature[];
}

/** Removes a phenotype association set and the feature set of its features, in one transaction. */
export async function unloadPhenotypeSet(registry: Registry, datasetName: string, name: string): Promise<void> {
  await removePhenotypeSet(registry, datasetName, name, (trx) => deleteFeatureSet(trx, datasetName, name));
}

function toNewFeature(feature: PhenotypeFeature): NewFeature {
  return {
    key: feature.key,
    referenceName: feature.location?.referenceName ?? null,
    start: feature.location?.start ?? null,
    end: feature.location?.end ?? null,
    strand: feature.location?.strand ?? 'STRAND_UNSPECIFIED',
    type: feature.featureType ? { termId: feature.featureType.termId ?? '', term: feature.featureType.term ?? '' } : null,
    name: feature.name ?? null,
    geneSymbol: feature.geneSymbol ?? null,
    parentKeys: [],
    attributes: Object.keys(feature.attributes).length ? feature.attributes : null,
  };
}

/** `cgd-test.ttl` -> `cgd-test`; a folder `cgd/` -> `cgd`. */
export const defaultSetName = (location: string) => path.basename(path.resolve(location)).replace(/\.ttl$/, '');

/** The feature id the associations of set `setName` give a subject: its feature set has the set's name. */
export const phenotypeFeatureId = (datasetName: string, setName: string, key: string) =>
  encodeId([datasetName, IdKinds.feature.tag, setName, key]);

const isOwlOrRdfsClass = (iri: string) => iri.startsWith(OWL) || iri.startsWith('http://www.w3.org/2000/01/rdf-schema#');

/** What one load makes of a graph: the rows to write and the features to register. */
export function buildContent(
  graph: Graph,
  target: { datasetName: string; setName: string; source: string },
  ontologies: Ontology[],
): { content: PhenotypeSetContent; features: PhenotypeFeature[] } {
  const { datasetName, setName } = target;
  const curies = new Curies(Object.fromEntries(graph.prefixes));
  const curieOf = (node: RdfNode) => (node.kind === 'iri' ? curies.toCurie(node.value) : node.value);
  const labelOf = (node: RdfNode): string | undefined => {
    const own = graph.first(node.value, P.label);
    if (own) return own.value;
    if (node.kind !== 'iri') return undefined;
    const id = curies.toCurie(node.value);
    for (const o of ontologies) {
      const t = o.term(id);
      if (t?.name) return t.name;
    }
    return undefined;
  };
  const termOf = (node: RdfNode): Term => ({ termId: curieOf(node), term: labelOf(node) });
  const firstOf = (subject: string, predicates: string[]) => predicates.map((p) => graph.first(subject, p)).find(Boolean);
  /** Types of a node that name a term, not OWL's own classes. */
  const typesOf = (subject: string) => graph.objects(subject, RDF_TYPE).filter((t) => t.kind === 'iri' && !isOwlOrRdfsClass(t.value));

  // The onset terms with their subclasses, from the first ontology that knows one; without such an
  // ontology every HP quality is taken for an onset.
  const hpo = ontologies.find((o) => ONSET_TERMS.some((t) => o.term(t)));
  const onsets = hpo && new Set(ONSET_TERMS.flatMap((t) => hpo.withSubclasses(t)));
  const isOnset = (termId: string) => termId.startsWith('HP:') && (!onsets || onsets.has(termId));

  const phenotypes = new Map<string, { row: PhenotypeSetContent['phenotypes'][number]; record: PhenotypeInstanceRecord }>();
  const phenotypeOf = (node: RdfNode) => {
    let done = phenotypes.get(node.value);
    if (done) return done;
    const type = typesOf(node.value)[0];
    const qualities = graph.objects(node.value, P.hasQuality).filter((q) => q.kind === 'iri');
    const onset = qualities.find((q) => isOnset(curies.toCurie(q.value)));
    const qualifiers = qualities.filter((q) => q !== onset);
    const description = graph.first(node.value, P.label)?.value ?? firstOf(node.value, P.descriptions)?.value;
    const record: PhenotypeInstanceRecord = {
      id: node.value,
      type: type && termOf(type),
      qualifier: qualifiers.length ? qualifiers.map(termOf) : undefined,
      ageOfOnset: onset && termOf(onset),
      description,
    };
    done = {
      record,
      row: {
        id: node.value,
        description: description ?? null,
        type_id: record.type?.termId ?? null,
        age_of_onset_id: record.ageOfOnset?.termId ?? null,
        qualifier_ids: JSON.stringify((record.qualifier ?? []).map((q) => q.termId)),
        record: JSON.stringify(record),
      },
    };
    phenotypes.set(node.value, done);
    return done;
  };

  const features = new Map<string, PhenotypeFeature>();
  const featureOf = (node: RdfNode): PhenotypeFeature => {
    let feature = features.get(node.value);
    if (feature) return feature;
    const labels = graph.objects(node.value, P.label).map((l) => l.value);
    const gene = graph.objects(node.value, P.alleleOf)[0];
    const attributes: Record<string, string[]> = {};
    for (const [predicate, objects] of graph.predicates(node.value)) {
      if (predicate === RDF_TYPE || predicate === P.location || predicate === P.hasPhenotype) continue;
      const values = predicate === P.label ? labels.slice(1) : objects.map(curieOf);
      if (values.length) attributes[curies.toCurie(predicate)] = values;
    }
    const type = typesOf(node.value)[0];
    feature = {
      key: node.value,
      name: labels[0],
      geneSymbol: gene && gene.kind === 'iri' ? graph.first(gene.value, P.label)?.value : undefined,
      featureType: type && termOf(type),
      location: locationOf(graph, node.value),
      attributes,
    };
    features.set(node.value, feature);
    return feature;
  };

  const associations: PhenotypeSetContent['associations'] = [];
  for (const id of graph.subjectsOfType(P.association)) {
    const subjects = graph.objects(id, P.subject).filter((s) => s.kind !== 'literal');
    const objects = graph.objects(id, P.object).filter((o) => o.kind !== 'literal');
    if (subjects.length === 0) throw new UserError(`${target.source}: association ${id} has no subject (OBAN:association_has_subject)`);
    if (objects.length !== 1) {
      throw new UserError(`${target.source}: association ${id} has ${objects.length} objects (OBAN:association_has_object); one phenotype is expected`);
    }
    const phenotype = phenotypeOf(objects[0]);
    const featureKeys = subjects.map((s) => featureOf(s).key);
    const sources = P.sources.flatMap((p) => graph.objects(id, p)).map((s) => s.value);
    const evidenceTypes = graph.objects(id, P.hasEvidence).filter((e) => e.kind === 'iri');
    const evidence: EvidenceRecord[] = (evidenceTypes.length ? evidenceTypes : [undefined]).map((type) => ({
      evidenceType: type && termOf(type),
      info: sources.length ? { source: sources } : undefined,
    }));
    const environments = graph.objects(id, P.hasEnvironment).filter((e) => e.kind === 'iri');
    const environmentalContexts: EnvironmentalContextRecord[] = environments.map((e) => ({
      id: e.value,
      environmentType: termOf(e),
      description: labelOf(e),
    }));
    const record: FeaturePhenotypeAssociationRecord = {
      id,
      phenotypeAssociationSetId: encodeId([datasetName, IdKinds.phenotypeAssociationSet.tag, setName]),
      featureIds: featureKeys.map((k) => phenotypeFeatureId(datasetName, setName, k)),
      evidence: describedEvidence(evidence, phenotype.record, curies),
      phenotype: phenotype.record,
      description: firstOf(id, P.descriptions)?.value ?? graph.first(id, P.label)?.value,
      environmentalContexts: environmentalContexts.length ? environmentalContexts : undefined,
    };
    const externalIds = new Set<string>();
    for (const iri of [...environments.map((e) => e.value), ...evidenceTypes.map((e) => e.value), ...sources]) {
      externalIds.add(iri);
      externalIds.add(curies.toCurie(iri));
    }
    associations.push({
      id,
      phenotype_id: phenotype.row.id,
      external_ids: JSON.stringify([...externalIds]),
      record: JSON.stringify(record),
      featureKeys,
    });
  }
  if (associations.length === 0) {
    throw new UserError(`${target.source}: no OBAN associations (subjects of type ${P.association}) found`);
  }

  const labels = new Map<string, string>();
  for (const subject of graph.subjectsWithPredicate(P.label)) {
    if (subject.startsWith('_:')) continue;
    const id = curies.toCurie(subject);
    if (!labels.has(id)) labels.set(id, graph.first(subject, P.label)!.value);
  }
  const versionInfo = graph.subjectsOfType(OWL + 'Ontology').map((s) => graph.first(s, P.versionInfo)?.value).find(Boolean);

  return {
    features: [...features.values()],
    content: {
      set: {
        dataset_name: datasetName,
        name: setName,
        source: target.source,
        version: versionInfo ?? null,
        prefixes: JSON.stringify(Object.fromEntries(graph.prefixes)),
        association_count: associations.length,
        phenotype_count: phenotypes.size,
        feature_count: features.size,
      },
      ontologies: ontologies.map((o) => o.name),
      phenotypes: [...phenotypes.values()].map((p) => p.row),
      associations,
      labels: [...labels].map(([termId, label]) => ({ termId, label })),
    },
  };
}

/**
 * The first `faldo:location` that is a region on a chromosome (a reference typed SO:0000340) with one
 * begin and one end position. FALDO positions are 1-based and inclusive; the feature is 0-based,
 * half-open. Regions on proteins or transcripts, or with several begins, are not a genomic location.
 */
function locationOf(graph: Graph, subject: string): PhenotypeFeature['location'] {
  for (const region of graph.objects(subject, P.location)) {
    const begins = graph.objects(region.value, P.begin);
    const ends = graph.objects(region.value, P.end);
    if (begins.length !== 1 || ends.length !== 1) continue;
    const position = (node: RdfNode) => {
      const p = graph.objects(node.value, P.position);
      return p.length === 1 && /^\d+$/.test(p[0].value) ? Number(p[0].value) : undefined;
    };
    const begin = position(begins[0]);
    const end = position(ends[0]);
    const references = graph.objects(begins[0].value, P.reference);
    if (begin === undefined || end === undefined || references.length !== 1 || end < begin) continue;
    const reference = references[0].value;
    if (!graph.objects(reference, RDF_TYPE).some((t) => t.value === P.chromosome)) continue;
    // "chr4 (hg19)" -> chr4; without a label, the last part of the IRI.
    const label = graph.first(reference, P.label)?.value.trim().split(/\s+/)[0];
    const referenceName = label || reference.replace(/^.*[/#:]/, '');
    const types = graph.objects(begins[0].value, RDF_TYPE).map((t) => t.value);
    const strand = types.includes(P.forward) ? 'POS_STRAND' : types.includes(P.reverse) ? 'NEG_STRAND' : undefined;
    // A position 0 (seen in test data) is read as the start of the reference.
    return { referenceName, start: Math.max(0, begin - 1), end, strand };
  }
  return undefined;
}

/** Reads PATH (a Turtle file or a folder of them) and registers it as a phenotype association set. */
export async function loadPhenotypeSet(
  registry: Registry,
  datasetName: string,
  location: string,
  options: PhenotypeLoadOptions = {},
): Promise<LoadedPhenotypeSet> {
  const setName = options.name ?? defaultSetName(location);
  if (!setName.trim()) throw new UserError('a phenotype association set name must not be empty');
  await requireDataset(registry, datasetName);
  const ontologies: Ontology[] = [];
  for (const name of [...new Set(options.ontologies ?? [])]) ontologies.push(await requireOntology(registry, name));
  const files = await turtleFiles(location);
  const graph = await readTurtle(files);
  const { content, features } = buildContent(graph, { datasetName, setName, source: location }, ontologies);
  // The features the associations name become a feature set of the same name, so their ids resolve
  // through /features/{id} and /features/search (written in the same transaction).
  await addPhenotypeSet(registry, content, async (trx) => {
    await insertFeatureSet(
      registry,
      trx,
      {
        datasetName,
        name: setName,
        referenceSetName: null,
        ontologyName: ontologies[0]?.name ?? null,
        sourceUri: null,
        attributes: null,
        source: location,
      },
      features.map(toNewFeature),
    );
  });
  return { name: setName, associations: content.associations.length, phenotypes: content.phenotypes.length, features };
}
