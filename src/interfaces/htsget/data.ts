/**
 * The data endpoint the tickets point at: `GET /htsget/data/{set}/{format}/{file}`, the bytes of one
 * file of a set (or the byte range its Range header asks for, 206), local or proxied from its http(s)
 * URL, so this server stays the one place that decides who reads what. Its URLs are signed (signing.ts):
 * the client needs no credentials beyond the URL and the headers the ticket gave.
 */
import { fileBytesReply, sizeOf } from '../../file-bytes.js';
import { GAException } from '../../protocol/errors.js';
import { decodeId, IdKinds } from '../../protocol/ids.js';
import type { Reply } from '../../protocol/reply.js';
import { HtsgetError } from './errors.js';
import type { Datatype } from './request.js';
import { FORMATS, type Format, type ServedFile, type ServedSet, type ServedSets } from './sets.js';
import type { UrlSigner } from './signing.js';

export const DATA_PATH = '/htsget/data';

/** The path of a file's data URL, before signing. */
export const dataPath = (set: ServedSet, file: ServedFile) => `${DATA_PATH}/${set.id}/${file.format}/${file.ordinal}`;

export async function dataReply(
  sets: ServedSets,
  signer: UrlSigner,
  params: Record<string, string>,
  query: Record<string, string>,
  range: string | undefined,
): Promise<Reply> {
  const format = params.format as Format;
  const datatype = (Object.keys(FORMATS) as Datatype[]).find((d) => FORMATS[d].includes(format));
  const path = `${DATA_PATH}/${params.set}/${params.format}/${params.file}`;
  signer.verify(path, query);
  const gone = () => new HtsgetError('NotFound', 'the file of this data URL is no longer registered; ask for a new ticket');
  if (!datatype) throw gone();
  const [datasetName, , name] = decodeId(params.set, datatype === 'reads' ? IdKinds.readGroupSet : IdKinds.variantSet);
  const set = await sets.get(datatype, datasetName, name);
  const file = set?.files.get(format)?.[Number(params.file)];
  if (!set || !file) throw gone();
  let size: number;
  try {
    size = await sizeOf(file.path);
  } catch (e) {
    throw GAException.unreadable('the files', `${datatype === 'reads' ? 'read group set' : 'variant set'} '${name}'`, e);
  }
  return fileBytesReply(file.path, size, range);
}
