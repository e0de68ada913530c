/**
 * The data endpoint the tickets point at: `GET /htsget/data/{set}/{format}/{file}`, the bytes of one
 * file of a set (or the byte range its Range header asks for, 206), local or proxied from its http(s)
 * URL, so this server stays the one place that decides who reads what. Its URLs are signed (signing.ts):
 * the client needs no credentials beyond the URL and the headers the ticket gave.
 */
import fs from 'node:fs';
import { isUrl, openFile, readRange } from '../../files.js';
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

/** The byte range a Range header asks of a file of `size` bytes: [start, end), or undefined for the whole file. */
export function rangeOf(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (header === undefined) return undefined;
  const unsatisfiable = (why: string) => new GAException('rangeNotSatisfiable', `Range '${header}' cannot be served: ${why} (the file has ${size} bytes)`);
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) throw unsatisfiable(header.includes(',') ? 'one range per request is served' : 'it is not bytes=FIRST-LAST');
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) throw unsatisfiable('it asks for no bytes');
    return { start: Math.max(0, size - suffix), end: size };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1);
  if (start >= size || end <= start) throw unsatisfiable('it lies outside the file');
  return { start, end };
}

const sizeOf = async (location: string) => (isUrl(location) ? (await openFile(location).stat()).size : (await fs.promises.stat(location)).size);

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
  const asked = rangeOf(range, size);
  const { start, end } = asked ?? { start: 0, end: size };
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
  if (asked) headers['content-range'] = `bytes ${start}-${end - 1}/${size}`;
  return { kind: 'exact', status: asked ? 206 : 200, headers, length: end - start, pieces: readRange(file.path, start, end) };
}
