/**
 * GET /openapi.json (valid OpenAPI 3.1, every route of every area described), the contract check
 * that helpers.ts applies to every answer, GET /service-info and GET /docs.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { AccessPolicyHolder } from '../src/access/holder.js';
import { areas, routesOfAreas } from '../src/areas/index.js';
import { defaultServerConfig } from '../src/config.js';
import { EMPTY_SVG, REDOC_LOGO_URL } from '../src/web/index.js';
import { buildOpenApiDocument } from '../src/web/openapi.js';
import { ContractChecker } from './contract.js';
import { atEnd, newRegistry, ROOT, startTestServer, tempDir, type TestServer } from './helpers.js';

let server: TestServer;
let document: any;
let location: string;

before(async () => {
  ({ location } = await newRegistry(tempDir()));
  server = await startTestServer(location, {
    options: { serviceId: 'org.example.genomics', organizationName: 'Example Lab', organizationUrl: 'https://lab.example.org' },
  });
  document = (await server.get('/openapi.json')).json;
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    assert.equal(validator.version, '3.1');
  });

  it('describes every route of every area, each with its own response message and a unique operationId', async () => {
    const { location, registry } = await newRegistry(tempDir());
    const config = defaultServerConfig();
    const app = { registry, registryLocation: location, config, access: await AccessPolicyHolder.start({ knownDatasets: async () => new Set(), log: () => {} }), areaNames: areas.map((a) => a.name), onClose: (fn: () => unknown) => void atEnd(fn) };
    const areaRoutes = await routesOfAreas(app);
    const { problems } = buildOpenApiDocument(areaRoutes);
    assert.deepEqual(problems, []);
    const ids = new Set<string>();
    for (const { area, routes } of areaRoutes) {
      for (const route of routes) {
        const operation = document.paths[route.path]?.[route.method.toLowerCase()];
        assert.ok(operation, `${route.method} ${route.path} missing`);
        assert.deepEqual(operation.tags, [area]);
        assert.ok(!ids.has(operation.operationId), operation.operationId);
        ids.add(operation.operationId);
        const schema = operation.responses['200'].content['application/json'].schema;
        assert.match(schema.$ref ?? '', /^#\/components\/schemas\//, `${route.method} ${route.path}`);
        assert.ok(operation.responses.default, `${route.method} ${route.path} documents no error`);
      }
    }
  });

  it('names the records and fields of the schema in camelCase, the search list required and nothing extra', () => {
    const schemas = document.components.schemas;
    const variants = schemas.SearchVariantsResponse;
    assert.deepEqual(Object.keys(variants.properties), ['variants', 'nextPageToken']);
    assert.deepEqual(variants.required, ['variants']);
    assert.equal(variants.additionalProperties, false);
    assert.equal(variants.properties.variants.items.$ref, '#/components/schemas/Variant');
    // Fields of Variant in 0.6.0a10 (proto variants.proto), no more.
    assert.deepEqual(Object.keys(schemas.Variant.properties).sort(), [
      'alternateBases', 'attributes', 'calls', 'ciend', 'cipos', 'created', 'end', 'filtersApplied', 'filtersFailed',
      'filtersPassed', 'id', 'names', 'referenceBases', 'referenceName', 'start', 'svlen', 'updated', 'variantSetId', 'variantType',
    ]);
    assert.deepEqual(schemas.SearchVariantsRequest.required, ['variantSetId', 'referenceName']);
    assert.deepEqual(schemas.ExpressionLevel.properties.units.enum, ['EXPRESSION_UNIT_UNSPECIFIED', 'FPKM', 'TPM']);
    // Maps of attributes keep their keys as given (additionalProperties), so snake_case does not touch them.
    assert.equal(schemas.Attributes.properties.attr.additionalProperties.$ref, '#/components/schemas/AttributeValueList');
    assert.match(document.info.description, /snake_case/);
  });

  it('documents path parameters, query parameters of GET forms and request examples', () => {
    const bases = document.paths['/references/{id}/bases'].get;
    assert.deepEqual(
      bases.parameters.map((p: any) => `${p.in}:${p.name}`),
      ['path:id', 'query:start', 'query:end', 'query:pageToken', 'query:key'],
    );
    const search = document.paths['/variants/search'].post.requestBody.content['application/json'];
    assert.deepEqual(search.example, { variantSetId: '<variantSetId>', referenceName: '<referenceName>', pageSize: 10 });
    // Aliases are described and marked, so that the client leaves them out.
    assert.equal(document.paths['/announce'].post['x-alias-of'], 'announcePeer');
    assert.equal(document.paths['/listreferencebases'].post['x-alias-of'], 'listReferenceBases');
  });

  it('lists every errorCode the server answers in the error table and the Error schema', async () => {
    const res = await server.get('/variantsets/WyJubyJd');
    assert.equal(res.status, 404);
    const codes: number[] = document.components.schemas.Error.properties.errorCode.enum;
    assert.ok(codes.includes(res.json.errorCode));
    assert.match(document.info.description, new RegExp(`\\| ${res.json.errorCode} \\| 404 \\|`));
    const bad = await server.post('/datasets/search', { pagesize: 1 });
    assert.match(document.info.description, new RegExp(`\\| ${bad.json.errorCode} \\| 400 \\|`));
  });
});

describe('the contract check', () => {
  let checker: ContractChecker;
  before(() => {
    checker = new ContractChecker(document);
  });
  const json = 'application/json; charset=utf-8';

  it('accepts answers as the server writes them, in either naming form and under the version prefix', () => {
    assert.equal(checker.check('POST', server.url + '/datasets/search', 200, json, '{"datasets":[{"id":"x","name":"d"}],"nextPageToken":"t"}'), undefined);
    assert.equal(checker.check('POST', server.url + '/v0.6.0a10/variantsets/search', 200, json, '{"variant_sets":[{"dataset_id":"x"}]}'), undefined);
    assert.equal(checker.check('GET', server.url + '/datasets/abc', 404, json, '{"error_code":10,"message":"no"}'), undefined);
  });

  it('rejects a field the schema does not define, a missing result list, a bad type and a bad error body', () => {
    assert.match(checker.check('GET', server.url + '/datasets/abc', 200, json, '{"id":"x","extra":1}') ?? '', /additional/);
    assert.match(checker.check('POST', server.url + '/datasets/search', 200, json, '{}') ?? '', /required/);
    assert.match(checker.check('GET', server.url + '/references/abc', 200, json, '{"length":"12"}') ?? '', /integer/);
    assert.match(checker.check('GET', server.url + '/datasets/abc', 404, json, '{"errorCode":10,"message":"x","stack":"..."}') ?? '', /additional/);
    assert.match(checker.check('GET', server.url + '/datasets/abc', 404, json, '{"errorCode":999,"message":"x"}') ?? '', /allowed values/);
    assert.match(checker.check('GET', server.url + '/nothing/here', 200, json, '{}') ?? '', /does not list/);
    assert.match(checker.check('GET', server.url + '/datasets/abc', 200, 'text/html', '<p>') ?? '', /not JSON/);
  });

  it('accepts the success field on the error bodies of announcements only', () => {
    const body = '{"success":false,"errorCode":1,"message":"bad url"}';
    assert.equal(checker.check('POST', server.url + '/peers/announce', 400, json, body), undefined);
    assert.match(checker.check('POST', server.url + '/datasets/search', 400, json, body) ?? '', /additional/);
  });
});

describe('GET /service-info', () => {
  it('is a GA4GH service-info 1.0 document with the configured id and organization', async () => {
    const res = await server.get('/service-info');
    assert.equal(res.status, 200);
    const info = res.json;
    // The required fields of service-info 1.0, and their types.
    for (const field of ['id', 'name', 'type', 'organization', 'version']) assert.ok(field in info, field);
    assert.equal(info.id, 'org.example.genomics');
    assert.deepEqual(info.organization, { name: 'Example Lab', url: 'https://lab.example.org' });
    assert.deepEqual(Object.keys(info.type).sort(), ['artifact', 'group', 'version']);
    assert.equal(info.type.group, 'org.ga4gh');
    assert.equal(info.type.version, '0.6.0a10');
    assert.equal(info.version, JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    assert.equal(info.documentationUrl, `${server.url}/docs`);
    // /info stays as the specification says.
    assert.equal((await server.get('/info')).json.protocolVersion, '0.6.0a10');
  });

  it('keeps camelCase on a server that answers in snake_case, and has defaults', async () => {
    const snake = await startTestServer(location, { forceForm: 'snake' });
    const info = (await snake.get('/service-info')).json;
    assert.ok('documentationUrl' in info && !('documentation_url' in info));
    assert.equal(info.id, 'local.ga4gh-server');
    assert.equal(info.organization.url, snake.url);
  });
});

describe('GET /docs', () => {
  it('serves redoc from the installed package, pointed at the document, with no other origin', async () => {
    const page = await server.get('/docs');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const sources = [...page.text.matchAll(/src="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(sources, ['docs/redoc.standalone.js']);
    assert.match(page.text, /Redoc\.init\('openapi\.json'/);
    assert.doesNotMatch(page.text, /https?:\/\//);
    const bundle = await fetch(server.url + '/docs/redoc.standalone.js');
    const bytes = Buffer.from(await bundle.arrayBuffer());
    const installed = fs.readFileSync(path.join(ROOT, 'node_modules/redoc/bundles/redoc.standalone.js'), 'utf8');
    assert.equal(bundle.status, 200);
    // As installed, but for the logo redoc would fetch from its CDN.
    assert.ok(installed.includes(REDOC_LOGO_URL));
    assert.equal(bytes.toString('utf8'), installed.replaceAll(REDOC_LOGO_URL, EMPTY_SVG));
    assert.doesNotMatch(bytes.toString('utf8'), /cdn\.redoc\.ly/);
  });
});
