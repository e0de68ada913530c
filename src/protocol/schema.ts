/**
 * Message descriptions: each area describes its requests and records once, with camelCase field names,
 * and this module reads requests in either naming form and writes records in the form asked for.
 * Map keys (Attributes.attr, user data) are never renamed.
 */
import { GAException } from './errors.js';

export type NamingForm = 'camel' | 'snake';

export type FieldType =
  | { kind: 'string' }
  | { kind: 'int32' }
  | { kind: 'int64' }
  | { kind: 'double' }
  | { kind: 'bool' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'message'; message: () => MessageDesc }
  /** keepEmpty: written as `[]` when empty (the result list of a search response); other lists are left out then. */
  | { kind: 'list'; of: FieldType; acceptSingle?: boolean; keepEmpty?: boolean }
  | { kind: 'map'; of: FieldType }
  | { kind: 'json' };

export interface FieldSpec {
  type: FieldType;
  required?: boolean;
  /** The one name the field has in both forms, when the .proto spells it so (EvidenceQuery.evidenceType). */
  wireNames?: [string];
}

interface Field {
  camel: string;
  snake: string;
  type: FieldType;
  required: boolean;
  /** `"name":` in each form, precomputed for the writer. */
  key: Record<NamingForm, string>;
}

export interface MessageDesc {
  readonly name: string;
  readonly fields: readonly Field[];
  /** The fields are the members of one oneof (AttributeValue): a member at its zero value is still given. */
  readonly oneof: boolean;
  readonly byWireName: ReadonlyMap<string, { field: Field; form: NamingForm | 'both' }>;
}

export const snakeName = (camel: string) => camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

/** Every description made by message(), by name: the API document finds a route's response here. */
export const messageCatalogue = new Map<string, MessageDesc>();

export function message(name: string, spec: Record<string, FieldType | FieldSpec>, options: { oneof?: boolean } = {}): MessageDesc {
  const fields: Field[] = [];
  const byWireName = new Map<string, { field: Field; form: NamingForm | 'both' }>();
  for (const [camel, s] of Object.entries(spec)) {
    const { type, required = false, wireNames } = 'kind' in s ? { type: s, wireNames: undefined } : s;
    const snake = wireNames ? wireNames[0] : snakeName(camel);
    const field: Field = {
      camel,
      snake,
      type,
      required,
      key: { camel: JSON.stringify(camel) + ':', snake: JSON.stringify(snake) + ':' },
    };
    fields.push(field);
    if (snake === camel) byWireName.set(camel, { field, form: 'both' });
    else {
      byWireName.set(camel, { field, form: 'camel' });
      byWireName.set(snake, { field, form: 'snake' });
    }
  }
  const desc = { name, fields, byWireName, oneof: options.oneof ?? false };
  if (!messageCatalogue.has(name)) messageCatalogue.set(name, desc);
  return desc;
}

// Field type constructors, so descriptions read like the schema tables.
export const t = {
  string: { kind: 'string' } as FieldType,
  int32: { kind: 'int32' } as FieldType,
  int64: { kind: 'int64' } as FieldType,
  double: { kind: 'double' } as FieldType,
  bool: { kind: 'bool' } as FieldType,
  json: { kind: 'json' } as FieldType,
  enumOf: (...values: string[]): FieldType => ({ kind: 'enum', values }),
  msg: (message: () => MessageDesc): FieldType => ({ kind: 'message', message }),
  list: (of: FieldType, opts: { acceptSingle?: boolean; keepEmpty?: boolean } = {}): FieldType => ({ kind: 'list', of, ...opts }),
  map: (of: FieldType): FieldType => ({ kind: 'map', of }),
  required: (type: FieldType): FieldSpec => ({ type, required: true }),
};

// ---------------------------------------------------------------------------------------------------
// Reading requests

export interface Parsed<T> {
  value: T;
  /** snake when the body spelled its fields in snake_case only; camel otherwise. */
  form: NamingForm;
}

interface FormSeen {
  camel: boolean;
  snake: boolean;
}

const INT64_TEXT = /^-?\d+$/;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function bad(path: string, expected: string, got: unknown): GAException {
  return new GAException('invalidRequest', `field '${path}' must be ${expected}, not ${describe(got)}`);
}

function readValue(type: FieldType, v: unknown, path: string, seen: FormSeen): unknown {
  switch (type.kind) {
    case 'string':
      if (typeof v !== 'string') throw bad(path, 'a string', v);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw bad(path, 'true or false', v);
      return v;
    case 'int32':
    case 'int64': {
      // protobuf JSON accepts integers as numbers or as decimal strings.
      let n: number;
      if (typeof v === 'number') n = v;
      else if (typeof v === 'string' && INT64_TEXT.test(v.trim())) n = Number(v.trim());
      else throw bad(path, 'an integer', v);
      if (!Number.isSafeInteger(n)) throw bad(path, 'an integer', v);
      if (type.kind === 'int32' && (n < INT32_MIN || n > INT32_MAX)) throw bad(path, 'a 32-bit integer', v);
      return n;
    }
    case 'double': {
      if (typeof v === 'number') return v;
      if (typeof v === 'string') {
        const s = v.trim();
        if (s === 'NaN') return NaN;
        if (s === 'Infinity') return Infinity;
        if (s === '-Infinity') return -Infinity;
        if (s !== '' && Number.isFinite(Number(s))) return Number(s);
      }
      throw bad(path, 'a number', v);
    }
    case 'enum':
      if (typeof v === 'string' && type.values.includes(v)) return v;
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < type.values.length) return type.values[v];
      throw bad(path, `one of ${type.values.join(', ')}`, v);
    case 'message':
      return readObject(type.message(), v, path, seen);
    case 'list': {
      if (!Array.isArray(v)) {
        if (type.acceptSingle) return [readValue(type.of, v, path, seen)];
        throw bad(path, 'a list', v);
      }
      return v.map((item, i) => {
        if (item === null) throw bad(`${path}[${i}]`, 'a value', item);
        return readValue(type.of, item, `${path}[${i}]`, seen);
      });
    }
    case 'map': {
      if (!isPlainObject(v)) throw bad(path, 'an object', v);
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) out[k] = readValue(type.of, item, `${path}.${k}`, seen);
      return out;
    }
    case 'json':
      return v;
  }
}

/**
 * proto3 cannot tell a scalar field at its zero value (0, "", false, an enum's first value) from one
 * not given, and protobuf's JSON writer leaves such fields out: the Python client cannot send
 * `start: 0`. So the reader drops them, and a required field refuses both alike. Lists, maps and
 * messages keep their presence (`callSetIds: []` is not `callSetIds` absent), as do oneof members.
 */
function isZeroScalar(type: FieldType, v: unknown): boolean {
  switch (type.kind) {
    case 'string':
      return v === '';
    case 'int32':
    case 'int64':
    case 'double':
      return v === 0;
    case 'bool':
      return v === false;
    case 'enum':
      return v === type.values[0];
    default:
      return false;
  }
}

function readObject(desc: MessageDesc, input: unknown, path: string, seen: FormSeen): Record<string, unknown> {
  if (!isPlainObject(input)) {
    throw new GAException('invalidRequest', `${path || desc.name} must be a JSON object, not ${describe(input)}`);
  }
  const out: Record<string, unknown> = {};
  const spelled = new Map<string, string>();
  for (const [wireName, raw] of Object.entries(input)) {
    const hit = desc.byWireName.get(wireName);
    const where = path ? `${path}.${wireName}` : wireName;
    if (!hit) throw new GAException('unknownField', `unknown field '${where}' in ${desc.name}`);
    const { field, form } = hit;
    const earlier = spelled.get(field.camel);
    if (earlier !== undefined) {
      throw new GAException('duplicateField', `field '${where}' is given twice, as '${earlier}' and '${wireName}'`);
    }
    spelled.set(field.camel, wireName);
    if (form !== 'both') seen[form] = true;
    if (raw === null) continue; // null means "not given"
    const value = readValue(field.type, raw, path ? `${path}.${field.camel}` : field.camel, seen);
    if (!desc.oneof && isZeroScalar(field.type, value)) continue;
    out[field.camel] = value;
  }
  for (const field of desc.fields) {
    if (field.required && out[field.camel] === undefined) {
      throw new GAException('missingField', `field '${path ? path + '.' : ''}${field.camel}' is required`);
    }
  }
  return out;
}

/** Reads a request body (already JSON-decoded) against a message description. */
export function parseMessage<T>(desc: MessageDesc, input: unknown): Parsed<T> {
  const seen: FormSeen = { camel: false, snake: false };
  const value = readObject(desc, input, '', seen) as T;
  return { value, form: seen.snake && !seen.camel ? 'snake' : 'camel' };
}

// ---------------------------------------------------------------------------------------------------
// Writing records

function writeNumber(n: number): string {
  // JSON has no NaN or Infinity; protobuf JSON spells them as strings.
  return Number.isFinite(n) ? String(n) : JSON.stringify(String(n));
}

/** Serialized value, or undefined when the value should be left out (unset, or an empty list/message/map). */
function writeValue(type: FieldType, v: unknown, form: NamingForm): string | undefined {
  if (v === undefined || v === null) return undefined;
  switch (type.kind) {
    case 'string':
    case 'enum':
      return JSON.stringify(v);
    case 'bool':
      return v ? 'true' : 'false';
    case 'int32':
    case 'int64':
    case 'double':
      return writeNumber(v as number);
    case 'message': {
      const text = writeMessage(type.message(), v as Record<string, unknown>, form);
      return text === '{}' ? undefined : text;
    }
    case 'list': {
      // Empty lists inside records are left out, as protobuf's JSON printer does (the R client fails on
      // "names": []); only a search response's result list is always written.
      if ((v as unknown[]).length === 0 && !type.keepEmpty) return undefined;
      const items = (v as unknown[]).map((item) => writeValue(type.of, item, form) ?? 'null');
      return '[' + items.join(',') + ']';
    }
    case 'map': {
      const parts: string[] = [];
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        const text = writeValue(type.of, item, form);
        if (text !== undefined) parts.push(JSON.stringify(k) + ':' + text);
      }
      return parts.length ? '{' + parts.join(',') + '}' : undefined;
    }
    case 'json':
      return JSON.stringify(v);
  }
}

/** Writes a record as JSON text, with fields in the description's order and unset fields left out. */
export function writeMessage(desc: MessageDesc, value: Record<string, unknown>, form: NamingForm): string {
  let out = '{';
  for (const field of desc.fields) {
    const text = writeValue(field.type, value[field.camel], form);
    if (text === undefined) continue;
    if (out.length > 1) out += ',';
    out += field.key[form] + text;
  }
  return out + '}';
}

/** The JSON key of a field in a form, for writers that assemble their own text (hot paths). */
export function keyOf(desc: MessageDesc, camel: string, form: NamingForm): string {
  const field = desc.fields.find((f) => f.camel === camel);
  if (!field) throw new Error(`${desc.name} has no field ${camel}`);
  return field.key[form];
}

// ---------------------------------------------------------------------------------------------------
// Errors in the request's naming form

const fieldNamesSeen = new WeakMap<MessageDesc, Set<string>>();

/** The camelCase names of every field a message and the messages inside it have. */
function fieldNamesOf(desc: MessageDesc): Set<string> {
  let names = fieldNamesSeen.get(desc);
  if (names) return names;
  names = new Set();
  fieldNamesSeen.set(desc, names);
  const visit = (type: FieldType) => {
    if (type.kind === 'message') for (const n of fieldNamesOf(type.message())) names!.add(n);
    else if (type.kind === 'list' || type.kind === 'map') visit(type.of);
  };
  for (const field of desc.fields) {
    names.add(field.camel);
    visit(field.type);
  }
  return names;
}

/**
 * The error as a snake_case request should read it: field names quoted in its message
 * (`field 'pageSize'`, `'a.referenceName'`) are given in snake_case. Only names of the request's own
 * fields are renamed, so ids and values quoted in the message stay as they are.
 */
export function inRequestForm(error: GAException, request: MessageDesc | undefined, form: NamingForm): GAException {
  if (form === 'camel' || request === undefined) return error;
  const names = fieldNamesOf(request);
  const message = error.message.replace(/'([A-Za-z][A-Za-z0-9_.[\]]*)'/g, (quoted, path: string) => {
    const renamed = path
      .split('.')
      .map((segment) => {
        const bracket = segment.indexOf('[');
        const name = bracket === -1 ? segment : segment.slice(0, bracket);
        return names.has(name) ? snakeName(name) + segment.slice(name.length) : segment;
      })
      .join('.');
    return `'${renamed}'`;
  });
  return message === error.message ? error : new GAException(error.kind, message, error.extra);
}
