/**
 * `repo add-rnaquantification`: reads a quantification table once (local path or URL, plain or gzip),
 * checks every line against its format, and records the quantification with its expression rows in
 * one transaction, showing progress on standard error for big files.
 */
import path from 'node:path';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { openFile, isUrl } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireBiosample } from '../biometadata/store.js';
import { requireDataset } from '../datasets/store.js';
import { FormatError, programOf, readHeader, type ExpressionRow, type FormatName, type Units } from './formats.js';
import { insertQuantification } from './store.js';

export interface QuantificationOptions {
  format?: FormatName;
  name?: string;
  description?: string;
  /** The name of a biosample of the dataset. */
  biosampleId?: string;
  units?: Units;
  featureSetIds?: string[];
  readGroupIds?: string[];
  /** NAME:VERSION each. */
  programs?: string[];
  /** Called now and then with the number of rows read, then stored, so far. */
  progress?: (phase: 'read' | 'stored', rows: number) => void;
}

export interface LoadedQuantification {
  name: string;
  format: FormatName;
  units: Units;
  rows: number;
}

// Generic file names the tools write into a per-sample folder: the folder names the quantification.
const GENERIC_NAMES = new Set(['abundance', 'quant', 'genes', 'isoforms', 'transcripts']);

/** The quantification name a file gives by default. */
export function defaultQuantificationName(file: string): string {
  const base = path.posix.basename(file.replace(/\\/g, '/').replace(/[?#].*$/, ''));
  const stem = base
    .replace(/\.(gz|bgz)$/i, '')
    .replace(/\.(isoforms|genes)\.results$|\.fpkm_tracking$|\.(tsv|txt|sf|results|tab)$/i, '');
  if (!GENERIC_NAMES.has(stem.toLowerCase())) return stem;
  const parent = path.posix.basename(path.posix.dirname(isUrl(file) ? new URL(file).pathname : path.resolve(file).replace(/\\/g, '/')));
  return parent && parent !== '/' && parent !== '.' ? parent : stem;
}

/** A Program from NAME:VERSION (the version may hold colons; an empty version leaves it out). */
export function parseProgram(text: string): { name: string; version?: string } {
  const at = text.indexOf(':');
  const name = (at < 0 ? text : text.slice(0, at)).trim();
  const version = at < 0 ? '' : text.slice(at + 1).trim();
  if (!name) throw new UserError(`--program '${text}' has no program name; write NAME:VERSION, e.g. kallisto:0.46.1`);
  return version ? { name, version } : { name };
}

const CHUNK = 4 * 1024 * 1024;

/** The file's bytes in chunks, gunzipped when the file is gzip (or BGZF). */
async function* fileChunks(location: string): AsyncGenerator<Uint8Array> {
  const file = openFile(location);
  let size: number;
  try {
    size = (await file.stat()).size;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`no such file: ${location}`);
    if (code === 'EISDIR') throw new UserError(`${location} is a folder; give the quantification file`);
    throw new UserError(`cannot read ${location}: ${code ?? (e as Error).message}`);
  }
  async function* raw(): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < size; at += CHUNK) yield await file.read(Math.min(CHUNK, size - at), at);
  }
  const head = size >= 2 ? await file.read(2, 0) : new Uint8Array();
  if (head[0] === 0x1f && head[1] === 0x8b) {
    try {
      const gunzip = zlib.createGunzip();
      pipeline(Readable.from(raw()), gunzip, () => {}); // errors of either side reach the loop below
      for await (const chunk of gunzip) yield chunk as Buffer;
    } catch (e) {
      if (e instanceof UserError) throw e;
      throw new UserError(`cannot decompress ${location}: ${(e as Error).message}`);
    }
  } else {
    yield* raw();
  }
}

/** Lines with their 1-based numbers, without line ends. */
async function* fileLines(location: string): AsyncGenerator<[string, number]> {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  let number = 0;
  for await (const chunk of fileChunks(location)) {
    const text = rest + decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
      yield [line, ++number];
      start = end + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.decode();
  if (rest.length) yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest, ++number];
}

/** Every error of a load names the file (a batch of loads otherwise leaves the user guessing). */
export async function loadQuantification(
  registry: Registry,
  datasetName: string,
  setName: string,
  file: string,
  options: QuantificationOptions = {},
): Promise<LoadedQuantification> {
  try {
    return await loadQuantificationOf(registry, datasetName, setName, file, options);
  } catch (e) {
    const named = e instanceof UserError && (e.message.includes(file) || (!isUrl(file) && e.message.includes(path.resolve(file))));
    if (e instanceof UserError && !named) throw new UserError(`${file}: ${e.message}`);
    throw e;
  }
}

async function loadQuantificationOf(
  registry: Registry,
  datasetName: string,
  setName: string,
  file: string,
  options: QuantificationOptions,
): Promise<LoadedQuantification> {
  await requireDataset(registry, datasetName);
  if (options.biosampleId !== undefined) await requireBiosample(registry, datasetName, options.biosampleId);
  const name = options.name ?? defaultQuantificationName(file);
  if (!name.trim()) throw new UserError(`cannot derive a quantification name from ${file}; give one with --name`);
  const programs = (options.programs ?? []).map(parseProgram);
  const location = isUrl(file) ? file : path.resolve(file);

  const lines = fileLines(location);
  const first = await lines.next();
  if (first.done) throw new UserError(`${file} is empty`);
  const reader = readHeader(first.value[0], options.format, options.units);

  // Every row is read and checked before the registry is touched.
  const read: ExpressionRow[] = [];
  const lineOf: number[] = [];
  for await (const [line, number] of lines) {
    if (line.trim() === '') continue;
    read.push(reader.readRow(line, number));
    lineOf.push(number);
    if (options.progress && read.length % 100_000 === 0) options.progress('read', read.length);
  }
  const rows = sortByName(read, lineOf);

  await insertQuantification(
    registry,
    {
      dataset_name: datasetName,
      set_name: setName,
      name,
      description: options.description ?? null,
      biosample_id: options.biosampleId ?? null,
      format: reader.format,
      units: reader.units,
      fields: JSON.stringify(reader.fields),
      // Without --program, the table's own format says which program made it (version unknown).
      programs: JSON.stringify(programs.length ? programs : [{ name: programOf(reader.format) }]),
      feature_set_ids: JSON.stringify(options.featureSetIds ?? []),
      read_group_ids: JSON.stringify(options.readGroupIds ?? []),
      source: location,
    },
    rows,
    options.progress && ((stored) => options.progress!('stored', stored)),
  );
  return { name, format: reader.format, units: reader.units, rows: rows.length };
}

/**
 * The rows in name order, refusing a name that appears twice (it is part of the expression level's
 * id). Sorting the text keys `name NUL index` with the built-in comparison is several times faster than
 * a comparator function over a million rows.
 */
function sortByName(rows: ExpressionRow[], lineOf: number[]): ExpressionRow[] {
  const keys = rows.map((row, i) => row.name + '\u0000' + i);
  keys.sort();
  const order = keys.map((key) => Number(key.slice(key.lastIndexOf('\u0000') + 1)));
  let duplicate: { line: number; first: number; name: string } | undefined;
  for (let k = 1; k < order.length; k++) {
    const [a, b] = [order[k - 1], order[k]];
    if (rows[a].name !== rows[b].name) continue;
    const line = Math.max(lineOf[a], lineOf[b]);
    if (!duplicate || line < duplicate.line) duplicate = { line, first: Math.min(lineOf[a], lineOf[b]), name: rows[a].name };
  }
  if (duplicate) {
    throw new FormatError(duplicate.line, `feature '${duplicate.name}' appears again (first on line ${duplicate.first}); names must be unique`);
  }
  return order.map((i) => rows[i]);
}

