/**
 * Variant sets of a dataset, their call sets, and a region query that shows the variants with a
 * genotype grid (samples × variants, coloured by genotype), page by page.
 */
import type { Call, Ga4ghClient, SearchVariantsRequest, VariantSet } from '../../../client/index.js';
import { errorText, h, jsonLink, labelled, pagedTable, table } from '../dom.js';
import { numberInput, setsOfDataset } from './common.js';
import type { View } from './view.js';

/** The grid shows at most this many samples; larger sets are queried for their first ones only. */
export const GRID_SAMPLES = 300;

export function genotypeText(call: Call): string {
  const alleles = Array.isArray(call.genotype) ? (call.genotype as number[]) : [];
  return alleles.map((a) => (a < 0 ? '.' : String(a))).join(call.phaseset ? '|' : '/');
}

export function genotypeClass(call: Call): string {
  const alleles = Array.isArray(call.genotype) ? (call.genotype as number[]) : [];
  if (!alleles.length || alleles.some((a) => a < 0)) return 'gt-missing';
  if (alleles.every((a) => a === 0)) return 'gt-homref';
  if (alleles.every((a) => a === alleles[0])) return 'gt-homalt';
  return 'gt-het';
}

/** The reference names of a set's contig header lines, else of its reference set. */
export async function referenceNames(client: Ga4ghClient, set: VariantSet): Promise<string[]> {
  const contigs = (set.metadata ?? []).filter((m) => m.key === `contig.${m.id}` && m.id).map((m) => m.id as string);
  if (contigs.length || !set.referenceSetId) return contigs;
  return (await client.searchReferences({ referenceSetId: set.referenceSetId }).all(5000)).map((r) => r.name ?? '');
}

async function variantSetPanel(client: Ga4ghClient, set: VariantSet): Promise<HTMLElement> {
  const callSets = await client.searchCallSets({ variantSetId: set.id ?? '', pageSize: 1000 }).all(GRID_SAMPLES + 1);
  const names = await referenceNames(client, set);
  const datalist = h('datalist', { id: `refs-${set.id}` }, ...names.map((n) => h('option', { value: n })));
  const referenceName = h('input', { name: 'referenceName', value: names[0] ?? '', list: datalist.id, required: true });
  const start = numberInput('Start (0-based)', 'start', 0, { min: 0 });
  const end = numberInput('End (exclusive, 0: to the end)', 'end', 0, { min: 0 });
  const pageSize = numberInput('Variants per page', 'pageSize', 20, { min: 1, max: 1000 });
  const results = h('div', { 'aria-live': 'polite' });
  const tooMany = callSets.length > GRID_SAMPLES;

  const showPage = async (request: SearchVariantsRequest, pageToken?: string, pageNumber = 1) => {
    try {
      const page = await client.searchVariants(request).page(pageToken);
      const variants = page.variants;
      const samples = variants[0]?.calls?.map((c) => c.callSetName ?? c.callSetId ?? '') ?? [];
      const list = table(
        `Variants in ${request.referenceName}:${request.start ?? 0}-${request.end || 'end'} (page ${pageNumber}, ${variants.length} shown)`,
        ['reference', 'start', 'end', 'names', 'ref', 'alt', 'record'],
        variants.map((v) => [v.referenceName, v.start, v.end, (v.names ?? []).join(', '), v.referenceBases, (v.alternateBases ?? []).join(', '), jsonLink('variants', v.id ?? '')]),
        [1, 2],
      );
      const grid = h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'grid' },
          h('caption', {}, `Genotypes: ${samples.length} samples × ${variants.length} variants`),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'sample'), ...variants.map((v) => h('th', { scope: 'col', title: (v.names ?? []).join(', ') }, String((v.start ?? 0) + 1))))),
          h(
            'tbody',
            {},
            ...samples.map((sample, row) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, sample),
                ...variants.map((v) => {
                  const call = v.calls?.[row];
                  return call
                    ? h('td', { class: genotypeClass(call), title: `${sample} at ${v.referenceName}:${(v.start ?? 0) + 1}` }, genotypeText(call))
                    : h('td', { class: 'gt-missing' }, '');
                }),
              ),
            ),
          ),
        ),
      );
      const legend = h('p', { class: 'legend' }, ...[['gt-homref', 'homozygous reference'], ['gt-het', 'heterozygous'], ['gt-homalt', 'homozygous alternate'], ['gt-missing', 'missing']].map(([c, t]) => h('span', { class: c }, t)));
      const buttons = h('div', { class: 'controls' });
      if (pageToken) buttons.append(h('button', { type: 'button', onclick: () => void showPage(request) }, 'First page'));
      if (page.nextPageToken) {
        const next = page.nextPageToken;
        buttons.append(h('button', { type: 'button', onclick: () => void showPage(request, next, pageNumber + 1) }, 'Next page'));
      }
      results.replaceChildren(list, samples.length ? h('div', {}, grid, legend) : h('p', { class: 'muted' }, 'No calls.'), buttons);
    } catch (e) {
      results.replaceChildren(errorText(e));
    }
  };

  const form = h(
    'form',
    {
      'aria-label': `Region query in ${set.name}`,
      onsubmit: (e: Event) => {
        e.preventDefault();
        void showPage({
          variantSetId: set.id ?? '',
          referenceName: referenceName.value,
          start: Number(start.input.value),
          end: Number(end.input.value),
          pageSize: Number(pageSize.input.value),
          ...(tooMany ? { callSetIds: callSets.slice(0, GRID_SAMPLES).map((c) => c.id ?? '') } : {}),
        });
      },
    },
    labelled('Reference name', referenceName),
    datalist,
    start.field,
    end.field,
    pageSize.field,
    h('button', { type: 'submit' }, 'Search variants'),
  );
  return h(
    'section',
    {},
    h('h3', {}, `Variant set ${set.name}`),
    pagedTable(`Call sets of ${set.name}`, ['name', 'biosample', 'record'], client.searchCallSets({ variantSetId: set.id ?? '', pageSize: 50 }), 'callSets', (items) =>
      items.map((c) => [c.name, c.biosampleId, jsonLink('callsets', c.id ?? '')]),
    ),
    h('h3', {}, 'Region'),
    tooMany ? h('p', { class: 'muted' }, `The grid shows the first ${GRID_SAMPLES} samples.`) : null,
    form,
    results,
  );
}

export const variantsView: View = {
  id: 'variants',
  title: 'Variants',
  area: 'variants',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Variants'),
      ...(await setsOfDataset(client, {
        caption: 'Variant sets',
        columns: ['name', 'metadata lines'],
        search: (datasetId) => client.searchVariantSets({ datasetId, pageSize: 50 }),
        listField: 'variantSets',
        cells: (s) => [s.name, (s.metadata ?? []).length],
        jsonPath: 'variantsets',
        open: (s) => variantSetPanel(client, s),
        numeric: [1],
      })),
    );
  },
};
