/**
 * A VCF data line as Beacon variants: one per alternate allele, in 0-based half-open coordinates
 * (POS - 1 to the end), alleles as written in the file (a left-aligned indel keeps its padding base;
 * nothing is realigned), typed and measured from the ALT and from INFO SVTYPE, END and SVLEN.
 */

/** The first eight columns of a data line, and where its FORMAT column begins in the line's bytes (-1: none). */
export interface VcfLine {
  chrom: string;
  /** 0-based (POS - 1). */
  start: number;
  id: string;
  ref: string;
  alts: string[];
  info: string;
}

export interface Allele {
  /** Its number among the line's alleles, as genotypes count them (the first ALT is 1). */
  index: number;
  start: number;
  /** 0-based, exclusive: start + length of REF, or INFO END for a structural variant. */
  end: number;
  referenceBases: string;
  /** The ALT as written: bases, or a symbolic allele (`<DEL>`) or a breakend. */
  alternate: string;
  /** Whether `alternate` is a sequence of bases. */
  sequence: boolean;
  /** SNP, MNP, INDEL, or a structural type: DEL, DUP, INS, INV, CNV, BND, ... */
  variantType: string;
  /** Bases changed (Beacon's variantMinLength/variantMaxLength), when it can be told. */
  length?: number;
}

const BASES = /^[ACGTN]+$/i;
/** Copy-number alleles of VCF 4.3 (`<CN0>`, `<CN2>`). */
const COPY_NUMBER = /^CN\d+$/;
const STRUCTURAL_LENGTH = new Set(['DEL', 'DUP', 'CNV', 'INV']);

/** The value of an INFO key (undefined when absent; '' for a flag). */
export function infoValue(info: string, key: string): string | undefined {
  if (info === '.' || info === '') return undefined;
  let at = 0;
  while (at <= info.length) {
    const next = info.indexOf(';', at);
    const stop = next === -1 ? info.length : next;
    const eq = info.indexOf('=', at);
    const keyEnd = eq === -1 || eq > stop ? stop : eq;
    if (keyEnd - at === key.length && info.startsWith(key, at)) return keyEnd === stop ? '' : info.slice(keyEnd + 1, stop);
    if (next === -1) break;
    at = next + 1;
  }
  return undefined;
}

/** The value of a Number=A INFO field for the allele at `index` (1-based), or its only value. */
export function perAllele(info: string, key: string, index: number): string | undefined {
  const value = infoValue(info, key);
  if (value === undefined || value === '') return undefined;
  const values = value.split(',');
  const one = values.length === 1 ? values[0] : values[index - 1];
  return one === undefined || one === '.' ? undefined : one;
}

function symbolicType(alt: string, svtype: string | undefined): string {
  if (svtype) return svtype.toUpperCase();
  const id = alt.slice(1, -1).split(':')[0].toUpperCase();
  return COPY_NUMBER.test(id) ? 'CNV' : id;
}

/** The Beacon variants of a line: '*' (a deletion spanning the site) and '.' (no ALT) are none. */
export function allelesOf(line: VcfLine): Allele[] {
  const out: Allele[] = [];
  const { start, ref } = line;
  const pos = start + 1;
  let info: { svtype?: string; end?: number } | undefined;
  const structural = () => {
    if (!info) {
      const end = Number(infoValue(line.info, 'END'));
      info = { svtype: infoValue(line.info, 'SVTYPE') || undefined, end: Number.isSafeInteger(end) && end > 0 ? end : undefined };
    }
    return info;
  };
  line.alts.forEach((alt, i) => {
    const index = i + 1;
    if (alt === '*' || alt === '.' || alt === '') return;
    if (BASES.test(alt)) {
      const type = ref.length === 1 && alt.length === 1 ? 'SNP' : ref.length === alt.length ? 'MNP' : 'INDEL';
      const length = type === 'INDEL' ? Math.abs(alt.length - ref.length) : ref.length;
      out.push({ index, start, end: start + ref.length, referenceBases: ref, alternate: alt, sequence: true, variantType: type, length });
      return;
    }
    if (alt.startsWith('<') && alt.endsWith('>')) {
      const { svtype, end: infoEnd } = structural();
      const type = symbolicType(alt, svtype);
      const svlenText = perAllele(line.info, 'SVLEN', index);
      const svlen = svlenText === undefined ? undefined : Math.abs(Number(svlenText));
      const measured = svlen !== undefined && Number.isSafeInteger(svlen) ? svlen : undefined;
      let end = start + ref.length;
      if (infoEnd !== undefined && infoEnd >= pos) end = infoEnd;
      else if (measured !== undefined && STRUCTURAL_LENGTH.has(type)) end = pos + measured;
      const length = measured ?? (STRUCTURAL_LENGTH.has(type) && end > pos ? end - pos : undefined);
      out.push({ index, start, end, referenceBases: ref, alternate: alt, sequence: false, variantType: type, length });
      return;
    }
    // A breakend (`G]17:198982]`, `.A`) joins this site to another: no length of its own.
    out.push({ index, start, end: start + ref.length, referenceBases: ref, alternate: alt, sequence: false, variantType: 'BND' });
  });
  return out;
}
