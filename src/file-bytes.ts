/**
 * A data file's bytes as a reply, as they are (never content-coded): the whole file (200), or the one
 * byte range a `Range` header asks for (206, with `Content-Range`). Interfaces that hand out files to
 * clients reading them by range (htsget's data endpoint, the files genome browsers read) send them so.
 */
import fs from 'node:fs';
import { isUrl, openFile, readRange } from './files.js';
import { GAException } from './protocol/errors.js';
import type { Reply } from './protocol/reply.js';

/** The byte range a Range header asks of a file of `size` bytes: [start, end), or undefined for the whole file. */
function rangeOf(header: string | undefined, size: number): { start: number; end: number } | undefined {
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

/** The size of a local file or of a remote one (a HEAD of its URL). */
export const sizeOf = async (location: string) => (isUrl(location) ? (await openFile(location).stat()).size : (await fs.promises.stat(location)).size);

/**
 * The reply of a file of `size` bytes for a request with this Range header (undefined: none). The
 * caller learns the size first, so that a file it cannot reach is its error, named its way.
 */
export function fileBytesReply(location: string, size: number, range: string | undefined, contentType = 'application/octet-stream'): Reply {
  const asked = rangeOf(range, size);
  const { start, end } = asked ?? { start: 0, end: size };
  const headers: Record<string, string> = { 'content-type': contentType, 'accept-ranges': 'bytes' };
  if (asked) headers['content-range'] = `bytes ${start}-${end - 1}/${size}`;
  return { kind: 'exact', status: asked ? 206 : 200, headers, length: end - start, pieces: readRange(location, start, end) };
}
