/**
 * Feature attributes in the form they are stored and sent. A page of features is mostly attributes,
 * so they are stored at load time close to their wire form and sent without building records.
 *
 * The stored form is the text inside `"attr":{...}` with the parts that repeat for every
 * value, and that differ between the two naming forms, written as one control character each (JSON
 * text never holds a raw control character: strings escape them). Each key with values is
 * `"key":` OPEN value {NEXT value} CLOSE, keys joined by commas, where OPEN and NEXT name the value's
 * type (a leading mark says whether any value is not a string). `gene_id=ENSG1` is stored as `"gene_id":\x01"ENSG1"\x03` and sent as
 * `"gene_id":{"values":[{"stringValue":"ENSG1"}]}`: as short as plain JSON of the same lists, and sent
 * after a few native string replacements.
 */
import { Attributes, AttributeValue, AttributeValueList } from '../../protocol/common.js';
import { keyOf, type NamingForm } from '../../protocol/schema.js';
import type { AttributeValues } from './store.js';

type Value = string | number | boolean;

/** A value kind: its marker when it opens a list, its marker after another value, its field. */
const KINDS = [
  { open: '\x01', next: '\x02', field: 'stringValue' },
  { open: '\x04', next: '\x05', field: 'int64Value' },
  { open: '\x06', next: '\x07', field: 'doubleValue' },
  { open: '\x08', next: '\x0e', field: 'boolValue' },
] as const;
const CLOSE = '\x03';
/** Leads the stored form when a value is not a string (rare: GFF3 values are all strings). */
const TYPED = '\x0f';
const TYPED_MARKERS = /[\x04-\x08\x0e]/g;

/** The kind of a value, as attributesOf (protocol/common.ts) types it. */
const kindOf = (v: Value) => (typeof v === 'string' ? KINDS[0] : typeof v === 'boolean' ? KINDS[3] : Number.isInteger(v) ? KINDS[1] : KINDS[2]);

/** A number as writeMessage writes it: JSON has no NaN or Infinity, protobuf JSON spells them as strings. */
const numberText = (n: number) => (Number.isFinite(n) ? String(n) : JSON.stringify(String(n)));
const valueText = (v: Value) => (typeof v === 'string' ? JSON.stringify(v) : typeof v === 'boolean' ? String(v) : numberText(v));

/** Attributes in their stored form; null when no key has a value (the record then has no attributes). */
export function storedAttributes(values: AttributeValues | null): string | null {
  if (!values) return null;
  let out = '';
  let typed = false;
  for (const key in values) {
    const list = values[key];
    if (!list.length) continue;
    if (out) out += ',';
    out += JSON.stringify(key) + ':';
    for (let i = 0; i < list.length; i++) {
      const kind = kindOf(list[i]);
      typed ||= kind !== KINDS[0];
      out += (i === 0 ? kind.open : kind.next) + valueText(list[i]);
    }
    out += CLOSE;
  }
  return out ? (typed ? TYPED + out : out) : null;
}

/** The text each marker stands for, per naming form. */
function markerTexts(form: NamingForm): Map<string, string> {
  const values = keyOf(AttributeValueList, 'values', form);
  const texts = new Map<string, string>([[CLOSE, '}]}']]);
  for (const kind of KINDS) {
    const key = keyOf(AttributeValue, kind.field, form);
    texts.set(kind.open, `{${values}[{${key}`);
    texts.set(kind.next, `},{${key}`);
  }
  return texts;
}

const MARKERS: Record<NamingForm, Map<string, string>> = { camel: markerTexts('camel'), snake: markerTexts('snake') };

/** The JSON of an Attributes message from the stored form. */
export function attributesJson(stored: string, form: NamingForm): string {
  const texts = MARKERS[form];
  const typed = stored.charCodeAt(0) === TYPED.charCodeAt(0);
  let out = (typed ? stored.slice(1) : stored)
    .replaceAll(KINDS[0].open, texts.get(KINDS[0].open)!)
    .replaceAll(KINDS[0].next, texts.get(KINDS[0].next)!)
    .replaceAll(CLOSE, '}]}');
  if (typed) out = out.replace(TYPED_MARKERS, (m) => texts.get(m)!);
  return `{${keyOf(Attributes, 'attr', form)}{${out}}}`;
}

/** Stored attributes back as lists of values (a part of a feature merged into it after it was written). */
export function attributesFromStored(stored: string | null): AttributeValues | null {
  if (stored === null) return null;
  const parsed = JSON.parse(attributesJson(stored, 'camel')) as { attr: Record<string, { values: Array<Record<string, Value>> }> };
  const values: AttributeValues = {};
  for (const [key, list] of Object.entries(parsed.attr)) {
    values[key] = list.values.map((v) => {
      const kind = KINDS.find((k) => k.field in v)!;
      const value = v[kind.field];
      // Non-finite numbers travel as strings in JSON.
      return kind.field === 'doubleValue' && typeof value === 'string' ? Number(value) : value;
    });
  }
  return values;
}
