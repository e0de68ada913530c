/**
 * Discovery: `GET /info` (the protocol version, and the server's name, version and areas in
 * attributes, as the specification says) and `GET /service-info` (a GA4GH service-info 1.0 document,
 * as today's GA4GH services expose).
 */
import type { Command } from 'commander';
import { PROTOCOL_VERSION, SERVER_NAME, SERVER_VERSION, type ServerConfig } from '../../config.js';
import { Attributes, attributesOf } from '../../protocol/common.js';
import { recordReply } from '../../protocol/reply.js';
import { message, t, writeMessage } from '../../protocol/schema.js';
import type { Area } from '../area.js';

export const GetInfoResponse = message('GetInfoResponse', {
  protocolVersion: t.string,
  attributes: t.msg(() => Attributes),
});

const ServiceType = message('ServiceType', { group: t.required(t.string), artifact: t.required(t.string), version: t.required(t.string) });
const Organization = message('Organization', { name: t.required(t.string), url: t.required(t.string) });
/** GA4GH service-info 1.0: its fields are camelCase in every naming form. */
export const ServiceInfo = message('ServiceInfo', {
  id: t.required(t.string),
  name: t.required(t.string),
  type: t.required(t.msg(() => ServiceType)),
  description: t.string,
  organization: t.required(t.msg(() => Organization)),
  contactUrl: t.string,
  documentationUrl: t.string,
  environment: t.string,
  version: t.required(t.string),
});

export const SERVICE_TYPE = { group: 'org.ga4gh', artifact: 'genomics-api', version: PROTOCOL_VERSION };
export const defaultServiceInfoOptions = {
  serviceId: 'local.ga4gh-server',
  organizationName: 'ga4gh-server operator',
};

/**
 * The service-info 1.0 fields every interface of this server shares, from `ga4gh serve`'s options:
 * its id, organization, contact, environment and version, and `base`, the URL absolute links start
 * from (the operator's public URL, or the address the client reached us at, from its Host header).
 */
export function serviceInfoBase(config: ServerConfig, host: string | undefined) {
  const options = config.options;
  const text = (name: string) => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
  const base = text('publicUrl')?.replace(/\/+$/, '') ?? `http://${host ?? `${config.host}:${config.port}`}`;
  return {
    base,
    id: text('serviceId') ?? defaultServiceInfoOptions.serviceId,
    organization: {
      name: text('organizationName') ?? defaultServiceInfoOptions.organizationName,
      url: text('organizationUrl') ?? base,
    },
    contactUrl: text('contactUrl'),
    environment: text('environment'),
    version: SERVER_VERSION,
  };
}

export const infoArea: Area = {
  name: 'info',
  migrations: [],
  async routes({ areaNames, config }) {
    const areas = areaNames.filter((name) => name !== 'info');
    const info = {
      protocolVersion: PROTOCOL_VERSION,
      attributes: attributesOf({ name: [SERVER_NAME], version: [SERVER_VERSION], areas }),
    };
    return [
      { method: 'GET', path: '/info', handle: async () => recordReply(GetInfoResponse, info) },
      {
        method: 'GET',
        path: '/service-info',
        response: ServiceInfo,
        summary: 'Describe this service (GA4GH service-info 1.0)',
        handle: async ({ remote }) => {
          const { base, ...shared } = serviceInfoBase(config, remote.host);
          const document = {
            ...shared,
            name: SERVER_NAME,
            type: SERVICE_TYPE,
            description: `GA4GH ${PROTOCOL_VERSION} genomic data service (areas: ${areas.join(', ')})`,
            documentationUrl: `${base}/docs`,
          };
          return {
            kind: 'content',
            contentType: 'application/json; charset=utf-8',
            body: Buffer.from(writeMessage(ServiceInfo, document, 'camel')),
          };
        },
      },
    ];
  },
  serveOptions(serve: Command) {
    serve
      .option('--service-id <id>', 'id in GET /service-info, in reverse domain notation', defaultServiceInfoOptions.serviceId)
      .option('--organization-name <name>', 'organization in GET /service-info', defaultServiceInfoOptions.organizationName)
      .option('--organization-url <url>', 'organization URL in GET /service-info (default: the public URL)')
      .option('--contact-url <url>', 'contact URL in GET /service-info (mailto: or https:)')
      .option('--environment <name>', 'environment in GET /service-info: prod, test, dev, ...');
  },
  commands() {},
};
