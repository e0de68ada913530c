/**
 * RNA quantification sets of a dataset, their quantifications, and the expression levels of one:
 * a table (threshold, names filter, paging) and a bar chart of the most expressed features.
 */
import type { ExpressionLevel, Ga4ghClient, RnaQuantification, RnaQuantificationSet, SearchExpressionLevelsRequest } from '../../../client/index.js';
import { errorText, h, jsonLink, labelled, pagedTable, svgEl } from '../dom.js';
import { numberInput, openButton, setsOfDataset } from './common.js';
import type { View } from './view.js';

/** Bars in the chart, and how many levels are read to find them. */
export const TOP_FEATURES = 20;
const CHART_SCAN_LIMIT = 20_000;

function barChart(levels: ExpressionLevel[], units: string): SVGSVGElement {
  const rowHeight = 18;
  const labelWidth = 190;
  const barWidth = 420;
  const max = Math.max(...levels.map((l) => l.expression ?? 0), 0) || 1;
  const svg = svgEl('svg', {
    width: labelWidth + barWidth + 90,
    height: levels.length * rowHeight + 4,
    role: 'img',
    'aria-label': `The ${levels.length} most expressed features`,
  }) as SVGSVGElement;
  svg.append(svgEl('title', {}, `The ${levels.length} most expressed features (${units})`));
  levels.forEach((level, i) => {
    const y = i * rowHeight + 2;
    const width = Math.max(1, ((level.expression ?? 0) / max) * barWidth);
    svg.append(
      svgEl('text', { x: labelWidth - 6, y: y + 12, 'text-anchor': 'end' }, level.name ?? ''),
      svgEl('rect', { x: labelWidth, y, width, height: rowHeight - 4, 'data-name': level.name ?? '', 'data-expression': level.expression ?? 0 }),
      svgEl('text', { x: labelWidth + width + 4, y: y + 12 }, String(level.expression)),
    );
  });
  return svg;
}

/** The most expressed levels of a query, read over every page (up to a limit). */
async function topLevels(client: Ga4ghClient, request: SearchExpressionLevelsRequest): Promise<{ top: ExpressionLevel[]; scanned: number }> {
  const top: ExpressionLevel[] = [];
  let scanned = 0;
  for await (const level of client.searchExpressionLevels({ ...request, pageSize: 1000 })) {
    scanned++;
    top.push(level);
    if (top.length > TOP_FEATURES * 4) top.sort((a, b) => (b.expression ?? 0) - (a.expression ?? 0)).length = TOP_FEATURES;
    if (scanned >= CHART_SCAN_LIMIT) break;
  }
  top.sort((a, b) => (b.expression ?? 0) - (a.expression ?? 0));
  return { top: top.slice(0, TOP_FEATURES), scanned };
}

function expressionPanel(client: Ga4ghClient, quantification: RnaQuantification): HTMLElement {
  const threshold = numberInput('Threshold (expression above)', 'threshold', 0, { step: 'any' });
  const names = h('input', { name: 'names', placeholder: 'e.g. ENST00000357654.3, BRCA1' });
  const pageSize = numberInput('Levels per page', 'pageSize', 25, { min: 1, max: 1000 });
  const tableBox = h('div', { 'aria-live': 'polite' });
  const chartBox = h('div');
  const show = async () => {
    const request: SearchExpressionLevelsRequest = {
      rnaQuantificationId: quantification.id ?? '',
      threshold: Number(threshold.input.value),
      pageSize: Number(pageSize.input.value),
    };
    const wanted = names.value.split(',').map((n) => n.trim()).filter(Boolean);
    if (wanted.length) request.names = wanted;
    tableBox.replaceChildren(
      pagedTable(`Expression levels of ${quantification.name}`, ['name', 'expression', 'units', 'raw read count', 'record'], client.searchExpressionLevels(request), 'expressionLevels', (items) =>
        items.map((l) => [l.name, l.expression, l.units, l.rawReadCount, jsonLink('expressionlevels', l.id ?? '')]),
        [1, 3],
      ),
    );
    try {
      const { top, scanned } = await topLevels(client, request);
      chartBox.replaceChildren(
        h('h4', {}, `Most expressed features (of ${scanned} matching levels)`),
        top.length ? barChart(top, top[0].units ?? '') : h('p', { class: 'muted' }, 'No level matches.'),
      );
    } catch (e) {
      chartBox.replaceChildren(errorText(e));
    }
  };
  const form = h(
    'form',
    { 'aria-label': `Expression levels of ${quantification.name}`, onsubmit: (e: Event) => (e.preventDefault(), void show()) },
    threshold.field,
    labelled('Feature names (comma-separated)', names),
    pageSize.field,
    h('button', { type: 'submit' }, 'Show expression'),
  );
  void show();
  return h('section', {}, h('h3', {}, `Quantification ${quantification.name}`), form, tableBox, chartBox);
}

export const rnaView: View = {
  id: 'rna',
  title: 'RNA',
  area: 'rna',
  async render(root, { client }) {
    const openSet = (set: RnaQuantificationSet) => {
      const panel = h('div');
      return h(
        'div',
        {},
        pagedTable(`Quantifications of ${set.name}`, ['name', 'biosample', 'description', 'record', 'open'], client.searchRnaQuantifications({ rnaQuantificationSetId: set.id ?? '', pageSize: 50 }), 'rnaQuantifications', (items) =>
          items.map((q) => [q.name, q.biosampleId, q.description, jsonLink('rnaquantifications', q.id ?? ''), openButton(`Open ${q.name}`, panel, () => expressionPanel(client, q))]),
        ),
        panel,
      );
    };
    root.append(
      h('h2', {}, 'RNA quantifications'),
      ...(await setsOfDataset(client, {
        caption: 'RNA quantification sets',
        columns: ['name'],
        search: (datasetId) => client.searchRnaQuantificationSets({ datasetId, pageSize: 50 }),
        listField: 'rnaQuantificationSets',
        cells: (s) => [s.name],
        jsonPath: 'rnaquantificationsets',
        open: openSet,
      })),
    );
  },
};
