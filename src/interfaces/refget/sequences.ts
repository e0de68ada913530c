/**
 * Sequences by digest, over the references area's registry rows and FASTA readers. A digest names a
 * sequence, not a reference: the same sequence registered in several sets (an assembly's FASTA and a
 * dictionary of the same assembly, say) is one sequence here, its bases read from a set that holds
 * them and its aliases gathered from all. References whose MD5 is unknown (a dictionary without one)
 * have no digest to be found by, so refget does not serve them.
 */
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import type { SequenceFiles } from '../../areas/references/sequences.js';
import {
  getReferenceSetRow,
  holdsSequence,
  listReferences,
  referenceAccessions,
  type ReferenceRow,
  type ReferenceSetRow,
} from '../../areas/references/store.js';
import { RefgetError } from './errors.js';
import { keyOf, type SequenceKey } from './ids.js';

export interface RefgetSequence {
  md5: string;
  /** Null when no set holding its bases has been registered since digests were computed (or could be). */
  sha512t24u: string | null;
  length: number;
  /** Marked circular where any set registers it. */
  circular: boolean;
  /** The INSDC accessions every reference of this sequence was registered with. */
  accessions: string[];
  /** A set holding the bases and the sequence's name there; undefined when only sets without bases list it. */
  holder?: { set: ReferenceSetRow; name: string };
  /** The sets that list it, for messages. */
  setNames: string[];
}

/** Bases read from a FASTA at a time: a whole chromosome goes out in slices as the socket takes them. */
const SLICE = 1 << 20;

export function refgetSequences(registry: Registry, files: SequenceFiles, registryCacheMs: number) {
  const found = new RegistryCache<RefgetSequence | { conflict: string[] }>(registryCacheMs);

  async function load(key: SequenceKey): Promise<RefgetSequence | { conflict: string[] } | undefined> {
    const filter = 'md5' in key ? { md5checksum: key.md5 } : 'sha512t24u' in key ? { sha512t24u: key.sha512t24u } : { accession: key.accession };
    const md5s = [...new Set((await listReferences(registry, filter, undefined)).map((r) => r.md5checksum).filter((m) => m !== ''))];
    if (md5s.length > 1) return { conflict: md5s.sort() };
    if (md5s.length === 0) return undefined;
    // Every registration of the sequence, whatever the id found first; those with a digest first,
    // since their FASTA was read when the digest was computed (one that could not be is likely gone).
    const rows = (await listReferences(registry, { md5checksum: md5s[0] }, undefined)).sort(
      (a, b) => Number(a.sha512t24u === null) - Number(b.sha512t24u === null),
    );
    const sets = new Map<string, ReferenceSetRow>();
    const accessions = new Set<string>();
    let holder: RefgetSequence['holder'];
    for (const row of rows) {
      const set = await getReferenceSetRow(registry, row.reference_set_name);
      if (!set) continue;
      sets.set(set.name, set);
      for (const accession of (await referenceAccessions(registry, set.name, [row.name])).get(row.name) ?? []) accessions.add(accession);
      if (!holder && holdsSequence(set)) holder = { set, name: row.name };
    }
    const first: ReferenceRow = rows[0];
    return {
      md5: first.md5checksum,
      sha512t24u: rows.find((r) => r.sha512t24u !== null)?.sha512t24u ?? null,
      length: Number(first.length),
      circular: rows.some((r) => Boolean(r.circular)),
      accessions: [...accessions].sort(),
      holder,
      setNames: [...sets.keys()],
    };
  }

  return {
    /** The sequence `id` names; RefgetError 404 when none, 409 when an accession names several. */
    async lookup(id: string): Promise<RefgetSequence> {
      const key = keyOf(id);
      const result = key && (await found.get(JSON.stringify(key), () => load(key)));
      if (!result) throw new RefgetError(404, `no sequence with id '${id}'`);
      if ('conflict' in result) throw new RefgetError(409, `id '${id}' names ${result.conflict.length} different sequences: MD5 ${result.conflict.join(', ')}`);
      return result;
    },

    /**
     * The bases of `spans` ([start, end) pairs, in order) of a sequence held by `holder`, as pieces to
     * send. The first slice is read before this returns, so a file that cannot be read is answered
     * with an error status rather than a reply cut short.
     */
    async bases(holder: NonNullable<RefgetSequence['holder']>, spans: Array<[number, number]>): Promise<AsyncIterable<Uint8Array> | Uint8Array[]> {
      const slices: Array<[number, number]> = [];
      for (const [start, end] of spans) for (let at = start; at < end; at += SLICE) slices.push([at, Math.min(end, at + SLICE)]);
      if (!slices.length) return [];
      const read = ([start, end]: [number, number]) => files.bases(holder.set, holder.name, start, end);
      const first = await read(slices[0]);
      return (async function* () {
        yield first;
        for (const slice of slices.slice(1)) yield await read(slice);
      })();
    },
  };
}

export type RefgetSequences = ReturnType<typeof refgetSequences>;
