/**
 * What answering from a dataset's variant sets needs, read from the registry and kept for the
 * registry cache time: each set's VCF files and their contigs, its samples (and the biosample of the
 * dataset named like each, as call sets are linked), its reference set's assembly id and sequence
 * digests, its frequency fields; and the assembly aliases the operator named.
 */
import { listBiosamples } from '../../areas/biometadata/store.js';
import { biosampleId, individualId } from '../../areas/biometadata/service.js';
import { getReferenceSetRow, listAssemblyAliases, listReferences, referenceAccessions } from '../../areas/references/store.js';
import { listBeaconFrequencies, listCallSets, listVariantSetFiles, listVariantSets, type BeaconFrequencyRow, type VariantSetRow } from '../../areas/variants/store.js';
import { setFileOf, type SetFile } from '../../areas/variants/vcf-files.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';

/** The biosample a sample column stands for, by Beacon ids. */
export interface SampleLink {
  biosampleId: string;
  individualId?: string;
}

export interface VariantSetContext {
  row: VariantSetRow;
  datasetName: string;
  name: string;
  /** When it was registered: files of a set registered again are opened afresh. */
  generation: string;
  files: SetFile[];
  /** Sample names in VCF column order. */
  samples: string[];
  /** By sample column: the biosample named like the sample, when the dataset has one. */
  links: Array<SampleLink | undefined>;
  /** The reference set's assembly id, or null. */
  assemblyId: string | null;
  /** A contig by its name, or by an accession of its reference (`NC_000017.11`, `refseq:NC_000017.11`). */
  contigOf(referenceName: string): string | undefined;
  /** The CURIE a VRS location names a contig's sequence by. */
  sequenceIdOf(contig: string): string;
  frequencies: BeaconFrequencyRow[];
}

async function loadSet(registry: Registry, row: VariantSetRow, links: Map<string, SampleLink>): Promise<VariantSetContext> {
  const [fileRows, callSets, referenceSet, references, frequencies] = await Promise.all([
    listVariantSetFiles(registry, row.dataset_name, row.name),
    listCallSets(registry, row.dataset_name, row.name),
    getReferenceSetRow(registry, row.reference_set_name),
    listReferences(registry, { referenceSetName: row.reference_set_name }, undefined),
    listBeaconFrequencies(registry, { datasetName: row.dataset_name, name: row.name }),
  ]);
  const files: SetFile[] = fileRows.map(setFileOf);
  const contigs = new Set(files.flatMap((f) => [...f.contigs]));
  const accessions = await referenceAccessions(registry, row.reference_set_name, references.map((r) => r.name));
  const byAccession = new Map<string, string>();
  for (const [name, list] of accessions) for (const accession of list) byAccession.set(accession.toLowerCase(), name);
  const digests = new Map(references.map((r) => [r.name, r.sha512t24u]));
  const samples = callSets.map((c) => c.name);
  // Without a refget digest (a set registered from a dictionary), the sequence is named by assembly and name.
  const assembly = (referenceSet?.assembly_id ?? row.reference_set_name).replace(/[^\w.-]/g, '_');
  return {
    row,
    datasetName: row.dataset_name,
    name: row.name,
    generation: row.created_at,
    files,
    samples,
    links: samples.map((s) => links.get(s)),
    assemblyId: referenceSet?.assembly_id ?? null,
    contigOf(referenceName) {
      if (contigs.has(referenceName)) return referenceName;
      const accession = referenceName.replace(/^\w+:/, '').toLowerCase();
      const named = byAccession.get(referenceName.toLowerCase()) ?? byAccession.get(accession);
      return named !== undefined && contigs.has(named) ? named : undefined;
    },
    sequenceIdOf(contig) {
      const digest = digests.get(contig);
      return digest ? `ga4gh:SQ.${digest}` : `${assembly}:${contig.replace(/\s/g, '_')}`;
    },
    frequencies,
  };
}

export class VariantSets {
  private readonly sets: RegistryCache<VariantSetContext[]>;
  private readonly aliases: RegistryCache<Map<string, string>>;

  constructor(
    private readonly registry: Registry,
    cacheMs: number,
  ) {
    this.sets = new RegistryCache(cacheMs, 1000);
    this.aliases = new RegistryCache(cacheMs, 1);
  }

  /** The variant sets of a dataset, in name order. */
  async of(datasetName: string): Promise<VariantSetContext[]> {
    return (await this.sets.get(datasetName, async () => {
      const [rows, biosamples] = await Promise.all([listVariantSets(this.registry, datasetName, undefined), listBiosamples(this.registry, { datasetName })]);
      // A call set's biosample is the biosample of its dataset named like its sample (biometadata/links.ts).
      const links = new Map<string, SampleLink>(
        biosamples.map((b) => [
          b.name,
          { biosampleId: biosampleId(b.dataset_name, b.name), individualId: b.individual_name === null ? undefined : individualId(b.dataset_name, b.individual_name) },
        ]),
      );
      return Promise.all(rows.map((row) => loadSet(this.registry, row, links)));
    }))!;
  }

  /** Whether an assembly id names the assembly of `set` (itself or one of its aliases, ignoring case). */
  async sameAssembly(set: VariantSetContext, asked: string): Promise<boolean> {
    if (set.assemblyId === null) return false;
    const groups = (await this.aliases.get('', async () => new Map((await listAssemblyAliases(this.registry)).map((a) => [a.name.toLowerCase(), a.assembly_group]))))!;
    const a = asked.toLowerCase();
    const b = set.assemblyId.toLowerCase();
    if (a === b) return true;
    const group = groups.get(a);
    return group !== undefined && group === groups.get(b);
  }
}
