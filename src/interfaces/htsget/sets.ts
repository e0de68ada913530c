/**
 * The sets htsget serves, by the ids its clients use, with their files in each format: a read group
 * set's own file and its alternate (BAM, CRAM), a variant set's files (VCF or BCF) and their
 * alternates in the other format.
 * `{id}` is the set's 0.6.0a10 id, `DATASET/NAME` (the first `/` ends the dataset), or a bare `NAME`
 * while exactly one dataset holds a set of that name.
 */
import { mayHave } from '../../access/request-access.js';
import { GAException } from '../../protocol/errors.js';
import { decodeId, IdKinds } from '../../protocol/ids.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { readGroupSetId } from '../../areas/reads/service.js';
import { formatOfRow, getReadGroupSetRow, listReadGroupSetAlternates, listReadGroupSets } from '../../areas/reads/store.js';
import { variantSetId } from '../../areas/variants/service.js';
import { getVariantSetRow, listVariantSetAlternateFiles, listVariantSetFiles, listVariantSets } from '../../areas/variants/store.js';
import type { MetadataEntry } from '../../areas/variants/vcf-header.js';
import { HtsgetError } from './errors.js';
import type { Datatype } from './request.js';

export type Format = 'BAM' | 'CRAM' | 'VCF' | 'BCF';

/** The formats of each endpoint, its default first. */
export const FORMATS: Record<Datatype, Format[]> = { reads: ['BAM', 'CRAM'], variants: ['VCF', 'BCF'] };

export interface ServedFile {
  format: Format;
  /** Its place among the set's files of its format (data URLs name it so). */
  ordinal: number;
  path: string;
  indexPath: string;
  indexKind: string;
  /** The reference names by the number the file's records and index give them. */
  referenceNames: string[];
}

export interface ServedSet {
  datatype: Datatype;
  datasetName: string;
  name: string;
  /** Its 0.6.0a10 id. */
  id: string;
  /** When it was registered: the files of a set registered again are opened afresh. */
  generation: string;
  /** Its files by format, in the set's order. */
  files: Map<Format, ServedFile[]>;
  /** Every reference name the set's headers declare: another is NotFound. */
  references: Set<string>;
}

const LABEL: Record<Datatype, string> = { reads: 'read group set', variants: 'variant set' };

export class ServedSets {
  private readonly cache: RegistryCache<ServedSet>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.cache = new RegistryCache(cacheMs);
  }

  /**
   * The set an htsget id names; NotFound when none does, or when the caller may not read its
   * dataset's records (decided before the set is looked up); PermissionDenied when they may read its
   * records but not have its data (level `data`).
   */
  async resolve(datatype: Datatype, id: string): Promise<ServedSet> {
    for (const [datasetName, name] of await this.candidates(datatype, id)) {
      if (!mayHave(datasetName, 'record')) continue;
      const set = await this.get(datatype, datasetName, name);
      if (!set) continue;
      if (!mayHave(datasetName, 'data')) throw new HtsgetError('PermissionDenied', `the caller may not have the data of ${LABEL[datatype]} '${id}' (level data needed)`);
      return set;
    }
    throw new HtsgetError('NotFound', `no ${LABEL[datatype]} '${id}'`);
  }

  /** A set by its dataset and name, as data URLs name it. */
  get(datatype: Datatype, datasetName: string, name: string): Promise<ServedSet | undefined> {
    return this.cache.get(JSON.stringify([datatype, datasetName, name]), () =>
      datatype === 'reads' ? this.loadReads(datasetName, name) : this.loadVariants(datasetName, name),
    );
  }

  /** The (dataset, name) pairs an id may mean, in the order they are tried. */
  private async candidates(datatype: Datatype, id: string): Promise<Array<[string, string]>> {
    try {
      const names = decodeId(id, datatype === 'reads' ? IdKinds.readGroupSet : IdKinds.variantSet);
      return [[names[0], names[2]]];
    } catch (e) {
      if (!(e instanceof GAException)) throw e;
    }
    const slash = id.indexOf('/');
    if (slash > 0) return [[id.slice(0, slash), id.slice(slash + 1)]];
    const datasets = datatype === 'reads'
      ? (await listReadGroupSets(this.registry, { name: id }, undefined)).map((s) => s.dataset_name)
      : (await listVariantSets(this.registry, undefined, undefined)).filter((s) => s.name === id).map((s) => s.dataset_name);
    // Datasets whose records the caller may not read are not among those named.
    const visible = datasets.filter((d) => mayHave(d, 'record'));
    if (visible.length > 1) {
      throw new HtsgetError('NotFound', `datasets ${visible.join(', ')} each hold a ${LABEL[datatype]} named '${id}'; name it as DATASET/${id}`);
    }
    return visible.map((d) => [d, id]);
  }

  private async loadReads(datasetName: string, name: string): Promise<ServedSet | undefined> {
    const row = await getReadGroupSetRow(this.registry, datasetName, name);
    if (!row) return undefined;
    const referenceNames = JSON.parse(row.reference_names) as string[];
    const files = new Map<Format, ServedFile[]>([
      [formatOfRow(row), [{ format: formatOfRow(row), ordinal: 0, path: row.path, indexPath: row.index_path, indexKind: row.index_kind, referenceNames }]],
    ]);
    for (const a of await listReadGroupSetAlternates(this.registry, { datasetName, name })) {
      const format = a.format as Format;
      files.set(format, [{ format, ordinal: 0, path: a.path, indexPath: a.index_path, indexKind: a.index_kind, referenceNames }]);
    }
    return { datatype: 'reads', datasetName, name, id: readGroupSetId(datasetName, name), generation: row.created_at, files, references: new Set(referenceNames) };
  }

  private async loadVariants(datasetName: string, name: string): Promise<ServedSet | undefined> {
    const row = await getVariantSetRow(this.registry, datasetName, name);
    if (!row) return undefined;
    // A VCF's contigs are numbered as its index lists them; a BCF's by its contig dictionary.
    const own: ServedFile[] = (await listVariantSetFiles(this.registry, datasetName, name)).map((f) => ({
      format: f.format === 'BCF' ? 'BCF' : 'VCF',
      ordinal: f.ordinal,
      path: f.path,
      indexPath: f.index_path,
      indexKind: f.index_kind,
      referenceNames: JSON.parse(f.reference_names ?? f.contigs) as string[],
    }));
    const files = new Map<Format, ServedFile[]>(own.length ? [[own[0].format, own]] : []);
    for (const a of await listVariantSetAlternateFiles(this.registry, { datasetName, name })) {
      const format = a.format as Format;
      const file = { format, ordinal: a.ordinal, path: a.path, indexPath: a.index_path, indexKind: a.index_kind, referenceNames: JSON.parse(a.reference_names) as string[] };
      files.set(format, [...(files.get(format) ?? []), file]);
    }
    // A contig the header declares holds no records when the index does not list it: empty, not NotFound.
    const declared = (JSON.parse(row.metadata) as MetadataEntry[]).filter((m) => m.id !== undefined && m.key === `contig.${m.id}`).map((m) => m.id!);
    const references = new Set([...declared, ...[...files.values()].flat().flatMap((f) => f.referenceNames)]);
    return { datatype: 'variants', datasetName, name, id: variantSetId(datasetName, name), generation: row.created_at, files, references };
  }
}
