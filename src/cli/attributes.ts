/** `--attributes JSON` of the commands that register records with attributes (datasets, peers, ...). */
import { Attributes, attributesOf, type AttributesRecord } from '../protocol/common.js';
import { parseMessage } from '../protocol/schema.js';
import { UserError } from '../user-error.js';

/**
 * Attributes given on the command line: the wire form `{"attr": {...}}`, or plain
 * `{"key": value or [values]}` with strings, numbers and booleans.
 */
export function attributesFromJson(text: string): AttributesRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UserError(`--attributes is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UserError('--attributes must be a JSON object');
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0][0] === 'attr') {
    try {
      return parseMessage<AttributesRecord>(Attributes, value).value;
    } catch (e) {
      throw new UserError(`--attributes: ${(e as Error).message}`);
    }
  }
  const plain: Record<string, Array<string | number | boolean>> = {};
  for (const [key, v] of entries) {
    const values = Array.isArray(v) ? v : [v];
    if (!values.every((x) => typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x)))) {
      throw new UserError(`--attributes: '${key}' must be a string, number or boolean, or a list of them`);
    }
    plain[key] = values;
  }
  return attributesOf(plain);
}
