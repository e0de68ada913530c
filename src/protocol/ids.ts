/**
 * Ids are the URL-safe base64 (no padding) of the compact UTF-8 JSON of an array of local names, e.g.
 * a reference is `["NCBI37","1"]`. They decode without shared state, so any replica resolves any id.
 */
import { notFound } from './errors.js';

export interface IdKind {
  /** What the id names, for messages: "reference set". */
  readonly label: string;
  /** How many names the array holds. */
  readonly parts: number;
  /** The area's tag, when the array's second name is one (`["ds","vs","name"]`): ids of other kinds are 404. */
  readonly tag?: string;
}

export const IdKinds = {
  dataset: { label: 'dataset', parts: 1 },
  referenceSet: { label: 'reference set', parts: 1 },
  reference: { label: 'reference', parts: 2 },
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

/** Either base64 alphabet, with or without padding: scripts build ids with their language's default base64. */
const BASE64_ANY = /^[A-Za-z0-9_+/-]+={0,2}$/;

/**
 * Decodes an id: lenient about its spelling (padding, the standard alphabet's `+` and `/`), strict
 * about what it names: anything but an array of the kind's names (and tag) is a 404 naming the id.
 */
export function decodeId(id: string, kind: IdKind): string[] {
  const fail = () => notFound(kind.label, id);
  if (typeof id !== 'string' || id.length === 0 || id.length > 4096 || !BASE64_ANY.test(id)) throw fail();
  // The canonical spelling: URL-safe alphabet, no padding. Mixed alphabets are refused.
  if (/[+/]/.test(id) && /[-_]/.test(id)) throw fail();
  // Padding, when given, is what base64 writes: up to a multiple of 4 characters.
  if (id.endsWith('=') && id.length % 4 !== 0) throw fail();
  const canonical = id.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  if (canonical.length % 4 === 1) throw fail();
  let names: unknown;
  try {
    names = JSON.parse(Buffer.from(canonical, 'base64url').toString('utf8'));
  } catch {
    throw fail();
  }
  if (
    !Array.isArray(names) ||
    names.length !== kind.parts ||
    !names.every((n) => typeof n === 'string') ||
    (kind.tag !== undefined && names[1] !== kind.tag) ||
    encodeId(names) !== canonical
  ) {
    throw fail();
  }
  return names;
}
