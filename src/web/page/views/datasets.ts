/** Datasets, the containers of every other kind of set. */
import { h, jsonLink, pagedTable } from '../dom.js';
import type { View } from './view.js';

export const datasetsView: View = {
  id: 'datasets',
  title: 'Datasets',
  area: 'datasets',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Datasets'),
      pagedTable('Datasets', ['name', 'description', 'id', 'record'], client.searchDatasets({ pageSize: 50 }), 'datasets', (items) =>
        items.map((d) => [d.name, d.description, h('code', {}, d.id ?? ''), jsonLink('datasets', d.id ?? '')]),
      ),
    );
  },
};
