/**
 * Beacon ids. A dataset's is its name. Individuals and biosamples keep the ids the 0.6.0a10 areas give
 * them. A variant's `variantInternalId` names its line as the 0.6.0a10 variant id does (dataset, set,
 * reference, 0-based start, digest of REF and ALT) and the alternate allele: the same id while the
 * line is unchanged, decoded without shared state by any replica.
 */
import { encodeId } from '../../protocol/ids.js';

export interface VariantKey {
  datasetName: string;
  setName: string;
  referenceName: string;
  start: number;
  /** Of the line's REF and ALT columns (alleleDigest), as in its 0.6.0a10 id. */
  digest: string;
  /** The allele's number among the line's alternates (1 for the first). */
  allele: number;
}

const TAG = 'bv';

export const variantIdOf = (key: VariantKey) =>
  encodeId([key.datasetName, TAG, key.setName, key.referenceName, String(key.start), key.digest, String(key.allele)]);

/** The key a variantInternalId names, or undefined when it is no id of a variant of this beacon. */
export function variantKeyOf(id: string): VariantKey | undefined {
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(id)) return undefined;
  let names: unknown;
  try {
    names = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(names) || names.length !== 7 || !names.every((n) => typeof n === 'string') || names[1] !== TAG) return undefined;
  const [datasetName, , setName, referenceName, startText, digest, alleleText] = names as string[];
  const start = Number(startText);
  const allele = Number(alleleText);
  if (!/^\d+$/.test(startText) || !Number.isSafeInteger(start) || !/^[1-9]\d*$/.test(alleleText) || !Number.isSafeInteger(allele)) return undefined;
  return { datasetName, setName, referenceName, start, digest, allele };
}
