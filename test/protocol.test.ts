/** The protocol layer on its own: naming forms, types, errors, ids, page tokens. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Attributes } from '../src/protocol/common.js';
import { GAException } from '../src/protocol/errors.js';
import { decodeId, encodeId, idEncoder, IdKinds } from '../src/protocol/ids.js';
import {
  decodePageToken,
  defaultPagingLimits,
  encodePageToken,
  queryFingerprint,
  resolvePageSize,
} from '../src/protocol/paging.js';
import { pageTokenAtEnd, searchResponse, writeError, writeSearchPage } from '../src/protocol/reply.js';
import { inRequestForm, message, parseMessage, t, writeMessage } from '../src/protocol/schema.js';

const Inner = message('Inner', { termId: t.string, attributes: t.msg(() => Attributes) });
const Request = message('Request', {
  referenceSetId: t.string,
  start: t.int64,
  pageSize: t.int32,
  threshold: t.double,
  isDerived: t.bool,
  names: t.list(t.string, { acceptSingle: true }),
  species: t.msg(() => Inner),
  units: t.enumOf('EXPRESSION_UNIT_UNSPECIFIED', 'FPKM', 'TPM'),
});

function rejects(fn: () => unknown, status: number, messagePart: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GAException, `expected a GAException, got ${e}`);
    assert.equal(e.status, status);
    assert.match(e.message, messagePart);
    return true;
  });
}

describe('reading requests', () => {
  it('reads camelCase and answers in camelCase', () => {
    const { value, form } = parseMessage<any>(Request, { referenceSetId: 'a', pageSize: 3, species: { termId: 'x' } });
    assert.deepEqual(value, { referenceSetId: 'a', pageSize: 3, species: { termId: 'x' } });
    assert.equal(form, 'camel');
  });

  it('reads snake_case at any depth and answers in snake_case', () => {
    const { value, form } = parseMessage<any>(Request, { reference_set_id: 'a', page_size: 3, species: { term_id: 'x' } });
    assert.deepEqual(value, { referenceSetId: 'a', pageSize: 3, species: { termId: 'x' } });
    assert.equal(form, 'snake');
  });

  it('takes fields whose two forms are the same without deciding the form', () => {
    assert.equal(parseMessage(Request, { start: 5 }).form, 'camel');
    assert.equal(parseMessage(Request, { start: 5, page_size: 1 }).form, 'snake');
  });

  it('keeps user map keys as they are', () => {
    const { value } = parseMessage<any>(Request, {
      species: { attributes: { attr: { My_Key: { values: [{ string_value: 'v' }] } } } },
    });
    assert.deepEqual(value.species.attributes.attr, { My_Key: { values: [{ stringValue: 'v' }] } });
  });

  it('rejects unknown fields, naming them', () => {
    rejects(() => parseMessage(Request, { pagesize: 3 }), 400, /'pagesize'/);
    rejects(() => parseMessage(Request, { species: { termid: 'x' } }), 400, /'species.termid'/);
  });

  it('rejects the same field spelled both ways', () => {
    rejects(() => parseMessage(Request, { pageSize: 1, page_size: 2 }), 400, /given twice/);
  });

  it('accepts 64-bit integers as numbers or decimal strings', () => {
    assert.equal(parseMessage<any>(Request, { start: '12345678901' }).value.start, 12345678901);
    assert.equal(parseMessage<any>(Request, { start: 7 }).value.start, 7);
    assert.equal(parseMessage<any>(Request, { pageSize: '10' }).value.pageSize, 10);
  });

  it('rejects values of the wrong type, naming the field', () => {
    rejects(() => parseMessage(Request, { start: 'abc' }), 400, /'start' must be an integer/);
    rejects(() => parseMessage(Request, { pageSize: 1.5 }), 400, /'pageSize' must be an integer/);
    rejects(() => parseMessage(Request, { pageSize: 2 ** 40 }), 400, /'pageSize' must be a 32-bit integer/);
    rejects(() => parseMessage(Request, { start: 2 ** 60 }), 400, /'start'/);
    rejects(() => parseMessage(Request, { referenceSetId: 3 }), 400, /'referenceSetId' must be a string/);
    rejects(() => parseMessage(Request, { isDerived: 'yes' }), 400, /'isDerived' must be true or false/);
    rejects(() => parseMessage(Request, { threshold: 'high' }), 400, /'threshold' must be a number/);
    rejects(() => parseMessage(Request, { species: [] }), 400, /species must be a JSON object/);
    rejects(() => parseMessage(Request, { names: [1] }), 400, /'names\[0\]' must be a string/);
    rejects(() => parseMessage(Request, { units: 'RPKM' }), 400, /'units' must be one of/);
  });

  it('reads null as not given and a single string as a one-element list where allowed', () => {
    assert.deepEqual(parseMessage(Request, { referenceSetId: null, names: 'BRCA1' }).value, { names: ['BRCA1'] });
  });

  it('reads enums by name or number, and doubles from strings', () => {
    assert.equal(parseMessage<any>(Request, { units: 2 }).value.units, 'TPM');
    assert.equal(parseMessage<any>(Request, { threshold: '0.5' }).value.threshold, 0.5);
  });

  it('requires required fields', () => {
    const R = message('R', { id: t.required(t.string) });
    rejects(() => parseMessage(R, {}), 400, /'id' is required/);
  });

  it('reads a scalar at its zero value as not given, as proto3 does, and a required one as missing', () => {
    const zeros = { referenceSetId: '', start: '0', pageSize: 0, threshold: -0, isDerived: false, units: 0, species: { termId: '' } };
    assert.deepEqual(parseMessage(Request, zeros).value, { species: {} });
    assert.deepEqual(parseMessage(Request, { units: 'EXPRESSION_UNIT_UNSPECIFIED', threshold: '0.0' }).value, {});
    const R = message('R', { id: t.required(t.string), start: t.required(t.int64) });
    rejects(() => parseMessage(R, { id: '', start: 5 }), 400, /'id' is required/);
    rejects(() => parseMessage(R, { id: 'x', start: '0' }), 400, /'start' is required/);
    // Lists, list items and messages keep their presence: `[]` is not absent, nor is `[""]` empty.
    assert.deepEqual(parseMessage(Request, { names: [] }).value, { names: [] });
    assert.deepEqual(parseMessage(Request, { names: [''] }).value, { names: [''] });
    assert.deepEqual(parseMessage(Request, { names: '' }).value, { names: [''] });
    // Members of a oneof are given even at their zero value (AttributeValue).
    const attributes = { attr: { k: { values: [{ int64Value: '0' }, { stringValue: '' }, { boolValue: false }] } } };
    assert.deepEqual(parseMessage(Attributes, attributes).value, { attr: { k: { values: [{ int64Value: 0 }, { stringValue: '' }, { boolValue: false }] } } });
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, [], 'x', 3]) rejects(() => parseMessage(Request, body), 400, /must be a JSON object/);
  });
});

describe('writing records', () => {
  it('writes camelCase or snake_case, leaving out unset fields, empty lists and empty messages', () => {
    const value = { referenceSetId: 'a', start: 10, species: { attributes: { attr: {} } }, names: [] };
    assert.equal(writeMessage(Request, value, 'camel'), '{"referenceSetId":"a","start":10}');
    assert.equal(writeMessage(Request, value, 'snake'), '{"reference_set_id":"a","start":10}');
    assert.equal(writeMessage(Request, { names: ['x'] }, 'camel'), '{"names":["x"]}');
  });

  it("writes a search response's result list even when empty, and leaves empty lists out of its records", () => {
    const Item = message('Item', { id: t.string, tags: t.list(t.string) });
    const Response = searchResponse('SearchItemsResponse', 'items', Item);
    assert.equal(writeMessage(Response.desc, { items: [] }, 'camel'), '{"items":[]}');
    const page = { records: [{ id: 'a', tags: [] }], positionAfter: () => 0, more: false, fingerprint: 'f' };
    assert.equal(writeSearchPage(Response, page, 'camel', defaultPagingLimits), '{"items":[{"id":"a"}]}');
  });

  it('never renames map keys and spells non-finite numbers as strings', () => {
    const value = { species: { attributes: { attr: { AF_x: { values: [{ doubleValue: NaN }] } } } } };
    assert.equal(
      writeMessage(Request, value, 'snake'),
      '{"species":{"attributes":{"attr":{"AF_x":{"values":[{"double_value":"NaN"}]}}}}}',
    );
  });

  it('writes errors with only errorCode and message', () => {
    const e = new GAException('notFound', 'no such thing');
    assert.deepEqual(JSON.parse(writeError(e, 'camel')), { errorCode: 10, message: 'no such thing' });
    assert.deepEqual(JSON.parse(writeError(e, 'snake')), { error_code: 10, message: 'no such thing' });
  });
});

describe('ids', () => {
  it('are base64url JSON arrays of names that round-trip', () => {
    const id = encodeId(['NCBI37', '1']);
    assert.equal(id, Buffer.from('["NCBI37","1"]').toString('base64url'));
    assert.match(id, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeId(id, IdKinds.reference), ['NCBI37', '1']);
  });

  it('under one prefix (idEncoder) are the base64url of the whole JSON array, for every prefix and name length', () => {
    const names = ['', 'a', 'ab', 'abc', 'exon:ENST00000000011.1:1', 'with "quotes" and \\ slash', 'tab\tand\u0001', 'é', 'Gène-1', '日本', '😀x'];
    for (const prefix of [['ds', 'fs', 'set'], ['d', 'fs', 's1'], ['da', 'fs', 's12'], ['dé', 'fs', 'set'], ['a"b', 'fs', '']]) {
      const encode = idEncoder(prefix);
      for (const name of names) {
        assert.equal(encode(name), Buffer.from(JSON.stringify([...prefix, name]), 'utf8').toString('base64url'), `${prefix} ${name}`);
      }
    }
  });

  it('decoded again (from the ids kept) are still checked against the kind asked for, and cannot be changed', () => {
    const id = encodeId(['NCBI37', '1']);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(decodeId(id, IdKinds.reference), ['NCBI37', '1']);
      rejects(() => decodeId(id, IdKinds.referenceSet), 404, /no reference set with id/);
      rejects(() => decodeId(id, IdKinds.variantSet), 404, /no variant set with id/);
    }
    const tagged = encodeId(['ds', 'rgs', 'set']);
    assert.deepEqual(decodeId(tagged, IdKinds.readGroupSet), ['ds', 'rgs', 'set']);
    rejects(() => decodeId(tagged, IdKinds.variantSet), 404, /no variant set with id/);
    assert.throws(() => (decodeId(id, IdKinds.reference) as string[]).push('x'));
    assert.deepEqual(decodeId(id, IdKinds.reference), ['NCBI37', '1']);
    // More ids than are kept: each still decodes to its own names, the first ones too.
    const many = Array.from({ length: 5000 }, (_, i) => ['set', `ref${i}`]);
    for (const names of many) assert.deepEqual(decodeId(encodeId(names), IdKinds.reference), names);
    for (const names of many.slice(0, 10)) assert.deepEqual(decodeId(encodeId(names), IdKinds.reference), names);
  });

  it('are 404 when malformed or of the wrong kind', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    for (const bad of ['', '!!', 'abc', b64('{"a":1}'), b64('["a"]'), b64('["a",1]'), b64('[ "a","b"]'), encodeId(['a', 'b']) + '=']) {
      rejects(() => decodeId(bad, IdKinds.reference), 404, /no reference with id/);
    }
  });
});

describe('the nextPageToken at the end of a page', () => {
  it('is read from the last member of the page in either naming form, and from nothing else', () => {
    const token = 'WyJhIiwxMl0_-x9';
    assert.equal(pageTokenAtEnd(`{"alignments":[{"id":"x"}],"nextPageToken":"${token}"}`), token);
    assert.equal(pageTokenAtEnd(`{"alignments":[],"next_page_token":"${token}"}`), token);
    // A tail that begins inside the page (the worker keeps its last 8 KB).
    assert.equal(pageTokenAtEnd(`0},{"id":"y"}],"nextPageToken":"${token}"}`), token);
    for (const text of [
      '{"alignments":[]}',
      '{"alignments":[],"nextPageToken":""}',
      `{"alignments":[],"nextPageToken":"${token}"} `,
      `{"alignments":[],"nextPageToken":"a b"}`,
      `{"alignments":[],"pageToken":"${token}"}`,
      `{"alignments":[],"xnextPageToken":"${token}"}`,
      `"nextPageToken":"${token}"}`,
      `{"alignments":[{"name":",\"nextPageToken\":\"${token}\"}"}]}`,
      `{"a":"${token}"}`,
      '"}',
      '',
    ]) {
      assert.equal(pageTokenAtEnd(text), undefined, text);
    }
  });
});

describe('ids as scripts spell them', () => {
  // What Python's base64.b64encode and R's base64enc::base64encode write: padded, standard alphabet.
  const standard = (names: string[]) => Buffer.from(JSON.stringify(names)).toString('base64');

  it('accept padding and the standard alphabet, and decode to the same names', () => {
    const padded = standard(['genome']);
    assert.equal(padded, 'WyJnZW5vbWUiXQ==');
    assert.deepEqual(decodeId(padded, IdKinds.referenceSet), ['genome']);
    // A name whose id holds '+' and '/' in the standard alphabet ('-' and '_' in the URL-safe one).
    const names = ['ds', 'vs', 'set>?', 'sample~~~'];
    const std = standard(names);
    assert.match(std, /[+/]/);
    assert.deepEqual(decodeId(std, IdKinds.callSet), names);
    assert.deepEqual(decodeId(std.replace(/=+$/, ''), IdKinds.callSet), names);
    assert.deepEqual(decodeId(encodeId(names), IdKinds.callSet), names);
  });

  it('stay strict about what the id names', () => {
    rejects(() => decodeId(standard(['genome']), IdKinds.reference), 404, /no reference with id/);
    rejects(() => decodeId(standard(['ds', 'rgs', 'x']), IdKinds.variantSet), 404, /no variant set/);
    rejects(() => decodeId('WyJnZW5vbWUiXQ=', IdKinds.referenceSet), 404, /no reference set/); // wrong padding
    rejects(() => decodeId('WyJnZW5vbWUiXQ===', IdKinds.referenceSet), 404, /no reference set/);
  });

  it('are written URL-safe and unpadded', () => {
    const id = encodeId(['ds', 'vs', 'set>?', 'sample~~~']);
    assert.match(id, /^[A-Za-z0-9_-]+$/);
  });
});

describe('errors in the naming form of the request', () => {
  const Req = message('Req', { pageSize: t.int32, referenceName: t.string, inner: t.msg(() => Inner) });
  const Inner = message('Inner', { callSetIds: t.list(t.string) });

  it('name the fields in snake_case for a snake_case request, and leave ids and values alone', () => {
    const e = new GAException('invalidRequest', "field 'pageSize' must be an integer, not 'referenceName' in 'inner.callSetIds[0]' of 'WyJkcyJd'");
    assert.equal(
      inRequestForm(e, Req, 'snake').message,
      "field 'page_size' must be an integer, not 'reference_name' in 'inner.call_set_ids[0]' of 'WyJkcyJd'",
    );
    assert.equal(inRequestForm(e, Req, 'camel'), e);
    assert.equal(inRequestForm(e, Req, 'snake').code, e.code);
  });
});

describe('page sizes and tokens', () => {
  it('default, clamp and reject page sizes', () => {
    assert.equal(resolvePageSize(undefined, defaultPagingLimits), 100);
    assert.equal(resolvePageSize(0, defaultPagingLimits), 100);
    assert.equal(resolvePageSize(5000, defaultPagingLimits), 1000);
    rejects(() => resolvePageSize(-1, defaultPagingLimits), 400, /'pageSize'/);
  });

  it('bind a token to its query, whatever the field order or page size', () => {
    const a = queryFingerprint('s', { x: 1, y: 'b', pageSize: 5 });
    const b = queryFingerprint('s', { y: 'b', x: 1, pageSize: 50, pageToken: 'zz' });
    assert.equal(a, b);
    assert.notEqual(a, queryFingerprint('s', { x: 2, y: 'b' }));
    assert.notEqual(a, queryFingerprint('other', { x: 1, y: 'b' }));
    const token = encodePageToken(a, ['k', 3]);
    assert.deepEqual(decodePageToken(token, b), ['k', 3]);
  });

  it('reject tokens of another query, tampered tokens and garbage', () => {
    const fp = queryFingerprint('s', { x: 1 });
    const token = encodePageToken(fp, 'after-this');
    rejects(() => decodePageToken(token, queryFingerprint('s', { x: 2 })), 400, /different query/);
    const raw = JSON.parse(Buffer.from(token, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify([raw[0].replace('after-this', 'after-that'), raw[1]])).toString('base64url');
    rejects(() => decodePageToken(forged, fp), 400, /not a token this server issued/);
    for (const bad of ['x', '%%%', token.slice(0, -2), Buffer.from('[1,2]').toString('base64url')]) {
      rejects(() => decodePageToken(bad, fp), 400, /pageToken/);
    }
  });
});

describe('search pages', () => {
  const Item = message('Item', { name: t.string });
  const response = searchResponse('SearchItemsResponse', 'items', Item);
  const names = ['a', 'b', 'c'];
  const page = (more: boolean) => ({
    records: names.map((name) => ({ name })),
    positionAfter: (i: number) => names[i],
    more,
    fingerprint: 'fp',
  });

  it('carry a token only when more records follow', () => {
    const last = JSON.parse(writeSearchPage(response, page(false), 'camel', defaultPagingLimits));
    assert.deepEqual(last, { items: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const middle = JSON.parse(writeSearchPage(response, page(true), 'snake', defaultPagingLimits));
    assert.equal(decodePageToken(middle.next_page_token, 'fp'), 'c');
  });

  it('end early at the byte budget, with at least one record, continuing after the last written', () => {
    const tight = { ...defaultPagingLimits, pageByteBudget: 1 };
    const out = JSON.parse(writeSearchPage(response, page(false), 'camel', tight));
    assert.deepEqual(out.items, [{ name: 'a' }]);
    assert.equal(decodePageToken(out.nextPageToken, 'fp'), 'a');
  });
});
