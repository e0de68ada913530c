/**
 * What the page workers and the main thread share: the operations an area hands to the workers, the
 * settings a worker starts with, and the messages between the two. No area is named here: an area
 * registers a module whose `pageOperations` export builds its operations inside each worker.
 */
import type { ErrorKindName } from '../protocol/errors.js';
import type { PagingLimits } from '../protocol/paging.js';
import type { CompressionSettings } from '../content-coding.js';
import type { ContentCoding, JsonStream } from '../protocol/reply.js';
import type { NamingForm } from '../protocol/schema.js';
import type { Registry } from '../registry/registry.js';

/** One operation of an area that answers with a stream of JSON (a page of a search, a large record). */
export interface PageOperation {
  /** Checks the request (every 4xx and 404 happens here) and returns the reply, to be written. */
  start(arg: any): Promise<JsonStream>;
  /**
   * For searches whose next page may be built ahead of its request: text naming the registrations
   * the answer depends on (a set's registration time), read through the registry cache as a page
   * built on request would read them. A page built ahead is served only while it is unchanged.
   */
  registration?(arg: any): Promise<string>;
}

export type PageOperations = Record<string, PageOperation>;

/** The export an area's operations module provides (`export const pageOperations: PageOperationsFactory`). */
export type PageOperationsFactory = (registry: Registry, settings: WorkerSettings) => PageOperations;

export interface ReadAheadLimits {
  /** Bytes of pages built ahead one worker holds at most (built and being built); 0: no read-ahead. */
  maxBytes: number;
  /** A page built ahead and not asked for this long after its build began is dropped. */
  holdMs: number;
}

export interface WorkerSettings {
  registryLocation: string;
  paging: PagingLimits;
  registryCacheMs: number;
  readAhead: ReadAheadLimits;
  /** How pages built ahead for a client that takes a content coding are compressed (as the main thread would). */
  compression: CompressionSettings;
  /** URLs of the operations modules, in registration order (a run names its module by index). */
  modules: string[];
}

export type ToWorker =
  /**
   * `coding`: the content coding the reply goes out in; the pages built ahead of its query are compressed so.
   * `spares` (on run and ack): chunk buffers back from the main thread once written, to be filled again.
   */
  | { op: 'run'; id: number; module: number; name: string; arg: unknown; form: NamingForm; coding?: ContentCoding; spares?: ArrayBuffer[] }
  | { op: 'ack'; id: number; spares?: ArrayBuffer[] }
  /** Spare buffers when several have gathered before a run or an ack could carry them. */
  | { op: 'spare'; id: 0; spares: ArrayBuffer[] }
  | { op: 'cancel'; id: number }
  /** Whether the server writes as many large responses as it may: no page is built ahead meanwhile. */
  | { op: 'limit'; id: 0; atLimit: boolean }
  | { op: 'close'; id: 0 };

/** How a reply's page was built: `ahead` of its request or not, and `coded` when compressed so already. */
export interface ReplyStart {
  ahead: boolean;
  coded?: ContentCoding;
}

export type FromWorker =
  /**
   * Bytes of a reply. The first message of a request carries `start` (the request passed its checks),
   * the last `end`; the main thread acks every message but the last. A page complete before its
   * request came goes in one message: each message costs both threads a wake-up (tens of µs here).
   */
  | { type: 'chunk'; id: number; chunks: Uint8Array[]; start?: ReplyStart; end?: true }
  /** The request failed: before its first chunk (its checks, or its page before a byte was sent), or midway. */
  | { type: 'error'; id: number; kind: ErrorKindName; message: string; retryAfterSeconds?: number; logDetail?: string };

/** JSON text with object keys sorted: requests that differ only in key order get the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson((value as Record<string, unknown>)[k])).join(',') + '}';
}
