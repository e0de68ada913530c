/** The reference area: reference sets, references and their bases, as typed records and pages. */
import { GAException, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import {
  decodePageToken,
  encodePageToken,
  isNonNegativeInteger,
  isString,
  keysetCursor,
  positionAs,
  queryFingerprint,
  type PageQuery,
  type PagingLimits,
} from '../../protocol/paging.js';
import { keysetPage, type SearchPage } from '../../protocol/reply.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import type { BasesPage, BasesRequest, ReferenceRecord, ReferenceSetRecord } from './messages.js';
import type { SequenceFiles } from './sequences.js';
import {
  getReferenceRow,
  getReferenceSetRow,
  listReferences,
  holdsSequence,
  listReferenceSets,
  referenceAccessions,
  type ReferenceRow,
  type ReferenceSetRow,
} from './store.js';

export const referenceSetId = (name: string) => encodeId([name]);

/** The answer for the bases of a set registered from a sequence dictionary: there are none to give. */
export const noBases = (set: ReferenceSetRow) =>
  new GAException('notFound', `reference set '${set.name}' holds no sequence: it was registered from a sequence dictionary (names, lengths and MD5s only)`);
export const referenceId = (setName: string, name: string) => encodeId([setName, name]);

function speciesOf(set: ReferenceSetRow) {
  return set.species_term_id !== null ? { termId: set.species_term_id, term: set.species_term ?? '' } : undefined;
}

export function toReferenceSetRecord(set: ReferenceSetRow): ReferenceSetRecord {
  return {
    id: referenceSetId(set.name),
    name: set.name,
    md5checksum: set.md5checksum || undefined, // '': a dictionary lacked some reference's MD5
    species: speciesOf(set),
    description: set.description ?? undefined,
    assemblyId: set.assembly_id ?? undefined,
    sourceUri: set.source_uri ?? undefined,
    sourceAccessions: JSON.parse(set.source_accessions) as string[],
    isDerived: Boolean(set.is_derived),
  };
}

/** A reference inherits its species and derivation from its set; its accessions are its own. */
export function toReferenceRecord(set: ReferenceSetRow, ref: ReferenceRow, accessions: string[]): ReferenceRecord {
  return {
    id: referenceId(set.name, ref.name),
    length: Number(ref.length),
    md5checksum: ref.md5checksum || undefined, // '': the dictionary gave none
    name: ref.name,
    sourceAccessions: accessions,
    isDerived: Boolean(set.is_derived),
    species: speciesOf(set),
  };
}

type ReferencePosition = [string, number];
const isReferencePosition = (p: unknown): p is ReferencePosition =>
  Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && isNonNegativeInteger(p[1]);

export interface ReferenceServiceOptions {
  paging: PagingLimits;
  basesPageSize: number;
  registryCacheMs: number;
}

export function referenceService(registry: Registry, options: ReferenceServiceOptions, files: SequenceFiles) {
  const sets = new RegistryCache<ReferenceSetRow>(options.registryCacheMs);
  const references = new RegistryCache<{ ref: ReferenceRow; accessions: string[] }>(options.registryCacheMs);
  const setRow = (name: string) => sets.get(name, () => getReferenceSetRow(registry, name));
  // Reference sets are few (one per assembly): searches filter the whole list in memory, accessions
  // included (the set's own list), which doubled POST /referencesets/search under load (4.5k -> 10.3k req/s).
  const allSets = new RegistryCache<Array<{ row: ReferenceSetRow; accessions: Set<string> }>>(options.registryCacheMs);
  const everySet = async () =>
    (await allSets.get('all', async () =>
      (await listReferenceSets(registry)).map((row) => ({
        row,
        accessions: new Set(JSON.parse(row.source_accessions) as string[]),
      })),
    )) ?? [];

  async function setNamed(id: string): Promise<ReferenceSetRow> {
    const [name] = decodeId(id, IdKinds.referenceSet);
    const set = await setRow(name);
    if (!set) throw notFound('reference set', id);
    return set;
  }

  async function referenceNamed(id: string): Promise<{ set: ReferenceSetRow; ref: ReferenceRow; accessions: string[] }> {
    const [setName, name] = decodeId(id, IdKinds.reference);
    const [set, found] = await Promise.all([
      setRow(setName),
      references.get(JSON.stringify([setName, name]), async () => {
        const ref = await getReferenceRow(registry, setName, name);
        return ref && { ref, accessions: (await referenceAccessions(registry, setName, [name])).get(name) ?? [] };
      }),
    ]);
    if (!set || !found) throw notFound('reference', id);
    return { set, ...found };
  }

  return {
    async searchReferenceSets(request: { md5checksum?: string; accession?: string; assemblyId?: string } & PageQuery): Promise<SearchPage<ReferenceSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('referencesets', request, options.paging, isString);
      const rows = (await everySet())
        .filter(
          ({ row, accessions }) =>
            (after === undefined || row.name > after) &&
            (request.md5checksum === undefined || row.md5checksum === request.md5checksum) &&
            (request.assemblyId === undefined || row.assembly_id === request.assemblyId) &&
            (request.accession === undefined || accessions.has(request.accession)),
        )
        .slice(0, pageSize + 1)
        .map(({ row }) => row);
      return keysetPage(rows, pageSize, fingerprint, toReferenceSetRecord, (r) => r.name);
    },

    getReferenceSet: async (id: string) => toReferenceSetRecord(await setNamed(id)),

    async searchReferences(
      request: { referenceSetId?: string; md5checksum?: string; accession?: string } & PageQuery,
    ): Promise<SearchPage<ReferenceRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('references', request, options.paging, isReferencePosition);
      const set = request.referenceSetId !== undefined ? await setNamed(request.referenceSetId) : undefined;
      const rows = await listReferences(
        registry,
        { referenceSetName: set?.name, md5checksum: request.md5checksum, accession: request.accession },
        after,
        pageSize + 1,
      );
      const owners = new Map<string, ReferenceSetRow>(set ? [[set.name, set]] : []);
      const accessions = new Map<string, Map<string, string[]>>();
      for (const row of rows) {
        const setName = row.reference_set_name;
        if (!owners.has(setName)) {
          const owner = await setRow(setName);
          if (owner) owners.set(owner.name, owner);
        }
        if (!accessions.has(setName)) {
          const names = rows.filter((r) => r.reference_set_name === setName).map((r) => r.name);
          accessions.set(setName, await referenceAccessions(registry, setName, names));
        }
      }
      return keysetPage(
        rows,
        pageSize,
        fingerprint,
        (row) => toReferenceRecord(owners.get(row.reference_set_name)!, row, accessions.get(row.reference_set_name)?.get(row.name) ?? []),
        (row): ReferencePosition => [row.reference_set_name, row.ordinal],
      );
    },

    async getReference(id: string): Promise<ReferenceRecord> {
      const { set, ref, accessions } = await referenceNamed(id);
      return toReferenceRecord(set, ref, accessions);
    },

    /**
     * One page of bases. The token holds the offset to continue from and is bound to the reference and
     * the requested range, so it cannot be replayed against another range.
     */
    async listBases(id: string, request: BasesRequest): Promise<BasesPage> {
      const { set, ref } = await referenceNamed(id);
      if (!holdsSequence(set)) throw noBases(set);
      const length = Number(ref.length);
      const start = request.start ?? 0;
      const end = request.end ?? length;
      if (start < 0 || end > length || end <= start) {
        throw new GAException(
          'rangeNotSatisfiable',
          `range [${start}, ${end}) is outside reference '${ref.name}' of length ${length} (need 0 <= start < end <= length)`,
        );
      }
      const fingerprint = queryFingerprint('bases', { id, start, end });
      const offset = request.pageToken
        ? positionAs(decodePageToken(request.pageToken, fingerprint), (p): p is number => isNonNegativeInteger(p) && p > start && p < end)
        : start;
      const pageEnd = Math.min(end, offset + options.basesPageSize);
      const sequence = await files.bases(set, ref.name, offset, pageEnd);
      return {
        offset,
        sequence,
        nextPageToken: pageEnd < end ? encodePageToken(fingerprint, pageEnd) : undefined,
      };
    },
  };
}

export type ReferenceService = ReturnType<typeof referenceService>;
