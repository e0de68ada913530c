#!/usr/bin/env bash
# Registers the sample data shipped in testdata/ in DIR/registry.sqlite, as `npm run demo` serves it:
#   bash scripts/demo-registry.sh DIR
# The sample files are copied into DIR first (an empty or new folder), so that indexes the loaders
# create never land in testdata/. Paths are registered as given: a relative DIR is relative to the
# repository's root, where this script runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# A caller may run the commands its own way by exporting a ga4gh function (the README's test runs them
# all in one process: each `node bin/ga4gh` costs a Node start-up).
declare -F ga4gh >/dev/null || ga4gh() { node bin/ga4gh "$@"; }

DEMO=${1:?usage: scripts/demo-registry.sh DIR}
REGISTRY=$DEMO/registry.sqlite
mkdir -p "$DEMO"
cp -r testdata/ga4gh-server testdata/compliance testdata/rna testdata/reads "$DEMO"/
chmod -R u+w "$DEMO"
D=$DEMO/ga4gh-server

ga4gh repo init "$REGISTRY"
ga4gh repo add-dataset "$REGISTRY" demo --description "Sample data of the GA4GH reference server and compliance suite" \
  --attributes '{"version": "0.3.0"}' --beacon-granularity record

# Ontologies: the Sequence Ontology, for the effects of variant annotations.
ga4gh repo add-ontology "$REGISTRY" "$DEMO/compliance/so-xp-simple.obo"

# Individuals and biosamples (biometadata area): the compliance set's three 1000 Genomes samples. Call
# sets of the same names link to them; so do RNA quantifications through --biosample-id.
for sample in HG00096 HG00099 HG00101; do
  ga4gh repo add-individual "$REGISTRY" demo "$DEMO/compliance/individual_$sample.json"
  ga4gh repo add-biosample "$REGISTRY" demo "$DEMO/compliance/biosample_$sample.json"
done

# Reference sets
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/NCBI37.fa.gz" --assembly-id NCBI37 \
  --species-term-id NCBITaxon:9606 --species-term "Homo sapiens" --description "Excerpt of NCBI37"
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/Default.fa.gz"
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/example_1.fa.gz"
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/example_2.fa.gz"
echo "ref_brca1 GA4GH_CTS_01_BRCA1" > "$DEMO/hg37.accessions"
ga4gh repo add-referenceset "$REGISTRY" "$DEMO/compliance/ref_brca1.fa" --name hg37 --assembly-id hg37 \
  --reference-accessions "$DEMO/hg37.accessions" \
  --species-term-id NCBITaxon:9606 --species-term "Homo sapiens" --is-derived --source-accessions GA4GH_CTS_01 \
  --description "An artificial reference for use with compliance data, derived from GRCh37"
# The refget compliance sequences (yeast chromosomes I and VI, and phiX, which is circular) as one set,
# with their INSDC accessions: the refget compliance suite can be pointed at http://HOST:PORT/refget/.
cp -r testdata/refget "$DEMO"/
chmod -R u+w "$DEMO/refget"
cat "$DEMO"/refget/I.faa "$DEMO"/refget/VI.faa "$DEMO"/refget/NC.faa > "$DEMO/refget/refget.fa"
printf 'I BK006935.2\nVI CP036473.1\nNC_001422.1 NC_001422.1\n' > "$DEMO/refget/refget.accessions"
ga4gh repo add-referenceset "$REGISTRY" "$DEMO/refget/refget.fa" --reference-accessions "$DEMO/refget/refget.accessions" \
  --circular NC_001422.1 --description "The refget compliance sequences: S. cerevisiae chromosomes I and VI, phiX174"

# Variant sets (variant area): the 1000 Genomes extracts (one file per chromosome) on NCBI37, and the
# VCF-spec examples, whose contigs (20, chr1, chrM) are not in any sample reference set.
V=$D/datasets/dataset1/variants
ga4gh repo add-variantset "$REGISTRY" demo "$V/1kgPhase1" --referenceset NCBI37
ga4gh repo add-variantset "$REGISTRY" demo "$V/1kgPhase3" --referenceset NCBI37
for example in example_1 example_2 example_3 example_4; do
  ga4gh repo add-variantset "$REGISTRY" demo "$V/$example" --referenceset NCBI37 --allow-missing-contigs
done
# The compliance variants on hg37: their samples link to the biosamples above.
ga4gh repo add-variantset "$REGISTRY" demo "$DEMO/compliance/brca1_1kgPhase3_variants.vcf" --referenceset hg37 --name brca1

# Beacon: the demo dataset answers records; the compliance variants' allele frequencies are
# frequencyInPopulations; NCBI37 answers an assemblyId of GRCh37, hg19 or hs37d5 too. Two more datasets
# hold the 1000 Genomes extract again, so that Beacon answers show every granularity: one answers how
# many variants match, the other only whether any does.
ga4gh repo set-beacon-frequencies "$REGISTRY" demo brca1 AF=All EAS_AF="East Asian" EUR_AF=European AFR_AF=African \
  AMR_AF="Admixed American" SAS_AF="South Asian" --source "1000 Genomes Project phase 3" \
  --source-reference https://www.internationalgenome.org --source-version "phase 3"
ga4gh repo set-assembly-aliases "$REGISTRY" NCBI37 GRCh37 hg19 hs37d5
ga4gh repo add-dataset "$REGISTRY" counted --description "The 1000 Genomes extract, counted by Beacon" --beacon-granularity count
ga4gh repo add-variantset "$REGISTRY" counted "$V/1kgPhase3" --referenceset NCBI37
ga4gh repo add-dataset "$REGISTRY" existence --description "The 1000 Genomes extract, whose Beacon only says whether a variant is there"
ga4gh repo add-variantset "$REGISTRY" existence "$V/1kgPhase3" --referenceset NCBI37

# Annotated VCFs (VEP and SnpEff): each gets a variant annotation set beside its variant set.
for annotated in 1kg.3.annotations 1kg.17.ann.edit 1KG_GRCh37_VEP_edit OR4F_annotation WASH7P_annotation; do
  ga4gh repo add-variantset "$REGISTRY" demo "$V/$annotated" --referenceset NCBI37 --allow-missing-contigs
done
for annotated in brca1_OR4F_annotation brca1_WASH7P_annotation; do
  ga4gh repo add-variantset "$REGISTRY" demo "$DEMO/compliance/$annotated.vcf" --referenceset NCBI37 --allow-missing-contigs
done

# RNA quantifications (rna area): one set holding the sample tables of every supported format.
ga4gh repo add-rnaquantificationset "$REGISTRY" demo rnaseq --description "Sample quantification tables"
ga4gh repo add-rnaquantification "$REGISTRY" demo rnaseq "$D/abundance.trimmed.txt" --name kallisto-sample \
  --program kallisto:0.43.1 --biosample-id HG00096
ga4gh repo add-rnaquantification "$REGISTRY" demo rnaseq "$D/cufflinks.txt" --name cufflinks-sample --format cufflinks
ga4gh repo add-rnaquantification "$REGISTRY" demo rnaseq "$D/datasets/dataset1/rnaQuant/rsem_test_data.tsv" --name rsem-genes
ga4gh repo add-rnaquantification "$REGISTRY" demo rnaseq "$DEMO/compliance/rna_brca1.tsv" --name brca1-isoforms \
  --biosample-id HG00099
ga4gh repo add-rnaquantification "$REGISTRY" demo rnaseq "$DEMO/rna/quant.sf" --name salmon-sample --biosample-id HG00099
ga4gh repo add-rnaquantification "$REGISTRY" demo rnaseq "$DEMO/rna/sample1.isoforms.results" --name rsem-isoforms \
  --units FPKM --biosample-id HG00096

# Genotype-phenotype associations (phenotypes area): the Clinical Genomics Database test file, read
# with the Sequence Ontology (loaded above) so that feature types are labelled.
ga4gh repo add-phenotypeassociationset "$REGISTRY" demo "$D/datasets/dataset1/phenotypes/cgd" --ontology so-xp-simple

# Read group sets (reads area): the compliance BRCA1 reads as BAM (and one as CRAM, decoded against hg37),
# the reference server's small BAM with unmapped and quality-less reads, and a BAM without @RG lines.
# (The compliance set's biosample file for HG00101 names its biosample HG00100, so those reads name none.)
for sample in HG00096 HG00099; do
  ga4gh repo add-readgroupset "$REGISTRY" demo "$DEMO/compliance/brca1_$sample.bam" --referenceset hg37 --biosample-id "$sample"
done
ga4gh repo add-readgroupset "$REGISTRY" demo "$DEMO/compliance/brca1_HG00101.bam" --referenceset hg37
ga4gh repo add-readgroupset "$REGISTRY" demo "$DEMO/compliance/brca1_HG00096.cram" --referenceset hg37 --name brca1_HG00096_cram
ga4gh repo add-readgroupset "$REGISTRY" demo "$D/datasets/dataset1/reads/chr17.1-250.bam" --referenceset Default
ga4gh repo add-referenceset "$REGISTRY" "$DEMO/reads/hg19-names.fa" --name hg19-names \
  --description "Placeholder sequences named as hg19's chromosomes, for the UCSC sample BAM"
ga4gh repo add-readgroupset "$REGISTRY" demo "$D/datasets/dataset1/reads/wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam" \
  --referenceset hg19-names --name wgEncode-sample

# The htsget test files (htsget area of the demo): each on a reference set read from its own header
# (no FASTA: hs37d5 is not shipped), with its other encoding beside it, so that htsget serves
# htsnexus_test_NA12878 as BAM and CRAM and the VCFs as VCF and BCF.
cp -r testdata/htsget "$DEMO"/
chmod -R u+w "$DEMO/htsget"
H=$DEMO/htsget
ga4gh repo add-referenceset "$REGISTRY" --dictionary "$H/htsnexus_test_NA12878.bam" --name hs37d5 \
  --description "hs37d5, names, lengths and MD5s from the htsget test BAM's header (no bases)"
ga4gh repo add-readgroupset "$REGISTRY" demo "$H/htsnexus_test_NA12878.bam" --referenceset hs37d5 \
  --alternate "$H/htsnexus_test_NA12878.cram"
for vcf in spec-v4.3 sample1-bcbio-cancer; do
  ga4gh repo add-referenceset "$REGISTRY" --dictionary "$H/$vcf.vcf.gz" --name "$vcf-contigs" \
    --description "The contigs of $vcf.vcf.gz's header (no bases)"
  ga4gh repo add-variantset "$REGISTRY" demo "$H/$vcf.vcf.gz" --referenceset "$vcf-contigs" --alternate "$H/$vcf.bcf"
done

# Sequence annotations (features and continuous areas). The Sequence Ontology (loaded above) gives
# feature types their SO terms. The compliance BRCA1 annotation is on hg37; the reference server's GFF3 and bigWig
# files name sequences of several assemblies, so a FASTA holding just those names (60 N each: the
# loaders check names, not lengths) is made here from the files themselves.
ga4gh repo add-featureset "$REGISTRY" demo "$DEMO/compliance/brca1_gencodev19.gff3" --referenceset hg37 --ontology so-xp-simple
A=$D/datasets/dataset1/sequenceAnnotations
C=$D/datasets/dataset1/continuous
{ grep -hv '^#' "$A"/*.gff3 | cut -f1; cut -f1 "$C/chromSizes.txt"; } | grep -v '^$' | sort -u |
  while read -r name; do printf '>%s\n%s\n' "$name" NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN; done > "$DEMO/annotation-contigs.fa"
ga4gh repo add-referenceset "$REGISTRY" "$DEMO/annotation-contigs.fa" \
  --description "Names of the sequences the sample annotation files use, 60 N each"
for gff3 in gencodeV21Set1 sacCerTest specialCasesTest discontinuous; do
  ga4gh repo add-featureset "$REGISTRY" demo "$A/$gff3.gff3" --referenceset annotation-contigs --ontology so-xp-simple
done
ga4gh repo add-continuousset "$REGISTRY" demo "$C/bigwig_1.bw" --referenceset annotation-contigs
ga4gh repo add-continuousset "$REGISTRY" demo "$C/bigwig_2.bw" --referenceset annotation-contigs

# Peers (peer area): one example entry in the peer list, as an operator would add a known server.
# The demo serves with the default policy (verify): announced peers join once their GET /info answers.
ga4gh repo add-peer "$REGISTRY" https://ga4gh.example.org --attributes '{"note": "example entry added by the demo (scripts/demo-registry.sh)"}'
