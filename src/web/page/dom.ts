/** Small DOM helpers for the views: elements, labelled controls, tables and paged tables. */
import type { Attributes, Paged } from '../../client/index.js';

export type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | ((event: Event) => void) | undefined>;

/** An element with attributes (`onclick` and the like as listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(typeof child === 'number' ? String(child) : child);
  return el;
}

/** An SVG element with attributes and, if given, its text. */
export function svgEl(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

let uid = 0;
/** A control with a visible label tied to it. */
export function labelled<T extends HTMLElement>(text: string, control: T): HTMLLabelElement {
  control.id ||= `c${++uid}`;
  return h('label', { for: control.id }, text, control);
}

export function selectOf(name: string, options: Array<{ value: string; label: string }>, selected?: string): HTMLSelectElement {
  const select = h('select', { name });
  for (const o of options) select.append(h('option', { value: o.value, selected: o.value === selected }, o.label));
  return select;
}

/** A link to the JSON of a record, as the API answers it (GET by id); `text` names the record, if given. */
export const jsonLink = (path: string, id: string, text?: string) =>
  h('a', { href: `${path}/${encodeURIComponent(id)}`, target: '_blank', rel: 'noopener', 'aria-label': `JSON of ${text ?? id}` }, text ?? 'JSON');

/** The JSON of a record that has no GET endpoint, shown on demand. */
export const jsonDetails = (record: unknown) => h('details', {}, h('summary', {}, 'JSON'), h('pre', {}, JSON.stringify(record, null, 2)));

export function table(caption: string, columns: string[], rows: Child[][], numeric: number[] = []): HTMLElement {
  const head = h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)));
  const body = rows.map((row) => h('tr', {}, ...row.map((cell, i) => h('td', numeric.includes(i) ? { class: 'num' } : {}, cell))));
  return h('div', { class: 'scroll' }, h('table', {}, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, ...body)));
}

export const errorText = (e: unknown) => h('p', { class: 'error', role: 'alert' }, `Error: ${(e as Error).message}`);

/**
 * One page of a search at a time, with a button to the next page and back to the first. `rowsOf`
 * turns a page's records into table rows.
 */
export function pagedTable<Item, Page>(
  caption: string,
  columns: string[],
  paged: Paged<Item, Page>,
  listField: keyof Page & string,
  rowsOf: (items: Item[]) => Child[][],
  numeric: number[] = [],
): HTMLElement {
  const box = h('div', { class: 'paged' });
  let pageNumber = 0;
  const show = async (token: string | undefined) => {
    try {
      const page = await paged.page(token);
      const items = (page[listField] as Item[] | undefined) ?? [];
      const next = (page as { nextPageToken?: string }).nextPageToken;
      pageNumber = token ? pageNumber + 1 : 1;
      const buttons = h('div', { class: 'controls' });
      if (token) buttons.append(h('button', { type: 'button', onclick: () => void show(undefined) }, 'First page'));
      if (next) buttons.append(h('button', { type: 'button', onclick: () => void show(next) }, 'Next page'));
      box.replaceChildren(
        table(`${caption} (page ${pageNumber}, ${items.length} shown)`, columns, items.length ? rowsOf(items) : [[h('span', { class: 'muted' }, 'none')]], numeric),
        buttons,
      );
    } catch (e) {
      box.replaceChildren(errorText(e));
    }
  };
  void show(undefined);
  return box;
}

/** Attributes as "key: v1, v2" lines. */
export function attributesText(attributes: Attributes | undefined): string {
  if (!attributes?.attr) return '';
  return Object.entries(attributes.attr)
    .map(([k, list]) => `${k}: ${(list.values ?? []).map((v) => Object.values(v)[0]).join(', ')}`)
    .join('; ');
}
