/** The peer list (POST /peers/list). */
import { attributesText, h, jsonDetails, pagedTable } from '../dom.js';
import type { View } from './view.js';

export const peersView: View = {
  id: 'peers',
  title: 'Peers',
  area: 'peers',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Peers'),
      pagedTable('Peers', ['url', 'attributes', 'record'], client.listPeers({ pageSize: 50 }), 'peers', (items) =>
        items.map((p) => [h('a', { href: p.url ?? '', rel: 'noopener' }, p.url ?? ''), attributesText(p.attributes), jsonDetails(p)]),
      ),
    );
  },
};
