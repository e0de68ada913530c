/** Pieces several views share. */
import type { Ga4ghClient, OntologyTerm, Paged } from '../../../client/index.js';
import { type Child, errorText, h, jsonDetails, jsonLink, labelled, pagedTable, selectOf } from '../dom.js';

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

/** An ontology term as its label, its id on hover (the label alone when it has no id, the id when it has no label). */
export const termText = (term: OntologyTerm | undefined) =>
  term ? h('span', { title: term.termId, 'data-term-id': term.termId }, term.term ?? term.termId ?? '') : '';

/** Terms in a row of a table, comma-separated. */
export function termsText(terms: OntologyTerm[] | undefined): HTMLElement {
  const box = h('span');
  (terms ?? []).forEach((t, i) => box.append(...(i ? [', '] : []), termText(t)));
  return box;
}

/** Terms a user typed, comma-separated: a CURIE (`SO:0001583`) or an IRI is a term id, anything else a label. */
export const termsFrom = (text: string): OntologyTerm[] =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => (/^[A-Za-z][\w.-]*:\S+$/.test(t) ? { termId: t } : { term: t }));

/** A button that fills `panel` with what `make` builds (or the error it meets); `name` is its accessible name when the label is short. */
export const openButton = (label: string, panel: HTMLElement, make: () => Promise<Node> | Node, name?: string) =>
  h('button', {
    type: 'button',
    'aria-label': name,
    onclick: async () => {
      try {
        panel.replaceChildren(await make());
      } catch (e) {
        panel.replaceChildren(errorText(e));
      }
    },
  }, label);

/** The names an id of this server is made of (ids are base64url JSON arrays of names); [] for any other id. */
export function idNames(id: string): string[] {
  try {
    const bytes = Uint8Array.from(atob(id.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    const names: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return Array.isArray(names) ? names.map(String) : [];
  } catch {
    return [];
  }
}

/**
 * The usual start of a view: a dataset choice, the dataset's sets in a paged table (with their JSON and
 * an *Open* button), and the panel the button fills. Returns the three, to append in order.
 */
export async function setsOfDataset<Item extends { id?: string; name?: string }, Page>(
  client: Ga4ghClient,
  options: {
    caption: string;
    columns: string[];
    search: (datasetId: string) => Paged<Item, Page>;
    listField: keyof Page & string;
    cells: (set: Item) => Child[];
    /** The GET path of a set's JSON; without one, the JSON is shown in place. */
    jsonPath?: string;
    open: (set: Item) => Promise<Node> | Node;
    numeric?: number[];
  },
): Promise<HTMLElement[]> {
  const setsBox = h('div');
  const panel = h('div');
  const picker = await datasetPicker(client, (datasetId) => {
    panel.replaceChildren();
    setsBox.replaceChildren(
      pagedTable(options.caption, [...options.columns, 'record', 'open'], options.search(datasetId), options.listField, (items) =>
        items.map((s) => [
          ...options.cells(s),
          options.jsonPath ? jsonLink(options.jsonPath, s.id ?? '') : jsonDetails(s),
          openButton(`Open ${s.name}`, panel, () => options.open(s)),
        ]),
        options.numeric,
      ),
    );
  });
  return [picker, setsBox, panel];
}

/** The references of a reference set, none when the set has no reference set (sets other areas store). */
export const referencesOf = async (client: Ga4ghClient, referenceSetId: string | undefined) =>
  referenceSetId ? client.searchReferences({ referenceSetId, pageSize: 1000 }).all(5000) : [];
