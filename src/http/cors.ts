/**
 * CORS: which other origins' pages may read this server's answers. Genome browsers embedded in other
 * sites (igv.js) read tickets, byte ranges and JSON pages from here, so a browser must be told it may
 * hand them over: any origin (`*`, public data), or only the origins listed with `--cors-origin`.
 */
import type http from 'node:http';
import { GAException } from '../protocol/errors.js';
import { addVary } from './compression.js';

/** `*`: any origin; else the origins allowed, each as a browser writes its Origin header. */
export type CorsOrigins = '*' | readonly string[];

/**
 * Headers a page on another origin may read besides the safelisted ones: a genome browser reading a
 * file by range checks what it got (Content-Range) and whether ranges are served; a client that was
 * told to slow down reads when to come back.
 */
const EXPOSED = 'Content-Range, Content-Length, Accept-Ranges, Retry-After, WWW-Authenticate';
/** Allowed in a preflight that names none: a JSON body, a byte range, and the caller's credentials (docs/access.md). */
const DEFAULT_ALLOWED_HEADERS = 'Content-Type, Range, Authorization, GA4GH-Passport';

/** `--cors-origin`'s text: `*`, or comma-separated origins (`scheme://host[:port]`, nothing after). */
export function parseCorsOrigins(text: string): CorsOrigins {
  const items = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new Error('--cors-origin needs * or at least one origin (https://host[:port])');
  if (items.includes('*')) {
    if (items.length > 1) throw new Error('--cors-origin is either * or a list of origins, not both');
    return '*';
  }
  return items.map((item) => {
    let origin: string | undefined;
    try {
      const url = new URL(item);
      if (url.protocol === 'http:' || url.protocol === 'https:') origin = url.origin;
    } catch {
      // not a URL: said below
    }
    if (origin === undefined) throw new Error(`--cors-origin: '${item}' is not an origin (http:// or https://, a host and an optional port)`);
    if (origin !== item) throw new Error(`--cors-origin: '${item}' is not an origin as browsers send it: write ${origin}`);
    return origin;
  });
}

export class Cors {
  private readonly allowed?: ReadonlySet<string>;

  constructor(origins: CorsOrigins) {
    if (origins !== '*') this.allowed = new Set(origins);
  }

  /**
   * Sets what every answer to `req` carries: the origin that may read it and what it may read. With a
   * list, answers differ by Origin (`Vary: Origin`), so caches keep them apart.
   */
  apply(req: http.IncomingMessage, res: http.ServerResponse): void {
    const origin = req.headers.origin;
    if (!this.allowed) {
      res.setHeader('access-control-allow-origin', '*');
    } else {
      addVary(res, 'Origin');
      if (origin === undefined || !this.allowed.has(origin)) return;
      res.setHeader('access-control-allow-origin', origin);
    }
    res.setHeader('access-control-expose-headers', EXPOSED);
  }

  /**
   * Answers a preflight (an OPTIONS request, after apply()): 204 with the methods and headers a page
   * may use, or 403 for an origin that is not listed, so its page learns nothing more.
   */
  preflight(req: http.IncomingMessage, res: http.ServerResponse): void {
    const origin = req.headers.origin;
    if (this.allowed && origin !== undefined && !this.allowed.has(origin)) {
      throw new GAException('forbidden', `pages of ${origin} may not call this server (its --cors-origin lists ${[...this.allowed].join(', ')})`);
    }
    res.writeHead(204, {
      'access-control-allow-methods': 'GET, HEAD, POST, OPTIONS',
      'access-control-allow-headers': req.headers['access-control-request-headers'] ?? DEFAULT_ALLOWED_HEADERS,
      'access-control-max-age': '86400',
    });
    res.end();
  }
}
