/**
 * `repo add-referenceset`: reads a FASTA once, checks or creates its indexes beside it, and records the
 * set and its references (with checksums and refget digests computed from the sequence) in one
 * transaction. A set may instead come from a sequence dictionary (a SAM, BAM, CRAM, VCF or BCF
 * header, a `.dict`, a `.fai`): names, lengths and MD5s, without bases (./dictionary.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Registry } from '../../registry/registry.js';
import { isUrl } from '../../files.js';
import { UserError } from '../../user-error.js';
import { faiText, gziBytes, parseFai, parseGzi, scanFasta, type FastaScan } from './fasta-scan.js';
import { getReferenceSetRow, insertReferenceSet, type ReferenceSetRow } from './store.js';

export interface ReferenceSetOptions {
  name?: string;
  description?: string;
  assemblyId?: string;
  speciesTermId?: string;
  speciesTerm?: string;
  sourceUri?: string;
  sourceAccessions?: string[];
  isDerived?: boolean;
  /** A file of `NAME ACCESSION[,ACCESSION...]` lines: accessions of single references. */
  referenceAccessions?: string;
  /** Names of the circular sequences (a plasmid, a mitochondrion): refget serves ranges across their origin. */
  circular?: string[];
  /** Hears how many bytes of the FASTA were read so far (a 3 GB genome takes a while). */
  progress?: (bytesRead: number, size: number) => void;
}

export interface LoadedReferenceSet {
  name: string;
  md5checksum: string;
  references: number;
  createdIndexes: string[];
}

/** The set name a FASTA file (or a dictionary) gives by default: its file name without extensions. */
export function defaultSetName(file: string): string {
  const name = path.basename(isUrl(file) ? new URL(file).pathname : file).replace(/\.(gz|bgz|bgzf)$/i, '');
  return name.replace(/\.(fa|fasta|fna|fas|seq|dict|sam|bam|cram|vcf|bcf|fai)$/i, '').replace(/\.(fa|fasta|fna)$/i, '');
}

/** Spec 2.3: MD5 of the sorted reference checksums, concatenated. */
export function referenceSetChecksum(referenceChecksums: string[]): string {
  return createHash('md5').update([...referenceChecksums].sort().join('')).digest('hex');
}

/** Reads an index file beside the FASTA, local or remote; undefined when there is none. */
async function readIndex(location: string): Promise<Buffer | undefined> {
  if (!isUrl(location)) return fs.existsSync(location) ? fs.readFileSync(location) : undefined;
  let res: Response;
  try {
    res = await fetch(location);
  } catch (e) {
    throw new UserError(`cannot fetch ${location}: ${(e as Error).message}`);
  }
  if (res.status === 404) return undefined;
  if (!res.ok) throw new UserError(`cannot fetch ${location}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

function writeIndex(file: string, content: string | Buffer, created: string[]): void {
  if (isUrl(file)) {
    throw new UserError(`the index ${file} is missing; create it with samtools faidx and put it beside the remote FASTA`);
  }
  try {
    fs.writeFileSync(file, content, { flag: 'wx' });
    created.push(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new UserError(
      `the index ${file} is missing and cannot be created beside the FASTA (${code}); create it with samtools faidx, or make the folder writable`,
    );
  }
}

/** Checks an existing .fai against the scan, or writes one; the same for .gzi of BGZF files. */
/** Whether an existing .fai says what a scan of its FASTA found. */
export function faiMatches(entries: ReturnType<typeof parseFai>, scan: FastaScan): boolean {
  return (
    entries.length === scan.sequences.length &&
    entries.every((e, i) => {
      const s = scan.sequences[i];
      return e.name === s.name && e.length === s.length && e.offset === s.offset && e.lineBases === s.lineBases && e.lineWidth === s.lineWidth;
    })
  );
}

async function ensureIndexes(fasta: string, scan: FastaScan): Promise<{ fai: string; gzi: string | null; created: string[] }> {
  const created: string[] = [];
  const fai = `${fasta}.fai`;
  const faiBytes = await readIndex(fai);
  if (faiBytes) {
    const entries = parseFai(faiBytes.toString('utf8'), fai);
    if (!faiMatches(entries, scan)) throw new UserError(`the index ${fai} does not match ${fasta} (out of date?); delete it and load again to rebuild it`);
  } else {
    writeIndex(fai, faiText(scan.sequences), created);
  }
  if (scan.compression === 'none') return { fai, gzi: null, created };
  const gzi = `${fasta}.gzi`;
  const gziBytesFound = await readIndex(gzi);
  if (gziBytesFound) {
    if (!parseGzi(gziBytesFound)) throw new UserError(`the index ${gzi} is not a valid .gzi file; delete it and load again to rebuild it`);
  } else {
    writeIndex(gzi, gziBytes(scan.gzi ?? []), created);
  }
  return { fai, gzi, created };
}

/**
 * Reads a reference accessions file: one reference a line, its name then its accessions (separated by
 * commas or white space), e.g. `1 NC_000001.10,CM000663.1` as an assembly report gives them.
 */
export function readReferenceAccessions(file: string, names: Set<string>): Map<string, string[]> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const out = new Map<string, string[]>();
  text.split(/\r?\n/).forEach((line, i) => {
    const fields = line.replace(/#.*/, '').trim().split(/[\s,]+/).filter(Boolean);
    if (!fields.length) return;
    const [name, ...accessions] = fields;
    if (!names.has(name)) throw new UserError(`${file} line ${i + 1}: the FASTA has no sequence '${name}'`);
    if (!accessions.length) throw new UserError(`${file} line ${i + 1}: no accession after '${name}'`);
    out.set(name, [...(out.get(name) ?? []), ...accessions]);
  });
  return out;
}

/** A sequence as a set records it: from a FASTA scan, or from a dictionary (no refget digest then). */
export interface SequenceEntry {
  name: string;
  length: number;
  /** '' when a dictionary gives none. */
  md5checksum: string;
  sha512t24u: string | null;
}

/** The name the set gets, refused when taken; the options checked that do not depend on the file. */
async function newSetName(registry: Registry, file: string, options: ReferenceSetOptions): Promise<string> {
  if ((options.speciesTermId === undefined) !== (options.speciesTerm === undefined)) {
    throw new UserError('--species-term-id and --species-term go together: give both or neither');
  }
  const name = options.name ?? defaultSetName(file);
  if (!name) throw new UserError(`cannot derive a reference set name from ${file}; give one with --name`);
  if (await getReferenceSetRow(registry, name)) {
    throw new UserError(`reference set '${name}' already exists in ${registry.location}; choose another with --name`);
  }
  return name;
}

/** What the options say of single sequences (their accessions, which are circular), each name checked against the file's. */
interface SequenceDetails {
  referenceAccessions: Map<string, string[]>;
  circular: Set<string>;
}

function sequenceDetails(options: ReferenceSetOptions, sequences: SequenceEntry[], file: string): SequenceDetails {
  const names = new Set(sequences.map((s) => s.name));
  const circular = new Set(options.circular ?? []);
  for (const name of circular) if (!names.has(name)) throw new UserError(`--circular names '${name}', but ${file} has no sequence of that name`);
  const referenceAccessions = options.referenceAccessions ? readReferenceAccessions(options.referenceAccessions, names) : new Map<string, string[]>();
  return { referenceAccessions, circular };
}

/** Records a set and its sequences in one transaction: from a FASTA (its files) or a dictionary. */
async function registerSet(
  registry: Registry,
  name: string,
  sequences: SequenceEntry[],
  { referenceAccessions, circular }: SequenceDetails,
  files: Pick<ReferenceSetRow, 'fasta_path' | 'fai_path' | 'gzi_path' | 'dictionary_path'>,
  options: ReferenceSetOptions,
): Promise<string> {
  // Spec 2.3's checksum needs every reference's MD5: a dictionary that lacks one gives the set none.
  const md5checksum = sequences.every((s) => s.md5checksum) ? referenceSetChecksum(sequences.map((s) => s.md5checksum)) : '';
  await insertReferenceSet(registry, {
    set: {
      name,
      md5checksum,
      description: options.description ?? null,
      assembly_id: options.assemblyId ?? null,
      species_term_id: options.speciesTermId ?? null,
      species_term: options.speciesTerm ?? null,
      source_uri: options.sourceUri ?? null,
      source_accessions: JSON.stringify(options.sourceAccessions ?? []),
      is_derived: options.isDerived ? 1 : 0,
      ...files,
    },
    references: sequences.map((s, ordinal) => ({
      ordinal,
      name: s.name,
      length: s.length,
      md5checksum: s.md5checksum,
      sha512t24u: s.sha512t24u,
      circular: circular.has(s.name) ? 1 : 0,
    })),
    referenceAccessions,
  });
  return md5checksum;
}

export async function loadReferenceSet(registry: Registry, fasta: string, options: ReferenceSetOptions): Promise<LoadedReferenceSet> {
  const remote = isUrl(fasta);
  if (!remote && !fs.existsSync(fasta)) throw new UserError(`no such file: ${fasta}`);
  if (!remote && !fs.statSync(fasta).isFile()) throw new UserError(`${fasta} is not a file; give the path of a FASTA file`);
  const name = await newSetName(registry, fasta, options);
  const fastaPath = remote ? fasta : path.resolve(fasta);
  const scan = await scanFasta(fastaPath, options.progress);
  const details = sequenceDetails(options, scan.sequences, fasta); // before any index is written beside the FASTA
  const indexes = await ensureIndexes(fastaPath, scan);
  try {
    const md5checksum = await registerSet(
      registry,
      name,
      scan.sequences,
      details,
      { fasta_path: fastaPath, fai_path: indexes.fai, gzi_path: indexes.gzi, dictionary_path: null },
      options,
    );
    return { name, md5checksum, references: scan.sequences.length, createdIndexes: indexes.created };
  } catch (e) {
    // Nothing was registered: leave no index behind that this load created.
    for (const file of indexes.created) fs.rmSync(file, { force: true });
    throw e;
  }
}

export interface DictionaryOptions extends ReferenceSetOptions {
  /** A list of MD5s (`NAME MD5` lines) completing the dictionary's. */
  md5?: string;
}

/**
 * Registers a set without bases from a sequence dictionary (./dictionary.ts): its references answer
 * metadata and searches; their bases are nowhere to be had, so reads of a CRAM on it cannot be decoded.
 */
export async function loadDictionaryReferenceSet(registry: Registry, dictionary: string, options: DictionaryOptions): Promise<LoadedReferenceSet> {
  const name = await newSetName(registry, dictionary, options);
  const { readDictionary } = await import('./dictionary.js');
  const sequences = await readDictionary(dictionary, options.md5);
  const details = sequenceDetails(options, sequences, dictionary);
  const location = isUrl(dictionary) ? dictionary : path.resolve(dictionary);
  const md5checksum = await registerSet(registry, name, sequences, details, { fasta_path: '', fai_path: '', gzi_path: null, dictionary_path: location }, options);
  return { name, md5checksum, references: sequences.length, createdIndexes: [] };
}
