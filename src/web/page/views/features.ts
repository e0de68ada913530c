/**
 * Feature sets of a dataset; for one set, a search by region, name, gene symbol and types, and a
 * feature's parent and children, followed link by link.
 */
import type { Feature, FeatureSet, Ga4ghClient, SearchFeaturesRequest } from '../../../client/index.js';
import { h, jsonLink, labelled, pagedTable, table } from '../dom.js';
import { idNames, numberInput, openButton, referencesOf, setsOfDataset, termText } from './common.js';
import type { View } from './view.js';

const STRANDS: Record<string, string> = { POS_STRAND: '+', NEG_STRAND: '-' };
/** A feature's key in its file (GFF3 `ID`), the last name of its id. */
const keyOf = (f: Feature) => idNames(f.id ?? '').at(-1) ?? f.id ?? '';
const COLUMNS = ['ID', 'name', 'gene symbol', 'type', 'reference', 'start', 'end', 'strand', 'parent', 'children', 'record'];

function featureTable(client: Ga4ghClient, caption: string, request: SearchFeaturesRequest, detail: HTMLElement): HTMLElement {
  const rows = (items: Feature[]) =>
    items.map((f) => [
      keyOf(f),
      f.name,
      f.geneSymbol,
      termText(f.featureType),
      f.referenceName,
      f.start,
      f.end,
      STRANDS[f.strand ?? ''] ?? '',
      f.parentId ? openButton('parent', detail, async () => featureDetail(client, await client.getFeature(f.parentId!)), `Parent of ${keyOf(f)}`) : '',
      f.childIds?.length ? openButton(`${f.childIds.length} children`, detail, () => featureDetail(client, f), `Children of ${keyOf(f)}`) : '',
      jsonLink('features', f.id ?? ''),
    ]);
  return pagedTable(caption, COLUMNS, client.searchFeatures(request), 'features', rows, [5, 6]);
}

/** One feature, with its parent and its children (each of which can be followed in turn). */
function featureDetail(client: Ga4ghClient, feature: Feature): HTMLElement {
  const box = h('section', { class: 'feature' });
  const title = keyOf(feature);
  box.append(h('h4', {}, `Feature ${title}`));
  const children = h('div');
  box.append(
    table(`Feature ${title}`, ['field', 'value'], [
      ['name', feature.name],
      ['type', termText(feature.featureType)],
      ['gene symbol', feature.geneSymbol],
      ['place', feature.referenceName ? `${feature.referenceName}:${feature.start}-${feature.end} ${STRANDS[feature.strand ?? ''] ?? ''}` : ''],
      ['parent', feature.parentId ? openButton('Open the parent', box, async () => featureDetail(client, await client.getFeature(feature.parentId!))) : 'none'],
      ['record', jsonLink('features', feature.id ?? '')],
    ]),
    children,
  );
  if (feature.childIds?.length) children.append(featureTable(client, `Children of ${title}`, { parentId: feature.id, pageSize: 50 }, box));
  return box;
}

async function featureSetPanel(client: Ga4ghClient, set: FeatureSet): Promise<HTMLElement> {
  const references = await referencesOf(client, set.referenceSetId);
  const datalist = h('datalist', { id: `featrefs-${set.id}` }, ...references.map((r) => h('option', { value: r.name ?? '' })));
  const referenceName = h('input', { name: 'referenceName', list: datalist.id, placeholder: 'any' });
  const start = numberInput('Start (0-based)', 'start', 0, { min: 0 });
  const end = numberInput('End (exclusive, 0: to the end)', 'end', 0, { min: 0 });
  const name = h('input', { name: 'name' });
  const geneSymbol = h('input', { name: 'geneSymbol' });
  const types = h('input', { name: 'featureTypes', placeholder: 'e.g. gene, exon' });
  const pageSize = numberInput('Features per page', 'pageSize', 20, { min: 1, max: 1000 });
  const results = h('div', { 'aria-live': 'polite' });
  const detail = h('div');
  const show = () => {
    const request: SearchFeaturesRequest = { featureSetId: set.id, pageSize: Number(pageSize.input.value) };
    if (referenceName.value) Object.assign(request, { referenceName: referenceName.value, start: Number(start.input.value), end: Number(end.input.value) });
    if (name.value) request.name = name.value;
    if (geneSymbol.value) request.geneSymbol = geneSymbol.value;
    const wanted = types.value.split(',').map((t) => t.trim()).filter(Boolean);
    if (wanted.length) request.featureTypes = wanted;
    detail.replaceChildren();
    results.replaceChildren(featureTable(client, `Features of ${set.name}`, request, detail));
  };
  const form = h(
    'form',
    { 'aria-label': `Features of ${set.name}`, onsubmit: (e: Event) => (e.preventDefault(), show()) },
    labelled('Reference name (empty: the whole set)', referenceName),
    datalist,
    start.field,
    end.field,
    labelled('Name', name),
    labelled('Gene symbol', geneSymbol),
    labelled('Types (comma-separated; subclasses match)', types),
    pageSize.field,
    h('button', { type: 'submit' }, 'Search features'),
  );
  show();
  return h('section', {}, h('h3', {}, `Feature set ${set.name}`), form, results, detail);
}

export const featuresView: View = {
  id: 'features',
  title: 'Features',
  area: 'features',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Features'),
      ...(await setsOfDataset(client, {
        caption: 'Feature sets',
        columns: ['name', 'source'],
        search: (datasetId) => client.searchFeatureSets({ datasetId, pageSize: 50 }),
        listField: 'featureSets',
        cells: (s) => [s.name, s.sourceUri],
        jsonPath: 'featuresets',
        open: (s) => featureSetPanel(client, s),
      })),
    );
  },
};
