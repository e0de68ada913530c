/**
 * Data files are named by a local path or an http(s) URL; both are read through the same file-handle
 * interface, by byte range, so the format readers never know which.
 */
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { LocalFile, RemoteFile, type FilehandleOptions, type GenericFilehandle } from 'generic-filehandle2';

export const isUrl = (location: string) => /^https?:\/\//i.test(location);

/**
 * A local file read with blocking calls, for worker threads (the page workers, the GFF3 reader).
 * `LocalFile` opens, reads and closes the file on the libuv pool for every read: three hand-overs to
 * a pool thread and back, each a wake-up of two threads, while the worker has nothing else to do but
 * wait (a page of reads waits on its first slice). A worker is not the thread that answers requests,
 * so it may block on a read. The file is still opened for each read, as `LocalFile` does, so a file
 * replaced on disk is read as it is now.
 */
export class BlockingLocalFile implements GenericFilehandle {
  constructor(private readonly path: string) {}

  async read(length: number, position = 0): Promise<Uint8Array<ArrayBuffer>> {
    const bytes = new Uint8Array(length);
    if (length === 0) return bytes;
    const fd = fs.openSync(this.path, 'r');
    try {
      let done = 0;
      // A regular file gives all that was asked for at once, short only at its end.
      while (done < length) {
        const n = fs.readSync(fd, bytes, done, length - done, position + done);
        if (n === 0) break;
        done += n;
      }
      return done === length ? bytes : bytes.subarray(0, done);
    } finally {
      fs.closeSync(fd);
    }
  }

  readFile(options?: Omit<FilehandleOptions, 'encoding'>): Promise<Uint8Array<ArrayBuffer>>;
  readFile(options: BufferEncoding | (Omit<FilehandleOptions, 'encoding'> & { encoding: BufferEncoding })): Promise<string>;
  async readFile(options?: BufferEncoding | FilehandleOptions): Promise<Uint8Array<ArrayBuffer> | string> {
    const encoding = typeof options === 'string' ? options : options?.encoding;
    const bytes = fs.readFileSync(this.path);
    return encoding ? bytes.toString(encoding) : new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length);
  }

  async stat(): Promise<{ size: number }> {
    return fs.statSync(this.path);
  }

  async close(): Promise<void> {}
}

/** A handle on a data file: over HTTP ranges for a URL; a local file read on the pool, or with blocking calls in a worker thread. */
export function openFile(location: string): GenericFilehandle {
  if (isUrl(location)) return new RemoteFile(location);
  return isMainThread ? new LocalFile(location) : new BlockingLocalFile(location);
}

/** What one read of a remote file asks for: large enough that the round trips cost little beside the bytes. */
const REMOTE_SLICE = 4 * 1024 * 1024;

/**
 * The bytes [start, end) of a data file, in pieces, for sending on as they are (the htsget data
 * endpoint): a local file streamed from disk; a remote one read by range in 4 MB slices, the next
 * slice asked for while the one before is being sent.
 */
export async function* readRange(location: string, start: number, end: number): AsyncGenerator<Uint8Array> {
  if (end <= start) return;
  if (!isUrl(location)) {
    yield* fs.createReadStream(location, { start, end: end - 1, highWaterMark: 1024 * 1024 });
    return;
  }
  const file = new RemoteFile(location);
  const slice = (at: number) => {
    const read = file.read(Math.min(REMOTE_SLICE, end - at), at);
    read.catch(() => {}); // a slice asked for ahead that nobody awaits (the client left) must not fail the process
    return read;
  };
  let next = slice(start);
  for (let at = start; at < end; ) {
    const bytes = await next;
    if (bytes.length === 0) throw new Error(`${location} ends at byte ${at}, before byte ${end}`);
    at += bytes.length;
    if (at < end) next = slice(at);
    yield bytes;
  }
}
