/** Path matching for the service's routes, with the optional version prefix. */
import type { GAException } from '../protocol/errors.js';
import type { Reply } from '../protocol/reply.js';
import type { MessageDesc, NamingForm } from '../protocol/schema.js';

export const VERSION_PREFIX = '/v0.6.0a10';

export interface RouteInput<Body = any> {
  /** Path parameters, URL-decoded. */
  params: Record<string, string>;
  /** The request body (POST) or query parameters (GET), read against the route's description. */
  body: Body;
  form: NamingForm;
  remote: { address: string; userAgent: string };
}

export interface Route {
  method: 'GET' | 'POST';
  /** Path with `{name}` placeholders, without the version prefix. */
  path: string;
  /** What the body (POST) or the query string (GET) may hold. GET routes without one take no query. */
  request?: MessageDesc;
  handle(input: RouteInput): Promise<Reply>;
  /**
   * Called instead of the generic error reply when the body cannot be read at all (not JSON, wrong
   * content type, too large): for routes that must record or answer such requests in their own way.
   */
  onBadBody?(error: GAException, remote: RouteInput['remote']): Promise<never>;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'wrongMethod'; allowed: string[] }
  | { kind: 'none' };

export class Router {
  private readonly routes: CompiledRoute[] = [];

  add(route: Route): void {
    this.routes.push({ route, segments: route.path.split('/').filter(Boolean) });
  }

  /** True when some route (any method) has this path pattern. */
  has(path: string): boolean {
    return this.routes.some((r) => r.route.path === path);
  }

  match(method: string, rawPath: string): Match {
    let path = rawPath;
    if (path === VERSION_PREFIX || path.startsWith(VERSION_PREFIX + '/')) path = path.slice(VERSION_PREFIX.length);
    const segments = path.split('/').filter(Boolean);
    // A literal path (/references/search) wins over a pattern (/references/{id}) that also fits it.
    const candidates = this.routes
      .map((r) => ({ route: r.route, params: matchSegments(r.segments, segments), literal: !r.route.path.includes('{') }))
      .filter((c) => c.params !== undefined);
    const pool = candidates.some((c) => c.literal) ? candidates.filter((c) => c.literal) : candidates;
    const hit = pool.find((c) => c.route.method === method);
    if (hit) return { kind: 'found', route: hit.route, params: hit.params! };
    const allowed = [...new Set(pool.map((c) => c.route.method))];
    return allowed.length ? { kind: 'wrongMethod', allowed } : { kind: 'none' };
  }
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith('{')) {
      try {
        params[p.slice(1, -1)] = decodeURIComponent(segments[i]);
      } catch {
        return undefined;
      }
    } else if (p !== segments[i]) return undefined;
  }
  return params;
}
