/**
 * The OpenAPI 3.1 document of the running server, built at start-up from the routes every area
 * serves and the message descriptions they read and answer (never written by hand). What a route
 * does not say itself is inferred by naming rules, so a new area appears with nothing extra:
 *
 * - the response of a route whose request is `XRequest` (or `XQuery`) is the message `XResponse`;
 * - `GET /things/{id}` answers the record that `POST /things/search` lists, or else the message whose
 *   name is the singular of `things` (`/readgroups/{id}` -> ReadGroup);
 * - `GET /thing` without parameters answers `GetThingResponse`.
 *
 * A route may override any of this (Route.summary, response, documentedRequest, errorFields);
 * whatever stays unknown is reported in `problems`, which a test requires to be empty.
 */
import { SERVER_NAME, SERVER_VERSION, PROTOCOL_VERSION } from '../config.js';
import { ErrorKind } from '../protocol/errors.js';
import { messageCatalogue, type FieldType, type MessageDesc } from '../protocol/schema.js';
import { VERSION_PREFIX, type Route } from '../http/router.js';

export interface AreaRoutes {
  area: string;
  routes: Route[];
}

type Schema = Record<string, unknown>;

export interface OpenApiBuild {
  document: Schema;
  /** Routes whose response or naming could not be told; empty when the document is complete. */
  problems: string[];
}

const ERROR_SCHEMA = 'Error';

const pascal = (words: string) =>
  words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
const lowerFirst = (s: string) => s[0].toLowerCase() + s.slice(1);
/** `SearchVariantSetsRequest` -> `search variant sets request`. */
const wordsOf = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

const segmentsOf = (path: string) => path.split('/').filter(Boolean);
const isParam = (segment: string) => segment.startsWith('{');
const requestOf = (route: Route) => route.request ?? route.documentedRequest;

/** A search response: one list of records and nextPageToken (reply.ts searchResponse). */
export function listFieldOf(desc: MessageDesc): { field: string; item: MessageDesc } | undefined {
  const others = desc.fields.filter((f) => f.camel !== 'nextPageToken');
  if (others.length !== 1 || others.length === desc.fields.length) return undefined;
  const { type, camel } = others[0];
  if (type.kind !== 'list' || type.of.kind !== 'message') return undefined;
  return { field: camel, item: type.of.message() };
}

export function responseOf(route: Route, all: Route[], depth = 0): MessageDesc | undefined {
  if (route.response) return route.response;
  const request = requestOf(route);
  if (request) {
    const named = messageCatalogue.get(request.name.replace(/(Request|Query)$/, 'Response'));
    if (named) return named;
  }
  const segments = segmentsOf(route.path);
  const last = segments[segments.length - 1];
  if (route.method === 'GET' && segments.length >= 2 && isParam(last) && depth === 0) {
    const collection = segments[segments.length - 2];
    const search = all.find((r) => r.method === 'POST' && r.path === `/${collection}/search`);
    const searchResponse = search && responseOf(search, all, depth + 1);
    const listed = searchResponse && listFieldOf(searchResponse);
    if (listed) return listed.item;
    const singular = collection.replace(/s$/, '');
    for (const [name, desc] of messageCatalogue) if (name.toLowerCase() === singular) return desc;
  }
  if (route.method === 'GET' && !segments.some(isParam) && !request) {
    return messageCatalogue.get(`Get${pascal(segments.join(' '))}Response`);
  }
  return undefined;
}

function baseOperationId(route: Route, response: MessageDesc | undefined): string {
  const request = requestOf(route);
  if (request && /(Request|Query)$/.test(request.name)) return lowerFirst(request.name.replace(/(Request|Query)$/, ''));
  const segments = segmentsOf(route.path);
  if (route.method === 'GET' && isParam(segments[segments.length - 1] ?? '') && response) return `get${response.name}`;
  return route.method.toLowerCase() + pascal(segments.filter((s) => !isParam(s)).join(' '));
}

// ---------------------------------------------------------------------------------------------------
// Message descriptions as JSON Schema

class Schemas {
  readonly components: Record<string, Schema> = {};
  private readonly names = new Map<MessageDesc, string>();

  ref(desc: MessageDesc): Schema {
    return { $ref: `#/components/schemas/${this.add(desc)}` };
  }

  add(desc: MessageDesc): string {
    const known = this.names.get(desc);
    if (known) return known;
    // Two different descriptions may share a name across areas: keep both, the later one numbered.
    let name = desc.name;
    for (let n = 2; name in this.components; n++) name = `${desc.name}${n}`;
    this.names.set(desc, name);
    this.components[name] = {}; // reserved before the fields, for recursive messages
    const properties: Record<string, Schema> = {};
    const listed = listFieldOf(desc);
    const required = desc.fields.filter((f) => f.required || (listed && /Response$/.test(desc.name) && f.camel === listed.field));
    for (const field of desc.fields) properties[field.camel] = this.field(field.type);
    this.components[name] = {
      type: 'object',
      properties,
      ...(required.length ? { required: required.map((f) => f.camel) } : {}),
      additionalProperties: false,
    };
    return name;
  }

  field(type: FieldType): Schema {
    switch (type.kind) {
      case 'string':
        return { type: 'string' };
      case 'bool':
        return { type: 'boolean' };
      case 'int32':
        return { type: 'integer', format: 'int32' };
      case 'int64':
        return { type: 'integer', format: 'int64', description: 'requests may also give it as a decimal string' };
      case 'double':
        return {
          oneOf: [{ type: 'number', format: 'double' }, { enum: ['NaN', 'Infinity', '-Infinity'] }],
          description: 'a number; NaN and infinities are written as strings, as protobuf JSON does',
        };
      case 'enum':
        return { type: 'string', enum: [...type.values] };
      case 'message':
        return this.ref(type.message());
      case 'list':
        return { type: 'array', items: this.field(type.of), ...(type.acceptSingle ? { description: 'a single value is read as a one-element list' } : {}) };
      case 'map':
        return { type: 'object', additionalProperties: this.field(type.of) };
      case 'json':
        return { description: 'any JSON value' };
    }
  }
}

function errorCodeTable(): string {
  const rows = Object.entries(ErrorKind).map(([kind, { code, status }]) => `| ${code} | ${status} | ${wordsOf(kind)} |`);
  return ['| errorCode | HTTP status | meaning |', '|---|---|---|', ...rows].join('\n');
}

function errorSchema(extra?: MessageDesc, schemas?: Schemas): Schema {
  const base: Schema = {
    type: 'object',
    properties: {
      errorCode: { type: 'integer', enum: Object.values(ErrorKind).map((k) => k.code), description: 'a stable number per kind of error (see the table in the introduction)' },
      message: { type: 'string', description: 'what was wrong, naming the field or id' },
    },
    required: ['errorCode', 'message'],
    additionalProperties: false,
  };
  if (!extra || !schemas) return base;
  const withExtra = structuredClone(base) as { properties: Record<string, Schema> };
  for (const field of extra.fields) withExtra.properties[field.camel] = schemas.field(field.type);
  return withExtra;
}

/** A placeholder of a required field's type. */
function placeholderOf(field: MessageDesc['fields'][number]): unknown {
  const { type } = field;
  return type.kind === 'string' ? `<${field.camel}>` : type.kind === 'list' ? [] : type.kind === 'message' ? exampleOf(type.message()) : 0;
}

/** A request example from the description: required fields as placeholders, and a page size. */
function exampleOf(desc: MessageDesc): Record<string, unknown> {
  const example: Record<string, unknown> = {};
  for (const field of desc.fields) {
    if (field.required) example[field.camel] = placeholderOf(field);
    if (field.camel === 'pageSize') example.pageSize = 10;
  }
  return example;
}

const INTRODUCTION = `GA4GH ${PROTOCOL_VERSION} genomic data service: reference sequences, variants, RNA quantifications, peers and
every other area this server serves. Searches are \`POST\` requests with a JSON body, records are read by id with \`GET\`.

**Naming forms.** Fields are shown in camelCase (the protobuf JSON names). Every field may also be spelled in
snake_case (\`page_size\`); a request written in snake_case is answered in snake_case.

**Paging.** A search answers at most \`pageSize\` records (default and maximum are server settings) and a
\`nextPageToken\` while more follow; send it back as \`pageToken\` with the same query. The last page has no token.

**Ids** are opaque, URL-safe strings; take them from search results.

**Every path** is also served under the version prefix \`${VERSION_PREFIX}\`.

**Errors** have the body \`{"errorCode": <int>, "message": "<text>"}\`:

${errorCodeTable()}

This document is generated by the server from the same message descriptions it validates requests with.
`;

export function buildOpenApiDocument(areaRoutes: AreaRoutes[]): OpenApiBuild {
  const schemas = new Schemas();
  const problems: string[] = [];
  const paths: Record<string, Record<string, Schema>> = {};
  const all = areaRoutes.flatMap((a) => a.routes);
  const operationIds = new Set<string>();
  schemas.components[ERROR_SCHEMA] = errorSchema();

  for (const { area, routes } of areaRoutes) {
    for (const route of routes) {
      const response = responseOf(route, all);
      if (!response) problems.push(`${route.method} ${route.path}: no response message found; give the route a 'response'`);
      const base = baseOperationId(route, response);
      let operationId = base;
      const alias = operationIds.has(base);
      if (alias) operationId = `${base}Via${pascal(route.method.toLowerCase() + ' ' + route.path.replace(/[{}]/g, ''))}`;
      operationIds.add(operationId);

      const segments = segmentsOf(route.path);
      const parameters: Schema[] = segments.filter(isParam).map((s) => ({
        name: s.slice(1, -1),
        in: 'path',
        required: true,
        description: 'an id as found in search results',
        schema: { type: 'string' },
      }));
      const request = requestOf(route);
      const operation: Schema = {
        operationId,
        tags: [area],
        summary: route.summary ?? defaultSummary(route, response, request),
      };
      if (alias) operation['x-alias-of'] = base;
      if (request && route.method === 'GET') {
        for (const field of request.fields) {
          parameters.push({ name: field.camel, in: 'query', required: field.required, schema: schemas.field(field.type) });
        }
      } else if (request) {
        operation.requestBody = {
          required: false,
          content: { 'application/json': { schema: schemas.ref(request), example: exampleOf(request) } },
        };
      }
      // Accepted on every endpoint (the Python client always sends it): a key of the access policy, or ignored without one.
      parameters.push({
        name: 'key',
        in: 'query',
        required: false,
        description: 'an API key of the access policy (docs/access.md); ignored when the server runs without one',
        schema: { type: 'string' },
      });
      operation.parameters = parameters;
      const errorRef = route.errorFields
        ? { schema: errorSchema(route.errorFields, schemas) }
        : { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } };
      const errorResponse = (description: string) => ({ description, content: { 'application/json': errorRef } });
      const responses: Record<string, Schema> = {
        '200': {
          description: response ? wordsOf(response.name) : 'success',
          content: { 'application/json': { schema: response ? schemas.ref(response) : {} } },
        },
      };
      if (request || route.method === 'POST') responses['400'] = errorResponse('invalid request: a bad field, type or page token');
      if (parameters.some((p) => p.in === 'path') || request?.fields.some((f) => /Id$/.test(f.camel))) {
        responses['404'] = errorResponse('no record with that id');
      }
      responses['401'] = errorResponse('the credentials given do not verify (WWW-Authenticate: Bearer error="invalid_token"); without credentials a caller is anonymous, never refused');
      responses.default = errorResponse('any other error (see the errorCode table)');
      operation.responses = responses;
      (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
    }
  }

  const document = {
    openapi: '3.1.0',
    info: {
      title: `${SERVER_NAME} GA4GH ${PROTOCOL_VERSION} API`,
      version: SERVER_VERSION,
      description: INTRODUCTION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }, { url: VERSION_PREFIX }],
    tags: areaRoutes.filter((a) => a.routes.length).map((a) => ({ name: a.area })),
    paths,
    components: { schemas: schemas.components, securitySchemes: SECURITY_SCHEMES },
    // Every scheme is optional: an anonymous caller sees what the access policy gives anyone.
    security: [{}, { bearer: [] }, { bearer: [], passport: [] }, { passport: [] }, { apiKey: [] }],
  };
  return { document, problems };
}

/** How a caller says who they are (docs/access.md, "Who the caller is"). */
const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT, or an API key of the access policy', description: 'an access token of a trusted issuer, a passport JWT, or an API key' },
  passport: { type: 'apiKey', in: 'header', name: 'GA4GH-Passport', description: 'GA4GH Passport visas beside the access token: a passport JWT or a list of visa JWTs' },
  apiKey: { type: 'apiKey', in: 'query', name: 'key', description: 'an API key of the access policy' },
};

function defaultSummary(route: Route, response: MessageDesc | undefined, request: MessageDesc | undefined): string {
  const segments = segmentsOf(route.path);
  if (route.method === 'GET' && isParam(segments[segments.length - 1] ?? '') && response) {
    return `Get one ${wordsOf(response.name)} by id`;
  }
  const words = wordsOf(baseOperationId(route, response)).replace(/ (request|query)$/, '');
  if (request || response) return words[0].toUpperCase() + words.slice(1);
  return `${route.method} ${route.path}`;
}
