/**
 * Data files are named by a local path or an http(s) URL; both are read through the same file-handle
 * interface, by byte range, so the format readers never know which.
 */
import { LocalFile, RemoteFile, type GenericFilehandle } from 'generic-filehandle2';

export const isUrl = (location: string) => /^https?:\/\//i.test(location);

export function openFile(location: string): GenericFilehandle {
  return isUrl(location) ? new RemoteFile(location) : new LocalFile(location);
}
