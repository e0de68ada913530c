/** Settings of a running server, with the defaults `ga4gh serve` starts from. */
import { defaultCompression, type CompressionSettings } from './http/compression.js';
import { defaultPagingLimits, type PagingLimits } from './protocol/paging.js';
import type { NamingForm } from './protocol/schema.js';

export interface ServerConfig {
  host: string;
  port: number;
  paging: PagingLimits;
  /** Bases in one page of ListReferenceBases. */
  basesPageSize: number;
  /** How long registry metadata (sets, references, call sets) is kept in memory; 0 reads it every time. */
  registryCacheMs: number;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** Answer CORS preflights and allow any origin (genome browsers call from other origins). */
  cors: boolean;
  /** Write every response in this naming form, whatever the request used. */
  forceForm?: NamingForm;
  /** One line per request on standard error. */
  accessLog: boolean;
  /** Content-Encoding of large JSON replies, negotiated from Accept-Encoding. */
  compression: CompressionSettings;
  /** Every `ga4gh serve` option by its camelCase name, including the ones areas add (e.g. peerPolicy). */
  options: Record<string, unknown>;
}

export const SERVER_NAME = 'ga4gh-server';
export const SERVER_VERSION = '0.1.0';
export const PROTOCOL_VERSION = '0.6.0a10';

export function defaultServerConfig(): ServerConfig {
  return {
    host: '127.0.0.1',
    port: 8000,
    paging: { ...defaultPagingLimits },
    basesPageSize: 1_000_000,
    registryCacheMs: 2000,
    bodyLimit: 1024 * 1024,
    cors: true,
    accessLog: false,
    compression: defaultCompression(),
    options: {},
  };
}
