/** Pieces several views share. */
import type { Ga4ghClient } from '../../../client/index.js';
import { h, labelled, selectOf } from '../dom.js';

/** A labelled dataset choice; calls `onChange` with the chosen id now and on every change. */
export async function datasetPicker(client: Ga4ghClient, onChange: (datasetId: string) => void): Promise<HTMLElement> {
  const datasets = await client.searchDatasets({ pageSize: 1000 }).all(1000);
  if (!datasets.length) return h('p', { class: 'muted' }, 'No dataset is registered.');
  const select = selectOf('dataset', datasets.map((d) => ({ value: d.id ?? '', label: d.name ?? d.id ?? '' })));
  select.addEventListener('change', () => onChange(select.value));
  queueMicrotask(() => onChange(select.value));
  return h('div', { class: 'controls' }, labelled('Dataset', select));
}

/** A number input with a label. */
export function numberInput(label: string, name: string, value: number | string, attrs: Record<string, string | number> = {}) {
  const input = h('input', { type: 'number', name, value: String(value), ...attrs });
  return { input, field: labelled(label, input) };
}
