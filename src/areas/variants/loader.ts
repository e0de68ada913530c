/**
 * `repo add-variantset`: registers bgzipped, indexed VCF files, or BCF files with their .csi (or a
 * folder of either), as one variant set. It reads each file's header and index, never its records:
 * the samples become call sets, the header lines the set's metadata, the contigs that hold records
 * are checked against the chosen reference set. The other encoding of the same files (`--alternate`:
 * BCF beside VCF, VCF beside BCF) is checked against them: the same contigs and samples. Nothing is
 * registered unless every check passes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Registry } from '../../registry/registry.js';
import { isUrl, openFile } from '../../files.js';
import { UserError } from '../../user-error.js';
import { planAnnotationSet, type AnnotationOptions } from '../annotations/plan.js';
import { insertAnnotationSet } from '../annotations/store.js';
import { requireDataset } from '../datasets/store.js';
import { getReferenceSetRow, listReferences } from '../references/store.js';
import { bgzipAndIndex } from './tabix-write.js';
import { sequenceDifference } from '../../formats/sequences.js';
import { unpackOffset } from '../../formats/binning-index.js';
import { firstBcfRecordAt, OpenBcf } from './bcf-files.js';
import { contigsOf, parseHeader, type MetadataEntry, type VcfHeader } from './vcf-header.js';
import { bgzfHeaderProblem, hasEofBlock, lastLineOf } from '../../formats/bgzf.js';
import { firstDataLineAt, openVcf, readHeaderText, type OpenVcf, type VariantFormat } from './vcf-files.js';
import { insertVariantSet } from './store.js';

export interface VariantSetOptions extends AnnotationOptions {
  referenceset: string;
  name?: string;
  allowMissingContigs?: boolean;
  /**
   * The other encoding of the same records, one for each file in the same order, served by htsget in
   * that format: BCF files beside VCF files, bgzipped VCF files beside BCF files.
   */
  alternate?: string[];
}

export interface LoadedVariantSet {
  name: string;
  /** The set's own files, and their format. */
  files: number;
  format: VariantFormat;
  samples: number;
  contigs: string[];
  /** The files of the other format registered beside them. */
  alternates: number;
  /** Contigs the reference set lacks (registered anyway with --allow-missing-contigs). */
  missingContigs: string[];
  createdFiles: string[];
  /** The INFO field of the annotation set registered beside it, if any, and a note about it. */
  annotations?: { field: string; ontology: string | null; note?: string };
  /** What the load did beside registering (a stale compressed copy rebuilt). */
  notes: string[];
}

const COMPRESSED = /\.vcf\.(gz|bgz)$/i;
const PLAIN = /\.vcf$/i;
const BCF = /\.bcf$/i;
/** A plain VCF is compressed in memory; beyond this size the user is asked to bgzip it themselves. */
const PLAIN_VCF_LIMIT = 512 * 1024 * 1024;

/** The set name a path or URL gives by default: the file name without .vcf(.gz) or .bcf, or the folder name. */
export function defaultVariantSetName(location: string): string {
  const file = isUrl(location) ? path.posix.basename(new URL(location).pathname) : path.basename(path.resolve(location));
  return file.replace(COMPRESSED, '').replace(PLAIN, '').replace(BCF, '');
}

/** The path of a location, without the query of a URL. */
const pathOf = (location: string) => (isUrl(location) ? new URL(location).pathname : location);

/**
 * The VCF or BCF files a PATH argument names: itself, or the files in a folder in name order (its VCF
 * files, or its BCF files when it has no VCF: a folder holding both encodings of the same records is
 * read from its VCFs). A URL names one bgzipped VCF or one BCF: an HTTP
 * server (or object store) has no folder listing to read, and the loader cannot write a compressed copy
 * or an index beside a remote file.
 */
function variantFilesOf(location: string): string[] {
  if (isUrl(location)) {
    if (COMPRESSED.test(pathOf(location)) || BCF.test(pathOf(location))) return [location];
    if (pathOf(location).endsWith('/')) {
      throw new UserError(`${location} looks like a folder; a remote folder is not supported: give the URL of each .vcf.gz or .bcf file`);
    }
    throw new UserError(`${location} is not a bgzipped VCF (.vcf.gz or .vcf.bgz); a remote VCF must be bgzipped and indexed, with its .tbi or .csi beside it (or be a BCF, .bcf, with its .csi)`);
  }
  if (!fs.existsSync(location)) throw new UserError(`no such file or folder: ${location}`);
  if (!fs.statSync(location).isDirectory()) return [path.resolve(location)];
  const names = fs
    .readdirSync(location)
    .filter((n) => COMPRESSED.test(n) || PLAIN.test(n))
    .sort();
  // A plain VCF with its bgzipped copy beside it (made by an earlier load) counts once, as the plain
  // file: the copy is checked against it and rebuilt when stale (compressPlain).
  const files = names.filter((n) => !(/\.vcf\.gz$/i.test(n) && names.includes(n.slice(0, -3))));
  if (files.length === 0) files.push(...fs.readdirSync(location).filter((n) => BCF.test(n)).sort());
  if (files.length === 0) throw new UserError(`no .vcf.gz, .vcf.bgz, .vcf or .bcf files in ${location}`);
  return files.map((n) => path.resolve(location, n));
}

/**
 * Whether the bgzipped copy beside a plain VCF still holds that file: it was written after the plain
 * file last changed, and its text is as long as the plain file (the sum of its blocks' sizes, read
 * from the block trailers without inflating anything). "Changed" is the later of the file's mtime
 * and ctime: a file replaced by one of the same size with an older mtime (`cp -p`, `rsync -t`) still
 * has a new ctime, which no tool can set back.
 */
function copyIsCurrent(plain: string, copy: string): boolean {
  const source = fs.statSync(plain);
  if (fs.statSync(copy).mtimeMs < Math.max(source.mtimeMs, source.ctimeMs)) return false;
  return bgzfTextSize(copy) === source.size;
}

/** The uncompressed size of a local BGZF file, or -1 when it is not one. */
function bgzfTextSize(file: string): number {
  const fd = fs.openSync(file, 'r');
  try {
    const { size } = fs.fstatSync(fd);
    const header = Buffer.alloc(18);
    const trailer = Buffer.alloc(4);
    let total = 0;
    for (let at = 0; at < size; ) {
      if (fs.readSync(fd, header, 0, 18, at) < 18 || header[0] !== 31 || header[1] !== 139 || header[12] !== 66 || header[13] !== 67) return -1;
      const blockSize = header.readUInt16LE(16) + 1;
      if (at + blockSize > size || fs.readSync(fd, trailer, 0, 4, at + blockSize - 4) < 4) return -1;
      total += trailer.readUInt32LE(0);
      at += blockSize;
    }
    return total;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A plain VCF is bgzipped and indexed beside itself. The copy from an earlier load is reused while it
 * still holds the file; when the plain file changed since (written or replaced after the copy, or
 * another size), the copy and its index are rebuilt, and `notes` says so.
 */
function compressPlain(file: string, created: string[], notes: string[]): string {
  const target = `${file}.gz`;
  const existing = fs.existsSync(target);
  if (existing && fs.existsSync(`${target}.tbi`) && copyIsCurrent(file, target)) return target;
  const size = fs.statSync(file).size;
  if (size > PLAIN_VCF_LIMIT) {
    throw new UserError(`${file} is a plain VCF too large to compress here; run: bgzip ${file} && tabix -p vcf ${file}.gz`);
  }
  let result: { bgzf: Buffer; tbi: Buffer };
  try {
    result = bgzipAndIndex(fs.readFileSync(file), file);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  for (const [out, bytes] of [
    [target, result.bgzf],
    [`${target}.tbi`, result.tbi],
  ] as const) {
    // Written beside and renamed over the old copy, so no reader ever sees half a file.
    const partial = `${out}.partial-${process.pid}`;
    try {
      fs.writeFileSync(partial, bytes, { flag: 'wx' });
      fs.renameSync(partial, out);
      created.push(out);
    } catch (e) {
      fs.rmSync(partial, { force: true });
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      throw new UserError(`cannot write ${out} beside the plain VCF (${code}); bgzip and index it yourself, or make the folder writable`);
    }
  }
  if (existing) notes.push(`rebuilt ${target}: ${path.basename(file)} changed since the copy was made`);
  return target;
}

/** Whether a file beside a remote VCF can be read (a one-byte range request). */
async function remoteExists(url: string): Promise<boolean> {
  try {
    await openFile(url).read(1, 0);
    return true;
  } catch {
    return false;
  }
}

async function indexOf(file: string): Promise<{ indexPath: string; indexKind: 'tbi' | 'csi' }> {
  if (isUrl(file)) {
    for (const kind of ['tbi', 'csi'] as const) if (await remoteExists(`${file}.${kind}`)) return { indexPath: `${file}.${kind}`, indexKind: kind };
    throw new UserError(`${file} has no index beside it (neither ${file}.tbi nor ${file}.csi can be read); create one with tabix -p vcf and upload it next to the VCF`);
  }
  if (fs.existsSync(`${file}.tbi`)) return { indexPath: `${file}.tbi`, indexKind: 'tbi' };
  if (fs.existsSync(`${file}.csi`)) return { indexPath: `${file}.csi`, indexKind: 'csi' };
  throw new UserError(`${file} has no index (${path.basename(file)}.tbi or .csi); create one with: tabix -p vcf ${file}`);
}

interface ScannedFile {
  format: VariantFormat;
  path: string;
  indexPath: string;
  indexKind: 'tbi' | 'csi';
  header: VcfHeader;
  /** The contigs that hold records: those a VCF's index lists; those of a BCF's dictionary its index has records of. */
  contigs: string[];
  /** A BCF's contig dictionary: names by the number its records and index give them. */
  referenceNames?: string[];
}

/** Refuses a .vcf.gz that is not BGZF with the way to fix it (tabix cannot index plain gzip either). */
async function checkCompression(file: string): Promise<void> {
  let head: Uint8Array;
  try {
    head = await openFile(file).read(18, 0);
  } catch {
    return; // unreadable: the index lookup and header read that follow say why
  }
  const problem = bgzfHeaderProblem(head);
  if (problem) {
    const plain = file.replace(/\.(gz|bgz)$/i, '');
    throw new UserError(
      head[0] === 31 && head[1] === 139
        ? `${file} ${problem}; recompress it with bgzip: zcat ${file} | bgzip > ${plain}.bgzf.vcf.gz`
        : `${file} ${problem}; compress it with bgzip, or name it ${path.basename(plain)} to have it compressed here`,
    );
  }
}

/** The number of columns a data line has under this header: 8, or 9 plus one per sample. */
export function expectedColumns(header: VcfHeader): number[] {
  return header.samples.length ? [9 + header.samples.length] : [8, 9];
}

/**
 * The checks that keep a damaged file out: the BGZF end-of-file block is there (else the file was
 * cut), the last record has the header's column count (else it was cut mid-record), and the index
 * belongs to this file (for each contig, the record the index points to first is of that contig).
 */
export async function checkWhole(vcf: OpenVcf, header: VcfHeader, contigs: string[]): Promise<void> {
  if (!(await hasEofBlock(vcf.file))) {
    throw new Error('it has no BGZF end-of-file block, so it was cut short (truncated copy or download?)');
  }
  const last = await lastLineOf(vcf.file, vcf.source);
  if (last !== '' && !last.startsWith('#')) {
    const columns = last.split('\t').length;
    const expected = expectedColumns(header);
    if (!expected.includes(columns)) {
      throw new Error(`its last record has ${columns} columns where the header has ${expected.join(' or ')}, so it was cut short`);
    }
  }
  const { maxRefLength } = await vcf.index.getMetadata();
  for (const contig of contigs) {
    const chunks = await vcf.index.blocksForRange(contig, 0, maxRefLength, {});
    if (chunks.length === 0) continue;
    const first = chunks.reduce((a, b) => (b.minv.compareTo(a.minv) < 0 ? b : a)).minv;
    const line = await firstDataLineAt(vcf, { blockPosition: first.blockPosition, dataPosition: first.dataPosition });
    const chrom = line?.split('\t', 1)[0];
    if (chrom !== contig) {
      throw new Error(`its index does not belong to it: the index places contig ${contig} where the file has ${line === undefined ? 'no record' : `a line of '${(chrom ?? '').slice(0, 40)}'`}`);
    }
  }
}

async function scanFile(file: string, created: string[], notes: string[]): Promise<ScannedFile> {
  if (BCF.test(pathOf(file))) return scanBcf(file);
  const vcfPath = COMPRESSED.test(file) ? file : compressPlain(file, created, notes);
  await checkCompression(vcfPath);
  const { indexPath, indexKind } = await indexOf(vcfPath);
  const vcf = openVcf({ path: vcfPath, indexPath, indexKind });
  try {
    const header = parseHeader(await readHeaderText(vcf.file, vcfPath), vcfPath);
    const { refIdToName } = await vcf.index.getMetadata();
    const contigs = refIdToName.filter((n) => n !== undefined);
    await checkWhole(vcf, header, contigs);
    return { format: 'VCF', path: vcfPath, indexPath, indexKind, header, contigs };
  } catch (e) {
    throw new UserError(`cannot read ${vcfPath} with its index ${indexPath}: ${(e as Error).message}`);
  }
}

type ScannedBcf = ScannedFile & { referenceNames: string[] };

/**
 * The checks that keep a damaged BCF out, as checkWhole's for a VCF: the BGZF end-of-file block is
 * there, the index names no more contigs than the header, and it belongs to this file (for each
 * contig with records, the record the index points to first is of that contig).
 */
export async function checkBcfWhole(bcf: OpenBcf, location: string): Promise<{ referenceNames: string[]; contigs: string[] }> {
  if (!(await hasEofBlock(bcf.file))) throw new Error('it has no BGZF end-of-file block, so it was cut short (truncated copy or download?)');
  const referenceNames = (await bcf.headerOf()).dictionaries.contigs;
  const index = await bcf.indexOf();
  if (index.referenceCount > referenceNames.length) {
    throw new Error(`its index lists ${index.referenceCount} contigs but its header declares ${referenceNames.length}; index it again: bcftools index -f ${location}`);
  }
  const contigs: string[] = [];
  for (let refId = 0; refId < index.referenceCount; refId++) {
    if (!index.holdsRecords(refId)) continue;
    const first = index.startOf(refId, 0, Number.POSITIVE_INFINITY);
    const found = first === undefined ? undefined : await firstBcfRecordAt(bcf, unpackOffset(first));
    if (found !== refId) {
      const what = found === undefined ? 'no record' : `a record of '${referenceNames[found] ?? found}'`;
      throw new Error(`its index does not belong to it: the index places contig ${referenceNames[refId]} where the file has ${what}`);
    }
    contigs.push(referenceNames[refId]);
  }
  return { referenceNames, contigs };
}

/**
 * Reads and checks a BCF and its .csi, local or remote: BGZF-compressed, whole, with a header and an
 * index that parse and belong to it. `role` names the argument in messages (`--alternate`).
 */
export async function scanBcf(location: string, role = ''): Promise<ScannedBcf> {
  const file = isUrl(location) ? location : path.resolve(location);
  if (!BCF.test(pathOf(file))) throw new UserError(`${role ? role + ' ' : ''}${location} is not a BCF file (.bcf)`);
  if (!(isUrl(file) ? await remoteExists(file) : fs.existsSync(file))) throw new UserError(isUrl(file) ? `${file} cannot be read` : `no such file: ${file}`);
  const head = await openFile(file).read(18, 0);
  const problem = bgzfHeaderProblem(head);
  if (problem) throw new UserError(`${file} ${problem}; write it compressed: bcftools view -Ob -o OUT.bcf ${location}`);
  const indexPath = `${file}.csi`;
  if (!(isUrl(file) ? await remoteExists(indexPath) : fs.existsSync(indexPath))) {
    throw new UserError(`${file} has no index (${path.basename(indexPath)}); create one with: bcftools index ${location}`);
  }
  const bcf = new OpenBcf({ path: file, indexPath, indexKind: 'csi' });
  try {
    const { referenceNames, contigs } = await checkBcfWhole(bcf, location);
    const { header } = await bcf.headerOf();
    return { format: 'BCF', path: file, indexPath, indexKind: 'csi', header, contigs, referenceNames };
  } catch (e) {
    throw new UserError(`cannot read ${file} with its index ${indexPath}: ${(e as Error).message}`);
  }
}

/**
 * htsget serves a set of several BCF files as one stream under its first file's header, so every BCF
 * of the set must have that file's contig dictionary.
 */
function checkOneDictionary(bcfs: ScannedFile[]): void {
  const [first, ...others] = bcfs;
  for (const bcf of others) {
    if (bcf.referenceNames!.join('\0') !== first.referenceNames!.join('\0')) {
      throw new UserError(`the contig dictionary of ${bcf.path} differs from that of ${first.path}; a set is served as BCF under its first file's header, so every BCF of it must have the same one`);
    }
  }
}

/**
 * The other encoding of a set's files, one for each in the same order (BCF beside VCF, bgzipped VCF
 * beside BCF): each declares the contigs and samples of the file it encodes.
 */
async function scanAlternates(locations: string[], files: ScannedFile[]): Promise<ScannedFile[]> {
  const format = files[0].format;
  if (locations.length !== files.length) {
    throw new UserError(`give one --alternate for each ${format} file of the set, in the same order: ${files.length} ${format} file(s), ${locations.length} alternate(s)`);
  }
  const alternates: ScannedFile[] = [];
  for (const [i, location] of locations.entries()) {
    let alternate: ScannedFile;
    if (format === 'VCF') alternate = await scanBcf(location, '--alternate');
    else if (!COMPRESSED.test(pathOf(location))) {
      throw new UserError(`--alternate ${location} is not a bgzipped VCF (.vcf.gz or .vcf.bgz); the alternate of a BCF is its VCF, bgzipped and indexed`);
    } else alternate = await scanFile(isUrl(location) ? location : path.resolve(location), [], []);
    const own = files[i];
    const difference = sequenceDifference(contigsOf(own.header), contigsOf(alternate.header));
    if (difference) throw new UserError(`the header sequences of --alternate ${alternate.path} differ from those of ${own.path}: ${difference}`);
    if (alternate.header.samples.join('\t') !== own.header.samples.join('\t')) {
      throw new UserError(`the samples of --alternate ${alternate.path} differ from those of ${own.path}; an alternate holds the same records`);
    }
    alternates.push(alternate);
  }
  if (format === 'VCF') checkOneDictionary(alternates);
  return alternates;
}

/** The files of a set are all VCF or all BCF: the searches read one format per set, and htsget serves it. */
function checkOneFormat(files: ScannedFile[]): void {
  const other = files.find((f) => f.format !== files[0].format);
  if (other) {
    throw new UserError(`${other.path} is a ${other.format} file and ${files[0].path} a ${files[0].format} file; the files of a variant set are all VCF or all BCF (give the other encoding with --alternate)`);
  }
  if (files[0].format === 'BCF') checkOneDictionary(files);
}

function checkSamples(files: ScannedFile[]): string[] {
  const [first] = files;
  const samples = first.header.samples;
  const seen = new Set<string>();
  for (const s of samples) {
    if (seen.has(s)) throw new UserError(`${first.path} names sample '${s}' twice; call set names must be unique`);
    seen.add(s);
  }
  for (const other of files.slice(1)) {
    const theirs = other.header.samples;
    const at = theirs.findIndex((s, i) => s !== samples[i]);
    if (theirs.length !== samples.length || at !== -1) {
      const i = at === -1 ? Math.min(theirs.length, samples.length) : at;
      throw new UserError(
        `the samples of ${other.path} differ from those of ${first.path} (column ${i + 1}: '${theirs[i] ?? '(none)'}' vs '${samples[i] ?? '(none)'}'); every file of a variant set must carry the same samples in the same order`,
      );
    }
  }
  return samples;
}

/** Header lines of every file, each key once (the first file's line wins), in order of appearance. */
function mergedMetadata(files: ScannedFile[]): MetadataEntry[] {
  const out: MetadataEntry[] = [];
  const keys = new Set<string>();
  for (const file of files) {
    for (const entry of file.header.metadata) {
      const key = entry.id === undefined ? `${entry.key}=${entry.value}` : entry.key;
      if (keys.has(key)) continue;
      keys.add(key);
      out.push(entry);
    }
  }
  return out;
}

export async function loadVariantSet(
  registry: Registry,
  datasetName: string,
  locations: string[],
  options: VariantSetOptions,
): Promise<LoadedVariantSet> {
  await requireDataset(registry, datasetName);
  const referenceSet = await getReferenceSetRow(registry, options.referenceset);
  if (!referenceSet) {
    throw new UserError(`no reference set '${options.referenceset}' in ${registry.location}; add it with: ga4gh repo add-referenceset`);
  }
  const paths = [...new Set(locations.flatMap(variantFilesOf))];
  const name = options.name ?? defaultVariantSetName(locations[0]);
  if (!name) throw new UserError(`cannot derive a variant set name from ${locations[0]}; give one with --name`);
  const created: string[] = [];
  const notes: string[] = [];
  try {
    const files: ScannedFile[] = [];
    for (const p of paths) files.push(await scanFile(p, created, notes));
    checkOneFormat(files);
    const samples = checkSamples(files);
    const alternates = options.alternate?.length ? await scanAlternates(options.alternate, files) : [];
    const known = new Set((await listReferences(registry, { referenceSetName: referenceSet.name }, undefined)).map((r) => r.name));
    const contigs = [...new Set(files.flatMap((f) => f.contigs))];
    const missing = contigs.filter((c) => !known.has(c));
    if (missing.length && !options.allowMissingContigs) {
      throw new UserError(
        `contig(s) ${missing.join(', ')} of the ${files[0].format} are not in reference set '${referenceSet.name}'; choose the matching reference set, or register anyway with --allow-missing-contigs`,
      );
    }
    const metadata = mergedMetadata(files);
    const annotations = await planAnnotationSet(registry, metadata, name, options);
    await insertVariantSet(registry, {
      set: {
        dataset_name: datasetName,
        name,
        reference_set_name: referenceSet.name,
        metadata: JSON.stringify(metadata),
      },
      files: files.map((f, ordinal) => ({
        ordinal,
        format: f.format,
        path: f.path,
        index_path: f.indexPath,
        index_kind: f.indexKind,
        contigs: JSON.stringify(f.contigs),
        reference_names: f.referenceNames ? JSON.stringify(f.referenceNames) : null,
      })),
      alternates: alternates.map((a, ordinal) => ({
        format: a.format,
        ordinal,
        path: a.path,
        index_path: a.indexPath,
        index_kind: a.indexKind,
        // What htsget numbers the file's contigs by: a BCF's dictionary, the names a VCF's index lists in its order.
        reference_names: JSON.stringify(a.referenceNames ?? a.contigs),
      })),
      samples,
    }, annotations && ((trx) => insertAnnotationSet(trx, datasetName, name, annotations.set)));
    return {
      name,
      files: files.length,
      format: files[0].format,
      samples: samples.length,
      contigs,
      alternates: alternates.length,
      missingContigs: missing,
      createdFiles: created,
      notes,
      annotations: annotations && { field: annotations.set.info_field, ontology: annotations.set.ontology_name, note: annotations.note },
    };
  } catch (e) {
    // Nothing was registered: leave behind no file this load created.
    for (const file of created) fs.rmSync(file, { force: true });
    throw e;
  }
}
