/**
 * Which bases a sequence request asks for (refget 2, "get sequence by ID" and "Range headers"):
 * `start`/`end` query parameters (0-based, end exclusive; 200) or one `Range: bytes=FIRST-LAST` header
 * (0-based, inclusive; 206), never both. A start after the end wraps the origin of a circular sequence
 * and is 416 for any other; a range outside the sequence is 416. For the Range header the errors
 * follow the refget compliance suite: a malformed header, or a first byte at or past the end, is 400;
 * a first byte after the last is 416 (ranges across the origin are for `start`/`end` only); a last
 * byte past the end is read as the end, as RFC 9110 says.
 */
import { RefgetError } from './errors.js';

export interface BasesWanted {
  status: 200 | 206;
  /** [start, end) pieces of the sequence, in the order they are sent: two for a range across the origin. */
  spans: Array<[number, number]>;
  /** The Content-Range of a 206. */
  contentRange?: string;
}

const DIGITS = /^\d+$/;

function coordinate(query: Array<[string, string]>, name: 'start' | 'end'): number | undefined {
  const values = query.filter(([key]) => key === name).map(([, value]) => value);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new RefgetError(400, `query parameter '${name}' is given ${values.length} times`);
  const n = Number(values[0]);
  if (!DIGITS.test(values[0]) || !Number.isSafeInteger(n)) throw new RefgetError(400, `query parameter '${name}' must be an unsigned integer, not '${values[0]}'`);
  return n;
}

function fromQuery(start: number | undefined, end: number | undefined, length: number, circular: boolean): BasesWanted {
  const from = start ?? 0;
  const to = end ?? length;
  if (start !== undefined && start >= length && !(start === 0 && length === 0)) {
    throw new RefgetError(416, `query parameter 'start' (${start}) must be less than the sequence's length, ${length}`);
  }
  if (to > length) throw new RefgetError(416, `query parameter 'end' (${to}) must not be more than the sequence's length, ${length}`);
  if (from <= to) return { status: 200, spans: [[from, to]] };
  if (!circular) throw new RefgetError(416, `query parameter 'start' (${from}) is after 'end' (${to}), and the sequence is not circular`);
  return { status: 200, spans: [[from, length], [0, to]] };
}

function fromRangeHeader(header: string, length: number): BasesWanted {
  const m = /^\s*bytes\s*=\s*(\d+)-(\d+)\s*$/i.exec(header);
  if (!m) throw new RefgetError(400, `header 'Range' must be one range of bytes, FIRST-LAST (e.g. bytes=0-9), not '${header}'`);
  const first = Number(m[1]);
  const last = Number(m[2]);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last)) throw new RefgetError(400, `header 'Range' holds a number too large: '${header}'`);
  if (first >= length) throw new RefgetError(400, `header 'Range' starts at byte ${first}, at or past the end of the sequence (length ${length})`);
  if (first > last) throw new RefgetError(416, `header 'Range' starts at byte ${first}, after its last byte ${last} (a range across the origin is asked with start and end)`);
  const end = Math.min(last + 1, length);
  return { status: 206, spans: [[first, end]], contentRange: `bytes ${first}-${end - 1}/${length}` };
}

/** The bases a request asks for of a sequence of `length` bases; RefgetError 400 or 416 when it asks for what cannot be. */
export function basesWanted(query: Array<[string, string]>, range: string | undefined, length: number, circular: boolean): BasesWanted {
  const start = coordinate(query, 'start');
  const end = coordinate(query, 'end');
  if (range !== undefined) {
    if (start !== undefined || end !== undefined) throw new RefgetError(400, "give either header 'Range' or query parameters 'start' and 'end', not both");
    return fromRangeHeader(range, length);
  }
  return fromQuery(start, end, length, circular);
}
