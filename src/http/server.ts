/**
 * The HTTP layer: reads bodies, matches routes, writes replies and errors. Thin by design: the wire
 * rules live in the protocol layer and the answers in the services. Plain node:http, because the
 * protocol layer already validates both naming forms (which JSON-schema validators cannot express)
 * and node:http measured fastest here for small requests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ANONYMOUS, callerInLog, loggable, type Caller } from '../access/callers.js';
import type { AccessSnapshot } from '../access/holder.js';
import { runWithAccess, type RequestAccess } from '../access/request-access.js';
import { OPEN_RESOLVER } from '../access/resolve-caller.js';
import { INVALID_TOKEN_CHALLENGE } from '../access/tokens.js';
import type { ServerConfig } from '../config.js';
import { GAException } from '../protocol/errors.js';
import { writeError, writeRecord, writeSearchPage, type ContentCoding, type JsonSink, type Reply } from '../protocol/reply.js';
import { inRequestForm, parseMessage, type MessageDesc, type NamingForm } from '../protocol/schema.js';
import { TemporarilyUnavailable } from '../unavailable.js';
import { addVary, chooseCoding, ReplyEncoder, sendAsIs } from './compression.js';
import { Cors } from './cors.js';
import { answerClientErrors, capConnections, nestsDeeperThan, SLICE_MS, SliceQueue, streamSlotsOf, type StreamSlots, TokenBuckets, yieldingSink } from './limits.js';
import { Router, type Route } from './router.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function buildRouter(routes: Route[]): Router {
  const router = new Router();
  for (const route of routes) router.add(route);
  return router;
}

/** The client closed its connection before its request body arrived, or during the response: not a fault of the server. */
class ClientWentAway extends Error {}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      reject(new GAException('bodyTooLarge', `request body is larger than the limit of ${limit} bytes`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new GAException('bodyTooLarge', `request body is larger than the limit of ${limit} bytes`));
        req.resume();
        req.removeAllListeners('data');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', (e) => reject(req.complete ? e : new ClientWentAway(e.message)));
  });
}

function decodeJsonBody(req: http.IncomingMessage, raw: Buffer, maxDepth: number): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  const contentType = req.headers['content-type'];
  if (contentType !== undefined) {
    const mediaType = contentType.split(';')[0].trim().toLowerCase();
    if (mediaType !== 'application/json') {
      throw new GAException('unsupportedMediaType', `request body must be application/json, not ${mediaType || 'empty'}`);
    }
  }
  if (nestsDeeperThan(text, maxDepth)) {
    throw new GAException('invalidRequest', `request body nests objects and arrays deeper than the limit of ${maxDepth} levels (max-json-depth)`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new GAException('malformedJson', `request body is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GAException('malformedJson', 'request body must be a JSON object');
  }
  return value;
}

/** The naming form of a body before it is validated, so that even its errors answer in that form. */
function guessForm(input: unknown): NamingForm {
  const keys = Object.keys(input as object);
  return keys.some((k) => k.includes('_')) && !keys.some((k) => /[A-Z]/.test(k)) ? 'snake' : 'camel';
}

/**
 * The query parameters as an object, without `key` (an API key, as the Python client adds it to every
 * request: the caller resolver reads it). A parameter given twice is a 400.
 */
function queryObject(pairs: Array<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of pairs) {
    if (k === 'key') continue;
    if (k in out) throw new GAException('duplicateField', `query parameter '${k}' is given twice`);
    out[k] = v;
  }
  return out;
}

const queryPairs = (query: string): Array<[string, string]> => (query ? [...new URLSearchParams(query)] : []);

/** The pieces of a reply, given as a list or as a stream, as one stream. */
async function* each(pieces: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
  yield* pieces;
}

/** Resolves once the socket has taken what it was given, or the client is gone. */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Once the client has gone, a write throws ClientWentAway, so the writer stops building what nobody will read. */
function stopWhenGone(res: http.ServerResponse, sink: JsonSink): JsonSink {
  return {
    write: (chunk) => {
      if (res.destroyed) throw new ClientWentAway('the client closed the connection during the response');
      return sink.write(chunk);
    },
    pause: () => sink.pause?.(),
  };
}

/** The request's URL for the log: an API key in its query (`key=`) is a credential, never written. */
const urlInLog = (req: http.IncomingMessage) => (req.url ?? '').replace(/([?&]key=)[^&]*/g, '$1-');

/** The access policy in force, taken once per request (AccessPolicyHolder); absent: every dataset open. */
export interface AccessSource {
  current(): AccessSnapshot;
}

const OPEN_SNAPSHOT: AccessSnapshot = Object.freeze({ policy: null, resolver: OPEN_RESOLVER, loadedAt: new Date(0) });
const OPEN_ACCESS: AccessSource = { current: () => OPEN_SNAPSHOT };

/**
 * The caller of a request under the policy in force, resolved once: refused credentials are a 401
 * with the bearer challenge, and the reason goes to the log (never the credentials).
 */
async function callerOf(req: http.IncomingMessage, pairs: Array<[string, string]>, snapshot: AccessSnapshot): Promise<Caller> {
  const queryKeys = pairs.filter(([k]) => k === 'key').map(([, v]) => v);
  const resolution = await snapshot.resolver.resolve({ headers: req.headers, queryKeys });
  if (!resolution.ok) {
    const error = new GAException('invalidCredentials', 'the credentials of the request do not verify');
    error.logDetail = `credentials refused: ${loggable(resolution.refused.reason)}`;
    throw error;
  }
  if (resolution.ignoredVisas.length) {
    console.error(`${req.method} ${urlInLog(req)}: visas that do not count for ${callerInLog(resolution.caller)}: ${resolution.ignoredVisas.map(loggable).join('; ')}`);
  }
  return resolution.caller;
}

export function createHttpHandler(routes: Route[], config: ServerConfig, streams = streamSlotsOf(config.limits), access: AccessSource = OPEN_ACCESS) {
  const router = buildRouter(routes);
  const slices = new SliceQueue();
  const { ratePerSecond, rateBurst } = config.limits;
  const rate = ratePerSecond > 0 ? new TokenBuckets(ratePerSecond, 1000, rateBurst) : undefined;
  const cors = config.cors ? new Cors(config.cors.origins) : undefined;

  /**
   * A slot for a large reply, before anything is written: it waits its turn while all are taken (a
   * 503 with Retry-After once the wait is over), and leaves the line once its client has gone.
   */
  async function takeSlot(res: http.ServerResponse, reply: { abandon?(): void }): Promise<() => void> {
    const left = new AbortController();
    const gone = () => left.abort(new ClientWentAway('the client closed the connection while its reply waited for a slot'));
    if (res.destroyed) gone();
    else res.once('close', gone);
    try {
      return await streams.takeInTurn(left.signal);
    } catch (e) {
      reply.abandon?.();
      throw e;
    } finally {
      res.off('close', gone);
    }
  }

  /** Writes a reply; returns the size of its body as sent, in bytes (for the access log). */
  async function writeReply(res: http.ServerResponse, reply: Reply, form: NamingForm, coding: ContentCoding | undefined, head: boolean): Promise<number> {
    if (reply.kind === 'exact') return writeExact(res, reply, head);
    // The encoder applies the negotiated coding (./compression.ts).
    const body = new ReplyEncoder(res, coding, config.compression);
    const headers = { 'content-type': JSON_TYPE };
    switch (reply.kind) {
      case 'record':
        return body.whole(200, headers, [writeRecord(reply.desc, reply.value, form)]);
      case 'page':
        return body.whole(200, headers, [writeSearchPage(reply.response, reply.page, form, config.paging)]);
      case 'bytes':
        return body.whole(200, headers, reply.chunks(form));
      case 'content': {
        const contentHeaders: http.OutgoingHttpHeaders = { 'content-type': reply.contentType };
        if (reply.cacheControl) contentHeaders['cache-control'] = reply.cacheControl;
        return reply.asIs ? sendAsIs(res, 200, contentHeaders, [reply.body], reply.body.length) : body.whole(200, contentHeaders, [reply.body]);
      }
      case 'stream': {
        const release = await takeSlot(res, reply);
        try {
          const sink = reply.coded ? body.coded(200, headers, reply.coded) : body.stream(200, headers);
          await reply.write(yieldingSink(stopWhenGone(res, sink), SLICE_MS, slices), form);
          return await sink.end();
        } finally {
          release();
        }
      }
    }
  }

  /**
   * Bytes sent as they are, never content-coded, each piece once the socket has taken the one before
   * (none for HEAD). The first piece is read before the status line goes out, so a file that cannot
   * be read still answers with an error of its own.
   */
  async function writeExact(res: http.ServerResponse, reply: Extract<Reply, { kind: 'exact' }>, head: boolean): Promise<number> {
    const pieces = each(reply.pieces);
    try {
      let next = head ? undefined : await pieces.next();
      // The reply's own Vary joins the one already set (CORS's Origin) rather than replacing it.
      const { vary, ...headers } = reply.headers;
      if (vary) addVary(res, vary);
      res.writeHead(reply.status, { ...headers, 'content-length': reply.length });
      for (; next && !next.done; next = await pieces.next()) {
        if (res.destroyed) throw new ClientWentAway('the client closed the connection during the response');
        if (!res.write(next.value)) await drained(res);
      }
      res.end();
      return head ? 0 : reply.length;
    } finally {
      await pieces.return(undefined);
    }
  }

  return async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = config.accessLog ? process.hrtime.bigint() : 0n;
    let form: NamingForm = config.forceForm ?? 'camel';
    let clientGone = false;
    let request: MessageDesc | undefined;
    let matched: Route | undefined;
    let bytes = 0;
    let requestAccess: RequestAccess | undefined;
    cors?.apply(req, res);
    try {
      // Split by hand: a URL object per request measured as a visible share of small requests.
      const rawUrl = req.url ?? '/';
      const queryStart = rawUrl.indexOf('?');
      const pathname = queryStart < 0 ? rawUrl : rawUrl.slice(0, queryStart);
      const query = queryStart < 0 ? '' : rawUrl.slice(queryStart + 1);
      const method = req.method ?? 'GET';
      const pairs = queryPairs(query);
      // Even a query that fails to parse answers in the form it was written in.
      if (!config.forceForm) form = guessForm(Object.fromEntries(pairs));
      if (req.headers.host === undefined && req.httpVersion === '1.1') {
        throw new GAException('invalidRequest', 'an HTTP/1.1 request must have a Host header');
      }
      const address = req.socket.remoteAddress ?? '';
      if (rate && !rate.take(address)) {
        throw GAException.retryLater('tooManyRequests', `more than ${ratePerSecond} requests a second from ${address}`, rate.secondsUntilNext(address));
      }
      if (method === 'OPTIONS' && cors) {
        cors.preflight(req, res);
        return;
      }
      const match = router.match(method, pathname);
      if (match.kind === 'none') throw new GAException('noSuchPath', `no endpoint at ${pathname}`);
      if (match.kind === 'wrongMethod') {
        res.setHeader('allow', match.allowed.join(', '));
        throw new GAException('methodNotAllowed', `${method} is not allowed on ${pathname}; use ${match.allowed.join(' or ')}`);
      }
      const { route, params } = match;
      matched = route;
      request = route.request;
      // One snapshot for the whole request: a reload meanwhile does not change what it sees.
      const snapshot = route.signedAccess ? OPEN_SNAPSHOT : access.current();
      requestAccess = { snapshot, caller: route.signedAccess ? ANONYMOUS : await callerOf(req, pairs, snapshot), datasets: new Set() };
      const remote = { address, userAgent: String(req.headers['user-agent'] ?? ''), host: req.headers.host };
      let input: unknown = {};
      if (method === 'POST') {
        try {
          input = decodeJsonBody(req, await readBody(req, config.bodyLimit), config.limits.maxJsonDepth);
        } catch (e) {
          if (route.onBadBody && e instanceof GAException) await route.onBadBody(e, remote);
          throw e;
        }
        const unknown = Object.keys(queryObject(pairs));
        if (unknown.length) throw new GAException('unknownField', `unknown query parameter '${unknown[0]}': ${pathname} takes its fields in the body`);
      } else {
        input = route.ownQuery ? {} : queryObject(pairs);
        if (!route.request && Object.keys(input as object).length) {
          throw new GAException('unknownField', `${pathname} takes no query parameters`);
        }
        req.resume();
      }
      // The body's own spelling decides the answer's form; a body that fails to parse still answers
      // its error in the form it was written in.
      let body: unknown = input;
      if (!config.forceForm) form = guessForm(input);
      if (route.request) {
        const parsed = parseMessage(route.request, input);
        body = parsed.value;
        if (!config.forceForm) form = parsed.form;
      }
      // Negotiated before the handler runs: a page compressed ahead of its request is one in this coding.
      const coding = req.method === 'HEAD' ? undefined : chooseCoding(req.headers['accept-encoding'], config.compression);
      const head = req.method === 'HEAD';
      const routeInput = { params, body, form, coding, remote, headers: req.headers, query: pairs, head };
      bytes = await runWithAccess(requestAccess, async () => writeReply(res, await route.handle(routeInput), form, coding, head));
    } catch (err) {
      if (err instanceof ClientWentAway) {
        // Nothing to answer and no fault of the server: only the access log (info level) tells of it.
        clientGone = true;
        res.destroy();
        return;
      }
      let error: GAException;
      let logged = true;
      if (err instanceof GAException) {
        error = err;
        if (err.logDetail !== undefined) console.error(`${req.method} ${urlInLog(req)} answered ${err.status}: ${err.logDetail}`);
        else logged = false;
      } else if (err instanceof TemporarilyUnavailable) {
        error = GAException.retryLater('unavailable', err.message, err.retryAfterSeconds);
        logged = false;
      } else {
        console.error(`internal error on ${req.method} ${urlInLog(req)}:`, err);
        error = new GAException('internal', 'internal server error; the fault is logged');
      }
      if (res.headersSent) {
        // The client sees only a connection closed early; the log says why.
        if (!logged) console.error(`${req.method} ${urlInLog(req)} was cut short after its headers: ${error.message}`);
        res.destroy();
      } else {
        if (error.retryAfterSeconds !== undefined) res.setHeader('retry-after', String(error.retryAfterSeconds));
        if (error.kind === 'invalidCredentials') res.setHeader('www-authenticate', INVALID_TOKEN_CHALLENGE);
        const { contentType, body } = matched?.writeError?.(error) ?? { contentType: JSON_TYPE, body: writeError(inRequestForm(error, request, form), form) };
        bytes = sendAsIs(res, error.status, { 'content-type': contentType }, [body], Buffer.byteLength(body));
      }
    } finally {
      if (config.accessLog) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const client = req.socket.remoteAddress ?? '-';
        const outcome = clientGone ? 'client-went-away' : res.statusCode;
        const sent = req.method === 'HEAD' ? 0 : bytes; // node:http leaves a HEAD reply's body out
        // Who read what: the caller (issuer#subject, key:NAME, or -) and the datasets the request reached.
        const who = requestAccess ? callerInLog(requestAccess.caller) : '-';
        const datasets = requestAccess?.datasets.size ? [...requestAccess.datasets].map(loggable).join(',') : '-';
        process.stderr.write(`${new Date().toISOString()} ${client} ${req.method} ${urlInLog(req)} ${outcome} ${sent}B ${ms.toFixed(1)}ms ${who} ${datasets}\n`);
      }
    }
  };
}

/** `streams`: the slots of large responses, when others watch them too (the page workers). */
export function startHttpServer(routes: Route[], config: ServerConfig, streams?: StreamSlots, access?: AccessSource): Promise<RunningServer> {
  const handler = createHttpHandler(routes, config, streams, access);
  const { limits } = config;
  const server = http.createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      // Checked by the handler instead, so that the answer is a JSON error like every other.
      requireHostHeader: false,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // How often the two timeouts above are checked (Node's default, 30 s, would stretch them).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 4)),
    },
    (req, res) => void handler(req, res),
  );
  const form = config.forceForm ?? 'camel';
  answerClientErrors(server, form, limits.maxHeaderBytes);
  capConnections(server, limits.maxConnections, form);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.setTimeout(limits.idleTimeoutMs); // sockets idle this long are closed
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
