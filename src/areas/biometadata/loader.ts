/**
 * `repo add-individual` / `add-biosample`: one Individual or Biosample message from a JSON file, read
 * through the protocol layer's message descriptions (either naming form; an unknown field or a value of
 * the wrong type is refused naming the field), as the compliance data set's files are written.
 */
import fs from 'node:fs';
import { GAException } from '../../protocol/errors.js';
import { decodeId, IdKinds } from '../../protocol/ids.js';
import { parseMessage, type MessageDesc } from '../../protocol/schema.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireDataset } from '../datasets/store.js';
import { Biosample, Individual, type BioFields } from './messages.js';
import { insertBiosample, insertIndividual } from './store.js';

/** Fields the registry assigns, whatever the file says: the id and dataset come from where it is added. */
const ASSIGNED = new Set(['id', 'datasetId', 'name', 'individualId']);

function readMessageFile(file: string, desc: MessageDesc): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  try {
    return parseMessage<Record<string, unknown>>(desc, json).value;
  } catch (e) {
    if (e instanceof GAException) throw new UserError(`${file}: ${e.message}`);
    throw e;
  }
}

/** The name (required) and the descriptive fields (the reader has left out empty strings, as protobuf does). */
function split(file: string, message: Record<string, unknown>, kind: string): { name: string; fields: BioFields } {
  const name = typeof message.name === 'string' ? message.name.trim() : '';
  if (!name) throw new UserError(`${file}: field 'name' is required: it names the ${kind} in its dataset and in its id`);
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) {
    if (ASSIGNED.has(key)) continue;
    fields[key] = value;
  }
  const now = new Date().toISOString();
  fields.created ??= now;
  fields.updated ??= fields.created;
  return { name, fields: fields as BioFields };
}

export async function addIndividualFromFile(registry: Registry, datasetName: string, file: string): Promise<string> {
  await requireDataset(registry, datasetName);
  const { name, fields } = split(file, readMessageFile(file, Individual), 'individual');
  await insertIndividual(registry, { dataset_name: datasetName, name, fields: JSON.stringify(fields) });
  return name;
}

/** The individual a biosample file names: by name, or by the id the server gives it. */
function individualNameOf(datasetName: string, value: string): string {
  try {
    const [dataset, , name] = decodeId(value, IdKinds.individual);
    if (dataset !== datasetName) throw new UserError(`field 'individualId' names an individual of dataset '${dataset}', not of '${datasetName}'`);
    return name;
  } catch (e) {
    if (e instanceof UserError) throw e;
    return value; // not an id: a name
  }
}

export async function addBiosampleFromFile(registry: Registry, datasetName: string, file: string): Promise<{ name: string; individual?: string }> {
  await requireDataset(registry, datasetName);
  const message = readMessageFile(file, Biosample);
  const { name, fields } = split(file, message, 'biosample');
  const given = typeof message.individualId === 'string' ? message.individualId.trim() : '';
  const individual = given ? individualNameOf(datasetName, given) : undefined;
  try {
    await insertBiosample(registry, { dataset_name: datasetName, name, individual_name: individual ?? null, fields: JSON.stringify(fields) });
  } catch (e) {
    if (e instanceof UserError) throw new UserError(`${file}: ${e.message}`);
    throw e;
  }
  return { name, individual };
}
