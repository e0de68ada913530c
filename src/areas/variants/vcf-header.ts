/**
 * The VCF header: its meta-information lines become VariantSetMetadata entries, its #CHROM line names
 * the samples (call sets), and its INFO/FORMAT definitions say how values are typed on the wire.
 */
import type { HeaderSequence } from '../../formats/sequences.js';
import type { VariantSetMetadataRecord } from './messages.js';

/**
 * One header line as a VariantSetMetadata entry, as the registry keeps it: its extra pairs stay in
 * `extra` until served (service.ts makes them attributes).
 */
export interface MetadataEntry extends Omit<VariantSetMetadataRecord, 'attributes'> {
  /** The remaining key=value pairs of a structured line (e.g. a contig's length), in file order. */
  extra?: Array<[string, string]>;
}

export interface VcfHeader {
  metadata: MetadataEntry[];
  samples: string[];
}

/** Splits `ID=x,Number=1,Description="a, b"` into pairs, honouring quotes and backslash escapes. */
function structuredPairs(body: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  let i = 0;
  while (i < body.length) {
    const eq = body.indexOf('=', i);
    if (eq === -1) break;
    const key = body.slice(i, eq).trim();
    let value = '';
    let j = eq + 1;
    if (body[j] === '"') {
      j++;
      while (j < body.length && body[j] !== '"') {
        if (body[j] === '\\' && j + 1 < body.length) j++;
        value += body[j++];
      }
      j++; // closing quote
      while (j < body.length && body[j] !== ',') j++;
    } else {
      const comma = body.indexOf(',', j);
      const stop = comma === -1 ? body.length : comma;
      value = body.slice(j, stop);
      j = stop;
    }
    pairs.push([key, value]);
    i = j + 1;
  }
  return pairs;
}

/** One `##` line as a metadata entry; structured lines get the key `<KIND>.<ID>` (e.g. `INFO.DP`). */
export function metadataOf(line: string): MetadataEntry | undefined {
  const text = line.replace(/^##/, '');
  const eq = text.indexOf('=');
  if (eq <= 0) return undefined;
  const kind = text.slice(0, eq);
  const rest = text.slice(eq + 1);
  if (!(rest.startsWith('<') && rest.endsWith('>'))) return { key: kind, value: rest };
  const pairs = structuredPairs(rest.slice(1, -1));
  const entry: MetadataEntry = { key: kind };
  const extra: Array<[string, string]> = [];
  for (const [k, v] of pairs) {
    if (k === 'ID') entry.id = v;
    else if (k === 'Type') entry.type = v;
    else if (k === 'Number') entry.number = v;
    else if (k === 'Description') entry.description = v;
    else extra.push([k, v]);
  }
  if (entry.id !== undefined) entry.key = `${kind}.${entry.id}`;
  if (extra.length) entry.extra = extra;
  return entry;
}

/** Parses the header text (every line up to and including #CHROM). */
export function parseHeader(text: string, source: string): VcfHeader {
  const metadata: MetadataEntry[] = [];
  let samples: string[] | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.startsWith('##')) {
      const entry = metadataOf(line);
      if (entry) metadata.push(entry);
    } else if (line.startsWith('#CHROM')) {
      const columns = line.split('\t');
      if (columns.length < 8) throw new Error(`${source}: the #CHROM line has fewer than 8 columns`);
      samples = columns.slice(9);
      break;
    }
  }
  if (!samples) throw new Error(`${source} has no #CHROM header line; is it a VCF file?`);
  if (!metadata.some((m) => m.key === 'fileformat' && m.value?.startsWith('VCF'))) {
    throw new Error(`${source} has no ##fileformat=VCF... line; is it a VCF file?`);
  }
  return { metadata, samples };
}

/** How a value of an INFO or FORMAT field is written: the header's Type, defaulting to String. */
export type ValueType = 'Integer' | 'Float' | 'Flag' | 'String';

export interface FieldTypes {
  info: Map<string, ValueType>;
  format: Map<string, ValueType>;
}

function valueType(type: string | undefined): ValueType {
  return type === 'Integer' || type === 'Float' || type === 'Flag' ? type : 'String';
}

export function fieldTypesOf(metadata: MetadataEntry[]): FieldTypes {
  const info = new Map<string, ValueType>();
  const format = new Map<string, ValueType>();
  for (const m of metadata) {
    if (m.id === undefined) continue;
    if (m.key === `INFO.${m.id}` && !info.has(m.id)) info.set(m.id, valueType(m.type));
    if (m.key === `FORMAT.${m.id}` && !format.has(m.id)) format.set(m.id, valueType(m.type));
  }
  return { info, format };
}

/** The ##contig lines of a header, in order, with the length and MD5 they give. */
export function contigsOf(header: VcfHeader): HeaderSequence[] {
  return header.metadata
    .filter((m) => m.id !== undefined && m.key === `contig.${m.id}`)
    .map((m) => {
      const extra = new Map(m.extra ?? []);
      const length = Number(extra.get('length'));
      return { name: m.id!, length: Number.isSafeInteger(length) ? length : undefined, md5: extra.get('md5') };
    });
}

/** A header line's identity when headers are merged: `KIND.ID` for a structured line, its key for another. */
function mergeKey(line: string): string {
  const entry = metadataOf(line);
  return entry?.key ?? line;
}

/**
 * One header for the files of a set read as one stream, as `bcftools concat` writes it: the first
 * file's header, each file's contigs declared (a contig its index lists without a ##contig line gets
 * one, as htslib adds), and each line of the later files whose key the header lacks put after the last
 * line of its kind, or else before #CHROM.
 */
export function mergedHeaderText(files: Array<{ text: string; contigs: string[] }>): string {
  const lines = files[0].text.replace(/\n$/, '').split('\n');
  const keys = new Set(lines.map(mergeKey));
  for (const { text, contigs } of files) {
    const own = text.split('\n').filter((l) => l.startsWith('##'));
    for (const line of [...own, ...contigs.map((id) => `##contig=<ID=${id}>`)]) {
      const key = mergeKey(line);
      if (keys.has(key)) continue;
      keys.add(key);
      const kind = line.slice(0, line.indexOf('=') + 1);
      let after = lines.length - 1;
      while (after >= 0 && !lines[after].startsWith(kind)) after--;
      if (after === -1) after = lines.findIndex((l) => l.startsWith('#CHROM')) - 1;
      lines.splice(after + 1, 0, line);
    }
  }
  return lines.join('\n') + '\n';
}
