/**
 * refget's media types, and which one a request's Accept header picks (refget 2, "Internet Media Types
 * Handling"; RFC 9110 section 12.5.1 for media ranges and q-values). An endpoint answers in its refget 2
 * type, fully specified, unless the client names only refget 1's; `text/plain` and `application/json`
 * degrade to the refget 2 type, as the specification asks. Anything else is 406.
 */

/** A media type an endpoint answers in, and the names a client may ask for it by. */
export interface MediaChoice {
  answer: string;
  names: string[];
}

const V2_TEXT = 'text/vnd.ga4gh.refget.v2.0.0+plain';
const V1_TEXT = 'text/vnd.ga4gh.refget.v1.0.0+plain';
const V2_JSON = 'application/vnd.ga4gh.refget.v2.0.0+json';
const V1_JSON = 'application/vnd.ga4gh.refget.v1.0.0+json';

/** The types of sequence replies, in the server's order of preference. */
export const SEQUENCE_MEDIA: MediaChoice[] = [
  { answer: V2_TEXT, names: [V2_TEXT, 'text/plain'] },
  // refget 1's draft named its type `seq`; the first compliance suites still send it.
  { answer: V1_TEXT, names: [V1_TEXT, 'text/vnd.ga4gh.seq.v1.0.0+plain'] },
];

/** The types of metadata and service-info replies. */
export const JSON_MEDIA: MediaChoice[] = [
  { answer: V2_JSON, names: [V2_JSON, 'application/json'] },
  { answer: V1_JSON, names: [V1_JSON] },
];

/** The replies' charset: sequences are US-ASCII, and so is the JSON this interface writes. */
export const withCharset = (type: string) => `${type}; charset=us-ascii`;

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function rangesOf(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const item of accept.split(',')) {
    const [name, ...params] = item.split(';');
    const [type, subtype] = name.trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=').map((p) => p.trim());
      // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ); a malformed one drops the range.
      if (key.toLowerCase() === 'q') q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value ?? '') ? Number(value) : NaN;
    }
    if (!Number.isNaN(q)) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** How much a client wants `name`: the q of the most specific range that covers it (0 when none does). */
function qualityOf(name: string, ranges: MediaRange[]): number {
  const [type, subtype] = name.split('/');
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    const specificity = range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === '*' ? 1 : range.type === '*' && range.subtype === '*' ? 0 : -1;
    if (specificity > best) {
      best = specificity;
      q = range.q;
    }
  }
  return q;
}

/** The type to answer in, or undefined when the client accepts none of the endpoint's (406). No Accept header accepts any. */
export function negotiate(accept: string | undefined, choices: MediaChoice[]): string | undefined {
  if (accept === undefined || accept.trim() === '') return choices[0].answer;
  const ranges = rangesOf(accept);
  let chosen: string | undefined;
  let chosenQ = 0;
  for (const { answer, names } of choices) {
    const q = Math.max(...names.map((name) => qualityOf(name, ranges)));
    if (q > chosenQ) {
      chosen = answer;
      chosenQ = q;
    }
  }
  return chosen;
}
