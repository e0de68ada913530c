/**
 * The floor under the replay targets: what a bare replay server becomes once each page costs the
 * least that any server reading it from its file must spend. Before a page is sent, a background
 * thread (at the idle policy, as the server's page workers, and two pages ahead of the client, as
 * their read-ahead) inflates the page's share of the region's BGZF blocks, checking each block's CRC,
 * and writes the page's bytes once into a buffer of its own (from a 256 KB piece of the recorded
 * pages that stays in the core's cache, as a writer writes from its templates and records; the last
 * 8 KB exact, so the client finds the page token). No record is parsed and no JSON is built, so a
 * server can only be slower than this floor: a target above the floor's own ratio to the replay is
 * beyond the machine, not the server.
 *
 * The replay servers (reads-replay-server.ts, replay-server.ts) take a floor as `--floor=JSON`
 * (FloorSpec) and then send what the floor thread made, in the same writes as without it.
 */
import fs from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import zlib from 'node:zlib';
import { runInBackground } from '../src/thread-priority.js';

export interface FloorSpec {
  /** The BGZF file the pages were read from. */
  file: string;
  /** The region's share of the file's blocks, as fractions of its blocks in file order: [from, to). */
  from: number;
  to: number;
  /** Pages of one pass: page k of a pass inflates the k-th of as many equal runs of the region's blocks. */
  pages: number;
}

/** The floor's argument, for a replay server's command line. */
export const floorArgument = (spec: FloorSpec) => `--floor=${JSON.stringify(spec)}`;

/** The floor named on a replay server's command line, if any. */
export function floorOf(argv: string[]): FloorSpec | undefined {
  const arg = argv.find((a) => a.startsWith('--floor='));
  return arg ? (JSON.parse(arg.slice('--floor='.length)) as FloorSpec) : undefined;
}

/** Bytes at a page's end copied exactly (the token is read from the last bytes of a page). */
const EXACT_TAIL = 8192;
/** The piece of the recorded pages every page is written from. */
const TEMPLATE_BYTES = 256 * 1024;

type ToFloor = { make: number; slot: number; length: number; tail: Uint8Array } | { spare: ArrayBuffer };
interface FromFloor {
  slot: number;
  page: Uint8Array;
}

/** The floor's thread: makes each page it is asked for. */
function floorThread(spec: FloorSpec, template: Uint8Array): void {
  runInBackground();
  const file = fs.readFileSync(spec.file);
  const blocks: number[] = [];
  for (let at = 0; at + 18 <= file.length; at += file.readUInt16LE(at + 16) + 1) blocks.push(at);
  const first = Math.floor(blocks.length * spec.from);
  const count = Math.floor(blocks.length * spec.to) - first;
  // One raw inflater reset per block, into one buffer, as the server's BlockInflater (bgzf.ts).
  const inflater = zlib.createInflateRaw() as unknown as { _handle: { reset(): void; writeSync(...args: unknown[]): void; onerror: (m: string) => void } };
  const binding = inflater._handle;
  binding.onerror = (message) => {
    throw new Error(`${spec.file}: a BGZF block does not inflate (${message})`);
  };
  const text = Buffer.allocUnsafe(65536);
  const inflateBlock = (at: number) => {
    const size = file.readUInt16LE(at + 16) + 1;
    const declared = file.readUInt32LE(at + size - 4);
    if (declared === 0) return;
    const dataAt = at + 12 + file.readUInt16LE(at + 10);
    binding.reset();
    binding.writeSync(zlib.constants.Z_FINISH, file, dataAt, at + size - 8 - dataAt, text, 0, declared);
    if (zlib.crc32(text.subarray(0, declared)) !== file.readUInt32LE(at + size - 8)) throw new Error(`${spec.file}: a BGZF block fails its CRC check`);
  };
  const spares: ArrayBuffer[] = [];
  parentPort!.on('message', (message: ToFloor) => {
    if ('spare' in message) return void spares.push(message.spare);
    const k = message.make % spec.pages;
    for (let b = Math.floor((count * k) / spec.pages); b < Math.floor((count * (k + 1)) / spec.pages); b++) inflateBlock(blocks[first + b]);
    const { length, tail } = message;
    const at = spares.findIndex((buffer) => buffer.byteLength >= length);
    const page = new Uint8Array(at >= 0 ? spares.splice(at, 1)[0] : new ArrayBuffer(length), 0, length);
    const body = length - tail.length;
    for (let o = 0; o < body; o += template.length) page.set(template.subarray(0, Math.min(template.length, body - o)), o);
    page.set(tail, body);
    parentPort!.postMessage({ slot: message.slot, page } satisfies FromFloor, [page.buffer as ArrayBuffer]);
  });
}

if (!isMainThread && workerData?.floor) floorThread(workerData.floor as FloorSpec, workerData.template as Uint8Array);

// The thread runs this file through tsx's loader, as the server's page workers do (src/workers/pool.ts).
const TSX_API = import.meta.resolve('tsx/esm/api');
const BOOT = `import(${JSON.stringify(TSX_API)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(import.meta.url)}));`;

/**
 * The main thread's side: pages asked for ahead by their number in the pass (`make`), taken when
 * their request comes, and handed back once written.
 */
export class PageFloor {
  private readonly worker: Worker;
  private readonly made = new Map<number, Uint8Array>();
  private readonly waiting = new Map<number, (page: Uint8Array) => void>();
  private readonly asked = new Set<number>();

  /** `sample`: recorded page bytes, whose first 256 KB every page is written from. */
  constructor(spec: FloorSpec, sample: Uint8Array) {
    // Copies (a Buffer's slice is a view, and a view sends its whole buffer to the thread).
    const template = new Uint8Array(sample.subarray(0, TEMPLATE_BYTES));
    this.worker = new Worker(BOOT, { eval: true, workerData: { floor: spec, template } });
    this.worker.on('message', ({ slot, page }: FromFloor) => {
      const resolve = this.waiting.get(slot);
      this.waiting.delete(slot);
      if (resolve) resolve(page);
      else this.made.set(slot, page);
    });
    this.worker.on('error', (e) => {
      process.stderr.write(`floor thread: ${e.stack ?? e}\n`);
      process.exit(1);
    });
    this.worker.unref();
  }

  /** Asks for page `slot` of the pass (the `k`-th of its pages), whose recorded bytes are `body`, unless asked already. */
  ask(slot: number, k: number, body: Uint8Array): void {
    if (this.asked.has(slot)) return;
    this.asked.add(slot);
    const tail = new Uint8Array(body.subarray(Math.max(0, body.length - EXACT_TAIL)));
    this.worker.postMessage({ make: k, slot, length: body.length, tail } satisfies ToFloor);
  }

  /** Page `slot`, once made (asked for now if it was not). */
  take(slot: number, k: number, body: Uint8Array): Promise<Buffer> {
    this.ask(slot, k, body);
    this.asked.delete(slot);
    const made = this.made.get(slot);
    this.made.delete(slot);
    const page = made ? Promise.resolve(made) : new Promise<Uint8Array>((resolve) => this.waiting.set(slot, resolve));
    return page.then((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength));
  }

  /** A page's buffer, written: back to the thread, to be filled again. */
  handBack(page: Buffer): void {
    const buffer = page.buffer as ArrayBuffer;
    this.worker.postMessage({ spare: buffer } satisfies ToFloor, [buffer]);
  }
}
