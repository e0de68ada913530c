/**
 * The ids refget takes (refget 2, "Checksum Identifier Identification"): an MD5 (32 hexadecimal
 * digits), a `SQ.` digest (`ga4gh`: sha512t24u, the first 24 bytes of the SHA-512 of the upper-cased
 * sequence in base64url), a TRUNC512 digest (the same 24 bytes in 48 hexadecimal digits, refget 1's
 * form), each optionally with its namespace (`md5:`, `ga4gh:`, `trunc512:`), or an accession of the
 * references holding the sequence, bare or as `insdc:ACCESSION`. Hexadecimal digests are case-blind.
 */

/** What an id names a sequence by: one of its digests, or an accession. */
export type SequenceKey = { md5: string } | { sha512t24u: string } | { accession: string };

const HEX32 = /^[0-9a-f]{32}$/i;
const HEX48 = /^[0-9a-f]{48}$/i;

/** The TRUNC512 form of a sha512t24u digest, and back. */
export const trunc512Of = (sha512t24u: string) => Buffer.from(sha512t24u, 'base64url').toString('hex');
const sha512t24uOf = (trunc512: string) => Buffer.from(trunc512, 'hex').toString('base64url');

/** The `ga4gh` form of a sha512t24u digest, as metadata gives it. */
export const ga4ghOf = (sha512t24u: string) => `SQ.${sha512t24u}`;

/** What `id` names, or undefined when it cannot name anything here (an unknown namespace, a malformed digest). */
export function keyOf(id: string): SequenceKey | undefined {
  const colon = id.indexOf(':');
  const namespace = colon < 0 ? undefined : id.slice(0, colon).toLowerCase();
  const value = colon < 0 ? id : id.slice(colon + 1);
  switch (namespace) {
    case undefined:
      if (HEX32.test(value)) return { md5: value.toLowerCase() };
      if (HEX48.test(value)) return { sha512t24u: sha512t24uOf(value) };
      if (value.startsWith('SQ.')) return { sha512t24u: value.slice(3) };
      return { accession: value };
    case 'md5':
      return HEX32.test(value) ? { md5: value.toLowerCase() } : undefined;
    case 'ga4gh':
      return value.startsWith('SQ.') ? { sha512t24u: value.slice(3) } : undefined;
    case 'trunc512':
      return HEX48.test(value) ? { sha512t24u: sha512t24uOf(value) } : undefined;
    case 'insdc':
      return { accession: value };
    default:
      return undefined;
  }
}
