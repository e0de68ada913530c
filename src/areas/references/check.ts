/**
 * `repo check` for reference sets. The plain check reads the first and last base of each reference
 * by index (proving the file, its indexes and the registered lengths agree) and, for BGZF files, the
 * end-of-file block. The deep check (`--deep`) reads the whole file again: every block inflated and
 * its CRC checked, every reference's MD5 recomputed and compared with the registered `md5checksum`,
 * and the `.fai` and `.gzi` compared with what the file holds.
 */
import { openFile } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import type { CheckOptions } from '../area.js';
import { hasEofBlock } from '../../formats/bgzf.js';
import { parseFai, parseGzi, scanFasta } from './fasta-scan.js';
import { faiMatches } from './loader.js';
import { SequenceFiles } from './sequences.js';
import { holdsSequence, listReferences, listReferenceSets, type ReferenceRow, type ReferenceSetRow } from './store.js';

/** A whole index file, local or remote, through the same file handles as the data. */
const readWhole = async (location: string) => Buffer.from(await openFile(location).readFile());

/** Problems of one set found by reading the whole file. */
async function deepProblems(set: ReferenceSetRow, refs: ReferenceRow[], options: CheckOptions): Promise<string[]> {
  const scan = await scanFasta(set.fasta_path, (read, size) => options.progress(set.fasta_path, read, size));
  const problems: string[] = [];
  const found = new Map(scan.sequences.map((s) => [s.name, s]));
  for (const ref of refs) {
    const seq = found.get(ref.name);
    if (!seq) problems.push(`reference '${ref.name}' is no longer in the file`);
    else if (seq.md5checksum !== ref.md5checksum || seq.length !== Number(ref.length)) {
      problems.push(`reference '${ref.name}' has MD5 ${seq.md5checksum} and length ${seq.length} in the file, registered ${ref.md5checksum} and ${ref.length}`);
    }
  }
  if (!faiMatches(parseFai((await readWhole(set.fai_path)).toString('utf8'), set.fai_path), scan)) {
    problems.push(`the index ${set.fai_path} does not match the file`);
  }
  if (set.gzi_path) {
    const gzi = parseGzi(await readWhole(set.gzi_path));
    const same = gzi && gzi.length === (scan.gzi ?? []).length && gzi.every(([c, u], i) => scan.gzi![i][0] === c && scan.gzi![i][1] === u);
    if (!same) problems.push(`the index ${set.gzi_path} does not match the file`);
  }
  return problems;
}

export async function checkReferenceSets(registry: Registry, options: CheckOptions): Promise<string[]> {
  const files = new SequenceFiles(1);
  const problems: string[] = [];
  for (const set of await listReferenceSets(registry)) {
    if (!holdsSequence(set)) continue; // a set from a sequence dictionary has no file to read
    const refs = await listReferences(registry, { referenceSetName: set.name }, undefined);
    const problem = (what: string) => problems.push(`reference set '${set.name}': ${what} (${set.fasta_path})`);
    try {
      if (set.gzi_path && !(await hasEofBlock(openFile(set.fasta_path)))) {
        problem('the file has no BGZF end-of-file block, so it was cut short');
        continue;
      }
    } catch (e) {
      problem((e as Error).message);
      continue;
    }
    let readable = true;
    for (const ref of refs) {
      const length = Number(ref.length);
      try {
        // The first and last bases prove the file, its index and the registered length agree.
        if (length > 0) {
          await files.bases(set, ref.name, 0, 1);
          await files.bases(set, ref.name, length - 1, length);
        }
      } catch (e) {
        problem(`reference '${ref.name}': ${(e as Error).message}`);
        readable = false;
        break;
      }
    }
    if (!readable || !options.deep) continue;
    try {
      for (const p of await deepProblems(set, refs, options)) problem(p);
    } catch (e) {
      problem((e as Error).message);
    }
  }
  return problems;
}
