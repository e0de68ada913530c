/**
 * Continuous sets (bigWig) of a dataset; for one set, the values over a region as a plot, and the
 * records the API answers.
 */
import type { Continuous, ContinuousSet, Ga4ghClient } from '../../../client/index.js';
import { errorText, h, labelled, pagedTable, svgEl } from '../dom.js';
import { numberInput, referencesOf, setsOfDataset } from './common.js';
import type { View } from './view.js';

/** The plot's width in bins: up to this many bases, one bin per base; above, each bin shows its largest value. */
export const PLOT_BINS = 800;
/** *Go to the first values* asks at most this many references. */
const FIRST_VALUES_PROBES = 100;
/** A plot reads at most this many bases' values. */
const PLOT_LIMIT = 1_000_000;

function plot(records: Continuous[], start: number, end: number): SVGSVGElement {
  const bins = Math.min(PLOT_BINS, end - start);
  const width = (end - start) / bins;
  const maxima: Array<number | undefined> = new Array(bins).fill(undefined);
  for (const r of records) {
    (r.values ?? []).forEach((v, i) => {
      const bin = Math.floor(((r.start ?? 0) + i - start) / width);
      if (bin >= 0 && bin < bins && (maxima[bin] === undefined || v > maxima[bin]!)) maxima[bin] = v;
    });
  }
  const top = Math.max(0, ...maxima.map((m) => m ?? 0)) || 1;
  const height = 160;
  const scale = PLOT_BINS / bins; // pixels per bin: the plot keeps its width for short regions
  const svg = svgEl('svg', { width: PLOT_BINS + 60, height: height + 24, role: 'img', 'aria-label': `Values from ${start} to ${end}, highest ${top}` }) as SVGSVGElement;
  svg.append(svgEl('title', {}, `Values from ${start} to ${end} (${width > 1 ? `largest of each ${width.toFixed(1)} bases` : 'one bar per base'})`));
  maxima.forEach((m, bin) => {
    if (m === undefined) return;
    const barHeight = Math.max(1, (Math.max(0, m) / top) * height);
    svg.append(svgEl('rect', { x: 50 + bin * scale, y: height - barHeight + 4, width: Math.max(1, scale), height: barHeight, 'data-start': Math.round(start + bin * width), 'data-value': m }));
  });
  svg.append(svgEl('text', { x: 46, y: 14, 'text-anchor': 'end' }, String(top)), svgEl('text', { x: 46, y: height + 4, 'text-anchor': 'end' }, '0'), svgEl('text', { x: 50, y: height + 20 }, String(start)), svgEl('text', { x: PLOT_BINS + 50, y: height + 20, 'text-anchor': 'end' }, String(end)));
  return svg;
}

async function continuousPanel(client: Ga4ghClient, set: ContinuousSet): Promise<HTMLElement> {
  const references = await referencesOf(client, set.referenceSetId);
  const datalist = h('datalist', { id: `contrefs-${set.id}` }, ...references.map((r) => h('option', { value: r.name ?? '' })));
  const referenceName = h('input', { name: 'referenceName', value: references[0]?.name ?? '', list: datalist.id, required: true });
  const start = numberInput('Start (0-based)', 'start', 0, { min: 0 });
  const end = numberInput('End (exclusive)', 'end', 1000, { min: 1 });
  const plotBox = h('div');
  const results = h('div', { 'aria-live': 'polite' });
  const show = async () => {
    const request = { continuousSetId: set.id ?? '', referenceName: referenceName.value, start: Number(start.input.value), end: Number(end.input.value) };
    results.replaceChildren(
      pagedTable(`Values in ${request.referenceName}:${request.start}-${request.end}`, ['start', 'end', 'values', 'first values', 'record'], client.searchContinuous({ ...request, pageSize: 20 }), 'continuous', (items) =>
        items.map((c) => [c.start, (c.start ?? 0) + (c.values ?? []).length, (c.values ?? []).length, (c.values ?? []).slice(0, 5).join(' '), h('details', {}, h('summary', {}, 'JSON'), h('pre', {}, JSON.stringify(c)))]),
        [0, 1, 2],
      ),
    );
    try {
      if (request.end - request.start > PLOT_LIMIT) throw new Error(`the plot covers at most ${PLOT_LIMIT} bases`);
      const records = await client.searchContinuous({ ...request, pageSize: 1000 }).all();
      plotBox.replaceChildren(records.length ? plot(records, request.start, request.end) : h('p', { class: 'muted' }, 'No values in this region.'));
    } catch (e) {
      plotBox.replaceChildren(errorText(e));
    }
  };
  const form = h(
    'form',
    { 'aria-label': `Values of ${set.name}`, onsubmit: (e: Event) => (e.preventDefault(), void show()) },
    labelled('Reference name', referenceName),
    datalist,
    start.field,
    end.field,
    h('button', { type: 'submit' }, 'Show values'),
    h('button', { type: 'button', onclick: () => firstValues().catch((e) => plotBox.replaceChildren(errorText(e))) }, 'Go to the first values'),
  );
  /** The API lists no sequences of a set: ask each reference of its reference set for one record, in order. */
  const firstValues = async () => {
    for (const r of references.slice(0, FIRST_VALUES_PROBES)) {
      const [first] = (await client.searchContinuous({ continuousSetId: set.id ?? '', referenceName: r.name ?? '', start: 0, end: 2 ** 40, pageSize: 1 }).page()).continuous;
      if (!first) continue;
      referenceName.value = r.name ?? '';
      start.input.value = String(first.start ?? 0);
      end.input.value = String((first.start ?? 0) + PLOT_BINS);
      return show();
    }
    plotBox.replaceChildren(h('p', { class: 'muted' }, `No values on the first ${FIRST_VALUES_PROBES} references.`));
  };
  return h('section', {}, h('h3', {}, `Continuous set ${set.name}`), form, plotBox, results);
}

export const continuousView: View = {
  id: 'continuous',
  title: 'Continuous',
  area: 'continuous',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Continuous data'),
      ...(await setsOfDataset(client, {
        caption: 'Continuous sets',
        columns: ['name', 'source'],
        search: (datasetId) => client.searchContinuousSets({ datasetId, pageSize: 50 }),
        listField: 'continuousSets',
        cells: (s) => [s.name, s.sourceUri],
        jsonPath: 'continuoussets',
        open: (s) => continuousPanel(client, s),
      })),
    );
  },
};
