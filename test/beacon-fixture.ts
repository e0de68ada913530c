/**
 * The registry the Beacon tests query, registered in process through the areas' own loaders (the CLI
 * commands are tested in beacon.test.ts and beacon-variants.test.ts):
 *
 * - dataset `kg` (record): the 1000 Genomes phase 3 extracts (chromosomes 1-3, 11 samples) on NCBI37,
 *   whose assembly id has the aliases GRCh37 and hs37d5;
 * - dataset `synthetic` (record): a VCF written here over a FASTA written here (contigs c1 of 1,000
 *   bases and c2 of 300): sites at the first and last base of each contig, a multi-allelic line,
 *   indels, an MNP, structural variants with END (<DEL>, <DUP>, <INS>, copy-number alleles with
 *   SVTYPE=CNV), a breakend, a spanning deletion '*', haploid and missing calls, rs ids, and AF and
 *   EAS_AF fields mapped to populations;
 * - dataset `compliance` (record): the compliance suite's BRCA1 variants of 3 samples with their
 *   individuals, and biosamples written here that name their individual, a disease and where the
 *   sample came from (HG00101 has none: its call set names no biosample);
 * - ontologies: the phenotype tests' terms (thyroid cancer > thyroid carcinoma > papillary thyroid
 *   carcinoma), and one written here of sexes and of blood (genotypic sex > male and female
 *   genotypic sex; haemolymphoid fluid > blood);
 * - datasets `counted` (count) and `closed` (boolean, the default) holding the synthetic VCF again;
 * - dataset `annotated` (record): the reference server's SnpEff (OR4F) and VEP (1kg.3) annotated
 *   VCFs on NCBI37, their effects in the Sequence Ontology;
 * - gene features: the compliance suite's GENCODE genes on its reference, and GFF3 genes written here
 *   on NCBI37 (one across the 16 kb boundary of the index's windows) and on the synthetic contigs.
 *
 * Each VCF is also split with `bcftools norm -m -` (one line per alternate allele, nothing
 * realigned), from which the tests read what each query should find.
 */
import fs from 'node:fs';
import path from 'node:path';
import { addDataset } from '../src/areas/datasets/store.js';
import { addBiosampleFromFile, addIndividualFromFile } from '../src/areas/biometadata/loader.js';
import { readOboTerms } from '../src/areas/ontologies/obo.js';
import { addOntology } from '../src/areas/ontologies/store.js';
import { loadFeatureSet } from '../src/areas/features/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { setAssemblyAliases } from '../src/areas/references/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { setBeaconFrequencies } from '../src/areas/variants/store.js';
import { beaconClient, type BeaconClient } from './beacon-harness.js';
import { bgzippedVcf, copyFixture, newRegistry, startTestServer, tempDir, TESTDATA, tool, type TestServer } from './helpers.js';

/** A deterministic sequence of `n` bases. */
function bases(n: number, seed: number): string {
  let out = '';
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += 'ACGT'[x % 4];
  }
  return out;
}

export const CONTIGS = { c1: bases(1000, 7), c2: bases(300, 11) };

/** The base of a contig at a 1-based position. */
const at = (contig: keyof typeof CONTIGS, pos: number) => CONTIGS[contig][pos - 1];

/** The n-th base other than the one at a place (a SNP's ALT). */
const other = (base: string, n = 0) => 'ACGT'.replace(base, '')[n];

/** The synthetic VCF's data lines (REF bases read from the FASTA). */
function syntheticLines(): string[] {
  const c1 = (pos: number, n = 1) => CONTIGS.c1.slice(pos - 1, pos - 1 + n);
  const rows: string[][] = [
    ['c1', '1', 'rs1', c1(1), other(c1(1)), 'AF=0.5;EAS_AF=0.25', '0/1', '1/1', '0/0'],
    ['c1', '10', '.', c1(10), [other(c1(10)), other(c1(10), 1), c1(10) + 'T'].join(','), 'AF=0.1,0.2,0.3;EAS_AF=.,0.4,0.5', '1/2', '0|2', './.'],
    ['c1', '20', 'rs2;id2', c1(20, 2), c1(20), 'AF=0.3', '0/1', '0/0', '1'],
    ['c1', '30', '.', c1(30), c1(30) + 'TT', 'AF=0.05', '0/0', '0/1', '0/0'],
    ['c1', '40', '.', c1(40, 2), other(c1(40)) + other(c1(41)), '.', '0/1', '0/0', '0/0'],
    ['c1', '100', 'sv1', c1(100), '<DEL>', 'SVTYPE=DEL;END=250;SVLEN=-150', '0/1', '0/0', '0/0'],
    ['c1', '120', 'sv2', c1(120), '<DUP>', 'SVTYPE=DUP;END=400;SVLEN=280', '0/0', '0/1', '0/0'],
    ['c1', '300', 'sv3', c1(300), '<INS>', 'SVTYPE=INS;END=300;SVLEN=50', '0/0', '0/0', '0/1'],
    ['c1', '500', 'cnv1', c1(500), '<CN0>,<CN2>', 'SVTYPE=CNV;END=600', '0/1', '0/2', '1/2'],
    ['c1', '700', 'bnd1', c1(700), `${c1(700)}]c2:100]`, 'SVTYPE=BND', '0/1', '0/0', '0/0'],
    ['c1', '800', '.', c1(800), `*,${other(c1(800))}`, '.', '1/2', '0/0', '0/0'],
    ['c1', '1000', '.', c1(1000), other(c1(1000)), 'AF=0.9', '1/1', '1/1', '1/1'],
    ['c2', '1', '.', at('c2', 1), other(at('c2', 1)), '.', '0/1', '0/0', '0/0'],
    ['c2', '300', '.', at('c2', 300), other(at('c2', 300)), '.', '0/0', '0/0', '1/1'],
  ];
  return rows.map(([chrom, pos, id, ref, alt, info, ...calls]) => [chrom, pos, id, ref, alt, '.', 'PASS', info, 'GT', ...calls].join('\t'));
}

export const SYNTHETIC_SAMPLES = ['S1', 'S2', 'S3'];

/** The accession the compliance reference is registered with (`--reference-accessions`). */
export const COMPLIANCE_ACCESSION = 'GA4GH_CTS_01_BRCA1';

function syntheticVcf(): string {
  return [
    '##fileformat=VCFv4.2',
    `##contig=<ID=c1,length=${CONTIGS.c1.length}>`,
    `##contig=<ID=c2,length=${CONTIGS.c2.length}>`,
    '##INFO=<ID=END,Number=1,Type=Integer,Description="End position">',
    '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Type of structural variant">',
    '##INFO=<ID=SVLEN,Number=A,Type=Integer,Description="Length of structural variant">',
    '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency">',
    '##INFO=<ID=EAS_AF,Number=A,Type=Float,Description="Allele frequency in East Asians">',
    '##ALT=<ID=DEL,Description="Deletion">',
    '##ALT=<ID=DUP,Description="Duplication">',
    '##ALT=<ID=INS,Description="Insertion">',
    '##ALT=<ID=CN0,Description="Copy number allele: 0 copies">',
    '##ALT=<ID=CN2,Description="Copy number allele: 2 copies">',
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
    ['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', 'FORMAT', ...SYNTHETIC_SAMPLES].join('\t'),
    ...syntheticLines(),
    '',
  ].join('\n');
}

/** The terms of sex and sample origin the compliance records use, with a parent each. */
export const SEX_AND_ORIGIN_OBO = `format-version: 1.2
data-version: beacon-test
ontology: beacon-test

[Term]
id: PATO:0020000
name: genotypic sex

[Term]
id: PATO:0020001
name: male genotypic sex
is_a: PATO:0020000 ! genotypic sex

[Term]
id: PATO:0020002
name: female genotypic sex
is_a: PATO:0020000 ! genotypic sex

[Term]
id: UBERON:0000179
name: haemolymphatic fluid

[Term]
id: UBERON:0000178
name: blood
is_a: UBERON:0000179 ! haemolymphatic fluid
`;

/** The biosamples registered in dataset `compliance`, as their JSON files give them. */
export const COMPLIANCE_BIOSAMPLES = [
  { name: 'HG00096', individualId: 'HG00096', disease: { termId: 'DOID:3969', term: 'papillary thyroid carcinoma' }, description: 'blood of HG00096', attributes: { attr: { sampleOriginType: { values: [{ stringValue: 'UBERON:0000178' }] } } } },
  { name: 'HG00099', individualId: 'HG00099', disease: { termId: 'DOID:1781', term: 'thyroid cancer' }, description: 'a sample of HG00099' },
];

/** Genes of the GFF3 written for NCBI37 and the synthetic reference set (1-based, inclusive, as GFF3 writes them). */
export const GENES = {
  NCBI37: [['1', 'EDGE1', 16001, 16800], ['1', 'WASH7P', 14404, 17000], ['1', 'OR4F5', 69091, 70008]],
  synthetic: [['c1', 'SYNG', 110, 130], ['c1', 'SYNG', 995, 1000], ['c2', 'SYNH', 1, 10]],
} as const;

function gff3(genes: ReadonlyArray<readonly [string, string, number, number]>): string {
  const lines = genes.map(([seqid, name, start, end], i) => [seqid, 'test', 'gene', start, end, '.', '+', '.', `ID=gene${i};Name=${name};gene_name=${name}`].join('\t'));
  return ['##gff-version 3', ...lines, ''].join('\n');
}

export interface BeaconFixture {
  dir: string;
  location: string;
  server: TestServer;
  beacon: BeaconClient;
  /** The VCF files of each dataset's variant set, as registered. */
  vcfs: { kg: string[]; synthetic: string; compliance: string; snpEff: string; vep: string };
  /** The same files with one line per alternate allele (bcftools norm -m -), bgzipped and indexed. */
  split: { kg: string[]; synthetic: string; compliance: string };
}

/** `bcftools norm -m -` of a VCF into `dir`, indexed. */
export function splitAlleles(vcf: string, dir: string): string {
  const out = path.join(dir, path.basename(vcf).replace(/(\.vcf)?(\.gz)?$/, '.split.vcf.gz'));
  tool('bcftools', 'norm', '-m', '-', '-Oz', '-o', out, vcf);
  tool('tabix', '-f', '-p', 'vcf', out);
  return out;
}

export async function beaconFixture(): Promise<BeaconFixture> {
  const dir = tempDir('beacon-');
  const { location, registry } = await newRegistry(dir);

  const ncbi37 = copyFixture('ga4gh-server/referenceSets', dir);
  await loadReferenceSet(registry, path.join(ncbi37, 'NCBI37.fa.gz'), { assemblyId: 'NCBI37' });
  await setAssemblyAliases(registry, ['NCBI37', 'GRCh37', 'hs37d5']);
  const kgDir = copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase3', dir);
  await addDataset(registry, 'kg', '1000 Genomes phase 3 extracts', undefined, 'record');
  await loadVariantSet(registry, 'kg', [kgDir], { referenceset: 'NCBI37' });
  const kg = fs.readdirSync(kgDir).filter((f) => f.endsWith('.vcf.gz')).sort().map((f) => path.join(kgDir, f));

  const fasta = path.join(dir, 'synthetic.fa');
  fs.writeFileSync(fasta, Object.entries(CONTIGS).map(([name, seq]) => `>${name}\n${seq.replace(/(.{60})/g, '$1\n')}\n`).join(''));
  await loadReferenceSet(registry, fasta, { name: 'synthetic', assemblyId: 'SYN1' });
  const synthetic = bgzippedVcf(dir, 'synthetic.vcf.gz', syntheticVcf());
  for (const [dataset, granularity] of [['synthetic', 'record'], ['counted', 'count'], ['closed', undefined]] as const) {
    await addDataset(registry, dataset, undefined, undefined, granularity);
    await loadVariantSet(registry, dataset, [synthetic], { referenceset: 'synthetic', name: 'synthetic' });
  }
  await setBeaconFrequencies(registry, 'synthetic', 'synthetic', {
    fields: [['AF', 'All'], ['EAS_AF', 'East Asian']],
    source: 'The synthetic study',
    sourceReference: 'https://example.org/synthetic',
    version: 'v1',
  });

  const compliance = copyFixture('compliance', dir);
  const accessions = path.join(dir, 'hg37.accessions');
  fs.writeFileSync(accessions, `ref_brca1 ${COMPLIANCE_ACCESSION}\n`);
  await loadReferenceSet(registry, path.join(compliance, 'ref_brca1.fa'), { name: 'hg37', assemblyId: 'hg37', referenceAccessions: accessions });
  await addDataset(registry, 'compliance', 'the compliance suite BRCA1 data', undefined, 'record');
  for (const sample of ['HG00096', 'HG00099', 'HG00101']) await addIndividualFromFile(registry, 'compliance', path.join(compliance, `individual_${sample}.json`));
  for (const biosample of COMPLIANCE_BIOSAMPLES) {
    const file = path.join(dir, `biosample-${biosample.name}.json`);
    fs.writeFileSync(file, JSON.stringify(biosample));
    await addBiosampleFromFile(registry, 'compliance', file);
  }
  const obo = path.join(dir, 'sex-and-origin.obo');
  fs.writeFileSync(obo, SEX_AND_ORIGIN_OBO);
  for (const [name, file] of [['g2p-terms', path.join(TESTDATA, 'phenotypes/g2p-terms.obo')], ['sex-and-origin', obo]]) {
    const header: Record<string, string> = {};
    await addOntology(registry, name, file, readOboTerms(file, header), header);
  }
  await loadVariantSet(registry, 'compliance', [path.join(compliance, 'brca1_1kgPhase3_variants.vcf')], { referenceset: 'hg37', name: 'brca1' });
  const complianceVcf = path.join(compliance, 'brca1_1kgPhase3_variants.vcf.gz');

  const soFile = path.join(compliance, 'so-xp-simple.obo');
  const soHeader: Record<string, string> = {};
  await addOntology(registry, 'so', soFile, readOboTerms(soFile, soHeader), soHeader);
  await loadFeatureSet(registry, 'compliance', path.join(compliance, 'brca1_gencodev19.gff3'), { referenceSet: 'hg37', ontology: 'so' });
  await addDataset(registry, 'annotated', 'VEP and SnpEff annotated variants', undefined, 'record');
  const variants = copyFixture('ga4gh-server/datasets/dataset1/variants', dir);
  const annotated = { snpEff: path.join(variants, 'OR4F_annotation/OR4F_annotation.vcf.gz'), vep: path.join(variants, '1kg.3.annotations/chr1.edit.vcf.gz') };
  await loadVariantSet(registry, 'annotated', [annotated.snpEff], { referenceset: 'NCBI37', ontology: 'so', name: 'snpeff' });
  await loadVariantSet(registry, 'annotated', [annotated.vep], { referenceset: 'NCBI37', ontology: 'so', name: 'vep' });
  for (const [referenceSet, genes] of Object.entries(GENES)) {
    const file = path.join(dir, `genes-${referenceSet}.gff3`);
    fs.writeFileSync(file, gff3(genes));
    await loadFeatureSet(registry, referenceSet === 'synthetic' ? 'synthetic' : 'kg', file, { referenceSet, ontology: 'so', name: `genes-${referenceSet}` });
  }

  const splitDir = fs.mkdtempSync(path.join(dir, 'split-'));
  const server = await startTestServer(location);
  return {
    dir,
    location,
    server,
    beacon: beaconClient(server.url),
    vcfs: { kg, synthetic, compliance: complianceVcf, ...annotated },
    split: { kg: kg.map((f) => splitAlleles(f, splitDir)), synthetic: splitAlleles(synthetic, splitDir), compliance: splitAlleles(complianceVcf, splitDir) },
  };
}

/** `bcftools query -f FORMAT` of a file (with -i EXPR when given), as lines. */
export function query(file: string, format: string, include?: string, ...more: string[]): string[] {
  const args = ['query', '-f', format, ...(include ? ['-i', include] : []), ...more, file];
  return tool('bcftools', ...args).toString('utf8').split('\n').filter(Boolean);
}
