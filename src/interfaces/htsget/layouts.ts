/**
 * What a ticket needs to know of a file, read once and kept: for the BGZF formats (BAM, VCF, BCF) the
 * parsed index, where the first record begins (the header ends there) and where the records end (the
 * end-of-file block begins there); for CRAM, where its header, its containers and its end-of-file
 * container lie; for a variant set of several VCF files, their merged header. Kept per registration
 * of the set, at most LAYOUTS of them.
 */
import type { GenericFilehandle } from 'generic-filehandle2';
import { BlockReader, cutBetween, deflatedBlocks, EOF_BLOCK, hasEofBlock, type CutPiece } from '../../formats/bgzf.js';
import { BinningIndex, packOffset, unpackOffset, type IndexKind, type PackedOffset } from '../../formats/binning-index.js';
import { openFile } from '../../files.js';
import { readBamHeader } from '../../areas/reads/bam-file.js';
import { CramFile } from '../../areas/reads/cram-file.js';
import { readHeaderText } from '../../areas/variants/vcf-files.js';
import { mergedHeaderText } from '../../areas/variants/vcf-header.js';
import type { ServedFile, ServedSet } from './sets.js';

export interface BgzfLayout {
  file: GenericFilehandle;
  index: BinningIndex;
  firstRecord: PackedOffset;
  /** Just after the last record: the end-of-file block, or the end of a file without one. */
  dataEnd: PackedOffset;
  /** The header: the file up to its first record, cut there (every ticket of the file begins with it). */
  header: CutPiece[];
}

export interface CramLayout {
  cram: CramFile;
  /** The file definition and the header container, which end where the first container of records begins. */
  header: CutPiece[];
  headerEnd: number;
  /** Where each container of records ends, by where it begins. */
  containerEnds: Map<number, number>;
  /** Where the end-of-file container begins (after the last container of records). */
  eofStart: number;
  size: number;
}

const LAYOUTS = 256;

/** A header this small is given inline in every ticket (a request fewer for the client), a larger one by range. */
const INLINE_HEADER = 64 * 1024;

/** The pieces of a header, as one inline piece when they are small enough. */
async function inlinedHeader(file: GenericFilehandle, pieces: CutPiece[]): Promise<CutPiece[]> {
  const size = pieces.reduce((n, p) => n + (p.kind === 'range' ? p.end - p.start : p.bytes.length), 0);
  if (size > INLINE_HEADER) return pieces;
  const parts = await Promise.all(pieces.map(async (p) => (p.kind === 'inline' ? p.bytes : Buffer.from(await file.read(p.end - p.start, p.start)))));
  return [{ kind: 'inline', bytes: Buffer.concat(parts) }];
}

/** The CRAM file definition (magic number, version, file id) comes first, and the header container after it. */
const CRAM_DEFINITION = 26;

async function bgzfLayout(file: ServedFile): Promise<BgzfLayout> {
  const handle = openFile(file.path);
  const index = await BinningIndex.open(openFile(file.indexPath), file.indexKind as IndexKind, file.indexPath);
  const { size } = await handle.stat();
  const dataEnd = packOffset({ blockPosition: (await hasEofBlock(handle)) ? size - EOF_BLOCK.length : size, dataPosition: 0 });
  // A BAM's header says where it ends; a VCF's or BCF's ends where its first record begins.
  const firstRecord = file.format === 'BAM' ? packOffset((await readBamHeader(handle, file.path)).firstRecord) : (index.firstRecord() ?? dataEnd);
  const header = await inlinedHeader(handle, await cutBetween(new BlockReader(handle, file.path), { blockPosition: 0, dataPosition: 0 }, unpackOffset(firstRecord)));
  return { file: handle, index, firstRecord, dataEnd, header };
}

async function cramLayout(file: ServedFile): Promise<CramLayout> {
  const cram = new CramFile(openFile(file.path), openFile(file.indexPath), () => {
    throw new Error('a ticket decodes no CRAM record');
  });
  const containers = await cram.containerStarts();
  const handle = openFile(file.path);
  const { size } = await handle.stat();
  const eofStart = await cram.containerEnd(containers.length ? containers[containers.length - 1] : CRAM_DEFINITION);
  // Containers follow one another: each ends where the next begins, the last where the end-of-file container does.
  const containerEnds = new Map(containers.map((start, i) => [start, containers[i + 1] ?? eofStart]));
  const headerEnd = containers[0] ?? eofStart;
  const header = await inlinedHeader(handle, [{ kind: 'range', start: 0, end: headerEnd }]);
  return { cram, header, headerEnd, containerEnds, eofStart, size };
}

/** The header of a set of several VCF files read as one stream (mergedHeaderText), as BGZF blocks. */
async function mergedHeader(files: ServedFile[]): Promise<Buffer> {
  const headers = [];
  for (const file of files) headers.push({ text: await readHeaderText(openFile(file.path), file.path), contigs: file.referenceNames });
  return deflatedBlocks(Buffer.from(mergedHeaderText(headers)));
}

export class FileLayouts {
  private readonly kept = new Map<string, Promise<BgzfLayout | CramLayout | Buffer>>();

  bgzf(set: ServedSet, file: ServedFile): Promise<BgzfLayout> {
    return this.get(set, file, bgzfLayout) as Promise<BgzfLayout>;
  }

  cram(set: ServedSet, file: ServedFile): Promise<CramLayout> {
    return this.get(set, file, cramLayout) as Promise<CramLayout>;
  }

  /** The header of a variant set's VCF files read as one stream. */
  mergedHeader(set: ServedSet, files: ServedFile[]): Promise<Buffer> {
    return this.keep(`${set.generation}\0${set.id}\0header`, () => mergedHeader(files)) as Promise<Buffer>;
  }

  private get(set: ServedSet, file: ServedFile, read: (file: ServedFile) => Promise<BgzfLayout | CramLayout>): Promise<BgzfLayout | CramLayout> {
    return this.keep(`${set.generation}\0${file.path}\0${file.indexPath}`, () => read(file)) as Promise<BgzfLayout | CramLayout>;
  }

  private keep(key: string, read: () => Promise<BgzfLayout | CramLayout | Buffer>): Promise<BgzfLayout | CramLayout | Buffer> {
    let layout = this.kept.get(key);
    if (layout) this.kept.delete(key);
    else {
      layout = read();
      layout.catch(() => this.kept.delete(key)); // read again next time: the file may be back
    }
    this.kept.set(key, layout);
    if (this.kept.size > LAYOUTS) this.kept.delete(this.kept.keys().next().value!);
    return layout;
  }
}
