/** HTTP spoken byte by byte over a plain socket, for requests no HTTP client library would send. */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: any;
  /** Whether the server closed the connection after the response. */
  closed: boolean;
}

/** Connects to the server at `url` (http://host:port). */
export function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Reads one response from `socket`: the status line, headers and a Content-Length body; resolves once
 * it is complete (or the socket ends), rejecting after `timeoutMs`.
 */
export function readResponse(socket: net.Socket, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    let closed = false;
    const timer = setTimeout(() => finish(new Error(`no complete response within ${timeoutMs} ms; got ${JSON.stringify(data.toString('latin1').slice(0, 200))}`)), timeoutMs);
    const tryParse = (): RawResponse | undefined => {
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd === -1) return undefined;
      const lines = data.toString('latin1', 0, headEnd).split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
      let bodyBytes: Buffer = data.subarray(headEnd + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        const unchunked = dechunk(bodyBytes);
        if (!unchunked) return undefined;
        bodyBytes = unchunked;
      } else if (length === undefined ? !closed : bodyBytes.length < length) return undefined;
      const body = bodyBytes.subarray(0, length ?? bodyBytes.length).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      return { status, headers, body, json, closed };
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const parsed = tryParse();
      if (parsed) finish(undefined, parsed);
    };
    const onEnd = () => {
      closed = true;
      const parsed = tryParse();
      finish(parsed ? undefined : new Error(`connection closed after ${JSON.stringify(data.toString('latin1').slice(0, 200))}`), parsed);
    };
    const finish = (error?: Error, response?: RawResponse) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      if (error) reject(error);
      else resolve(response!);
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
  });
}

/** The body of a chunked message, or undefined while its last chunk has not arrived. */
function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(bytes.toString('latin1', at, lineEnd), 16);
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Sends `request` as it stands on a new connection and reads the response. */
export async function rawExchange(url: string, request: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  const socket = await connect(url);
  try {
    const response = readResponse(socket, timeoutMs);
    socket.write(request);
    return await response;
  } finally {
    socket.destroy();
  }
}

/** A POST request as bytes, with a Host header and Content-Length. */
export function rawPost(path: string, body: string, extraHeaders = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`;
}
