/**
 * The registered alignment files, BAM or CRAM, behind one question: "the records of this reference of
 * the file from where the window [start, end) may begin" (or of the reads without a position). BAM
 * files and their parsed indexes are kept open; CRAM files with their decoder.
 */
import { openFile } from '../../files.js';
import type { VirtualOffset } from '../../formats/bgzf.js';
import { BinningIndex, unpackOffset } from '../../formats/binning-index.js';
import { BamRecords, newFileKey, readBamHeader, type RecordCursor } from './bam-file.js';
import { CramFile, CramRecords, type SequenceFetch } from './cram-file.js';

export interface AlignmentFileRef {
  path: string;
  indexPath: string;
  indexKind: string;
}

export interface AlignmentSource {
  /**
   * A cursor over the records of the file's reference `refId` from where records overlapping
   * [start, end) may begin (or from `at`, a record offset seen before), or over the reads without a
   * position when `refId` is -1; undefined when the index knows of none.
   */
  records(refId: number, start: number, end: number, at?: VirtualOffset): Promise<RecordCursor | undefined>;
}

class BamSource implements AlignmentSource {
  private readonly file;
  private index?: Promise<BinningIndex>;
  private firstRecord?: Promise<VirtualOffset>;
  private readonly fileKey = newFileKey();

  constructor(private readonly ref: AlignmentFileRef) {
    this.file = openFile(ref.path);
  }

  indexOf(): Promise<BinningIndex> {
    this.index ??= BinningIndex.open(openFile(this.ref.indexPath), this.ref.indexKind === 'csi' ? 'csi' : 'bai', this.ref.indexPath).catch((e) => {
      this.index = undefined; // read it again next time: the file may be back
      throw e;
    });
    return this.index;
  }

  async records(refId: number, start: number, end: number, at?: VirtualOffset): Promise<RecordCursor | undefined> {
    if (at) return new BamRecords(this.file, at, this.ref.path, this.fileKey);
    const index = await this.indexOf();
    if (refId >= 0) {
      const offset = index.startOf(refId, start, end);
      return offset === undefined ? undefined : new BamRecords(this.file, unpackOffset(offset), this.ref.path, this.fileKey);
    }
    const after = index.unplacedStart();
    if (after > 0) return new BamRecords(this.file, unpackOffset(after), this.ref.path, this.fileKey);
    this.firstRecord ??= readBamHeader(this.file, this.ref.path).then((h) => h.firstRecord);
    return new BamRecords(this.file, await this.firstRecord, this.ref.path, this.fileKey);
  }
}

class CramSource implements AlignmentSource {
  private readonly cram: CramFile;

  constructor(
    private readonly ref: AlignmentFileRef,
    fetch: SequenceFetch,
    private readonly readGroupNames: string[],
  ) {
    this.cram = new CramFile(openFile(ref.path), openFile(ref.indexPath), fetch);
  }

  async records(refId: number, start: number, end: number, at?: VirtualOffset): Promise<RecordCursor | undefined> {
    return new CramRecords(this.cram, refId, start, end, this.readGroupNames, this.ref.path, at);
  }
}

export function openAlignmentSource(ref: AlignmentFileRef, fetch: SequenceFetch, readGroupNames: string[]): AlignmentSource {
  return ref.indexKind === 'crai' ? new CramSource(ref, fetch, readGroupNames) : new BamSource(ref);
}
