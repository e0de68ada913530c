/**
 * Ids are the URL-safe base64 (no padding) of the compact UTF-8 JSON of an array of local names, e.g.
 * a reference is `["NCBI37","1"]`. They decode without shared state, so any replica resolves any id.
 */
import { mayHave, NO_DATASET } from '../access/request-access.js';
import { GAException, notFound } from './errors.js';

export interface IdKind {
  /** What the id names, for messages: "reference set". */
  readonly label: string;
  /** How many names the array holds. */
  readonly parts: number;
  /** The area's tag, when the array's second name is one (`["ds","vs","name"]`): ids of other kinds are 404. */
  readonly tag?: string;
  /** Belongs to no dataset (reference sets are shared): no access policy applies to it. */
  readonly global?: true;
}

export const IdKinds = {
  dataset: { label: 'dataset', parts: 1 },
  referenceSet: { label: 'reference set', parts: 1, global: true },
  reference: { label: 'reference', parts: 2, global: true },
  variantSet: { label: 'variant set', parts: 3, tag: 'vs' },
  callSet: { label: 'call set', parts: 4, tag: 'vs' },
  variant: { label: 'variant', parts: 6, tag: 'vs' },
  rnaQuantificationSet: { label: 'RNA quantification set', parts: 2 },
  rnaQuantification: { label: 'RNA quantification', parts: 3 },
  expressionLevel: { label: 'expression level', parts: 4 },
  // Areas of spec section 4.5: [dataset, tag, set name, ...]
  readGroupSet: { label: 'read group set', parts: 3, tag: 'rgs' },
  readGroup: { label: 'read group', parts: 4, tag: 'rgs' },
  featureSet: { label: 'feature set', parts: 3, tag: 'fs' },
  feature: { label: 'feature', parts: 4, tag: 'fs' },
  continuousSet: { label: 'continuous set', parts: 3, tag: 'cs' },
  variantAnnotationSet: { label: 'variant annotation set', parts: 3, tag: 'vas' },
  variantAnnotation: { label: 'variant annotation', parts: 6, tag: 'vas' },
  individual: { label: 'individual', parts: 3, tag: 'ind' },
  biosample: { label: 'biosample', parts: 3, tag: 'bs' },
  phenotypeAssociationSet: { label: 'phenotype association set', parts: 3, tag: 'pas' },
} as const satisfies Record<string, IdKind>;

export function encodeId(names: readonly string[]): string {
  return Buffer.from(JSON.stringify(names), 'utf8').toString('base64url');
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The two base64url characters of every 12-bit value: three bytes are written as two lookups. */
const BASE64URL_PAIRS = Array.from({ length: 4096 }, (_, v) => BASE64URL[v >> 6] + BASE64URL[v & 63]);
const ASCII = /^[\x00-\x7f]*$/;

/**
 * encodeId([...prefix, last]) for many `last` names under one prefix (the features of one set): the
 * base64 of the prefix is computed once, up to the last whole group of three bytes, and the rest is
 * encoded in JavaScript when it is ASCII (a Buffer per id measured at twice the cost on pages of
 * features, where ids are most of what is written).
 */
export function idEncoder(prefix: readonly string[]): (last: string) => string {
  const prefixJson = JSON.stringify([...prefix, '']).slice(0, -3); // `["a","b",`
  if (!ASCII.test(prefixJson)) return (last) => encodeId([...prefix, last]);
  const cut = prefixJson.length - (prefixJson.length % 3);
  const head = Buffer.from(prefixJson.slice(0, cut), 'latin1').toString('base64url');
  const rest = prefixJson.slice(cut);
  return (last) => {
    const text = rest + JSON.stringify(last) + ']';
    if (!ASCII.test(text)) return encodeId([...prefix, last]);
    let out = head;
    const n = text.length;
    let i = 0;
    for (; i + 2 < n; i += 3) {
      const v = (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8) | text.charCodeAt(i + 2);
      out += BASE64URL_PAIRS[v >> 12] + BASE64URL_PAIRS[v & 4095];
    }
    if (n - i === 1) out += BASE64URL_PAIRS[text.charCodeAt(i) << 4];
    else if (n - i === 2) {
      const v = (text.charCodeAt(i) << 10) | (text.charCodeAt(i + 1) << 2);
      out += BASE64URL_PAIRS[v >> 6] + BASE64URL[v & 63];
    }
    return out;
  };
}

/** Either base64 alphabet, with or without padding: scripts build ids with their language's default base64. */
const BASE64_ANY = /^[A-Za-z0-9_+/-]+={0,2}$/;

/**
 * Ids decoded lately, by the id as given, to their names: clients ask for the same few ids again and
 * again (a browser for its reference, a script for its sets), and decoding one costs 2.5-3 µs (Buffer
 * calls, JSON.parse, the round trip that checks the spelling) against well under 0.1 µs for a lookup:
 * ~9% of the main thread's time per GET by id. Only ids that decode are kept, without their kind
 * (checked on every call); at most DECODED_KEPT ids of at most DECODED_LONGEST characters (~1 MB).
 */
const decoded = new Map<string, readonly string[]>();
const DECODED_KEPT = 4096;
const DECODED_LONGEST = 256;

/**
 * Decodes an id: lenient about its spelling (padding, the standard alphabet's `+` and `/`), strict
 * about what it names: anything but an array of the kind's names (and tag) is a 404 naming the id.
 */
export function decodeId(id: string, kind: IdKind): readonly string[] {
  const names = namesOfId(id, kind);
  if (names === undefined) throw notFound(kind.label, id);
  // Where every dataset-scoped id is resolved, before any registry or file read: records of a dataset
  // below `record` for the request's caller do not exist for them, so the id must answer what an
  // unknown id answers, body and time alike (a 403 would tell a dataset the registry holds from one it
  // does not). It is resolved into a dataset that cannot exist, whose lookup finds nothing.
  if (!kind.global && !mayHave(names[0], 'record')) return [NO_DATASET, ...names.slice(1)];
  return names;
}

/**
 * The names of an id of `kind`, or undefined when it is none: for ids that only filter a search, where
 * an id of nothing here (a foreign IRI, another kind's id) matches nothing rather than being a 404.
 */
export function namesOfId(id: string, kind: IdKind): readonly string[] | undefined {
  // Not checked against the access policy: callers match what it names only inside a scope decided
  // already (a set whose id decodeId resolved, the datasets Beacon reached).
  const names = decoded.get(id) ?? decodeNames(id);
  return names !== undefined && names.length === kind.parts && (kind.tag === undefined || names[1] === kind.tag) ? names : undefined;
}

/** The names of an id whatever its kind, or undefined when it is not the spelling of an array of names. */
function decodeNames(id: string): readonly string[] | undefined {
  if (typeof id !== 'string' || id.length === 0 || id.length > 4096 || !BASE64_ANY.test(id)) return undefined;
  // The canonical spelling: URL-safe alphabet, no padding. Mixed alphabets are refused.
  if (/[+/]/.test(id) && /[-_]/.test(id)) return undefined;
  // Padding, when given, is what base64 writes: up to a multiple of 4 characters.
  if (id.endsWith('=') && id.length % 4 !== 0) return undefined;
  const canonical = id.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  if (canonical.length % 4 === 1) return undefined;
  let names: unknown;
  try {
    names = JSON.parse(Buffer.from(canonical, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string') || encodeId(names) !== canonical) return undefined;
  if (id.length <= DECODED_LONGEST) {
    if (decoded.size >= DECODED_KEPT) decoded.delete(decoded.keys().next().value!);
    decoded.set(id, Object.freeze(names));
  }
  return names;
}

/**
 * Decodes ids on the thread answering the request, before work is handed to the page workers: those
 * threads run outside the request's access context, so the caller's access to the datasets the ids
 * name is decided here (an id of a dataset they may not read answers what an unknown id answers).
 * What is not a string is left for the work itself to report. `field`: the request's field the ids
 * are in, named by the 404 as the work names it for an id of nothing registered.
 */
export function checkedBeforeHandOff(ids: ReadonlyArray<unknown>, kind: IdKind, field?: string): void {
  for (const id of ids) {
    // Not an id of this kind: the work answers it as it does without a policy.
    const names = typeof id === 'string' ? namesOfId(id, kind) : undefined;
    if (names === undefined || kind.global || mayHave(names[0], 'record')) continue;
    const error = notFound(kind.label, id as string);
    throw field ? new GAException('notFound', `${error.message} (field '${field}')`) : error;
  }
}
