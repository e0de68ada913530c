/**
 * The contract check: every response a test receives through startTestServer (helpers.ts) is checked
 * against the server's own /openapi.json, so the document cannot drift from what the server answers.
 * A response in snake_case is checked against the same schemas with snake_case property names.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { snakeName } from '../src/protocol/schema.js';

type Schema = Record<string, any>;
// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

const VERSION_PREFIX = '/v0.6.0a10';
/** Endpoints that serve the document and the pages rather than the API. */
const NOT_API = new Set(['/openapi.json', '/docs', '/docs/redoc.standalone.js', '/', '/ui/app.js']);

/** The same document with every property name in snake_case (map keys, under additionalProperties, stay). */
function snakeDocument(value: any): any {
  if (Array.isArray(value)) return value.map(snakeDocument);
  if (typeof value !== 'object' || value === null) return value;
  const out: Schema = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'properties' && typeof v === 'object' && v !== null) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [snakeName(name), snakeDocument(s)]));
    } else if (k === 'required' && Array.isArray(v) && v.every((x) => typeof x === 'string')) {
      out[k] = v.map(snakeName);
    } else out[k] = snakeDocument(v);
  }
  return out;
}

const pointer = (...parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ path: string; segments: string[] }>;

  constructor(private readonly document: Schema) {
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'camel');
    this.ajv.addSchema(snakeDocument(document), 'snake');
    this.templates = Object.keys(document.paths).map((path) => ({ path, segments: path.split('/').filter(Boolean) }));
  }

  static async forServer(url: string): Promise<ContractChecker> {
    const res = await fetch(url + '/openapi.json');
    if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
    return new ContractChecker((await res.json()) as Schema);
  }

  private validator(ref: string): ValidateFunction {
    let fn = this.compiled.get(ref);
    if (!fn) this.compiled.set(ref, (fn = this.ajv.compile({ $ref: ref })));
    return fn;
  }

  /** The documented path template a request path falls under (literal paths first, as the router does). */
  templateOf(rawPath: string): string | undefined {
    let path = rawPath;
    if (path === VERSION_PREFIX || path.startsWith(VERSION_PREFIX + '/')) path = path.slice(VERSION_PREFIX.length);
    const segments = path.split('/').filter(Boolean);
    const fits = this.templates.filter(
      (t) => t.segments.length === segments.length && t.segments.every((s, i) => s.startsWith('{') || s === segments[i]),
    );
    return (fits.find((t) => !t.path.includes('{')) ?? fits[0])?.path;
  }

  /** Problems with one response, or undefined when it matches the document. */
  check(method: string, url: string, status: number, contentType: string, text: string): string | undefined {
    const pathname = new URL(url).pathname;
    const stripped = pathname.startsWith(VERSION_PREFIX) ? pathname.slice(VERSION_PREFIX.length) || '/' : pathname;
    if (NOT_API.has(stripped) && status === 200) return undefined;
    const where = `${method} ${pathname} -> ${status}`;
    if (!/^application\/json/.test(contentType)) return `${where}: content type ${contentType}, not JSON`;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return `${where}: the body is not JSON`;
    }
    const template = this.templateOf(pathname);
    const operation = template ? this.document.paths[template][method.toLowerCase()] : undefined;
    let ref: string;
    if (operation) {
      const code = String(status) in operation.responses ? String(status) : 'default';
      if (status === 200 && code !== '200') return `${where}: 200 is not a documented answer`;
      ref = pointer('paths', template!, method.toLowerCase(), 'responses', code, 'content', 'application/json', 'schema');
    } else {
      if (status < 400) return `${where}: an answer from an endpoint the document does not list`;
      ref = pointer('components', 'schemas', 'Error');
    }
    const camel = this.validator('camel' + ref);
    if (camel(json)) return undefined;
    if (this.validator('snake' + ref)(json)) return undefined;
    const error = camel.errors?.[0];
    return `${where}: the body does not match the document at ${error?.instancePath || '/'}: ${error?.message} ${JSON.stringify(error?.params)}; body ${text.slice(0, 300)}`;
  }
}
