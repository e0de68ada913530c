/**
 * Genotype-phenotype association sets of a dataset; for one set, a phenotype search (description
 * pattern, type) and a feature-phenotype association search (features, phenotypes, evidence).
 */
import type { EvidenceQuery, Ga4ghClient, PhenotypeAssociationSet, SearchGenotypePhenotypeRequest, SearchPhenotypesRequest } from '../../../client/index.js';
import { h, jsonDetails, jsonLink, labelled, pagedTable } from '../dom.js';
import { idNames, numberInput, setsOfDataset, termsFrom, termsText, termText } from './common.js';
import type { View } from './view.js';

const listFrom = (text: string) => text.split(',').map((t) => t.trim()).filter(Boolean);

function setPanel(client: Ga4ghClient, set: PhenotypeAssociationSet): HTMLElement {
  const phenotypeAssociationSetId = set.id ?? '';
  // Phenotypes
  const description = h('input', { name: 'description', placeholder: 'e.g. carcinoma' });
  const type = h('input', { name: 'type', placeholder: 'e.g. DOID:3908 or a label' });
  const phenotypesPageSize = numberInput('Phenotypes per page', 'phenotypesPageSize', 20, { min: 1, max: 1000 });
  const phenotypesBox = h('div', { 'aria-live': 'polite' });
  // Associations
  const featureIds = h('input', { name: 'featureIds', placeholder: 'feature ids' });
  const phenotypeIds = h('input', { name: 'phenotypeIds', placeholder: 'phenotype IRIs' });
  const evidence = h('input', { name: 'evidence', placeholder: 'e.g. imatinib' });
  const associationsPageSize = numberInput('Associations per page', 'associationsPageSize', 20, { min: 1, max: 1000 });
  const associationsBox = h('div', { 'aria-live': 'polite' });

  const searchPhenotypes = () => {
    const request: SearchPhenotypesRequest = { phenotypeAssociationSetId, pageSize: Number(phenotypesPageSize.input.value) };
    if (description.value) request.description = description.value;
    const [typeTerm] = termsFrom(type.value);
    if (typeTerm) request.type = typeTerm;
    phenotypesBox.replaceChildren(
      pagedTable('Phenotypes', ['description', 'type', 'qualifiers', 'age of onset', 'id', 'record', 'associations'], client.searchPhenotypes(request), 'phenotypes', (items) =>
        items.map((p) => [
          p.description,
          termText(p.type),
          termsText(p.qualifier),
          termText(p.ageOfOnset),
          h('code', {}, p.id ?? ''),
          jsonDetails(p),
          h('button', { type: 'button', 'aria-label': `Associations of ${p.id}`, onclick: () => ((phenotypeIds.value = p.id ?? ''), (featureIds.value = evidence.value = ''), searchAssociations()) }, 'Associations'),
        ]),
      ),
    );
  };
  const searchAssociations = () => {
    const request: SearchGenotypePhenotypeRequest = { phenotypeAssociationSetId, pageSize: Number(associationsPageSize.input.value) };
    if (listFrom(featureIds.value).length) request.featureIds = listFrom(featureIds.value);
    if (listFrom(phenotypeIds.value).length) request.phenotypeIds = listFrom(phenotypeIds.value);
    if (evidence.value) request.evidence = [{ description: evidence.value } satisfies EvidenceQuery];
    associationsBox.replaceChildren(
      pagedTable('Feature-phenotype associations', ['phenotype', 'features', 'evidence', 'environments', 'description', 'record'], client.searchGenotypePhenotype(request), 'associations', (items) =>
        items.map((a) => [
          a.phenotype?.description ?? termText(a.phenotype?.type),
          h('span', {}, ...(a.featureIds ?? []).flatMap((id, i) => {
            // The feature's IRI, linked to its record (the association set's own feature set).
            const shown = jsonLink('features', id, idNames(id).at(-1) ?? id);
            return i ? [', ', shown] : [shown];
          })),
          termsText((a.evidence ?? []).map((e) => e.evidenceType ?? { term: e.description })),
          (a.environmentalContexts ?? []).map((c) => c.description ?? c.id).join(', '),
          a.description,
          jsonDetails(a),
        ]),
      ),
    );
  };
  const phenotypeForm = h(
    'form',
    { 'aria-label': `Phenotypes of ${set.name}`, onsubmit: (e: Event) => (e.preventDefault(), searchPhenotypes()) },
    labelled('Description (pattern)', description),
    labelled('Type (term or id)', type),
    phenotypesPageSize.field,
    h('button', { type: 'submit' }, 'Search phenotypes'),
  );
  const associationForm = h(
    'form',
    { 'aria-label': `Associations of ${set.name}`, onsubmit: (e: Event) => (e.preventDefault(), searchAssociations()) },
    labelled('Feature ids (comma-separated)', featureIds),
    labelled('Phenotype ids (comma-separated)', phenotypeIds),
    labelled('Evidence or environment (pattern)', evidence),
    associationsPageSize.field,
    h('button', { type: 'submit' }, 'Search associations'),
  );
  searchPhenotypes();
  return h('section', {}, h('h3', {}, `Association set ${set.name}`), h('h4', {}, 'Phenotypes'), phenotypeForm, phenotypesBox, h('h4', {}, 'Associations'), associationForm, associationsBox);
}

export const phenotypesView: View = {
  id: 'phenotypes',
  title: 'Phenotypes',
  area: 'phenotypes',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Genotype-phenotype associations'),
      ...(await setsOfDataset(client, {
        caption: 'Phenotype association sets',
        columns: ['name', 'version'],
        search: (datasetId) => client.searchPhenotypeAssociationSets({ datasetId, pageSize: 50 }),
        listField: 'phenotypeAssociationSets',
        cells: (s) => [s.name, ((s.info?.version as unknown[] | undefined) ?? []).join(', ')],
        open: (s) => setPanel(client, s),
      })),
    );
  },
};
