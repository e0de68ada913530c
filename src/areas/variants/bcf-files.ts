/**
 * BCF files (BCF2, the binary encoding of VCF 4.3, section 6 of the specification): the header, which
 * is VCF header text behind a magic number and its length, and the contig dictionary the records and
 * the .csi index name contigs by. Registered as alternates of VCF files, served as they are by htsget.
 */
import type { GenericFilehandle } from 'generic-filehandle2';
import { int32At, readLinesFrom } from '../../formats/bgzf.js';
import type { VcfHeader } from './vcf-header.js';

const MAGIC = 'BCF\x02';
/** The magic number with its minor version byte, then the header text's length. */
const PREFIX = 9;

/** The VCF header text of a BGZF-compressed BCF file (up to its #CHROM line), read from the first blocks. */
export async function readBcfHeaderText(file: GenericFilehandle, source: string): Promise<string> {
  let bytes = Buffer.alloc(0);
  // The pieces are the file's text in order; only their joins at line ends do not matter here.
  for await (const { bytes: piece } of readLinesFrom(file, { blockPosition: 0, dataPosition: 0 }, source)) {
    bytes = Buffer.concat([bytes, piece]);
    if (bytes.length >= PREFIX) {
      if (bytes.toString('latin1', 0, 4) !== MAGIC) throw new Error(`${source} is not a BCF file (no BCF2 magic number)`);
      const length = bytes.readUInt32LE(5);
      if (bytes.length >= PREFIX + length) return bytes.toString('utf8', PREFIX, PREFIX + length).replace(/\0+$/, '');
    }
  }
  throw new Error(`${source} ends inside its BCF header`);
}

/**
 * The contig dictionary of a BCF's header: the ##contig IDs by the number records and the index use,
 * which is their order in the header unless a line gives its own IDX.
 */
export function contigDictionary(header: VcfHeader): string[] {
  const names: string[] = [];
  for (const entry of header.metadata) {
    if (entry.id === undefined || entry.key !== `contig.${entry.id}`) continue;
    const idx = entry.extra?.find(([key]) => key === 'IDX')?.[1];
    names[idx === undefined ? names.length : Number(idx)] = entry.id;
  }
  return names;
}

/**
 * The contig (its number in the dictionary) and 0-based position of the BCF record at `at`, when its
 * first fields are all in `bytes` (the two lengths, CHROM, POS: BCF2, section 6.3.1).
 */
export function bcfRecordAt(bytes: Uint8Array, at: number): { reference: number; start: number } | undefined {
  return at + 16 <= bytes.length ? { reference: int32At(bytes, at + 8), start: int32At(bytes, at + 12) } : undefined;
}
