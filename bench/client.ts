/**
 * The bench's HTTP client: one keep-alive connection, bodies read as bytes. Big pages are never
 * JSON.parse'd: calls are counted by the occurrences of `"callSetId"` (every call has exactly one, and
 * no other key contains it), chunk by chunk as they arrive, and nextPageToken is read from the last
 * bytes, where the server writes it. That keeps the client's cost to a scan of the bytes.
 */
import http from 'node:http';
import zlib from 'node:zlib';

export interface Response {
  status: number;
  body: Buffer;
}

export interface Answer {
  status: number;
  /** The Content-Encoding of the answer, if any. */
  coding?: string;
  /** Bytes of the body as they came over the wire (compressed, when it was). */
  wireBytes: number;
}

/**
 * Decompressed output in 256 KB pieces, not zlib's default 16 KB. Each piece is one round trip to the
 * thread pool, and a cross-thread wake-up costs ~20 µs of system time on the bench's 2-core virtual
 * machine: inflating an 8 MB gzip page took 23 ms of CPU in 16 KB pieces, 12 ms in 64 KB, 8.6 ms in
 * 256 KB and 7.6 ms in 1 MB. With 16 KB the client spent more CPU than the server it measured, and
 * both the server and its replay were held to the client's rate.
 */
const DECODER = { chunkSize: 256 * 1024 };

export class Client {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(readonly base: URL) {}

  /** A request whose whole body is kept (small and medium answers). */
  async send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
    const chunks: Buffer[] = [];
    const { status } = await this.stream(method, path, body, (chunk) => chunks.push(chunk));
    return { status, body: Buffer.concat(chunks) };
  }

  /** POST or GET expecting 200 and JSON; for setup calls, not for what is timed. */
  async json<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const r = await this.send(method, path, body);
    if (r.status !== 200) throw new Error(`${method} ${path} answered ${r.status}: ${r.body.toString('utf8', 0, 500)}`);
    return JSON.parse(r.body.toString('utf8')) as T;
  }

  /**
   * Sends a request and hands each body chunk to `onChunk` as it arrives, decompressed when the
   * answer came with a Content-Encoding (as the R and Python clients do); resolves with the status,
   * the coding and the bytes that came over the wire. A kept-alive connection the server closed while
   * idle (after its keep-alive timeout, e.g. while the bench ran a baseline) fails at once with
   * ECONNRESET: the request is then sent again on a new connection, as Node's documentation advises.
   */
  async stream(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    onChunk: (chunk: Buffer) => void,
    acceptEncoding?: string,
  ): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    try {
      return await this.once(method, path, payload, onChunk, acceptEncoding);
    } catch (e) {
      if (!(e as { staleSocket?: boolean }).staleSocket) throw e;
      return this.once(method, path, payload, onChunk, acceptEncoding);
    }
  }

  private once(method: string, path: string, payload: Buffer | undefined, onChunk: (chunk: Buffer) => void, acceptEncoding?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let answered = false;
      const headers: Record<string, string | number> = payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {};
      if (acceptEncoding) headers['accept-encoding'] = acceptEncoding;
      const req = http.request(new URL(path, this.base), { method, agent: this.agent, headers }, (res) => {
        answered = true;
        let wireBytes = 0;
        const coding = res.headers['content-encoding'];
        const decoder = coding === 'gzip' ? zlib.createGunzip(DECODER) : coding === 'br' ? zlib.createBrotliDecompress(DECODER) : undefined;
        if (coding !== undefined && !decoder) return reject(new Error(`${method} ${path}: unexpected content-encoding ${coding}`));
        res.on('data', (chunk: Buffer) => (wireBytes += chunk.length));
        const body = decoder ? res.pipe(decoder) : res;
        body.on('data', onChunk);
        body.on('end', () => resolve({ status: res.statusCode ?? 0, coding, wireBytes }));
        res.on('error', reject);
        decoder?.on('error', reject);
      });
      req.on('error', (e) => reject(Object.assign(e, { staleSocket: req.reusedSocket && !answered })));
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

const CALL_KEY = Buffer.from('"callSetId"');
const TOKEN_KEY = Buffer.from('"nextPageToken":"');
const TAIL_BYTES = 4096;

/** What one page of a variant search held, read from its bytes. */
export interface VariantPage {
  status: number;
  /** Bytes of JSON (after decompression). */
  bytes: number;
  /** Bytes that came over the wire. */
  wireBytes: number;
  coding?: string;
  calls: number;
  variants: number;
  nextPageToken?: string;
  /** The start of the body when the status is not 200. */
  error?: string;
  /** The whole body, when it was asked for (to replay it). */
  body?: Buffer;
}

function countIn(buffer: Buffer, key: Buffer): number {
  let n = 0;
  for (let at = buffer.indexOf(key); at !== -1; at = buffer.indexOf(key, at + key.length)) n++;
  return n;
}

const VARIANT_KEY = Buffer.from('"variantSetId"');

/**
 * Counts the occurrences of a key in a body that arrives in chunks. An occurrence that straddles
 * chunks is found in a small buffer made of the key's length minus one bytes before the chunk and as
 * many at its start: too short on either side to hold a whole occurrence, so it only holds
 * straddling ones (the bytes before may come from several tiny chunks).
 */
class KeyCounter {
  count = 0;
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly key: Buffer) {}

  add(chunk: Buffer): void {
    const keep = this.key.length - 1;
    this.count += countIn(chunk, this.key);
    if (this.carry.length) this.count += countIn(Buffer.concat([this.carry, chunk.subarray(0, keep)]), this.key);
    this.carry = chunk.length >= keep ? chunk.subarray(chunk.length - keep) : Buffer.concat([this.carry, chunk]).subarray(-keep);
  }
}

/**
 * One page of POST /variants/search, read as bytes. Counting calls costs the client about 11 ms of CPU
 * per 8 MB page (one indexOf per call); counting variants, a few dozen a page, is still a scan of every
 * byte for their key, about 3 ms per 8 MB page. Untimed passes count every call (`countCalls`); timed
 * passes count nothing (`countVariants` false) and are checked by their bytes, because a scan per page
 * made the client, not the bytes, the limit a replay measures (docs/performance.md, "What each row
 * measures").
 * `acceptEncoding` asks for a compressed answer, which is decompressed as it arrives.
 */
export async function variantPage(
  client: Client,
  request: Record<string, unknown>,
  options: { countCalls?: boolean; countVariants?: boolean; acceptEncoding?: string; keepBody?: boolean } = {},
): Promise<VariantPage> {
  const { countCalls = true, countVariants = true, acceptEncoding, keepBody = false } = options;
  const calls = countCalls ? new KeyCounter(CALL_KEY) : undefined;
  const variants = countVariants ? new KeyCounter(VARIANT_KEY) : undefined;
  let bytes = 0;
  let tail: Buffer = Buffer.alloc(0);
  let head: Buffer | undefined;
  const kept: Buffer[] = [];
  const answer = await client.stream(
    'POST',
    '/variants/search',
    request,
    (chunk) => {
      bytes += chunk.length;
      head ??= chunk.subarray(0, 500);
      calls?.add(chunk);
      if (keepBody) kept.push(chunk);
      variants?.add(chunk);
      tail = chunk.length >= TAIL_BYTES ? chunk : Buffer.concat([tail, chunk]).subarray(-TAIL_BYTES);
    },
    acceptEncoding,
  );
  const { status, wireBytes, coding } = answer;
  if (status !== 200) return { status, bytes, wireBytes, coding, calls: 0, variants: 0, error: head?.toString('utf8') };
  return {
    status,
    bytes,
    wireBytes,
    coding,
    calls: calls?.count ?? 0,
    variants: variants?.count ?? 0,
    nextPageToken: tokenIn(tail),
    body: keepBody ? Buffer.concat(kept) : undefined,
  };
}

/** The nextPageToken of a body (or of its last bytes), or undefined on the last page. */
export function tokenIn(bytes: Buffer): string | undefined {
  const at = bytes.lastIndexOf(TOKEN_KEY);
  if (at === -1) return undefined;
  const start = at + TOKEN_KEY.length;
  return bytes.toString('latin1', start, bytes.indexOf(0x22, start));
}

const SEQUENCE_KEY = Buffer.from('"sequence":"');

/** Bases in a ListReferenceBases body: the length of its sequence string (bases need no escaping). */
export function basesIn(body: Buffer): number {
  const at = body.indexOf(SEQUENCE_KEY);
  if (at === -1) return 0;
  const start = at + SEQUENCE_KEY.length;
  return body.indexOf(0x22, start) - start;
}
