/**
 * Pages of a search built whole on the main thread, and the next one built as soon as a page is handed
 * to the socket, while the client reads it. For uncompressed pages of variants with their calls.
 *
 * Why here and not in a page worker. On two cores the client reading a page takes one core and the
 * sending the other; a page worker is a third thread, and at the idle policy it builds only in the
 * gaps, set aside each time the main thread or the client wakes (docs/performance.md, "Why: two
 * cores, three busy threads"). A page of a 2,504-sample cohort (8 MB) now takes ~1 ms to build, and the kernel holds
 * several megabytes of a page handed to it: the main thread builds the next page while the kernel
 * sends this one, and the client finds it whole when it asks. A page built so takes the main thread
 * from other requests for about a millisecond, no longer than writing it does.
 *
 * Compressed pages stay in the page workers, which compress them ahead: compressing costs ten times
 * the building, too long for the main thread.
 *
 * A page built ahead is exact under the same rules as the page workers' (page-builder.ts): the same
 * operation on the same request, served only while the registrations it depends on are unchanged and
 * at most `holdMs` after its build began; one that fails is dropped, and the request builds its own
 * page and reports its own error. The page after each page sent is built ahead, kept by its request
 * (so clients paging the same query each find theirs), only while no other large reply is being
 * written, the server is below its limit of large responses, and within `maxBytes` in all.
 */
import { pieceSent } from '../protocol/chunk-pool.js';
import type { JsonStream, Reply } from '../protocol/reply.js';
import type { NamingForm } from '../protocol/schema.js';
import { Tail } from './page-builder.js';
import { canonicalJson, type ReadAheadLimits } from './operations.js';
import type { StreamLoad } from './pool.js';
import { without } from '../without.js';

const sliced = !without('sliced-path');

/** A page in memory: its pieces, as the writer handed them out, and the token of the page after it. */
interface WholePage {
  pieces: Uint8Array[];
  token?: string;
}

/** A search whose pages are built here: as a page worker's operation (operations.ts), typed by its request. */
interface Operation<Request> {
  start(arg: Request): Promise<JsonStream>;
  /** What its pages depend on (a set's registration time); without it, no page is built ahead. */
  registration?(arg: Request): Promise<string>;
}

/** The longest stretch a page is built here before the event loop gets a turn (at its writer's pauses, every ~1 MB). */
const BUILD_SLICE_MS = 4;

/** Thrown into the build of a page ahead once it is no longer wanted. */
const DROPPED = new Error('the page built ahead was dropped');

/** Gives the pieces of a page nobody will send back to the chunk pool. */
function release(page: WholePage): void {
  for (const piece of page.pieces) pieceSent(piece);
}

/** The key of a request's page: requests that differ only in the order of their keys share it. */
const keyOf = (arg: unknown, form: NamingForm) => `${form}\0${canonicalJson(arg)}`;

/** A page being built, or built, ahead of its request. */
interface AheadPage {
  /** The request it answers, page token included, and its naming form (keyOf). */
  key: string;
  /** The registrations it depends on, read when its build began. */
  registration: Promise<string | undefined>;
  /** The page, or undefined when its build failed or it was dropped. */
  built: Promise<WholePage | undefined>;
  dropped: boolean;
  /** Its build has ended, built or not. */
  done: boolean;
  /** Bytes it holds so far (counted against `maxBytes`). */
  bytes: number;
  timer: NodeJS.Timeout;
}

export type MainThreadPages = ReturnType<typeof mainThreadPages>;

export function mainThreadPages(limits: ReadAheadLimits, load?: StreamLoad) {
  /** The pages built ahead, by their request and naming form (keyOf). */
  const ahead = new Map<string, AheadPage>();
  let aheadBytes = 0;
  let atLimit = false;
  /** Builds ahead scheduled or under way (what a test waits for). */
  const building = new Set<Promise<unknown>>();
  /** Requests being answered here whose pages are not yet handed to the HTTP layer. */
  let answering = 0;
  load?.watch((now) => {
    atLimit = now;
    // Builds give way to the requests themselves; pages already built cost no CPU and stay.
    if (now) for (const page of ahead.values()) if (!page.done) drop(page);
  });

  /** Writes the page of `stream` into memory, counting its bytes on `count` as they come. */
  async function buildWhole(stream: JsonStream, form: NamingForm, count?: (bytes: number) => void): Promise<WholePage> {
    const page: WholePage = { pieces: [] };
    let sliceStart = performance.now();
    try {
      // Built at once, as the floor of the benchmark does: a page ends at the server's byte budget,
      // so this is ~1 ms for the largest. The pauses let other connections in only when a build runs
      // longer (the first pages after a start, before the code is optimised, took 50-100 ms each).
      await stream.write(
        {
          write(chunk) {
            const piece = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            page.pieces.push(piece);
            count?.(piece.byteLength);
          },
          pause() {
            if (!sliced) return;
            if (performance.now() - sliceStart < BUILD_SLICE_MS) return;
            return new Promise<void>((resolve) => setImmediate(resolve)).then(() => void (sliceStart = performance.now()));
          },
        },
        form,
      );
    } catch (e) {
      release(page);
      throw e;
    }
    // Read once the page is whole, from the pieces that hold its last bytes only.
    const tail = new Tail();
    tail.addAll(page.pieces);
    page.token = tail.token();
    return page;
  }

  function drop(page: AheadPage): void {
    if (ahead.get(page.key) !== page) return;
    ahead.delete(page.key);
    page.dropped = true;
    aheadBytes -= page.bytes;
    clearTimeout(page.timer);
    void page.built.then((built) => built && release(built));
  }

  /** Takes the page built ahead for `key` out of the store, when there is one. */
  function take(key: string): AheadPage | undefined {
    const page = ahead.get(key);
    if (!page) return undefined;
    ahead.delete(key);
    aheadBytes -= page.bytes;
    clearTimeout(page.timer);
    return page;
  }

  function buildAhead<Request>(operation: Operation<Request>, key: string, arg: Request, form: NamingForm): void {
    if (atLimit || limits.maxBytes <= 0 || limits.holdMs <= 0 || aheadBytes >= limits.maxBytes || ahead.has(key)) return;
    // Only while no other large reply is being written (the page just handed over may still hold its slot).
    if ((load?.taken() ?? 0) > 1) return;
    const page: AheadPage = {
      key,
      registration: operation.registration!(arg).catch(() => undefined),
      built: Promise.resolve(undefined),
      dropped: false,
      done: false,
      bytes: 0,
      timer: setTimeout(() => drop(page), limits.holdMs),
    };
    page.timer.unref();
    const count = (bytes: number) => {
      if (page.dropped) throw DROPPED;
      page.bytes += bytes;
      // Taken by its request while still being built: its bytes are the request's.
      if (ahead.get(page.key) !== page) return;
      aheadBytes += bytes;
      if (aheadBytes > limits.maxBytes) {
        drop(page);
        throw DROPPED;
      }
    };
    page.built = (async () => {
      try {
        const built = await buildWhole(await operation.start(arg), form, count);
        if (!page.dropped) return built;
        release(built);
      } catch {
        // Never reported: the request, if it comes, builds its page itself.
        drop(page);
      } finally {
        page.done = true;
      }
      return undefined;
    })();
    ahead.set(key, page);
    building.add(page.built);
    void page.built.finally(() => building.delete(page.built));
  }

  /** The page built ahead for this request, when it is still what the request would get now. */
  async function builtAhead<Request>(operation: Operation<Request>, key: string, arg: Request): Promise<WholePage | undefined> {
    const page = take(key);
    if (!page) return undefined;
    const [built, then, now] = await Promise.all([page.built, page.registration, operation.registration!(arg).catch(() => undefined)]);
    if (built && (then === undefined || then !== now)) {
      release(built);
      return undefined;
    }
    return built;
  }

  return {
    /** Resolves once no page is being built ahead (what a test waits for before changing the registry). */
    async aheadSettled(): Promise<void> {
      while (building.size) await Promise.all([...building]);
    },
    /**
     * Answers requests of a search operation with whole pages, building the next page of each query
     * ahead when the operation says what its pages depend on (`registration`).
     */
    operation<Request extends object>(operation: Operation<Request>) {
      /**
       * Whether a request is answered here: its page was built ahead, or the server writes no other
       * large reply and builds no other page here on request, so that its building takes no turn
       * from another client's sending. Otherwise the page workers build it (P6 in
       * docs/performance.md: with four clients paging, pages built on the main thread made a new
       * connection wait several times as long; and the requests of many clients arriving together
       * at an idle server, all built here one after another, held a new connection for 0.4 s).
       */
      const answersHere = (arg: Request, form: NamingForm): boolean => ahead.has(keyOf(arg, form)) || (answering === 0 && (load?.taken() ?? 0) === 0);
      const run = async (arg: Request, form: NamingForm): Promise<Reply> => {
        const readAhead = operation.registration !== undefined;
        answering++;
        let whole: WholePage;
        try {
          const page = readAhead ? await builtAhead(operation, keyOf(arg, form), arg) : undefined;
          // Built on request: its checks and a damaged file answer the request's own error.
          whole = page ?? (await buildWhole(await operation.start(arg), form));
        } finally {
          answering--;
        }
        return {
          kind: 'bytes',
          large: true,
          chunks: () => whole.pieces,
          abandon: () => release(whole),
          handedOver(sent) {
            void sent.then(() => release(whole));
            const token = whole.token;
            if (readAhead && token !== undefined) {
              const next = { ...arg, pageToken: token };
              const started = new Promise<void>((resolve) => setImmediate(() => resolve(buildAhead(operation, keyOf(next, form), next, form))));
              building.add(started);
              void started.finally(() => building.delete(started));
            }
          },
        };
      };
      return { answersHere, run };
    },
  };
}
