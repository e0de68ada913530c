/**
 * The FASTA reader behind ListReferenceBases: bases by range from plain and bgzipped files, against
 * the sequences parsed independently from the FASTA text here. The files are written by the test
 * (line widths, CRLF, lower case, short last lines) with their .fai computed from the layout it chose,
 * and the bgzipped ones with small BGZF blocks so that ranges cross many block boundaries.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import { basesFromBytes, IndexedFastaFile } from '../src/areas/references/fasta-reader.js';
import { SequenceFiles } from '../src/areas/references/sequences.js';
import type { ReferenceSetRow } from '../src/areas/references/store.js';
import { openFile } from '../src/files.js';
import { GAException } from '../src/protocol/errors.js';
import { copyFixture, tempDir } from './helpers.js';

const dir = tempDir();

/** A deterministic pseudo-random generator (mulberry32), so failures repeat. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Parses FASTA text the simple way: name → upper-cased sequence. */
function readFasta(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let name = '';
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('>')) {
      name = line.slice(1).split(/\s/)[0];
      out.set(name, '');
    } else if (name) out.set(name, out.get(name)! + line.trim().toUpperCase());
  }
  return out;
}

interface Layout {
  name: string;
  sequence: string;
  lineBases: number;
}

/** FASTA text of the sequences as laid out, and the .fai describing that text. */
function writeFasta(sequences: Layout[], eol: string): { text: string; fai: string } {
  let text = '';
  let fai = '';
  for (const { name, sequence, lineBases } of sequences) {
    text += `>${name} some description${eol}`;
    const offset = Buffer.byteLength(text, 'latin1');
    for (let i = 0; i < sequence.length; i += lineBases) text += sequence.slice(i, i + lineBases) + eol;
    fai += [name, sequence.length, offset, lineBases, lineBases + eol.length].join('\t') + '\n';
  }
  return { text, fai };
}

/** BGZF of `data` in blocks of `blockSize` bytes, and its .gzi (compressed, uncompressed offset of each block after the first). */
function bgzip(data: Buffer, blockSize: number): { bgzf: Buffer; gzi: Buffer } {
  const blocks: Buffer[] = [];
  const offsets: Array<[number, number]> = [];
  let compressed = 0;
  const block = (payload: Buffer) => {
    const deflated = zlib.deflateRawSync(payload);
    const header = Buffer.from([31, 139, 8, 4, 0, 0, 0, 0, 0, 255, 6, 0, 66, 67, 2, 0, 0, 0]);
    header.writeUInt16LE(18 + deflated.length + 8 - 1, 16);
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc32(payload), 0);
    trailer.writeUInt32LE(payload.length, 4);
    return Buffer.concat([header, deflated, trailer]);
  };
  for (let at = 0; at < data.length; at += blockSize) {
    if (at > 0) offsets.push([compressed, at]);
    const b = block(data.subarray(at, at + blockSize));
    blocks.push(b);
    compressed += b.length;
  }
  blocks.push(block(Buffer.alloc(0))); // the end-of-file marker block
  const gzi = Buffer.alloc(8 + 16 * offsets.length);
  gzi.writeBigUInt64LE(BigInt(offsets.length), 0);
  offsets.forEach(([c, u], i) => {
    gzi.writeBigUInt64LE(BigInt(c), 8 + 16 * i);
    gzi.writeBigUInt64LE(BigInt(u), 16 + 16 * i);
  });
  return { bgzf: Buffer.concat(blocks), gzi };
}

/** CRC-32 of a BGZF block's data (gzip's trailer). */
function crc32(data: Buffer): number {
  let c = ~0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

interface Written {
  fasta: string;
  fai: string;
  gzi?: string;
  expected: Map<string, string>;
}

/** Writes the FASTA (bgzipped when `blockSize` is given) and its indexes; expected sequences come from re-reading the text. */
function fastaFile(base: string, sequences: Layout[], eol: string, blockSize?: number): Written {
  const { text, fai } = writeFasta(sequences, eol);
  const fasta = path.join(dir, blockSize ? `${base}.fa.gz` : `${base}.fa`);
  fs.writeFileSync(`${fasta}.fai`, fai);
  let gzi: string | undefined;
  if (blockSize) {
    const z = bgzip(Buffer.from(text, 'latin1'), blockSize);
    fs.writeFileSync(fasta, z.bgzf);
    gzi = `${fasta}.gzi`;
    fs.writeFileSync(gzi, z.gzi);
  } else {
    fs.writeFileSync(fasta, text, 'latin1');
  }
  return { fasta, fai: `${fasta}.fai`, gzi, expected: readFasta(text) };
}

function sequenceOf(length: number, next: () => number): string {
  const alphabet = 'ACGTNacgtnRYKMSWBDHVryk';
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(next() * (next() < 0.8 ? 4 : alphabet.length))];
  return s;
}

const next = random(20240607);
const layouts: Layout[] = [
  { name: 'chrA', sequence: sequenceOf(10_007, next), lineBases: 60 }, // last line of 47 bases
  { name: 'chrB', sequence: sequenceOf(700, next), lineBases: 70 }, // last line full
  { name: 'chrC', sequence: sequenceOf(13, next), lineBases: 5 },
  { name: 'one', sequence: 'g', lineBases: 60 },
  { name: 'single-line', sequence: sequenceOf(333, next), lineBases: 1000 },
];

/** Ranges worth asking for: whole, first and last base, line boundaries, within one line, across many, random. */
function rangesOf(length: number, lineBases: number): Array<[number, number]> {
  const out: Array<[number, number]> = [[0, length], [0, 1], [length - 1, length]];
  const lines = Math.ceil(length / lineBases);
  if (lines > 2) {
    out.push([lineBases, 2 * lineBases]); // exactly one full line
    out.push([lineBases, lineBases * (lines - 1)]); // from one line start to another
    out.push([lineBases - 1, lineBases + 1]); // across one line break
    out.push([lineBases + 1, 2 * lineBases - 1]); // inside one line
    out.push([(lines - 1) * lineBases, length]); // the last line alone
    out.push([(lines - 1) * lineBases - 1, length]); // the last line and the base before it
  }
  for (let i = 0; i < 25; i++) {
    const a = Math.floor(next() * length);
    const b = a + 1 + Math.floor(next() * (length - a));
    out.push([a, b]);
  }
  return out.filter(([a, b]) => a >= 0 && a < b && b <= length);
}

async function checkAllRanges(file: Written, reader: IndexedFastaFile) {
  for (const { name, lineBases } of layouts) {
    const sequence = file.expected.get(name)!;
    for (const [start, end] of rangesOf(sequence.length, lineBases)) {
      assert.equal((await reader.bases(name, start, end)).toString('latin1'), sequence.slice(start, end), `${name} [${start}, ${end})`);
    }
  }
}

const readerOf = (file: Written) => new IndexedFastaFile(file.fasta, openFile(file.fasta), openFile(file.fai), file.gzi ? openFile(file.gzi) : undefined);

describe('the FASTA reader', () => {
  for (const [label, eol, blockSize] of [
    ['plain, LF', '\n', undefined],
    ['plain, CRLF', '\r\n', undefined],
    ['bgzipped, LF', '\n', 1000],
    ['bgzipped, CRLF', '\r\n', 777],
  ] as const) {
    it(`reads any range of a ${label} file as upper-case bases`, async () => {
      const file = fastaFile(label.replace(/\W+/g, '-'), layouts, eol, blockSize);
      await checkAllRanges(file, readerOf(file));
    });
  }

  it('reads the test data files as their text says', async () => {
    for (const fixture of ['compliance/ref_brca1.fa', 'ga4gh-server/referenceSets/NCBI37.fa.gz']) {
      const fasta = copyFixture(fixture, dir);
      const gz = fasta.endsWith('.gz');
      if (gz) for (const ext of ['.fai', '.gzi']) copyFixture(fixture + ext, dir);
      else {
        // The .fai of a plain fixture is computed from its text (one sequence, even lines).
        const text = fs.readFileSync(fasta, 'latin1');
        const first = text.indexOf('\n') + 1;
        const lineWidth = text.indexOf('\n', first) + 1 - first;
        const name = text.slice(1, first - 1).split(/\s/)[0];
        const length = text.slice(first).replace(/\s+/g, '').length;
        fs.writeFileSync(`${fasta}.fai`, [name, length, first, lineWidth - 1, lineWidth].join('\t') + '\n');
      }
      const raw = fs.readFileSync(fasta);
      const expected = readFasta((gz ? zlib.gunzipSync(raw) : raw).toString('latin1'));
      const reader = new IndexedFastaFile(fasta, openFile(fasta), openFile(`${fasta}.fai`), gz ? openFile(`${fasta}.gzi`) : undefined);
      for (const [name, sequence] of expected) {
        for (const [start, end] of rangesOf(sequence.length, 60)) {
          assert.equal((await reader.bases(name, start, end)).toString('latin1'), sequence.slice(start, end), `${fixture} ${name} [${start}, ${end})`);
        }
      }
    }
  });

  it('upper-cases letters and refuses bytes that cannot be bases, wherever they sit in a word', () => {
    const entry = { length: 9, offset: 0, lineBases: 9, lineWidth: 10 };
    for (let byte = 0; byte < 256; byte++) {
      for (let at = 0; at < 9; at++) {
        // The range starts 0-3 bytes into its buffer, so the byte lands at every alignment.
        for (let shift = 0; shift < 4; shift++) {
          const bytes = Buffer.alloc(shift + 9);
          Buffer.from('acgtACGTn').copy(bytes, shift);
          bytes[shift + at] = byte;
          const view = bytes.subarray(shift);
          const valid = byte > 32 && byte < 127 && byte !== 0x22 && byte !== 0x5c; // quote and backslash would break the JSON
          const read = () => basesFromBytes(view, entry, 0, 9, 'test');
          if (valid) {
            const expected = 'acgtACGTn'.split('');
            expected[at] = String.fromCharCode(byte);
            assert.equal(read().toString('latin1'), expected.join('').toUpperCase(), `byte ${byte} at ${at}`);
          } else {
            assert.throws(read, /does not match its index/, `byte ${byte} at ${at}`);
          }
        }
      }
    }
  });
});

function setRow(name: string, file: Written): ReferenceSetRow {
  return {
    name,
    md5checksum: '',
    description: null,
    assembly_id: null,
    species_term_id: null,
    species_term: null,
    source_uri: null,
    source_accessions: '[]',
    is_derived: 0,
    fasta_path: file.fasta,
    fai_path: file.fai,
    gzi_path: file.gzi ?? null,
    dictionary_path: null,
    created_at: '',
  };
}

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp) {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof GAException, String(e));
    assert.equal(e.status, 503);
    assert.match(e.message, pattern);
    return true;
  });
}

describe('sequence files', () => {
  it('answer 503 naming the set when the file does not hold what the index says', async () => {
    const files = new SequenceFiles();
    const file = fastaFile('uneven', layouts, '\n');
    const set = setRow('uneven', file);
    await rejectsWith(files.bases(set, 'chrZ', 0, 1), /reference set 'uneven' does not hold 'chrZ' as registered/);
    await rejectsWith(files.bases(set, 'chrB', 0, 701), /does not hold 'chrB' as registered/); // past its end
    // An index that says lines are longer or shorter than they are.
    const fai = fs.readFileSync(file.fai, 'utf8');
    for (const [lineBases, lineWidth] of [[71, 72], [69, 70], [70, 72]]) {
      fs.writeFileSync(file.fai, fai.replace(/^(chrB\t700\t\d+)\t70\t71$/m, `$1\t${lineBases}\t${lineWidth}`));
      // Two lines but a base: with [70, 72] (CRLF said, LF written) only the line break's bytes show it.
      await rejectsWith(new SequenceFiles().bases(set, 'chrB', 0, 139), /does not hold 'chrB' as registered/);
    }
    // A file cut short.
    fs.writeFileSync(file.fai, fai);
    fs.truncateSync(file.fasta, fs.statSync(file.fasta).size - 200);
    await rejectsWith(files.bases(set, 'single-line', 0, 333), /does not hold 'single-line' as registered/);
  });

  for (const bgzipped of [false, true]) {
    it(`answer 503 while a ${bgzipped ? 'bgzipped' : 'plain'} file is missing, and read it again once it is back`, async () => {
      const files = new SequenceFiles();
      const file = fastaFile(bgzipped ? 'moving-gz' : 'moving', layouts, '\n', bgzipped ? 500 : undefined);
      const set = setRow('moving', file);
      const expected = file.expected.get('chrA')!.slice(100, 5000);
      assert.equal((await files.bases(set, 'chrA', 100, 5000)).toString('latin1'), expected);
      fs.renameSync(file.fasta, `${file.fasta}.away`);
      await rejectsWith(files.bases(set, 'chrA', 100, 5000), /the sequence file of reference set 'moving' cannot be read right now/);
      fs.renameSync(`${file.fasta}.away`, file.fasta);
      assert.equal((await files.bases(set, 'chrA', 100, 5000)).toString('latin1'), expected);
    });
  }

  it('read the index again when the file was replaced after a failure', async () => {
    const files = new SequenceFiles();
    const first = fastaFile('replaced', layouts, '\n');
    const set = setRow('replaced', first);
    assert.equal((await files.bases(set, 'chrC', 0, 13)).toString('latin1'), first.expected.get('chrC'));
    // Same paths, a new layout: reading with the old index fails, and the next read uses the new one.
    const second = fastaFile('replaced', [{ ...layouts[2], lineBases: 4 }, ...layouts.filter((l) => l.name !== 'chrC')], '\n');
    await rejectsWith(files.bases(set, 'chrA', 0, 10_007), /does not hold 'chrA' as registered/);
    assert.equal((await files.bases(set, 'chrA', 0, 10_007)).toString('latin1'), second.expected.get('chrA'));
  });
});
