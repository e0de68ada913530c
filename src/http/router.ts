/** Path matching for the service's routes, with the optional version prefix. */
import type { IncomingHttpHeaders } from 'node:http';
import type { GAException } from '../protocol/errors.js';
import type { ContentCoding, Reply } from '../protocol/reply.js';
import type { MessageDesc, NamingForm } from '../protocol/schema.js';

export const VERSION_PREFIX = '/v0.6.0a10';

export interface RouteInput<Body = any> {
  /** Path parameters, URL-decoded (a trailing `{name+}` gets the rest of the path, `/` included). */
  params: Record<string, string>;
  /** The request body (POST) or query parameters (GET), read against the route's description. */
  body: Body;
  form: NamingForm;
  /** The content coding a large reply will be sent in (negotiated from Accept-Encoding); undefined: as it is. */
  coding?: ContentCoding;
  /** The client; `host` is the Host header it used (for absolute URLs in documents). */
  remote: { address: string; userAgent: string; host?: string };
  /** The request's headers (names in lower case), for interfaces that negotiate media types or take ranges. */
  headers: IncomingHttpHeaders;
  /** The query string's parameters as sent, for routes that read them themselves (`ownQuery`). */
  query: Array<[string, string]>;
  /** A HEAD request: the reply's body will not be sent, so a body that costs reading need not be read. */
  head: boolean;
}

export interface Route {
  method: 'GET' | 'POST';
  /**
   * Path with `{name}` placeholders, without the version prefix; the last may be `{name+}`, one or
   * more segments (ids with `/` in them).
   */
  path: string;
  /** What the body (POST) or the query string (GET) may hold. GET routes without one take no query. */
  request?: MessageDesc;
  /**
   * The body of this route's error replies, for interfaces with an error form of their own (htsget);
   * the status stays the error's. Absent: `{errorCode, message}`.
   */
  writeError?(error: GAException): { contentType: string; body: string };
  handle(input: RouteInput): Promise<Reply>;
  /**
   * A GET route without `request` that reads its query parameters itself, from `query`: interfaces with
   * rules and errors of their own, whose clients send parameters of their own (htsget, refget). The
   * HTTP layer refuses none of them.
   */
  ownQuery?: boolean;
  /**
   * Requests that carry their own authority (htsget's signed data URLs, bound to a ticket granted
   * earlier): no caller is resolved, credentials are not looked at, and ids resolve as without a policy.
   */
  signedAccess?: boolean;
  /**
   * Called instead of the generic error reply when the body cannot be read at all (not JSON, wrong
   * content type, too large): for routes that must record or answer such requests in their own way.
   */
  onBadBody?(error: GAException, remote: RouteInput['remote']): Promise<never>;

  // For the API document and the client (src/web/openapi.ts), only where it cannot be inferred from
  // the request's message name and the path:
  /** One line saying what the endpoint does. */
  summary?: string;
  /** The message answered on success. */
  response?: MessageDesc;
  /** The body to document when the route reads its body itself (no `request`). */
  documentedRequest?: MessageDesc;
  /** Fields this route's error bodies carry besides errorCode and message. */
  errorFields?: MessageDesc;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

/** A route whose last placeholder takes the rest of the path: its fixed segments before it, and the placeholder's name. */
interface TailRoute {
  route: Route;
  head: string[];
  name: string;
}

const TAIL = /^\{(\w+)\+\}$/;

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'wrongMethod'; allowed: string[] }
  | { kind: 'none' };

export class Router {
  /** Routes without placeholders, by path: these win over patterns that also fit (/references/search). */
  private readonly literal = new Map<string, Route[]>();
  /** Routes with placeholders, by their number of segments. */
  private readonly patterns = new Map<number, CompiledRoute[]>();
  /** Routes ending in `{name+}`: tried when no other route fits. */
  private readonly tails: TailRoute[] = [];

  add(route: Route): void {
    const segments = route.path.split('/').filter(Boolean);
    const tail = TAIL.exec(segments[segments.length - 1] ?? '');
    if (tail) {
      this.tails.push({ route, head: segments.slice(0, -1), name: tail[1] });
    } else if (!route.path.includes('{')) {
      const key = '/' + segments.join('/');
      this.literal.set(key, [...(this.literal.get(key) ?? []), route]);
    } else {
      this.patterns.set(segments.length, [...(this.patterns.get(segments.length) ?? []), { route, segments }]);
    }
  }

  /** True when some route (any method) has this path pattern. */
  has(path: string): boolean {
    return (
      this.literal.has(path) || [...this.patterns.values()].some((list) => list.some((r) => r.route.path === path)) || this.tails.some((t) => t.route.path === path)
    );
  }

  /** HEAD is answered wherever GET is (uptime checkers use it); the HTTP layer sends no body then. */
  match(requestMethod: string, rawPath: string): Match {
    const method = requestMethod === 'HEAD' ? 'GET' : requestMethod;
    let path = rawPath;
    if (path === VERSION_PREFIX || path.startsWith(VERSION_PREFIX + '/')) path = path.slice(VERSION_PREFIX.length);
    const segments = path.split('/').filter(Boolean);
    const literal = this.literal.get('/' + segments.join('/'));
    if (literal) {
      const route = literal.find((r) => r.method === method);
      return route ? { kind: 'found', route, params: {} } : { kind: 'wrongMethod', allowed: withHead(literal.map((r) => r.method)) };
    }
    const allowed: string[] = [];
    for (const { route, segments: pattern } of this.patterns.get(segments.length) ?? []) {
      const params = matchSegments(pattern, segments);
      if (!params) continue;
      if (route.method === method) return { kind: 'found', route, params };
      if (!allowed.includes(route.method)) allowed.push(route.method);
    }
    if (allowed.length === 0) {
      for (const { route, head, name } of this.tails) {
        if (segments.length <= head.length) continue;
        const params = matchSegments(head, segments.slice(0, head.length));
        const rest = params && decodeSegments(segments.slice(head.length));
        if (rest === undefined) continue;
        params![name] = rest;
        if (route.method === method) return { kind: 'found', route, params: params! };
        if (!allowed.includes(route.method)) allowed.push(route.method);
      }
    }
    return allowed.length ? { kind: 'wrongMethod', allowed: withHead(allowed) } : { kind: 'none' };
  }
}

const withHead = (methods: string[]) => (methods.includes('GET') ? [...methods, 'HEAD'] : methods);

/** Segments URL-decoded and joined by `/`, or undefined when one does not decode. */
function decodeSegments(segments: string[]): string | undefined {
  try {
    return segments.map(decodeURIComponent).join('/');
  } catch {
    return undefined;
  }
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.charCodeAt(0) === 123 /* { */) {
      try {
        params[p.slice(1, -1)] = decodeURIComponent(segments[i]);
      } catch {
        return undefined;
      }
    } else if (p !== segments[i]) return undefined;
  }
  return params;
}
