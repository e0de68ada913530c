/**
 * The ticket (htsget 1.3, "Response JSON fields"): `{"htsget": {"format", "urls"}}` and no other key,
 * its URLs in the order the client concatenates them, each with its class. Byte ranges of a file go
 * through this server's data endpoint, with a Range header; bytes made for the ticket (the parts of
 * blocks at a cut, the BGZF end-of-file marker) are inline, as `data:;base64,...` exactly, the one
 * form htslib and the compliance suite accept. Adjacent ranges of a file are one URL, up to a
 * gigabyte each, so a failed transfer is retried in parts (the specification's guideline).
 */
import type { CutPiece } from '../../formats/bgzf.js';
import type { Format, ServedFile } from './sets.js';

type Class = 'header' | 'body';
type Part = { class: Class; file: ServedFile; start: number; end: number } | { class: Class; bytes: Buffer[] };

const MAX_RANGE = 1024 ** 3;

export class Ticket {
  private readonly parts: Part[] = [];

  constructor(
    private readonly format: Format,
    /** The signed data URL of a file. */
    private readonly urlOf: (file: ServedFile) => string,
  ) {}

  range(cls: Class, file: ServedFile, start: number, end: number): void {
    if (end <= start) return;
    const last = this.parts[this.parts.length - 1];
    if (last && 'file' in last && last.class === cls && last.file === file && last.end === start) last.end = end;
    else this.parts.push({ class: cls, file, start, end });
  }

  bytes(cls: Class, bytes: Buffer): void {
    if (!bytes.length) return;
    const last = this.parts[this.parts.length - 1];
    if (last && 'bytes' in last && last.class === cls) last.bytes.push(bytes);
    else this.parts.push({ class: cls, bytes: [bytes] });
  }

  /** The pieces of a file cut at virtual offsets (cutBetween). */
  pieces(cls: Class, file: ServedFile, pieces: CutPiece[]): void {
    for (const piece of pieces) {
      if (piece.kind === 'range') this.range(cls, file, piece.start, piece.end);
      else this.bytes(cls, piece.bytes);
    }
  }

  json(): string {
    const urls: Array<Record<string, unknown>> = [];
    for (const part of this.parts) {
      if ('bytes' in part) {
        urls.push({ url: `data:;base64,${Buffer.concat(part.bytes).toString('base64')}`, class: part.class });
        continue;
      }
      const url = this.urlOf(part.file);
      for (let at = part.start; at < part.end; at += MAX_RANGE) {
        urls.push({ url, headers: { Range: `bytes=${at}-${Math.min(at + MAX_RANGE, part.end) - 1}` }, class: part.class });
      }
    }
    return JSON.stringify({ htsget: { format: this.format, urls } });
  }
}
