/**
 * What a ticket request asks for, read from a GET query or a POST body (htsget 1.3, "GET request" and
 * "POST request"), with the errors the specification names for each mistake. Parameters it does not
 * define are ignored: clients send their own (`encryptionScheme` among them). `fields`, `tags` and
 * `notags` are checked and then not applied (service-info says so): a ticket always gives whole records.
 */
import { HtsgetError, invalidInput } from './errors.js';

export type Datatype = 'reads' | 'variants';

/** Reads: the records of a reference (`*`: the unplaced unmapped reads), within [start, end) when given. */
export interface Region {
  referenceName: string;
  start?: number;
  end?: number;
}

export interface TicketRequest {
  format?: string;
  /** `class=header`: the header only. */
  headerOnly: boolean;
  /** Undefined: every record of the file, placed or not. */
  regions?: Region[];
}

/** The unplaced unmapped reads (reads endpoint). */
export const UNPLACED = '*';

/** The fields a request may name (htsget 1.3, "Field filtering"). */
const FIELDS = new Set(['QNAME', 'FLAG', 'RNAME', 'POS', 'MAPQ', 'CIGAR', 'RNEXT', 'PNEXT', 'TLEN', 'SEQ', 'QUAL']);
const UINT32_MAX = 2 ** 32 - 1;

function position(name: string, value: unknown): number {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0 || number > UINT32_MAX) {
    throw invalidInput(`${name} must be an unsigned 32-bit integer, not ${JSON.stringify(value)}`);
  }
  return number;
}

function region(referenceName: unknown, start: unknown, end: unknown, where: string): Region {
  if (typeof referenceName !== 'string' || referenceName === '') throw invalidInput(`${where}referenceName must be a non-empty string`);
  const out: Region = { referenceName };
  if (start !== undefined) out.start = position(`${where}start`, start);
  if (end !== undefined) out.end = position(`${where}end`, end);
  if (referenceName === UNPLACED && (start !== undefined || end !== undefined)) {
    throw invalidInput(`${where}start and end cannot be given with referenceName '*': the unplaced reads have no position`);
  }
  if (out.start !== undefined && out.end !== undefined && out.start > out.end) {
    throw new HtsgetError('InvalidRange', `${where}start (${out.start}) is greater than end (${out.end})`);
  }
  return out;
}

/** `fields`, `tags` and `notags` as lists, checked: known field names (reads), no tag both included and excluded. */
function checkFilters(datatype: Datatype, fields: string[] | undefined, tags: string[] | undefined, notags: string[] | undefined): void {
  const unknown = datatype === 'reads' ? fields?.find((f) => !FIELDS.has(f)) : undefined;
  if (unknown !== undefined) throw invalidInput(`fields: '${unknown}' is not a field (${[...FIELDS].join(', ')})`);
  const both = tags?.find((t) => notags?.includes(t));
  if (both !== undefined) throw invalidInput(`tag '${both}' is in both tags and notags`);
}

function checkClass(value: unknown, others: Record<string, unknown>): boolean {
  if (value === undefined) return false;
  if (value !== 'header') throw invalidInput(`class must be 'header' when given, not ${JSON.stringify(value)}`);
  const given = Object.keys(others).filter((k) => others[k] !== undefined);
  if (given.length) throw invalidInput(`class=header takes no other parameter than format (${given.join(', ')} given)`);
  return true;
}

function format(value: unknown): string | undefined {
  if (value !== undefined && typeof value !== 'string') throw invalidInput('format must be a string');
  return value;
}

const list = (text: string | undefined) => (text === undefined ? undefined : text.split(',').filter(Boolean));

/** A query's parameters by name, as sent; a name given twice is refused, since each means one thing. */
export function parametersOf(query: Array<[string, string]>): Record<string, string> {
  const named: Record<string, string> = {};
  for (const [name, value] of query) {
    if (name in named) throw invalidInput(`query parameter '${name}' is given twice`);
    named[name] = value;
  }
  return named;
}

/** A GET request's query parameters. */
export function fromQuery(query: Record<string, string>, datatype: Datatype): TicketRequest {
  const { referenceName, start, end, fields, tags, notags } = query;
  const headerOnly = checkClass(query.class, { referenceName, start, end, fields, tags, notags });
  checkFilters(datatype, list(fields), list(tags), list(notags));
  if (referenceName === undefined) {
    if (start !== undefined || end !== undefined) throw invalidInput('start and end need a referenceName');
    return { format: format(query.format), headerOnly };
  }
  return { format: format(query.format), headerOnly, regions: [region(referenceName, start, end, '')] };
}

function strings(name: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw invalidInput(`${name} must be an array of strings`);
  return value;
}

/** A POST request's JSON body (an object: the HTTP layer refuses anything else). */
export function fromBody(body: Record<string, unknown>, datatype: Datatype): TicketRequest {
  const { regions } = body;
  const fields = strings('fields', body.fields);
  const tags = strings('tags', body.tags);
  const notags = strings('notags', body.notags);
  const headerOnly = checkClass(body.class, { regions, fields, tags, notags });
  checkFilters(datatype, fields, tags, notags);
  if (regions === undefined) return { format: format(body.format), headerOnly };
  if (!Array.isArray(regions) || regions.length === 0) throw invalidInput('regions must be a non-empty array (leave it out for every record)');
  return {
    format: format(body.format),
    headerOnly,
    regions: regions.map((r, i) => {
      if (typeof r !== 'object' || r === null || Array.isArray(r)) throw invalidInput(`regions[${i}] must be an object`);
      const { referenceName, start, end } = r as Record<string, unknown>;
      if (typeof start === 'string' || typeof end === 'string') throw invalidInput(`regions[${i}]: start and end are numbers in a POST body`);
      return region(referenceName, start, end, `regions[${i}].`);
    }),
  };
}
