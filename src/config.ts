/** Settings of a running server, with the defaults `ga4gh serve` starts from. */
import os from 'node:os';
import { defaultCompression, type CompressionSettings } from './content-coding.js';
import type { CorsOrigins } from './http/cors.js';
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
  /**
   * Which other origins' pages may read the answers (genome browsers embedded elsewhere call from
   * theirs), and preflights answered; false: no CORS headers, no preflights (`--no-cors`).
   */
  cors: false | { origins: CorsOrigins };
  /** Write every response in this naming form, whatever the request used. */
  forceForm?: NamingForm;
  /** One line per request on standard error. */
  accessLog: boolean;
  /** Worker threads that build large replies (pages of variants, reads and variant annotations); 0 builds them on the main thread, in slices. */
  pageWorkers: number;
  /** Bytes of pages each page worker may hold built ahead of their requests; 0: none are. */
  readAheadBytes: number;
  /** What one client, or many, may take of the server (docs/serving.md, "Options"). */
  limits: ServerLimits;
  /** Content-Encoding of large JSON replies, negotiated from Accept-Encoding. */
  compression: CompressionSettings;
  /** Every `ga4gh serve` option by its camelCase name, including the ones areas add (e.g. peerPolicy). */
  options: Record<string, unknown>;
}

export interface ServerLimits {
  /** Deepest nesting of objects and arrays in a request body (400 beyond). */
  maxJsonDepth: number;
  /** Largest request line (the URL) and headers together, in bytes (431 beyond). */
  maxHeaderBytes: number;
  /** Connections open at once; one more is answered 503 and closed. */
  maxConnections: number;
  /** Large (streamed) responses written at once; beyond, a request waits its turn for a slot. */
  maxStreams: number;
  /** How long a request waits for one of those slots, in ms, before its 503 with Retry-After (0: none waits). */
  streamWaitMs: number;
  /** Time a client has to send a request's headers, in ms (408 after; slowloris). */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, body included, in ms (408 after). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept, in ms. */
  keepAliveTimeoutMs: number;
  /** A connection with no bytes in either direction for this long is closed, in ms (0: never). */
  idleTimeoutMs: number;
  /** Requests per second from one client address, averaged; 0: no limit. */
  ratePerSecond: number;
  /** Requests one address may send at once above that rate. */
  rateBurst: number;
}

/** One worker per core beyond the main thread's, at least one and at most four. */
export const defaultPageWorkers = () => Math.min(4, Math.max(1, os.availableParallelism() - 1));

export function defaultServerLimits(): ServerLimits {
  return {
    maxJsonDepth: 64,
    maxHeaderBytes: 16 * 1024,
    maxConnections: 1000,
    maxStreams: 8,
    streamWaitMs: 10_000,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    idleTimeoutMs: 120_000,
    ratePerSecond: 0,
    rateBurst: 200,
  };
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
    cors: { origins: '*' },
    accessLog: false,
    pageWorkers: defaultPageWorkers(),
    readAheadBytes: 64 * 1024 * 1024,
    limits: defaultServerLimits(),
    compression: defaultCompression(),
    options: {},
  };
}
