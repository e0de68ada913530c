/** Reference sets, their references, and a viewer of bases over a range, window by window. */
import type { Ga4ghClient, Reference } from '../../../client/index.js';
import { errorText, h, jsonLink, pagedTable } from '../dom.js';
import { numberInput } from './common.js';
import type { View } from './view.js';

const LINE = 60;
const DEFAULT_WINDOW = 600;

/** Every base of [start, end), following the server's pages. */
async function basesOf(client: Ga4ghClient, id: string, start: number, end: number): Promise<string> {
  let text = '';
  let pageToken: string | undefined;
  do {
    const page = await client.listReferenceBases(id, { start, end, pageToken });
    text += page.sequence ?? '';
    pageToken = page.nextPageToken;
  } while (pageToken);
  return text;
}

function basesViewer(client: Ga4ghClient, reference: Reference): HTMLElement {
  const length = reference.length ?? 0;
  const start = numberInput('Start (0-based)', 'start', 0, { min: 0, max: Math.max(0, length - 1) });
  const end = numberInput('End (exclusive)', 'end', Math.min(length, DEFAULT_WINDOW), { min: 1, max: length });
  const output = h('div', { 'aria-live': 'polite' });
  const show = async () => {
    const from = Number(start.input.value);
    const to = Number(end.input.value);
    try {
      const bases = await basesOf(client, reference.id ?? '', from, to);
      const lines: string[] = [];
      for (let i = 0; i < bases.length; i += LINE) lines.push(`${String(from + i + 1).padStart(10)}  ${bases.slice(i, i + LINE)}`);
      output.replaceChildren(
        h('p', { class: 'muted' }, `${bases.length} bases of ${reference.name}, positions ${from + 1}–${from + bases.length} (1-based)`),
        h('pre', { class: 'bases', 'data-start': from, 'data-end': to }, lines.join('\n')),
      );
    } catch (e) {
      output.replaceChildren(errorText(e));
    }
  };
  const shift = (direction: number) => {
    const from = Number(start.input.value);
    const width = Math.max(1, Number(end.input.value) - from);
    const next = Math.min(Math.max(0, from + direction * width), Math.max(0, length - width));
    start.input.value = String(next);
    end.input.value = String(Math.min(length, next + width));
    void show();
  };
  const form = h(
    'form',
    { 'aria-label': `Bases of ${reference.name}`, onsubmit: (e: Event) => (e.preventDefault(), void show()) },
    start.field,
    end.field,
    h('button', { type: 'submit' }, 'Show bases'),
    h('button', { type: 'button', onclick: () => shift(-1) }, 'Previous window'),
    h('button', { type: 'button', onclick: () => shift(1) }, 'Next window'),
  );
  void show();
  return h('section', {}, h('h3', {}, `Bases of ${reference.name} (length ${length})`), form, output);
}

export const referencesView: View = {
  id: 'references',
  title: 'References',
  area: 'references',
  async render(root, { client }) {
    const referencesBox = h('div');
    const viewerBox = h('div');
    const openSet = (id: string, name: string) => {
      viewerBox.replaceChildren();
      referencesBox.replaceChildren(
        pagedTable(`References of ${name}`, ['name', 'length', 'md5checksum', 'record', 'bases'], client.searchReferences({ referenceSetId: id, pageSize: 50 }), 'references', (items) =>
          items.map((r) => [
            r.name,
            r.length,
            h('code', {}, r.md5checksum ?? ''),
            jsonLink('references', r.id ?? ''),
            h('button', { type: 'button', onclick: () => viewerBox.replaceChildren(basesViewer(client, r)) }, `View bases of ${r.name}`),
          ]),
          [1],
        ),
      );
    };
    root.append(
      h('h2', {}, 'Reference sets'),
      pagedTable('Reference sets', ['name', 'assembly', 'species', 'md5checksum', 'record', 'references'], client.searchReferenceSets({ pageSize: 50 }), 'referenceSets', (items) =>
        items.map((s) => [
          s.name,
          s.assemblyId,
          s.species?.term,
          h('code', {}, s.md5checksum ?? ''),
          jsonLink('referencesets', s.id ?? ''),
          h('button', { type: 'button', onclick: () => openSet(s.id ?? '', s.name ?? '') }, `References of ${s.name}`),
        ]),
      ),
      referencesBox,
      viewerBox,
    );
  },
};
