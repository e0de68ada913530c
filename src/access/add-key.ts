/**
 * `ga4gh access add-key`: a new API key, printed once, and its entry for the `keys:` of a policy
 * file, which it may also add to the file itself (checked before and after, written whole).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, parseDocument, type YAMLMap } from 'yaml';
import { UserError } from '../user-error.js';
import { newApiKey } from './keys.js';
import { isLevel, LEVELS, type Level } from './levels.js';
import { KEY_NAME, PolicyInvalid, readPolicy } from './policy-file.js';

/** Reads `--dataset DS=LEVEL` values; each dataset once. */
export function datasetLevels(values: readonly string[]): Map<string, Level> {
  if (values.length === 0) throw new UserError('give the level of at least one dataset: --dataset DATASET=LEVEL');
  const levels = new Map<string, Level>();
  for (const value of values) {
    const at = value.lastIndexOf('=');
    const [dataset, level] = at < 0 ? [value, ''] : [value.slice(0, at), value.slice(at + 1)];
    if (!dataset.trim() || at < 0) throw new UserError(`--dataset ${value}: expected DATASET=LEVEL`);
    if (!isLevel(level)) throw new UserError(`--dataset ${value}: ${JSON.stringify(level)} is not a level (${LEVELS.join(', ')})`);
    if (levels.has(dataset)) throw new UserError(`--dataset ${dataset} is given twice`);
    levels.set(dataset, level);
  }
  return levels;
}

/** The entry in the flow form a policy's `keys:` list holds, one line; strings as JSON, which YAML reads as quoted scalars. */
export function keyEntryLine(name: string, hash: string, datasets: ReadonlyMap<string, Level>): string {
  const levels = [...datasets].map(([dataset, level]) => `${JSON.stringify(dataset)}: ${level}`).join(', ');
  return `- { name: ${JSON.stringify(name)}, hash: ${JSON.stringify(hash)}, datasets: { ${levels} } }`;
}

function checked(text: string, file: string, when: string): void {
  try {
    readPolicy(text, path.basename(file));
  } catch (e) {
    if (e instanceof PolicyInvalid) throw new UserError(`${when}: ${e.message}`);
    throw e;
  }
}

/** The policy as JSON, when the file is JSON (a YAML file may start with a flow mapping too). */
function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The policy's text with the entry appended to its `keys:` (comments and layout of a YAML file kept). */
function withKey(text: string, entry: { name: string; hash: string; datasets: Record<string, Level> }): string {
  const json = jsonObjectOf(text);
  if (json) {
    json.keys = [...(Array.isArray(json.keys) ? json.keys : []), entry];
    return `${JSON.stringify(json, null, 2)}\n`;
  }
  const doc = parseDocument(text);
  const node = doc.createNode(entry) as YAMLMap;
  node.flow = true;
  const keys = doc.get('keys');
  if (isSeq(keys)) keys.add(node);
  else if (keys === undefined || keys === null) doc.set('keys', doc.createNode([node]));
  else throw new UserError('the policy\'s keys: is not a list');
  if (!isMap(doc.contents)) throw new UserError('the policy is not a mapping');
  return doc.toString({ lineWidth: 0 });
}

/** Adds the entry to the policy file: refused when the file is invalid or already has a key of that name; replaced in one rename. */
function addToPolicyFile(file: string, entry: { name: string; hash: string; datasets: Record<string, Level> }): void {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read the policy ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  checked(text, file, `the policy ${file} is invalid, nothing was added`);
  const { policy } = readPolicy(text, path.basename(file));
  if (policy.keys.some((k) => k.name === entry.name)) throw new UserError(`the policy ${file} already has a key named ${entry.name}`);
  const updated = withKey(text, entry);
  checked(updated, file, `the policy ${file} would be invalid with the key, nothing was added`);
  // Written beside it and renamed onto it, so a server watching it never reads half a file.
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(temporary, updated, { mode: fs.statSync(file).mode & 0o777 });
    fs.renameSync(temporary, file);
  } catch (e) {
    fs.rmSync(temporary, { force: true });
    throw new UserError(`cannot write the policy ${file}: ${(e as Error).message}`);
  }
}

/** The lines the command prints: the key, then its entry. */
export async function addKey(name: string, datasetValues: readonly string[], policyFile: string | undefined): Promise<string[]> {
  if (!KEY_NAME.test(name)) throw new UserError(`${JSON.stringify(name)} is not a key name: letters, digits and . _ @ - (not first)`);
  const datasets = datasetLevels(datasetValues);
  const { key, hash } = await newApiKey();
  if (policyFile !== undefined) addToPolicyFile(policyFile, { name, hash, datasets: Object.fromEntries(datasets) });
  return [
    `key: ${key}`,
    policyFile === undefined ? 'its entry, for the keys: of the policy file:' : `added to the keys: of ${policyFile}:`,
    `  ${keyEntryLine(name, hash, datasets)}`,
  ];
}
