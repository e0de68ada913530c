/**
 * Writes a VCF data line as the JSON text of a Variant with its calls, in either naming form, without
 * building an object per call: building GA4GH objects cost more than parsing the VCF itself
 * (DEPENDENCIES.md, "Throughput seen"), so each call is written from precomputed pieces (its call-set
 * name and id), only the requested samples' columns are looked at, and the JSON of a sample column
 * that repeats (GT-only files: "0|0" again and again) is reused from a small cache.
 *
 * Measured (2-core machine under load, synthetic 1000-Genomes-like file, 2,504 samples, GT only):
 * this writer alone ~2.8-3.1 M calls/s (packed-number keys for short columns: ~+10%, within the noise);
 * a full 8.4 MB page over HTTP (75k calls) in ~57 ms, ~1.3 M calls/s; `bcftools view -H -r` reads the
 * same region at ~20 M calls/s. The next step is writing bytes instead of strings (needs a JsonSink
 * that takes Uint8Array).
 *
 * Values of INFO and FORMAT fields are written from their text as it stands in the file, typed by the
 * header (Integer → int32Value, Float → doubleValue, Flag → boolValue, String/Character →
 * stringValue), so 0.7707 stays 0.7707.
 */
import { createHash } from 'node:crypto';
import { encodeId } from '../../protocol/ids.js';
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import { AttributeValue, Attributes, AttributeValueList } from '../../protocol/common.js';
import { Call, Variant } from './messages.js';
import type { FieldTypes, ValueType } from './vcf-header.js';

const FORMS: NamingForm[] = ['camel', 'snake'];

function keysFor(form: NamingForm) {
  const v = (f: string) => keyOf(Variant, f, form);
  const c = (f: string) => keyOf(Call, f, form);
  return {
    id: v('id'),
    variantSetId: v('variantSetId'),
    names: v('names'),
    referenceName: v('referenceName'),
    start: v('start'),
    end: v('end'),
    referenceBases: v('referenceBases'),
    alternateBases: v('alternateBases'),
    attributes: v('attributes'),
    calls: v('calls'),
    variantType: v('variantType'),
    svlen: v('svlen'),
    cipos: v('cipos'),
    ciend: v('ciend'),
    filtersApplied: v('filtersApplied'),
    filtersPassed: v('filtersPassed'),
    filtersFailed: v('filtersFailed'),
    callSetName: c('callSetName'),
    callSetId: c('callSetId'),
    genotype: c('genotype'),
    phaseset: c('phaseset'),
    genotypeLikelihood: c('genotypeLikelihood'),
    attr: keyOf(Attributes, 'attr', form),
    values: keyOf(AttributeValueList, 'values', form),
    int32Value: keyOf(AttributeValue, 'int32Value', form),
    doubleValue: keyOf(AttributeValue, 'doubleValue', form),
    boolValue: keyOf(AttributeValue, 'boolValue', form),
    stringValue: keyOf(AttributeValue, 'stringValue', form),
    nullValue: keyOf(AttributeValue, 'nullValue', form),
  };
}
type Keys = ReturnType<typeof keysFor>;
const KEYS: Record<NamingForm, Keys> = { camel: keysFor('camel'), snake: keysFor('snake') };

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const JSON_INTEGER = /^-?(?:0|[1-9]\d*)$/;

/** A number as JSON text: the file's own text when it is valid JSON, else its value; NaN/Inf as strings. */
function numberText(text: string): string | undefined {
  if (JSON_NUMBER.test(text)) return text;
  const n = Number(text);
  if (Number.isFinite(n)) return String(n);
  if (Number.isNaN(n) && /^[+-]?nan$/i.test(text)) return '"NaN"';
  if (/^\+?inf(inity)?$/i.test(text)) return '"Infinity"';
  if (/^-inf(inity)?$/i.test(text)) return '"-Infinity"';
  return undefined;
}

/** One value of an INFO/FORMAT field as an AttributeValue. */
function attributeValue(text: string, type: ValueType, k: Keys): string {
  if (text === '.') return '{' + k.nullValue + '"NULL_VALUE"}';
  if (type === 'Integer') {
    if (JSON_INTEGER.test(text)) return '{' + k.int32Value + text + '}';
    const n = Number(text);
    if (Number.isInteger(n)) return '{' + k.int32Value + String(n) + '}';
  } else if (type === 'Float') {
    const number = numberText(text);
    if (number !== undefined) return '{' + k.doubleValue + number + '}';
  }
  return '{' + k.stringValue + JSON.stringify(text) + '}';
}

/** An allele index of a genotype; a missing one ('.') is -1. */
function alleleText(a: string): string {
  if (JSON_INTEGER.test(a)) return a;
  const n = Number.parseInt(a, 10);
  return Number.isNaN(n) ? '-1' : String(n);
}

/** `"KEY":{"values":[...]}` for a field, or '' when its value is missing altogether ("."). */
function attributeEntry(key: string, text: string | undefined, type: ValueType, k: Keys): string {
  if (type === 'Flag') return JSON.stringify(key) + ':{' + k.values + '[{' + k.boolValue + 'true}]}';
  if (text === undefined || text === '.' || text === '') return '';
  const parts = text.split(',');
  if (parts.every((p) => p === '.')) return '';
  let out = JSON.stringify(key) + ':{' + k.values + '[';
  for (let i = 0; i < parts.length; i++) out += (i ? ',' : '') + attributeValue(parts[i], type, k);
  return out + ']}';
}

/** The short digest of REF and ALT that tells apart variants at one position in their ids. */
export function alleleDigest(ref: string, alt: string): string {
  return createHash('sha1').update(ref + '\t' + alt).digest('hex').slice(0, 16);
}

/** How the samples of one FORMAT layout (e.g. "GT:DS:GL") are written. */
interface FormatPlan {
  keys: string[];
  gt: number;
  ps: number;
  /** Index of the field that becomes genotypeLikelihood (GL, else PL), or -1. */
  likelihood: number;
  likelihoodIsPl: boolean;
  /** Indexes of the fields that go to attributes, with their types. */
  attributes: Array<{ index: number; type: ValueType }>;
  /** Call bodies by sample text, per naming form, for short texts that repeat. */
  cache: Record<NamingForm, Map<string, string>>;
  /** The same for columns of up to 4 ASCII characters, keyed by the packed characters. */
  shortCache: Record<NamingForm, Map<number, string>>;
}

const BODY_CACHE_LIMIT = 4096;
const BODY_CACHE_TEXT = 32;

export interface CallSetPieces {
  names: string[];
  ids: string[];
}

/** Everything about one variant set that the writer needs, computed once and then reused. */
export class VariantWriter {
  private readonly plans = new Map<string, FormatPlan>();
  /** `{"callSetName":"…","callSetId":"…"` per sample, per naming form. */
  private readonly callPrefix: Record<NamingForm, string[]>;
  private readonly variantSetIdText: string;

  constructor(
    private readonly datasetName: string,
    private readonly setName: string,
    variantSetId: string,
    callSets: CallSetPieces,
    private readonly types: FieldTypes,
  ) {
    this.variantSetIdText = JSON.stringify(variantSetId);
    this.callPrefix = { camel: [], snake: [] };
    for (const form of FORMS) {
      const k = KEYS[form];
      this.callPrefix[form] = callSets.names.map(
        (name, i) => '{' + k.callSetName + JSON.stringify(name) + ',' + k.callSetId + JSON.stringify(callSets.ids[i]),
      );
    }
  }

  private planFor(format: string): FormatPlan {
    let plan = this.plans.get(format);
    if (plan) return plan;
    const keys = format === '' ? [] : format.split(':');
    const gl = keys.indexOf('GL');
    const pl = keys.indexOf('PL');
    const likelihood = gl !== -1 ? gl : pl;
    plan = {
      keys,
      gt: keys.indexOf('GT'),
      ps: keys.indexOf('PS'),
      likelihood,
      likelihoodIsPl: likelihood !== -1 && likelihood === pl,
      attributes: [],
      cache: { camel: new Map(), snake: new Map() },
      shortCache: { camel: new Map(), snake: new Map() },
    };
    keys.forEach((key, index) => {
      if (key === 'GT' || key === 'PS' || index === likelihood) return;
      plan!.attributes.push({ index, type: this.types.format.get(key) ?? 'String' });
    });
    if (this.plans.size > 64) this.plans.clear();
    this.plans.set(format, plan);
    return plan;
  }

  /** The fields of one call after the call-set prefix: `,"genotype":[0,1],"phaseset":"True"...}`. */
  private callBody(plan: FormatPlan, text: string, k: Keys): string {
    const values = text.split(':');
    let out = '';
    if (plan.gt !== -1 && plan.gt < values.length) {
      const gt = values[plan.gt];
      const alleles = gt.split(/[/|]/);
      out += ',' + k.genotype + '[';
      for (let i = 0; i < alleles.length; i++) {
        const a = alleles[i];
        out += (i ? ',' : '') + alleleText(a);
      }
      out += ']';
      const ps = plan.ps !== -1 && plan.ps < values.length ? values[plan.ps] : '.';
      if (ps !== '.' && ps !== '') out += ',' + k.phaseset + JSON.stringify(ps);
      else if (gt.includes('|')) out += ',' + k.phaseset + '"True"';
    }
    if (plan.likelihood !== -1 && plan.likelihood < values.length) {
      const raw = values[plan.likelihood];
      if (raw !== '.' && raw !== '') {
        const parts = raw.split(',');
        out += ',' + k.genotypeLikelihood + '[';
        for (let i = 0; i < parts.length; i++) {
          const p = parts[i];
          let number: string | undefined;
          if (p === '.') number = '"NaN"';
          else if (plan.likelihoodIsPl) {
            const n = Number(p) / -10;
            number = Number.isFinite(n) ? String(n) : '"NaN"';
          } else number = numberText(p) ?? '"NaN"';
          out += (i ? ',' : '') + number;
        }
        out += ']';
      }
    }
    let attributes = '';
    for (const { index, type } of plan.attributes) {
      if (index >= values.length) continue;
      const entry = attributeEntry(plan.keys[index], values[index], type, k);
      if (entry) attributes += (attributes ? ',' : '') + entry;
    }
    if (attributes) out += ',' + k.attributes + '{' + k.attr + '{' + attributes + '}}';
    return out + '}';
  }

  private infoAttributes(info: string, k: Keys, sv: { type?: string; len?: string; cipos?: string; ciend?: string }): string {
    if (info === '.' || info === '') return '';
    let out = '';
    const seen = new Set<string>();
    for (const item of info.split(';')) {
      if (item === '') continue;
      const eq = item.indexOf('=');
      const key = eq === -1 ? item : item.slice(0, eq);
      const value = eq === -1 ? undefined : item.slice(eq + 1);
      if (seen.has(key)) continue;
      seen.add(key);
      const type = this.types.info.get(key) ?? (eq === -1 ? 'Flag' : 'String');
      const entry = attributeEntry(key, value, eq === -1 ? 'Flag' : type, k);
      if (entry) out += (out ? ',' : '') + entry;
      if (value !== undefined) {
        if (key === 'SVTYPE') sv.type = value;
        else if (key === 'SVLEN') sv.len = value;
        else if (key === 'CIPOS') sv.cipos = value;
        else if (key === 'CIEND') sv.ciend = value;
      }
    }
    return out;
  }

  /** The id of the variant on a line, from the fields that identify it. */
  variantId(referenceName: string, start: number, ref: string, alt: string): string {
    return encodeId([this.datasetName, 'vs', this.setName, referenceName, String(start), alleleDigest(ref, alt)]);
  }

  /**
   * Writes the Variant of a VCF line. `samples` lists the sample columns to write calls for (in
   * call-set order), or is 'all'.
   */
  write(line: string, samples: number[] | 'all', form: NamingForm): string {
    const k = KEYS[form];
    const cols: number[] = [];
    let at = -1;
    for (let i = 0; i < 9; i++) {
      const tab = line.indexOf('\t', at + 1);
      if (tab === -1) break;
      cols.push(tab);
      at = tab;
    }
    const field = (i: number) => (i <= cols.length ? line.slice(i === 0 ? 0 : cols[i - 1] + 1, i < cols.length ? cols[i] : line.length) : '.');
    const chrom = field(0);
    const start = Number(field(1)) - 1;
    const id = field(2);
    const ref = field(3);
    const alt = field(4);
    const filter = field(6);
    const info = field(7);

    let out = '{' + k.id + '"' + this.variantId(chrom, start, ref, alt) + '",' + k.variantSetId + this.variantSetIdText;
    out += ',' + k.names + (id === '.' ? '[]' : JSON.stringify(id.split(';')));
    out += ',' + k.referenceName + JSON.stringify(chrom);
    out += ',' + k.start + start + ',' + k.end + (start + ref.length);
    out += ',' + k.referenceBases + JSON.stringify(ref);
    out += ',' + k.alternateBases + (alt === '.' ? '[]' : JSON.stringify(alt.split(',')));
    const sv: { type?: string; len?: string; cipos?: string; ciend?: string } = {};
    const attributes = this.infoAttributes(info, k, sv);
    if (attributes) out += ',' + k.attributes + '{' + k.attr + '{' + attributes + '}}';

    out += ',' + k.calls + '[';
    if (samples === 'all' || samples.length > 0) out += this.calls(line, cols, samples, form, k);
    out += ']';

    if (sv.type !== undefined) out += ',' + k.variantType + JSON.stringify(sv.type);
    if (sv.len !== undefined) {
      const len = Number.parseInt(sv.len.split(',')[0], 10);
      if (Number.isSafeInteger(len)) out += ',' + k.svlen + len;
    }
    for (const [key, text] of [[k.cipos, sv.cipos], [k.ciend, sv.ciend]] as const) {
      if (text === undefined) continue;
      const bounds = text.split(',').map((v) => Number.parseInt(v, 10));
      if (bounds.length === 2 && bounds.every(Number.isSafeInteger)) out += ',' + key + '[' + bounds.join(',') + ']';
    }
    const applied = filter !== '.' && filter !== '';
    out += ',' + k.filtersApplied + applied;
    if (applied) {
      const passed = filter === 'PASS';
      out += ',' + k.filtersPassed + passed;
      if (!passed) out += ',' + k.filtersFailed + JSON.stringify(filter.split(';'));
    }
    return out + '}';
  }

  private calls(line: string, cols: number[], samples: number[] | 'all', form: NamingForm, k: Keys): string {
    if (cols.length < 9) return ''; // no FORMAT column: sites only
    const format = line.slice(cols[7] + 1, cols[8]);
    const plan = this.planFor(format);
    const prefix = this.callPrefix[form];
    const cache = plan.cache[form];
    const shortCache = plan.shortCache[form];
    const parts: string[] = [];
    // Walk the sample columns once, left to right, writing the requested ones.
    let columnStart = cols[8] + 1;
    let sample = 0;
    let wanted = 0;
    const total = prefix.length;
    const last = samples === 'all' ? total - 1 : samples[samples.length - 1];
    while (sample <= last && columnStart <= line.length) {
      let columnEnd = line.indexOf('\t', columnStart);
      if (columnEnd === -1) columnEnd = line.length;
      if (samples === 'all' || samples[wanted] === sample) {
        let body: string | undefined;
        const length = columnEnd - columnStart;
        if (length <= 4) {
          // Short columns ("0|1", "1/1", "."): keyed by their characters packed into a number, so the
          // common case allocates no string at all.
          let key = length;
          for (let i = columnStart; i < columnEnd; i++) key = key * 128 + (line.charCodeAt(i) & 127);
          body = shortCache.get(key);
          if (body === undefined) {
            body = this.callBody(plan, line.slice(columnStart, columnEnd), k);
            shortCache.set(key, body);
          }
        } else {
          const text = line.slice(columnStart, columnEnd);
          body = cache.get(text);
          if (body === undefined) {
            body = this.callBody(plan, text, k);
            if (text.length <= BODY_CACHE_TEXT && cache.size < BODY_CACHE_LIMIT) cache.set(text, body);
          }
        }
        parts.push(prefix[sample] + body);
        wanted++;
      }
      sample++;
      columnStart = columnEnd + 1;
    }
    return parts.join(',');
  }
}
