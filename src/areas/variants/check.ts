/**
 * `repo check` for variant sets. The plain check opens each file and index and reads little: the
 * end-of-file block, the last record (of a VCF), and the first record the index points to for each
 * contig. The deep check (`--deep`) then reads every record (counting the columns of a VCF line,
 * decoding a BCF record), and compares the contigs and order the file holds with what its index
 * lists. Alternates are opened as when they were registered.
 */
import type { CheckOptions } from '../area.js';
import type { Registry } from '../../registry/registry.js';
import { inflateLines } from '../../formats/bgzf.js';
import { everyBcfLine, OpenBcf } from './bcf-files.js';
import { checkWhole, expectedColumns, scanBcf } from './loader.js';
import { listVariantSetAlternateFiles, listVariantSetFiles, listVariantSets, type VariantSetFileRow } from './store.js';
import { parseHeader, type VcfHeader } from './vcf-header.js';
import { openVcf, readHeaderText, type OpenVcf } from './vcf-files.js';

const TAB = 9;

/** Reads every record of a file; returns its problems (the first few of each kind), one line each. */
async function readEveryRecord(vcf: OpenVcf, header: VcfHeader, indexed: string[], options: CheckOptions): Promise<string[]> {
  const problems: string[] = [];
  const expected = expectedColumns(header);
  const contigsSeen: string[] = [];
  let lineNumber = 0;
  let lastPos = -1;
  let badLines = 0;
  const line = (bytes: Buffer, from: number, to: number) => {
    lineNumber++;
    if (to === from || bytes[from] === 35 /* # */) return;
    let columns = 1;
    let firstTab = -1;
    let secondTab = -1;
    for (let at = bytes.indexOf(TAB, from); at !== -1 && at < to; at = bytes.indexOf(TAB, at + 1)) {
      columns++;
      if (firstTab === -1) firstTab = at;
      else if (secondTab === -1) secondTab = at;
    }
    if (!expected.includes(columns)) {
      if (++badLines <= 3) problems.push(`line ${lineNumber} has ${columns} columns where the header has ${expected.join(' or ')}`);
      return;
    }
    const contig = bytes.toString('utf8', from, firstTab);
    const pos = Number(bytes.toString('latin1', firstTab + 1, secondTab));
    if (contig !== contigsSeen[contigsSeen.length - 1]) {
      if (contigsSeen.includes(contig) && ++badLines <= 3) problems.push(`line ${lineNumber}: contig ${contig} appears again after others (unsorted)`);
      contigsSeen.push(contig);
      lastPos = -1;
    }
    if (!Number.isSafeInteger(pos) || pos < lastPos) {
      if (++badLines <= 3) problems.push(`line ${lineNumber}: POS ${bytes.toString('latin1', firstTab + 1, secondTab)} is not a number or out of order`);
    } else lastPos = pos;
  };
  try {
    await inflateLines(vcf.file, vcf.source, line, (read, size) => options.progress(vcf.source, read, size));
  } catch (e) {
    problems.push((e as Error).message);
    return problems;
  }
  if (badLines > 3) problems.push(`${badLines - 3} more damaged line(s)`);
  problems.push(...indexProblems(contigsSeen, indexed));
  return problems;
}

/** The contigs a file holds against those its index has records of. */
function indexProblems(contigsSeen: string[], indexed: string[]): string[] {
  const problems: string[] = [];
  const unindexed = contigsSeen.filter((c) => !indexed.includes(c));
  const empty = indexed.filter((c) => !contigsSeen.includes(c));
  if (unindexed.length) problems.push(`its index lacks contig(s) ${unindexed.join(', ')} that the file holds (an index of another file?)`);
  if (empty.length) problems.push(`its index lists contig(s) ${empty.join(', ')} that the file does not hold (an index of another file?)`);
  return problems;
}

/** Decodes every record of a BCF (every sample's values), checking their order; returns its problems. */
async function decodeEveryRecord(file: VariantSetFileRow, options: CheckOptions): Promise<string[]> {
  const bcf = new OpenBcf({ path: file.path, indexPath: file.index_path, indexKind: file.index_kind });
  const names = (await bcf.headerOf()).dictionaries.contigs;
  const problems: string[] = [];
  const contigsSeen: string[] = [];
  let lastStart = -1;
  let record = 0;
  let unsorted = 0;
  try {
    await everyBcfLine(
      bcf,
      'all',
      (_bytes, _from, _to, contig, start) => {
        record++;
        const name = names[contig];
        if (name !== contigsSeen[contigsSeen.length - 1]) {
          if (contigsSeen.includes(name) && ++unsorted <= 3) problems.push(`record ${record}: contig ${name} appears again after others (unsorted)`);
          contigsSeen.push(name);
          lastStart = -1;
        }
        if (start < lastStart && ++unsorted <= 3) problems.push(`record ${record}: position ${start + 1} is out of order`);
        lastStart = start;
      },
      (read, size) => options.progress(file.path, read, size),
    );
  } catch (e) {
    problems.push((e as Error).message);
    return problems;
  }
  if (unsorted > 3) problems.push(`${unsorted - 3} more record(s) out of order`);
  problems.push(...indexProblems(contigsSeen, JSON.parse(file.contigs) as string[]));
  return problems;
}

async function checkBcfFile(file: VariantSetFileRow, options: CheckOptions): Promise<string[]> {
  try {
    await scanBcf(file.path);
  } catch (e) {
    return [(e as Error).message];
  }
  return options.deep ? decodeEveryRecord(file, options) : [];
}

async function checkFile(file: VariantSetFileRow, options: CheckOptions): Promise<string[]> {
  if (file.format === 'BCF') return checkBcfFile(file, options);
  const vcf = openVcf({ path: file.path, indexPath: file.index_path, indexKind: file.index_kind });
  const contigs = JSON.parse(file.contigs) as string[];
  let header: VcfHeader;
  try {
    header = parseHeader(await readHeaderText(vcf.file, file.path), file.path);
    await checkWhole(vcf, header, contigs);
  } catch (e) {
    return [(e as Error).message];
  }
  return options.deep ? readEveryRecord(vcf, header, contigs, options) : [];
}

export async function checkVariantSets(registry: Registry, options: CheckOptions): Promise<string[]> {
  const problems: string[] = [];
  for (const set of await listVariantSets(registry, undefined, undefined)) {
    for (const file of await listVariantSetFiles(registry, set.dataset_name, set.name)) {
      for (const problem of await checkFile(file, options)) {
        problems.push(`variant set '${set.name}' of dataset '${set.dataset_name}': ${problem} (${file.path})`);
      }
    }
    // Alternates: the header, the index and the end-of-file block, as when they were registered.
    for (const alternate of await listVariantSetAlternateFiles(registry, { datasetName: set.dataset_name, name: set.name })) {
      let found: string[];
      if (alternate.format === 'BCF') {
        try {
          await scanBcf(alternate.path);
          found = [];
        } catch (e) {
          found = [(e as Error).message];
        }
      } else {
        const row = { ...alternate, format: 'VCF', contigs: alternate.reference_names, reference_names: null };
        found = (await checkFile(row, { ...options, deep: false })).map((p) => `${p} (${alternate.path})`);
      }
      for (const problem of found) problems.push(`variant set '${set.name}' of dataset '${set.dataset_name}': ${problem}`);
    }
  }
  return problems;
}
