/**
 * `repo add-continuousset`: checks that the file is a bigWig whose sequences are all in the reference
 * set, and records where it is; the values stay in the file and are read in place when searched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isUrl } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import { UserError } from '../../user-error.js';
import { requireDataset } from '../datasets/store.js';
import { referenceNamesOf } from '../features/loader.js';
import { fileKind, openBigWig } from './bigwig.js';
import { insertContinuousSet } from './store.js';

export interface ContinuousSetOptions {
  referenceSet: string;
  name?: string;
  sourceUri?: string;
}

/** `sample.bw` -> `sample`. */
export function defaultContinuousSetName(file: string): string {
  const base = path.basename(isUrl(file) ? new URL(file).pathname : file);
  return base.replace(/\.(bw|bigwig)$/i, '');
}

export async function loadContinuousSet(registry: Registry, datasetName: string, file: string, options: ContinuousSetOptions): Promise<{ name: string; sequences: number }> {
  await requireDataset(registry, datasetName);
  const known = await referenceNamesOf(registry, options.referenceSet);
  const location = isUrl(file) ? file : path.resolve(file);
  if (!isUrl(file) && !fs.existsSync(location)) throw new UserError(`no such file: ${file}`);

  let kind;
  try {
    kind = await fileKind(location);
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as Error).message}`);
  }
  switch (kind) {
    case 'bigWig':
      break;
    case 'wiggle':
      throw new UserError(`${file} is a wiggle text file; convert it to bigWig first (wigToBigWig ${path.basename(file)} chrom.sizes out.bw)`);
    case 'bedGraph':
      throw new UserError(`${file} is a bedGraph text file; convert it to bigWig first (bedGraphToBigWig ${path.basename(file)} chrom.sizes out.bw)`);
    case 'bigBed':
      throw new UserError(`${file} is a bigBed file, not a bigWig: continuous sets hold values per base`);
    default:
      throw new UserError(`${file} is not a bigWig file`);
  }
  let sequences: Map<string, number>;
  let size: number;
  try {
    ({ sequences, size } = await openBigWig(location));
  } catch (e) {
    throw new UserError(`cannot read ${file} as a bigWig: ${(e as Error).message}`);
  }
  const missing = [...sequences.keys()].find((n) => !known.has(n));
  if (missing !== undefined) throw new UserError(`${file}: reference '${missing}' is not in reference set '${options.referenceSet}'`);

  const name = options.name ?? defaultContinuousSetName(file);
  if (!name.trim()) throw new UserError('a continuous set name must not be empty');
  await insertContinuousSet(registry, {
    dataset_name: datasetName,
    name,
    reference_set_name: options.referenceSet,
    path: location,
    source_uri: options.sourceUri ?? null,
    size,
  });
  return { name, sequences: sequences.size };
}
