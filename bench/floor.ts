/**
 * The floor under the replay figures: what a bare replay server becomes once each page costs the
 * least that any server reading it from its file must spend. Each page is made before it is sent: its
 * share of the region's BGZF blocks is inflated by the server's own block inflater (bgzf.ts, each
 * block's CRC checked), and the page's bytes are written once into a buffer (from a 256 KB piece of
 * the recorded pages that stays in the core's cache, as a writer writes from its templates and
 * records; the last 8 KB exact, so the client finds the page token). No record is parsed and no JSON is built, so a server can only be slower than this
 * floor: a target above the floor's own ratio to the replay is beyond the machine, not the server.
 *
 * Where that work runs was measured (docs/performance.md, "The floor"): on the replay's own thread, the
 * next page made as soon as the current one is handed to the socket (while the client reads it), the
 * floor came out ahead of a background thread at the idle policy two pages ahead (READS 0.85 against
 * 0.78 of the bare replay, P1 0.95 against 0.79), so that is what the floor does.
 *
 * The replay servers (reads-replay-server.ts, replay-server.ts) take a floor as `--floor=JSON`
 * (FloorSpec) and then send what the floor made, in the same writes as without it.
 */
import fs from 'node:fs';
import { blockSizeAt, inflateBlockInto } from '../src/formats/bgzf.js';

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

export class PageFloor {
  private readonly file: Buffer;
  /** The region's blocks: where each begins in the file, and its size. */
  private readonly blocks: Array<[number, number]>;
  /** Where a block's text goes (the one inflater the server's readers use writes it there). */
  private readonly text = Buffer.allocUnsafe(65536);
  private readonly template: Buffer;
  /**
   * Pages are made into two buffers in turn: page k + 2 is made once page k + 1 is asked for, so after
   * the client has read all of page k, whose buffer it reuses.
   */
  private readonly buffers: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)];
  private ahead?: { k: number; page: Buffer };

  /** `sample`: recorded page bytes, whose first 256 KB every page is written from. */
  constructor(
    readonly spec: FloorSpec,
    sample: Uint8Array,
  ) {
    this.file = fs.readFileSync(spec.file);
    const all: Array<[number, number]> = [];
    for (let at = 0, size; (size = blockSizeAt(this.file, at, spec.file)) !== undefined; at += size) all.push([at, size]);
    this.blocks = all.slice(Math.floor(all.length * spec.from), Math.floor(all.length * spec.to));
    this.template = Buffer.from(sample.subarray(0, TEMPLATE_BYTES));
  }

  /** Page k of the pass, whose recorded bytes are `body`: the one made ahead, or made now. */
  take(k: number, body: Uint8Array): Buffer {
    const made = this.ahead?.k === k ? this.ahead.page : this.make(k, body);
    this.ahead = undefined;
    return made;
  }

  /** Makes page k of the pass ahead of its request, once the current turn of the event loop is done. */
  makeAhead(k: number, body: Uint8Array): void {
    if (k >= this.spec.pages) return;
    setImmediate(() => (this.ahead = { k, page: this.make(k, body) }));
  }

  private make(k: number, body: Uint8Array): Buffer {
    const { pages } = this.spec;
    const count = this.blocks.length;
    for (let b = Math.floor((count * k) / pages); b < Math.floor((count * (k + 1)) / pages); b++) {
      const [at, size] = this.blocks[b];
      inflateBlockInto(this.file, at, size, this.text, 0);
    }
    const slot = k % 2;
    if (this.buffers[slot].length < body.length) this.buffers[slot] = Buffer.allocUnsafe(body.length);
    const page = this.buffers[slot].subarray(0, body.length);
    const tail = Math.max(0, body.length - EXACT_TAIL);
    for (let o = 0; o < tail; o += this.template.length) page.set(this.template.subarray(0, Math.min(this.template.length, tail - o)), o);
    page.set(body.subarray(tail), tail);
    return page;
  }
}
