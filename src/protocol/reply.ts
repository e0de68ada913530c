/**
 * What a handler answers: a record, a page of a search, or a stream of JSON text for replies too large
 * to build in memory. The HTTP layer writes them; this module knows how, not where.
 */
import { GAException } from './errors.js';
import { encodePageToken, type PagingLimits } from './paging.js';
import { message, snakeName, t, writeMessage, type MessageDesc, type NamingForm } from './schema.js';

export interface JsonSink {
  /** Writes JSON text (or its UTF-8 bytes); resolves when the sink can take more (backpressure). */
  write(chunk: string | Uint8Array): void | Promise<void>;
  /**
   * Called by a writer that holds its page until it is complete (it writes nothing meanwhile) after
   * each ~1 MB it builds: a sink whose thread has other work (requests waiting, other connections)
   * lets that work run here. It never throws (the writer's errors are the file's); a sink whose
   * reader went away says so at the next write. Absent: nothing else waits.
   */
  pause?(): void | Promise<void>;
}

/** How much a writer that holds its page builds between two calls of its sink's `pause`. */
export const PAUSE_BYTES = 1 << 20;

/** JSON text written in pieces, for replies too large to build in memory. */
export interface JsonStream {
  write(sink: JsonSink, form: NamingForm): Promise<void>;
}

/** The response message of a search: one list of records and the continuation token. */
export interface SearchResponseDesc {
  desc: MessageDesc;
  listField: string;
  item: MessageDesc;
  listKey: Record<NamingForm, string>;
  tokenKey: Record<NamingForm, string>;
}

export function searchResponse(name: string, listField: string, item: MessageDesc): SearchResponseDesc {
  return {
    desc: message(name, { [listField]: t.list(t.msg(() => item), { keepEmpty: true }), nextPageToken: t.string }),
    listField,
    item,
    listKey: { camel: JSON.stringify(listField), snake: JSON.stringify(snakeName(listField)) },
    tokenKey: { camel: '"nextPageToken"', snake: '"next_page_token"' },
  };
}

/** One page of a search as a service returns it: records in order, each with the position after it. */
export interface SearchPage<T> {
  records: T[];
  /** The cursor position just after records[i], to continue from there. */
  positionAfter(index: number): unknown;
  /** Whether any record follows the last one given. */
  more: boolean;
  /** The query fingerprint the tokens are bound to. */
  fingerprint: string;
  /** Writes a record's JSON, for services that write their records from stored rows (default: writeRecord). */
  write?(record: T, form: NamingForm): string;
}

/** A content coding of HTTP replies (the HTTP layer negotiates it). */
export type ContentCoding = 'br' | 'gzip';

export type Reply =
  | { kind: 'record'; desc: MessageDesc; value: object }
  | { kind: 'page'; response: SearchResponseDesc; page: SearchPage<object> }
  | {
      kind: 'stream';
      write(sink: JsonSink, form: NamingForm): Promise<void>;
      /** Its pieces are this content coding already (a page compressed ahead of its request), not JSON text. */
      coded?: ContentCoding;
      /** Called instead of write() when the reply will not be written (the server refused it first). */
      abandon?(): void;
    }
  /** A reply whose JSON is assembled from pieces of bytes, some taken as they are from a file. */
  | { kind: 'bytes'; chunks(form: NamingForm): Uint8Array[] }
  /**
   * A fixed document of any type (the web page, API docs), written as it is in either naming form;
   * `asIs`: never content-coded, whatever the request accepts (htsget allows transfer-coding only).
   */
  | { kind: 'content'; contentType: string; body: Uint8Array; cacheControl?: string; asIs?: boolean }
  /**
   * An answer of an interface with status codes and media types of its own (refget, htsget's data):
   * its status and headers as given, its body of `length` bytes sent as it is (never content-coded:
   * both allow transfer codings only), the pieces read as the socket takes them (none for HEAD).
   */
  | { kind: 'exact'; status: number; headers: Record<string, string>; length: number; pieces: Iterable<Uint8Array> | AsyncIterable<Uint8Array> };

export const recordReply = (desc: MessageDesc, value: object): Reply => ({ kind: 'record', desc, value });
export const streamReply = (stream: JsonStream): Reply => ({ kind: 'stream', write: (sink, form) => stream.write(sink, form) });

/** A record a service writes itself, in the naming form asked for. */
export const writtenRecordReply = (write: (form: NamingForm) => string): Reply => ({ kind: 'bytes', chunks: (form) => [Buffer.from(write(form))] });

/**
 * The JSON of records that services keep and hand out again (a variant set with its header metadata
 * is kilobytes of text), remembered per object and naming form. Such records must not be mutated.
 */
const written = new WeakMap<object, Partial<Record<NamingForm, string>>>();

export function writeRecord(desc: MessageDesc, value: object, form: NamingForm): string {
  let texts = written.get(value);
  if (!texts) written.set(value, (texts = {}));
  return (texts[form] ??= writeMessage(desc, value as Record<string, unknown>, form));
}
export const pageReply = <T extends object>(response: SearchResponseDesc, page: SearchPage<T>): Reply => ({
  kind: 'page',
  response,
  page: page as SearchPage<object>,
});

/**
 * Writes a search page, stopping early when the serialized records pass the byte budget; the token
 * then continues after the last record written. Look-ahead: no token when nothing follows.
 */
export function writeSearchPage(
  response: SearchResponseDesc,
  page: SearchPage<object>,
  form: NamingForm,
  limits: PagingLimits,
): string {
  const parts: string[] = [];
  let bytes = 0;
  let written = 0;
  for (const record of page.records) {
    const text = page.write ? page.write(record, form) : writeRecord(response.item, record, form);
    parts.push(text);
    bytes += text.length;
    written++;
    if (bytes >= limits.pageByteBudget) break;
  }
  const more = written < page.records.length || page.more;
  let out = '{' + response.listKey[form] + ':[' + parts.join(',') + ']';
  if (more && written > 0) {
    out += ',' + response.tokenKey[form] + ':' + JSON.stringify(encodePageToken(page.fingerprint, page.positionAfter(written - 1)));
  }
  return out + '}';
}

/** What a page token is spelt with. */
const TOKEN_TEXT = /^[A-Za-z0-9_-]+$/;

/**
 * The nextPageToken of a search page from the last bytes of its JSON (latin1 text; a token is at most
 * 4,096 characters): every page writer ends a page that has one with it, as its last member.
 */
export function pageTokenAtEnd(tail: string): string | undefined {
  // Read from the end: a regular expression anchored at the end still tried every position of the
  // 8 KB tail, the worker's costliest expression per page of a few reads.
  if (!tail.endsWith('"}')) return undefined;
  const close = tail.length - 2;
  const open = tail.lastIndexOf('"', close - 1) + 1;
  const token = tail.slice(open, close);
  const keyed = (key: string) => tail.startsWith(key, open - key.length);
  return open > 0 && TOKEN_TEXT.test(token) && (keyed(',"nextPageToken":"') || keyed(',"next_page_token":"')) ? token : undefined;
}

export function writeError(error: GAException, form: NamingForm): string {
  const body: Record<string, unknown> = { ...error.extra };
  body[form === 'snake' ? 'error_code' : 'errorCode'] = error.code;
  body.message = error.message;
  return JSON.stringify(body);
}

/**
 * A keyset page: the store fetched up to pageSize + 1 rows after the token's position, so whether
 * another page follows is known without a second query (look-ahead).
 */
export function keysetPage<Row, T>(
  rows: Row[],
  pageSize: number,
  fingerprint: string,
  toRecord: (row: Row) => T,
  keyOf: (row: Row) => unknown,
): SearchPage<T> {
  const kept = rows.slice(0, pageSize);
  return {
    records: kept.map(toRecord),
    positionAfter: (i) => keyOf(kept[i]),
    more: rows.length > pageSize,
    fingerprint,
  };
}
