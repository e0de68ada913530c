/**
 * Reference sets without their bases: the names, lengths and MD5s of an assembly's sequences, read
 * from a file that lists them. Many groups hold reads and variants on an assembly whose FASTA they do
 * not serve; its references still answer metadata and searches. The dictionaries read:
 * - a SAM header (`.sam`, or a Picard `.dict`, which is one), or the header of a BAM or CRAM file:
 *   `@SQ` lines, `SN`, `LN` and `M5`;
 * - the header of a VCF (plain or bgzipped) or BCF file: `##contig` lines, `ID`, `length` and `md5`;
 * - a `.fai`: names and lengths, with the MD5s from a list (`--md5`).
 * The list of MD5s, lines of `NAME MD5`, may complete any of them; it may not contradict one.
 */
import fs from 'node:fs';
import { isUrl, openFile } from '../../files.js';
import { UserError } from '../../user-error.js';
import type { SequenceEntry } from './loader.js';

type DictionaryKind = 'sam' | 'bam' | 'cram' | 'vcf' | 'bgzipped vcf' | 'bcf' | 'fai';

/** A sequence as a dictionary lists it: the length or MD5 may be missing. */
interface Listed {
  name: string;
  length?: number;
  md5?: string;
}

/** How each kind of dictionary lists its sequences, and names their length, for messages. */
const LISTING: Record<DictionaryKind, { lines: string; length: string }> = {
  sam: { lines: '@SQ lines', length: 'LN' },
  bam: { lines: '@SQ lines', length: 'LN' },
  cram: { lines: '@SQ lines', length: 'LN' },
  vcf: { lines: '##contig lines', length: 'length=' },
  'bgzipped vcf': { lines: '##contig lines', length: 'length=' },
  bcf: { lines: '##contig lines', length: 'length=' },
  fai: { lines: 'lines', length: 'column 2' },
};

const KINDS: Array<[RegExp, DictionaryKind]> = [
  [/\.(sam|dict)$/i, 'sam'],
  [/\.bam$/i, 'bam'],
  [/\.cram$/i, 'cram'],
  [/\.vcf$/i, 'vcf'],
  [/\.vcf\.(gz|bgz)$/i, 'bgzipped vcf'],
  [/\.bcf$/i, 'bcf'],
  [/\.fai$/i, 'fai'],
];

function kindOf(location: string): DictionaryKind {
  const pathname = isUrl(location) ? new URL(location).pathname : location;
  const found = KINDS.find(([pattern]) => pattern.test(pathname));
  if (!found) {
    throw new UserError(`${location} is not a sequence dictionary this server reads: give a .dict, .sam, .bam, .cram, .vcf, .vcf.gz, .bcf or .fai file`);
  }
  return found[1];
}

/** The lines at the start of a text file for which `inHeader` holds, read in slices until one does not. */
async function headerLines(location: string, inHeader: (line: string) => boolean): Promise<string[]> {
  const file = openFile(location);
  const lines: string[] = [];
  let carry = '';
  for (let position = 0; ; ) {
    const bytes = await file.read(1 << 20, position);
    position += bytes.length;
    const parts = (carry + Buffer.from(bytes).toString('utf8')).split('\n');
    carry = bytes.length ? parts.pop()! : '';
    for (const raw of parts) {
      const line = raw.replace(/\r$/, '');
      if (!inHeader(line)) return lines;
      lines.push(line);
    }
    if (bytes.length === 0) return lines;
  }
}

async function samSequences(kind: 'sam' | 'bam' | 'cram', location: string): Promise<Listed[]> {
  const { parseSamHeader } = await import('../reads/sam-header.js');
  if (kind === 'sam') return parseSamHeader((await headerLines(location, (line) => line.startsWith('@'))).join('\n')).references;
  if (kind === 'cram') {
    const { CramFile } = await import('../reads/cram-file.js');
    return parseSamHeader(await CramFile.readHeaderText(openFile(location))).references;
  }
  const { readBamHeader } = await import('../reads/bam-file.js');
  const header = await readBamHeader(openFile(location), location);
  const listed = parseSamHeader(header.text).references;
  // A BAM may leave its @SQ lines out of the text: its binary reference list still names them.
  return listed.length ? listed : header.references;
}

async function vcfSequences(kind: 'vcf' | 'bgzipped vcf' | 'bcf', location: string): Promise<Listed[]> {
  const [{ readBcfHeaderText }, { readHeaderText }, { metadataOf }] = await Promise.all([
    import('../../formats/bcf.js'),
    import('../variants/vcf-files.js'),
    import('../variants/vcf-header.js'),
  ]);
  const lines =
    kind === 'vcf'
      ? await headerLines(location, (line) => line.startsWith('#'))
      : (await (kind === 'bcf' ? readBcfHeaderText : readHeaderText)(openFile(location), location)).split(/\r?\n/);
  if (!lines[0]?.startsWith('##fileformat=VCF')) throw new Error(`it has no ##fileformat=VCF line; is it a ${kind === 'bcf' ? 'BCF' : 'VCF'} file?`);
  return lines
    .filter((line) => line.startsWith('##contig='))
    .flatMap((line) => {
      const entry = metadataOf(line);
      if (entry?.id === undefined) return [];
      const extra = new Map(entry.extra);
      const length = extra.has('length') ? Number(extra.get('length')) : undefined;
      return [{ name: entry.id, length, md5: extra.get('md5')?.toLowerCase() }];
    });
}

async function listedIn(kind: DictionaryKind, location: string): Promise<Listed[]> {
  switch (kind) {
    case 'sam':
    case 'bam':
    case 'cram':
      return samSequences(kind, location);
    case 'vcf':
    case 'bgzipped vcf':
    case 'bcf':
      return vcfSequences(kind, location);
    case 'fai': {
      const { parseFai } = await import('./fasta-scan.js');
      return parseFai(Buffer.from(await openFile(location).readFile()).toString('utf8'), location);
    }
  }
}

const MD5 = /^[0-9a-f]{32}$/;

/** A list of MD5s: `NAME MD5` lines (white space between; `#` starts a comment), every name one of `names`. */
function readMd5List(file: string, names: Set<string>): Map<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const out = new Map<string, string>();
  text.split(/\r?\n/).forEach((line, i) => {
    const fields = line.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
    if (!fields.length) return;
    const [name, md5] = fields;
    if (fields.length !== 2 || !MD5.test(md5.toLowerCase())) throw new UserError(`${file} line ${i + 1}: expected a sequence name and its MD5 (32 hexadecimal digits)`);
    if (!names.has(name)) throw new UserError(`${file} line ${i + 1}: the dictionary has no sequence '${name}'`);
    out.set(name, md5.toLowerCase());
  });
  return out;
}

/**
 * The sequences a dictionary lists, in its order, each with its length and, where the dictionary or
 * the MD5 list gives it, its MD5 ('' otherwise: such a reference answers searches but not refget).
 */
export async function readDictionary(location: string, md5List?: string): Promise<SequenceEntry[]> {
  const kind = kindOf(location);
  if (!isUrl(location) && !fs.existsSync(location)) throw new UserError(`no such file: ${location}`);
  let listed: Listed[];
  try {
    listed = await listedIn(kind, location);
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(`cannot read the sequence dictionary ${location}: ${(e as Error).message}`);
  }
  if (!listed.length) throw new UserError(`${location} lists no sequences (no ${LISTING[kind].lines})`);
  const names = new Set<string>();
  for (const { name } of listed) {
    if (names.has(name)) throw new UserError(`${location} lists sequence '${name}' twice`);
    names.add(name);
  }
  const md5s = md5List ? readMd5List(md5List, names) : new Map<string, string>();
  return listed.map(({ name, length, md5 }) => {
    if (length === undefined || !Number.isSafeInteger(length) || length < 0) {
      throw new UserError(`sequence '${name}' of ${location} has no length (${LISTING[kind].length}); a reference needs one`);
    }
    if (md5 !== undefined && !MD5.test(md5)) throw new UserError(`sequence '${name}' of ${location} has an MD5 that is not 32 hexadecimal digits: ${md5}`);
    const listedMd5 = md5s.get(name);
    if (md5 !== undefined && listedMd5 !== undefined && md5 !== listedMd5) {
      throw new UserError(`sequence '${name}' has MD5 ${md5} in ${location} but ${listedMd5} in ${md5List}`);
    }
    return { name, length, md5checksum: md5 ?? listedMd5 ?? '', sha512t24u: null };
  });
}
