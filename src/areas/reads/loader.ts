/**
 * `repo add-readgroupset`: registers one BAM (with its .bai or .csi) or CRAM (with its .crai), local or
 * at an http(s) URL, as one read group set. It reads the header and the index, never the records: the
 * @RG lines become read groups, the @PG lines programs, the @SQ lines are checked against the chosen
 * reference set, and the index gives the read counts where it keeps them. An alternate encoding of the
 * same records (`--alternate`, a CRAM beside a BAM) is checked the same way, and must declare the same
 * sequences. Nothing is registered unless every check passes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isUrl, openFile } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireBiosample } from '../biometadata/store.js';
import { requireDataset } from '../datasets/store.js';
import { getReferenceSetRow, listReferences } from '../references/store.js';
import { BinningIndex } from '../../formats/binning-index.js';
import { sequenceDifference } from '../../formats/sequences.js';
import { readBamHeader } from './bam-file.js';
import { CramFile } from './cram-file.js';
import { parseSamHeader, type SamHeader } from './sam-header.js';
import { insertReadGroupSet } from './store.js';

export interface ReadGroupSetOptions {
  referenceset: string;
  name?: string;
  biosampleId?: string;
  /** Another encoding of the same records (a CRAM beside a BAM), served by htsget in its format. */
  alternate?: string;
}

export interface LoadedReadGroupSet {
  name: string;
  format: 'BAM' | 'CRAM';
  /** The format of the alternate encoding registered beside it. */
  alternate?: 'BAM' | 'CRAM';
  readGroups: string[];
  aligned?: number;
  unaligned?: number;
  /** Things registered anyway that the user should know (a reference length that differs). */
  warnings: string[];
}

/** The name a read group set gets by default: the file name without .bam or .cram. */
export function defaultReadGroupSetName(location: string): string {
  const file = isUrl(location) ? path.posix.basename(new URL(location).pathname) : path.basename(location);
  return file.replace(/\.(bam|cram)$/i, '');
}

async function exists(location: string): Promise<boolean> {
  if (!isUrl(location)) return fs.existsSync(location);
  try {
    await openFile(location).read(1, 0);
    return true;
  } catch {
    return false;
  }
}

async function indexOf(file: string, kinds: Array<'bai' | 'csi' | 'crai'>, stem: string): Promise<{ indexPath: string; indexKind: 'bai' | 'csi' | 'crai' }> {
  for (const kind of kinds) {
    for (const candidate of [`${file}.${kind}`, `${stem}.${kind}`]) {
      if (await exists(candidate)) return { indexPath: candidate, indexKind: kind };
    }
  }
  const names = kinds.map((k) => `.${k}`).join(' or ');
  throw new UserError(
    isUrl(file)
      ? `${file} has no index beside it (${names}); create one with: samtools index FILE, and upload it next to the file`
      : `${file} has no index (${names}); create one with: samtools index ${file}`,
  );
}

/** What the loader reads of one alignment file: its header and its index. */
interface ScannedAlignmentFile {
  file: string;
  format: 'BAM' | 'CRAM';
  header: SamHeader;
  /** The reference names of the file, by their index in it. */
  fileReferences: string[];
  indexPath: string;
  indexKind: 'bai' | 'csi' | 'crai';
  /** BAM files: the parsed index (read counts). */
  index?: BinningIndex;
}

/** Reads and checks the header and index of a BAM or CRAM, local or remote; refuses what cannot be served. */
async function scanAlignmentFile(location: string): Promise<ScannedAlignmentFile> {
  const file = isUrl(location) ? location : path.resolve(location);
  const pathname = isUrl(file) ? new URL(file).pathname : file;
  const stem = file.replace(/\.(bam|cram)$/i, '');
  if (/\.sam(\.gz)?$/i.test(pathname)) {
    const bam = `${path.basename(pathname).replace(/\.sam(\.gz)?$/i, '')}.bam`;
    throw new UserError(
      `${location} is a SAM file; make a sorted, indexed BAM of it first: samtools sort -o ${bam} ${location} && samtools index ${bam} (or samtools view -b -o ${bam} ${location} when it is already sorted)`,
    );
  }
  const format = /\.bam$/i.test(pathname) ? 'BAM' : /\.cram$/i.test(pathname) ? 'CRAM' : undefined;
  if (!format) throw new UserError(`${location} is neither a BAM (.bam) nor a CRAM (.cram) file`);
  if (!(await exists(file))) throw new UserError(isUrl(file) ? `${file} cannot be read` : `no such file: ${file}`);
  // The header first: an unsorted file has no index, and sorting comes before indexing.
  let headerText: string;
  let fileReferences: string[];
  try {
    if (format === 'BAM') {
      const header = await readBamHeader(openFile(file), file);
      headerText = header.text;
      fileReferences = header.references.map((r) => r.name);
    } else {
      headerText = await CramFile.readHeaderText(openFile(file));
      fileReferences = parseSamHeader(headerText).references.map((r) => r.name);
    }
  } catch (e) {
    throw new UserError(`cannot read the header of ${file}: ${(e as Error).message}`);
  }
  const header = parseSamHeader(headerText);
  if (header.sortOrder !== undefined && header.sortOrder !== 'coordinate') {
    throw new UserError(
      `${location} is sorted by ${header.sortOrder}, not by coordinate (@HD SO); sort and index it: samtools sort -o sorted.${format.toLowerCase()} ${location} && samtools index sorted.${format.toLowerCase()}`,
    );
  }
  const { indexPath, indexKind } = await indexOf(file, format === 'BAM' ? ['bai', 'csi'] : ['crai'], stem);
  let index: BinningIndex | undefined;
  try {
    if (format === 'BAM') index = await BinningIndex.open(openFile(indexPath), indexKind as 'bai' | 'csi', indexPath);
    else await new CramFile(openFile(file), openFile(indexPath), async () => '').slicesOf(0, 0, 1); // the index parses
  } catch (e) {
    throw new UserError(`cannot read the index ${indexPath} of ${file}: ${(e as Error).message}`);
  }
  if (index && index.referenceCount > fileReferences.length) {
    throw new UserError(`the index ${indexPath} lists ${index.referenceCount} references but ${file} has ${fileReferences.length}; index it again: samtools index ${file}`);
  }
  return { file, format, header, fileReferences, indexPath, indexKind, index };
}

/** The alternate encoding of a set's file: the other format, over the very same header sequences. */
async function scanAlternate(location: string, own: ScannedAlignmentFile): Promise<ScannedAlignmentFile> {
  const alternate = await scanAlignmentFile(location);
  if (alternate.format === own.format) {
    throw new UserError(`--alternate ${location} is a ${alternate.format} like ${own.file}; an alternate is the other encoding (a CRAM beside a BAM, a BAM beside a CRAM)`);
  }
  const names = (scanned: ScannedAlignmentFile) => scanned.fileReferences.map((name, i) => ({ ...scanned.header.references[i], name }));
  const difference = sequenceDifference(names(own), names(alternate));
  if (difference) throw new UserError(`the header sequences of --alternate ${location} differ from those of ${own.file}: ${difference}`);
  return alternate;
}

export async function loadReadGroupSet(registry: Registry, datasetName: string, location: string, options: ReadGroupSetOptions): Promise<LoadedReadGroupSet> {
  await requireDataset(registry, datasetName);
  if (options.biosampleId !== undefined) await requireBiosample(registry, datasetName, options.biosampleId);
  const referenceSet = await getReferenceSetRow(registry, options.referenceset);
  if (!referenceSet) {
    throw new UserError(`no reference set '${options.referenceset}' in ${registry.location}; add it with: ga4gh repo add-referenceset`);
  }
  const scanned = await scanAlignmentFile(location);
  const alternate = options.alternate === undefined ? undefined : await scanAlternate(options.alternate, scanned);
  const { file, format, header, fileReferences, indexPath, indexKind, index } = scanned;

  const references = new Map((await listReferences(registry, { referenceSetName: referenceSet.name }, undefined)).map((r) => [r.name, r]));
  const warnings: string[] = [];
  const declared = new Map(header.references.map((r) => [r.name, r]));
  for (const name of fileReferences) {
    const reference = references.get(name);
    if (!reference) {
      throw new UserError(`reference '${name}' of ${location} (@SQ) is not in reference set '${referenceSet.name}'; choose the reference set the reads were aligned to`);
    }
    const sq = declared.get(name);
    // A set registered from a dictionary may know no MD5 for a reference ('').
    if (sq?.md5 !== undefined && reference.md5checksum !== '' && sq.md5 !== reference.md5checksum) {
      throw new UserError(
        `reference '${name}' of ${location} has M5 ${sq.md5}, but reference set '${referenceSet.name}' has ${reference.md5checksum}: the reads were aligned to another sequence`,
      );
    }
    if (sq?.length !== undefined && sq.length !== Number(reference.length)) {
      warnings.push(`reference '${name}' is ${sq.length} bases long in ${location} (@SQ LN) but ${Number(reference.length)} in reference set '${referenceSet.name}'`);
    }
  }

  const readGroups: Array<Record<string, string>> = [];
  for (const group of header.readGroups) if (!readGroups.some((g) => g.ID === group.ID)) readGroups.push(group);
  if (readGroups.length === 0) readGroups.push({ ID: 'default' });

  let aligned: number | undefined;
  let unaligned: number | undefined;
  if (index) {
    const stats = index.stats();
    // Old indexes keep no counts (no pseudo-bins): then the set has no stats.
    const known = stats.perReference.some((r) => r !== undefined) || stats.noCoordinate !== undefined;
    if (known) {
      aligned = stats.perReference.reduce((n, r) => n + (r?.mapped ?? 0), 0);
      unaligned = stats.perReference.reduce((n, r) => n + (r?.unmapped ?? 0), 0) + (stats.noCoordinate ?? 0);
    }
  }

  const name = options.name ?? defaultReadGroupSetName(location);
  if (!name) throw new UserError(`cannot derive a read group set name from ${location}; give one with --name`);
  await insertReadGroupSet(
    registry,
    {
    dataset_name: datasetName,
    name,
    reference_set_name: referenceSet.name,
    path: file,
    index_path: indexPath,
    index_kind: indexKind,
    biosample_name: options.biosampleId ?? null,
    read_groups: JSON.stringify(readGroups),
    programs: JSON.stringify(header.programs),
    reference_names: JSON.stringify(fileReferences),
    aligned_count: aligned ?? null,
    unaligned_count: unaligned ?? null,
    },
    alternate && { format: alternate.format, path: alternate.file, index_path: alternate.indexPath, index_kind: alternate.indexKind },
  );
  return { name, format, alternate: alternate?.format, readGroups: readGroups.map((g) => g.ID), aligned, unaligned, warnings };
}
