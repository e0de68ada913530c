/**
 * The registered files genome browsers read by byte range, under `/files`: igv.js (the web page's
 * genome browser, or one embedded on another site) reads a reference set's FASTA through its indexes
 * and a continuous set's bigWig through its zoom levels, asking for the few ranges a view needs.
 * - `GET /files/referencesets/{id}/fasta`, `.../fai`, `.../gzi`: a reference set's FASTA as registered
 *   (plain or bgzipped), its .fai, and its .gzi when bgzipped.
 * - `GET /files/continuoussets/{id}/bigwig`: a continuous set's bigWig.
 * A file is named by its set's id and its part, never by a path: only registered files are served, and
 * each request resolves its set in the registry, the place where access to a dataset's sets is decided.
 */
import type { AppContext } from '../../areas/area.js';
import { getContinuousSet, type ContinuousSetRow } from '../../areas/continuous/store.js';
import { getReferenceSetRow, holdsSequence, type ReferenceSetRow } from '../../areas/references/store.js';
import { fileBytesReply, sizeOf } from '../../file-bytes.js';
import type { Route, RouteInput } from '../../http/router.js';
import { GAException, notFound } from '../../protocol/errors.js';
import { mayHave } from '../../access/request-access.js';
import { decodeId, IdKinds } from '../../protocol/ids.js';
import type { Reply } from '../../protocol/reply.js';
import { RegistryCache } from '../../registry/cache.js';

export const FILES_PATH = '/files';

const BINARY = 'application/octet-stream';

/** The parts of a reference set served: the column of each, its name in messages, its media type. */
const REFERENCE_PARTS = {
  fasta: { column: 'fasta_path', label: 'FASTA', type: BINARY },
  fai: { column: 'fai_path', label: '.fai', type: 'text/plain; charset=utf-8' },
  gzi: { column: 'gzi_path', label: '.gzi', type: BINARY },
} as const;
type ReferencePart = keyof typeof REFERENCE_PARTS;

const rangeHeader = (input: RouteInput) => (typeof input.headers.range === 'string' ? input.headers.range : undefined);

/** The reply of one registered file, `label` naming it in errors ("the bigWig file of continuous set 'x'"). */
async function registeredFile(location: string, input: RouteInput, label: string, contentType: string, expectedSize?: number): Promise<Reply> {
  let size: number;
  try {
    size = await sizeOf(location);
  } catch (e) {
    throw GAException.serverFault('unavailable', `${label} cannot be read right now`, `reading ${label}: ${(e as Error).message}`);
  }
  // A file cut short or replaced since it was registered is not served as if it were the one registered.
  if (expectedSize !== undefined && size !== expectedSize) {
    throw GAException.serverFault('unavailable', `${label} cannot be read right now`, `${label} is ${size} bytes long, ${expectedSize} when it was registered`);
  }
  return fileBytesReply(location, size, rangeHeader(input), contentType);
}

export function filesRoutes({ registry, config }: AppContext): Route[] {
  const referenceSets = new RegistryCache<ReferenceSetRow>(config.registryCacheMs);
  const continuousSets = new RegistryCache<ContinuousSetRow>(config.registryCacheMs);

  async function referencePart(input: RouteInput, part: ReferencePart): Promise<Reply> {
    const id = input.params.id;
    const [name] = decodeId(id, IdKinds.referenceSet);
    const set = await referenceSets.get(name, () => getReferenceSetRow(registry, name));
    if (!set) throw notFound('reference set', id);
    if (!holdsSequence(set)) throw new GAException('notFound', `reference set '${name}' was registered from a sequence dictionary: it has no FASTA`);
    const { column, label, type } = REFERENCE_PARTS[part];
    const location = set[column];
    if (!location) throw new GAException('notFound', `the FASTA of reference set '${name}' is not bgzipped: it has no .gzi`);
    return registeredFile(location, input, `the ${label} of reference set '${name}'`, type);
  }

  async function bigWig(input: RouteInput): Promise<Reply> {
    const id = input.params.id;
    const [datasetName, , name] = decodeId(id, IdKinds.continuousSet);
    const set = await continuousSets.get(id, () => getContinuousSet(registry, datasetName, name));
    if (!set) throw notFound('continuous set', id);
    // The file's bytes are the dataset's data: record (which decodeId checked) is not enough.
    if (!mayHave(datasetName, 'data')) throw new GAException('forbidden', `the caller may not have the bigWig file of continuous set '${id}' (level data needed)`);
    return registeredFile(set.path, input, `the bigWig file of continuous set '${name}'`, BINARY, Number(set.size));
  }

  return [
    ...(Object.keys(REFERENCE_PARTS) as ReferencePart[]).map(
      (part): Route => ({ method: 'GET', path: `${FILES_PATH}/referencesets/{id}/${part}`, handle: (input) => referencePart(input, part) }),
    ),
    { method: 'GET', path: `${FILES_PATH}/continuoussets/{id}/bigwig`, handle: bigWig },
  ];
}
