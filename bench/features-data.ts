/**
 * Deterministic data for the sequence-annotation parts: a GENCODE-shaped GFF3 (genes, transcripts,
 * exons, CDS, UTRs and codons, `###` after each gene, gene_name on every line) over the 24 human
 * chromosomes at their real lengths, and a FASTA naming those chromosomes (short sequences: the feature
 * loader checks names, not lengths). Reused when a finished folder matches the parameters.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generatedOnce, prng } from './data.js';

const GENERATOR_VERSION = 1;
const SEED = 0x5eed_f5;

/** GRCh38 chromosome lengths. */
const CHROMOSOMES: Array<[string, number]> = [
  ['chr1', 248_956_422], ['chr2', 242_193_529], ['chr3', 198_295_559], ['chr4', 190_214_555], ['chr5', 181_538_259],
  ['chr6', 170_805_979], ['chr7', 159_345_973], ['chr8', 145_138_636], ['chr9', 138_394_717], ['chr10', 133_797_422],
  ['chr11', 135_086_622], ['chr12', 133_275_309], ['chr13', 114_364_328], ['chr14', 107_043_718], ['chr15', 101_991_189],
  ['chr16', 90_338_345], ['chr17', 83_257_441], ['chr18', 80_373_285], ['chr19', 58_617_616], ['chr20', 64_444_167],
  ['chr21', 46_709_983], ['chr22', 50_818_468], ['chrX', 156_040_895], ['chrY', 57_227_415],
];

export interface FeatureDataManifest {
  features: number;
  dir: string;
  gff3: string;
  fasta: string;
  /** A window of chr1 holding many features, for the region page. */
  region: { referenceName: string; start: number; end: number };
  /** A transcript name and a gene symbol in the middle of the file. */
  name: string;
  geneSymbol: string;
  generationSeconds: number;
}

export function ensureFeatureData(scratch: string, features: number, log: (line: string) => void): Promise<FeatureDataManifest> {
  const dir = path.join(scratch, `features-v${GENERATOR_VERSION}-${features}`);
  return generatedOnce(path.join(dir, 'manifest.json'), { dir, log }, () => {
    const fasta = path.join(dir, 'annotation-contigs.fa');
    fs.writeFileSync(fasta, CHROMOSOMES.map(([name]) => `>${name}\n${'N'.repeat(60)}\n`).join(''));
    const gff3 = path.join(dir, 'annotation.gff3');
    log(`generating a GFF3 of ${features.toLocaleString('en')} features`);
    return { features, dir, gff3, fasta, ...writeGff3(gff3, features) };
  });
}

const attr = (pairs: Array<[string, string]>) => pairs.map(([k, v]) => `${k}=${v}`).join(';');

function writeGff3(file: string, total: number): Pick<FeatureDataManifest, 'region' | 'name' | 'geneSymbol'> {
  const random = prng(SEED);
  const out = fs.openSync(file, 'w');
  let text = '##gff-version 3\n';
  let written = 0;
  let gene = 0;
  // About 25 lines a gene (a few more genes than needed, cut at `total`); genes spread over the genome in proportion to chromosome length.
  const genes = Math.ceil(total / 22);
  const genome = CHROMOSOMES.reduce((s, [, l]) => s + l, 0);
  const step = genome / genes;
  let picked: Pick<FeatureDataManifest, 'region' | 'name' | 'geneSymbol'> | undefined;
  const emit = (line: string) => {
    if (written >= total) return;
    text += line + '\n';
    written++;
    if (text.length > 1 << 20) {
      fs.writeSync(out, text);
      text = '';
    }
  };
  for (const [chrom, length] of CHROMOSOMES) {
    for (let pos = 1 + Math.floor(random() * step); pos < length - 200_000 && written < total; pos += Math.floor(step * (0.5 + random()))) {
      gene++;
      const geneId = `ENSG${String(gene).padStart(11, '0')}.1`;
      const symbol = `GENE${gene}`;
      const strand = random() < 0.5 ? '+' : '-';
      const geneLength = 1_000 + Math.floor(random() ** 3 * 150_000);
      const geneEnd = pos + geneLength - 1;
      const common: Array<[string, string]> = [['gene_id', geneId], ['gene_type', 'protein_coding'], ['gene_name', symbol], ['level', '2']];
      emit([chrom, 'HAVANA', 'gene', pos, geneEnd, '.', strand, '.', attr([['ID', geneId], ...common])].join('\t'));
      const transcripts = 1 + Math.floor(random() * 3);
      for (let t = 1; t <= transcripts && written < total; t++) {
        const transcriptId = `ENST${String(gene * 10 + t).padStart(11, '0')}.1`;
        const transcriptName = `${symbol}-00${t}`;
        const tStart = pos + Math.floor(random() * geneLength * 0.1);
        const tEnd = geneEnd - Math.floor(random() * geneLength * 0.1);
        const tAttrs: Array<[string, string]> = [...common, ['transcript_id', transcriptId], ['transcript_name', transcriptName]];
        emit([chrom, 'HAVANA', 'transcript', tStart, tEnd, '.', strand, '.', attr([['ID', transcriptId], ['Parent', geneId], ['Name', transcriptName], ...tAttrs])].join('\t'));
        if (!picked && gene > genes / 2) {
          picked = { region: { referenceName: chrom, start: tStart - 1, end: tStart - 1 + 200_000 }, name: transcriptName, geneSymbol: symbol };
        }
        const exons = 3 + Math.floor(random() * 5);
        const span = Math.floor((tEnd - tStart) / exons);
        for (let e = 0; e < exons && written < total; e++) {
          const eStart = tStart + e * span;
          const eEnd = Math.min(tEnd, eStart + 50 + Math.floor(random() * Math.max(1, span / 2)));
          const exonAttrs: Array<[string, string]> = [...tAttrs, ['exon_number', String(e + 1)]];
          emit([chrom, 'HAVANA', 'exon', eStart, eEnd, '.', strand, '.', attr([['ID', `exon:${transcriptId}:${e + 1}`], ['Parent', transcriptId], ...exonAttrs])].join('\t'));
          if (e > 0 && e < exons - 1) {
            emit([chrom, 'HAVANA', 'CDS', eStart, eEnd, '.', strand, String(e % 3), attr([['ID', `CDS:${transcriptId}:${e + 1}`], ['Parent', transcriptId], ...exonAttrs])].join('\t'));
          } else {
            emit([chrom, 'HAVANA', 'UTR', eStart, eEnd, '.', strand, '.', attr([['ID', `UTR:${transcriptId}:${e + 1}`], ['Parent', transcriptId], ...exonAttrs])].join('\t'));
          }
        }
        emit([chrom, 'HAVANA', 'start_codon', tStart, tStart + 2, '.', strand, '0', attr([['ID', `start_codon:${transcriptId}`], ['Parent', transcriptId], ...tAttrs])].join('\t'));
      }
      text += '###\n';
    }
  }
  fs.writeSync(out, text);
  fs.closeSync(out);
  if (written < total) throw new Error(`the generator wrote ${written} features, fewer than the ${total} asked for`);
  return picked!;
}
