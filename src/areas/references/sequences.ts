/** Reads bases from registered FASTA files by index, keeping a bounded number of them open. */
import { BgzipIndexedFasta, IndexedFasta } from '@gmod/indexedfasta';
import { openFile } from '../../files.js';
import { GAException } from '../../protocol/errors.js';
import type { ReferenceSetRow } from './store.js';

export class SequenceFiles {
  private readonly open = new Map<string, IndexedFasta>();

  constructor(private readonly maxOpen = 64) {}

  private fastaOf(set: ReferenceSetRow): IndexedFasta {
    let fasta = this.open.get(set.fasta_path);
    if (fasta) {
      // Move to the back: the map's first entry is the least recently used.
      this.open.delete(set.fasta_path);
    } else {
      const fai = openFile(set.fai_path);
      fasta = set.gzi_path
        ? new BgzipIndexedFasta({ fasta: openFile(set.fasta_path), fai, gzi: openFile(set.gzi_path) })
        : new IndexedFasta({ fasta: openFile(set.fasta_path), fai });
      if (this.open.size >= this.maxOpen) this.open.delete(this.open.keys().next().value as string);
    }
    this.open.set(set.fasta_path, fasta);
    return fasta;
  }

  /** Bases [start, end) of one sequence, upper-cased (IUPAC codes, as the protocol defines them). */
  async bases(set: ReferenceSetRow, name: string, start: number, end: number): Promise<string> {
    let sequence: string | undefined;
    try {
      sequence = await this.fastaOf(set).getSequence(name, start, end);
    } catch (e) {
      this.open.delete(set.fasta_path);
      console.error(`reading ${set.fasta_path}:`, (e as Error).message);
      throw new GAException('unavailable', `the sequence file of reference set '${set.name}' cannot be read right now`);
    }
    if (sequence === undefined || sequence.length !== end - start) {
      throw new GAException('unavailable', `the sequence file of reference set '${set.name}' does not hold '${name}' as registered`);
    }
    return sequence.toUpperCase();
  }
}
