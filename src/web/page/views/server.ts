/** The server: protocol version, name, version, areas (GET /info) and its service-info document. */
import { attributesText, h, table } from '../dom.js';
import type { View } from './view.js';

export const serverView: View = {
  id: 'server',
  title: 'Server',
  async render(root, { client, areas }) {
    const [info, serviceInfo] = await Promise.all([client.getInfo(), client.getServiceInfo()]);
    root.append(
      h('h2', {}, 'Server'),
      table('GET /info', ['field', 'value'], [
        ['protocol version', info.protocolVersion ?? ''],
        ['attributes', attributesText(info.attributes)],
      ]),
      table('GET /service-info', ['field', 'value'], [
        ['id', serviceInfo.id],
        ['name', serviceInfo.name],
        ['type', `${serviceInfo.type.group}:${serviceInfo.type.artifact}:${serviceInfo.type.version}`],
        ['organization', h('a', { href: serviceInfo.organization.url }, serviceInfo.organization.name)],
        ['version', serviceInfo.version],
      ]),
      h('h3', {}, 'Areas'),
      h('ul', {}, ...areas.map((a) => h('li', {}, a))),
      h('p', {}, 'The API: ', h('a', { href: 'docs' }, 'documentation'), ', ', h('a', { href: 'openapi.json' }, 'OpenAPI document'), '.'),
    );
  },
};
