/**
 * The informational endpoints of the Beacon framework: `/beacon/` and `/beacon/info`
 * (beaconInfoResponse), `/beacon/service-info` (GA4GH service-info 1.0), `/beacon/configuration`,
 * `/beacon/map` and `/beacon/entry_types`, from `ga4gh serve`'s service-info options and the entry
 * types served.
 */
import { SERVER_NAME, SERVER_VERSION, type ServerConfig } from '../../config.js';
import { serviceInfoBase } from '../../areas/info/index.js';
import { API_VERSION, informationalMeta, type BeaconContext } from './envelope.js';
import { endpointSets, entryTypeDefinitions } from './entry-types.js';

const FRAMEWORK = 'https://raw.githubusercontent.com/ga4gh-beacon/beacon-v2/main/framework/json';

/** The environments Beacon's info allows; without --environment, or with another one, the beacon says `prod`. */
const ENVIRONMENTS = ['prod', 'test', 'dev', 'staging'] as const;

/** Where the beacon is reached, and what it says of itself, from the serve options. */
export function beaconIdentity(config: ServerConfig, host: string | undefined) {
  const shared = serviceInfoBase(config, host);
  const environment = (ENVIRONMENTS as readonly string[]).includes(shared.environment ?? '') ? (shared.environment as (typeof ENVIRONMENTS)[number]) : 'prod';
  return { ...shared, root: `${shared.base}/beacon`, beaconId: `${shared.id}.beacon`, environment };
}

const DESCRIPTION = 'Beacon v2 over the registered variants, individuals and biosamples: one registration serves GA4GH 0.6.0a10, htsget and Beacon clients alike';

export function infoDocument(config: ServerConfig, host: string | undefined, context: BeaconContext) {
  const self = beaconIdentity(config, host);
  const organization: Record<string, unknown> = { id: self.organization.name, name: self.organization.name, welcomeUrl: self.organization.url };
  if (self.contactUrl) organization.contactUrl = self.contactUrl;
  return {
    meta: informationalMeta(context),
    response: {
      id: self.beaconId,
      name: `${SERVER_NAME} Beacon`,
      apiVersion: API_VERSION,
      environment: self.environment,
      organization,
      description: DESCRIPTION,
      version: SERVER_VERSION,
      welcomeUrl: `${self.base}/`,
      alternativeUrl: self.root,
    },
  };
}

export function serviceInfoDocument(config: ServerConfig, host: string | undefined) {
  const self = beaconIdentity(config, host);
  const document: Record<string, unknown> = {
    id: self.beaconId,
    name: `${SERVER_NAME} Beacon`,
    type: { group: 'org.ga4gh', artifact: 'beacon', version: API_VERSION },
    description: DESCRIPTION,
    organization: self.organization,
    documentationUrl: `${self.base}/docs`,
    environment: self.environment,
    version: SERVER_VERSION,
  };
  if (self.contactUrl) document.contactUrl = self.contactUrl;
  return document;
}

export function configurationDocument(config: ServerConfig, host: string | undefined, context: BeaconContext) {
  const self = beaconIdentity(config, host);
  return {
    meta: informationalMeta(context),
    response: {
      $schema: `${FRAMEWORK}/configuration/beaconConfigurationSchema.json`,
      maturityAttributes: { productionStatus: self.environment === 'prod' ? 'PROD' : self.environment === 'dev' ? 'DEV' : 'TEST' },
      // Each dataset has its own granularity; this is what a dataset is given when none is named.
      securityAttributes: { defaultGranularity: 'boolean', securityLevels: ['PUBLIC'] },
      entryTypes: entryTypeDefinitions(),
    },
  };
}

export function mapDocument(config: ServerConfig, host: string | undefined, context: BeaconContext) {
  return {
    meta: informationalMeta(context),
    response: { $schema: `${FRAMEWORK}/configuration/beaconMapSchema.json`, endpointSets: endpointSets(beaconIdentity(config, host).root) },
  };
}

export const entryTypesDocument = (context: BeaconContext) => ({ meta: informationalMeta(context), response: { entryTypes: entryTypeDefinitions() } });
