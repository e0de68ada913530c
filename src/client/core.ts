/**
 * The transport under the typed client (api.ts): JSON over fetch, retries with backoff on 429 and
 * 503 honouring Retry-After, errors as Ga4ghError, and searches as async iterators over pages.
 * Runs in Node 20 and in browsers (the web page uses it): fetch and timers only.
 */

export interface ClientOptions {
  /** Retries after a 429 or 503 answer or a failed connection; 0 turns retrying off. Default 4. */
  retries?: number;
  /** First backoff delay in ms, doubled on each retry (with jitter). Default 250. */
  backoffMs?: number;
  /** No wait is longer than this, whatever Retry-After says. Default 30 000. */
  maxDelayMs?: number;
  /** Headers sent with every request (an API key, for instance). */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** An error answer of the server ({errorCode, message}), or a transport failure (status 0). */
export class Ga4ghError extends Error {
  override readonly name = 'Ga4ghError';
  constructor(
    message: string,
    /** HTTP status; 0 when no answer came. */
    readonly status: number,
    /** The server's stable error number (see the errorCode table of /openapi.json); undefined when the body had none. */
    readonly errorCode: number | undefined,
    /** The error body as the server sent it. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** Reads Retry-After (seconds or an HTTP date) as a delay in ms. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const RETRIED_STATUSES = new Set([429, 503]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Operation {
  method: 'GET' | 'POST';
  /** Path with `{name}` placeholders. */
  path: string;
}

/** The results of a search: iterate the records (`for await`), or the pages, or take one page. */
export class Paged<Item, Page> implements AsyncIterable<Item> {
  constructor(
    private readonly fetchPage: (pageToken: string | undefined) => Promise<Page>,
    private readonly listField: keyof Page & string,
    private readonly firstToken: string | undefined,
  ) {}

  /** One page, from the request's pageToken or the one given. */
  page(pageToken = this.firstToken): Promise<Page> {
    return this.fetchPage(pageToken);
  }

  /** Every page in turn, following nextPageToken until the server sends none. */
  async *pages(): AsyncGenerator<Page> {
    let token = this.firstToken;
    do {
      const page = await this.fetchPage(token);
      yield page;
      token = (page as { nextPageToken?: string }).nextPageToken || undefined;
    } while (token);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    for await (const page of this.pages()) yield* ((page[this.listField] as Item[] | undefined) ?? []);
  }

  /** Every record, or the first `limit` of them. */
  async all(limit = Number.POSITIVE_INFINITY): Promise<Item[]> {
    const out: Item[] = [];
    if (limit <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= limit) break;
    }
    return out;
  }
}

export class ClientCore {
  readonly baseUrl: string;
  private readonly options: Required<Omit<ClientOptions, 'fetch' | 'headers'>> & Pick<ClientOptions, 'fetch' | 'headers'>;

  /** `baseUrl`: the server's URL, e.g. `http://127.0.0.1:8000` (a version prefix may be included). */
  constructor(baseUrl: string, options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.options = { retries: 4, backoffMs: 250, maxDelayMs: 30_000, ...options };
  }

  /** Sends one request and reads its JSON answer, retrying on 429, 503 and failed connections. */
  async send<T>(operation: Operation, params: Record<string, string>, body?: object, query?: object): Promise<T> {
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
    let url = this.baseUrl + path;
    if (query) {
      const search = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) search.set(k, String(v));
      if ([...search].length) url += '?' + search.toString();
    }
    const init: RequestInit = { method: operation.method, headers: { accept: 'application/json', ...this.options.headers } };
    if (operation.method === 'POST') {
      init.headers = { ...init.headers, 'content-type': 'application/json' };
      init.body = JSON.stringify(body ?? {});
    }
    const doFetch = this.options.fetch ?? fetch;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await doFetch(url, init);
      } catch (e) {
        if (attempt >= this.options.retries) {
          throw new Ga4ghError(`${operation.method} ${url} failed: ${(e as Error).message}`, 0, undefined);
        }
        await sleep(this.backoff(attempt));
        continue;
      }
      if (RETRIED_STATUSES.has(response.status) && attempt < this.options.retries) {
        await response.arrayBuffer().catch(() => undefined); // free the connection
        await sleep(Math.min(retryAfterMs(response.headers.get('retry-after')) ?? this.backoff(attempt), this.options.maxDelayMs));
        continue;
      }
      const text = await response.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (!response.ok) {
        const code = json?.errorCode ?? json?.error_code;
        throw new Ga4ghError(
          typeof json?.message === 'string' ? json.message : `${operation.method} ${path} answered ${response.status}`,
          response.status,
          typeof code === 'number' ? code : undefined,
          json ?? text,
        );
      }
      if (json === undefined) throw new Ga4ghError(`${operation.method} ${path} answered no JSON`, response.status, undefined, text);
      return json as T;
    }
  }

  /** A search as pages: the request's own pageToken, if any, is where the first page starts. */
  paged<Item, Page>(operation: Operation, request: { pageToken?: string }, listField: keyof Page & string): Paged<Item, Page> {
    const { pageToken, ...rest } = request;
    return new Paged<Item, Page>(
      (token) => this.send<Page>(operation, {}, token ? { ...rest, pageToken: token } : rest),
      listField,
      pageToken,
    );
  }

  private backoff(attempt: number): number {
    const exponential = this.options.backoffMs * 2 ** attempt;
    return Math.min(exponential / 2 + Math.random() * (exponential / 2), this.options.maxDelayMs);
  }
}
