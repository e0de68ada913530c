/** Reads bases from registered FASTA files by index, keeping a bounded number of them open. */
import { openFile } from '../../files.js';
import { GAException } from '../../protocol/errors.js';
import { FastaLayoutError, IndexedFastaFile } from './fasta-reader.js';
import type { ReferenceSetRow } from './store.js';

export class SequenceFiles {
  private readonly open = new Map<string, IndexedFastaFile>();

  constructor(private readonly maxOpen = 64) {}

  private fastaOf(set: ReferenceSetRow): IndexedFastaFile {
    let fasta = this.open.get(set.fasta_path);
    if (fasta) {
      // Move to the back: the map's first entry is the least recently used.
      this.open.delete(set.fasta_path);
    } else {
      const gzi = set.gzi_path ? openFile(set.gzi_path) : undefined;
      fasta = new IndexedFastaFile(set.fasta_path, openFile(set.fasta_path), openFile(set.fai_path), gzi);
      if (this.open.size >= this.maxOpen) this.open.delete(this.open.keys().next().value as string);
    }
    this.open.set(set.fasta_path, fasta);
    return fasta;
  }

  /** Bases [start, end) of one sequence, upper-cased (IUPAC codes, as the protocol defines them), as bytes. */
  async bases(set: ReferenceSetRow, name: string, start: number, end: number): Promise<Buffer> {
    try {
      return await this.fastaOf(set).bases(name, start, end);
    } catch (e) {
      // Forget the file and its parsed index: a file that reappears, or is replaced, is read afresh.
      this.open.delete(set.fasta_path);
      const detail = `reading ${set.fasta_path}: ${(e as Error).message}`;
      if (e instanceof FastaLayoutError) {
        throw GAException.serverFault('unavailable', `the sequence file of reference set '${set.name}' does not hold '${name}' as registered`, detail);
      }
      throw GAException.serverFault('unavailable', `the sequence file of reference set '${set.name}' cannot be read right now`, detail);
    }
  }
}
