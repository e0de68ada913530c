/**
 * Variant sets of BCF files, against the same records as VCF. Each BCF here (the htsget test files,
 * BCFs bcftools writes from the repository's VCFs, and one made here of what tests a decoder: floats
 * at the edges of htslib's rendering, missing values and short vectors, haploid and triploid
 * genotypes, records across BGZF blocks and across bins, END far past POS) is registered as a set in
 * one registry, and the VCF `bcftools view` converts it to is registered under the same names in
 * another, each served by a real server on loopback: every search must answer the same bytes. Counts
 * and fields are checked against `bcftools` reading the BCF; damaged BCFs answer 503; the CLI
 * registers, checks and refuses BCFs as a user runs it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadDictionaryReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { idOf, newRegistry, registryBefore, runCliAsync, servedAfterMigrating, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';
import { request, saved, ticketBytes, tools } from './htsget-fixture.js';
import { startRangeServer } from './range-server.js';

const dir = tempDir('ga4gh-bcf-');
const t = tools(dir);
const VARIANTS = path.join(TESTDATA, 'ga4gh-server/datasets/dataset1/variants');
const SAMPLES = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7', 'S8'];

/** A deterministic stream of numbers in [0, 1). */
function numbers(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/**
 * Floats that test a renderer of htslib's: halves at the sixth digit (htslib rounds them up where
 * `%g` rounds to even), the bounds of its direct range (0.0001, 999999), exponents, zero's sign,
 * values that round up a decade, and the specials.
 */
const TRICKY_FLOATS = [
  '64.28125', '-832.8125', '123456.5', '100000.5', '12345.25', '0.00012345', '0.0001', '0.00009999999', '1e-05', '2.5e-07',
  '999999', '999999.4', '999999.6', '1000000', '1234567', '3.4e38', '1e-40', '-0', '0', '0.1', '0.30000001', '9.9999995',
  '0.099999996', '7.77777777', '1.5', '-2.5', 'nan', 'inf', '-inf', '16777217', '0.5', '65536.5',
];

/** A VCF of ~7,000 records on two contigs that a BCF decoder must get right (see the top of the file). */
function edgeVcfText(): string {
  const rnd = numbers(11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)];
  const float = () => (rnd() < 0.3 ? pick(TRICKY_FLOATS) : (Math.floor(rnd() * 10 ** (1 + Math.floor(rnd() * 7))) * 10 ** (Math.floor(rnd() * 10) - 7)).toPrecision(6).replace(/\.?0+$/, ''));
  const bases = (n: number) => Array.from({ length: n }, () => pick(['A', 'C', 'G', 'T'])).join('');
  const lines = [
    '##fileformat=VCFv4.2',
    '##FILTER=<ID=q10,Description="Quality below 10">',
    '##FILTER=<ID=s50,Description="Less than half the samples have data">',
    '##contig=<ID=e1,length=5000000>',
    '##contig=<ID=e2,length=300000>',
    '##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth">',
    '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency">',
    '##INFO=<ID=FQ,Number=1,Type=Float,Description="A float">',
    '##INFO=<ID=DB,Number=0,Type=Flag,Description="In dbSNP">',
    '##INFO=<ID=AA,Number=1,Type=String,Description="Ancestral allele">',
    '##INFO=<ID=END,Number=1,Type=Integer,Description="End position">',
    '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Type of structural variant">',
    '##INFO=<ID=CIPOS,Number=2,Type=Integer,Description="Confidence interval around POS">',
    '##ALT=<ID=DEL,Description="Deletion">',
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
    '##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Genotype quality">',
    '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Read depth">',
    '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allelic depths">',
    '##FORMAT=<ID=GL,Number=G,Type=Float,Description="Genotype likelihoods">',
    '##FORMAT=<ID=PS,Number=1,Type=Integer,Description="Phase set">',
    '##FORMAT=<ID=FT,Number=1,Type=String,Description="Sample filter">',
    ['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', 'FORMAT', ...SAMPLES].join('\t'),
  ];
  const genotype = (alleles: number) => {
    const a = () => String(Math.floor(rnd() * alleles));
    const kind = rnd();
    if (kind < 0.08) return '.';
    if (kind < 0.14) return './.';
    if (kind < 0.2) return a(); // haploid
    if (kind < 0.24) return `${a()}/${a()}|${a()}`; // triploid
    return `${a()}${rnd() < 0.5 ? '|' : '/'}${a()}`;
  };
  let n = 0;
  for (let pos = 1 + Math.floor(rnd() * 50); pos < 4_900_000; pos += 1 + Math.floor(rnd() * 1400)) {
    n++;
    const sv = n % 400 === 0;
    const ref = sv ? bases(1) : n % 97 === 0 ? bases(40) : bases(1);
    const alts = sv ? ['<DEL>'] : Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => bases(1 + Math.floor(rnd() * 2)));
    const alleles = alts.length + 1;
    const id = pick(['.', `rs${pos}`, `rs${pos};esv${n}`]);
    const info = [`DP=${Math.floor(rnd() * 500)}`, `AF=${alts.map(() => (rnd() < 0.1 ? '.' : float())).join(',')}`];
    if (rnd() < 0.7) info.push(`FQ=${float()}`);
    if (rnd() < 0.2) info.push('DB');
    if (rnd() < 0.2) info.push(`AA=${bases(1)}`);
    if (sv) info.push(`END=${pos + 100_000 + Math.floor(rnd() * 700_000)}`, 'SVTYPE=DEL', 'CIPOS=-10,10');
    const format = pick(['GT:GQ:DP:AD:GL:PS:FT', 'GT', 'GT:DP', 'GQ:DP', 'GT:GL']);
    const sample = () => {
      const gt = genotype(alleles);
      const ploidy = gt === '.' ? 1 : gt.split(/[/|]/).length;
      const values: Record<string, string> = {
        GT: gt,
        GQ: rnd() < 0.1 ? '.' : String(Math.floor(rnd() * 100)),
        DP: rnd() < 0.1 ? '.' : String(Math.floor(rnd() * 300)),
        AD: rnd() < 0.1 ? '.' : Array.from({ length: alleles }, () => (rnd() < 0.1 ? '.' : String(Math.floor(rnd() * 70000)))).join(','),
        // Number=G: a haploid call has fewer values than a diploid one (a short vector in BCF).
        GL: rnd() < 0.1 ? '.' : Array.from({ length: ploidy === 1 ? alleles : (alleles * (alleles + 1)) / 2 }, () => '-' + float().replace(/^-/, '')).join(','),
        PS: rnd() < 0.5 ? '.' : String(pos - Math.floor(rnd() * 100)),
        FT: pick(['PASS', 'q10', '.']),
      };
      return format.split(':').map((key) => values[key]).join(':');
    };
    const qual = rnd() < 0.15 ? '.' : float().replace(/^-/, '');
    const filter = pick(['PASS', 'q10', 'q10;s50', '.']);
    lines.push(['e1', pos, id, ref, alts.join(','), qual, filter, info.join(';'), format, ...SAMPLES.map(sample)].join('\t'));
  }
  // Genotype-only lines where most samples agree, as a cohort has them.
  for (let pos = 7; pos < 290_000; pos += 1 + Math.floor(rnd() * 900)) {
    const calls = SAMPLES.map(() => (rnd() < 0.85 ? '0|0' : pick(['0|1', '1|0', '1|1', '.|0'])));
    lines.push(['e2', pos, '.', 'G', 'T', '100', 'PASS', `DP=${Math.floor(rnd() * 50)}`, 'GT', ...calls].join('\t'));
  }
  return lines.join('\n') + '\n';
}

/** A BCF and the VCF bcftools converts it to, both indexed, registered as sets named `name`. */
interface Pair {
  name: string;
  bcf: string;
  vcf: string;
}

/**
 * The pair of a BCF: the VCF is what `bcftools view` prints of it. `respan` compresses the BCF again
 * with bgzip, whose blocks end every 64 KB whatever they hold, so that records span blocks (htslib's
 * writer ends its blocks between records).
 */
function pairOf(name: string, bcfSource: string, respan = false): Pair {
  const folder = fs.mkdtempSync(path.join(dir, `${name}-`));
  const bcf = path.join(folder, `${name}.bcf`);
  if (respan) fs.writeFileSync(bcf, t.bytes('bgzip', '-c', saved(folder, 'plain', t.bytes('bgzip', '-dc', bcfSource))));
  else fs.copyFileSync(bcfSource, bcf);
  t.run('bcftools', 'index', '-f', bcf);
  const vcf = path.join(folder, `${name}.vcf.gz`);
  t.run('bcftools', 'view', '--no-version', '-Oz', '-o', vcf, bcf);
  t.run('tabix', '-p', 'vcf', vcf);
  return { name, bcf, vcf };
}

/** A BCF that bcftools writes from a VCF. */
function bcfOf(vcf: string, name: string): string {
  const out = path.join(fs.mkdtempSync(path.join(dir, 'written-')), `${name}.bcf`);
  t.run('bcftools', 'view', '--no-version', '-Ob', '-o', out, vcf);
  return out;
}

const edgeVcf = saved(dir, 'edge.vcf', Buffer.from(edgeVcfText()));
const PAIRS: Pair[] = [
  pairOf('spec', path.join(TESTDATA, 'htsget/spec-v4.3.bcf')),
  pairOf('bcbio', path.join(TESTDATA, 'htsget/sample1-bcbio-cancer.bcf')),
  pairOf('phase1', bcfOf(path.join(VARIANTS, '1kgPhase1/chr1.vcf.gz'), 'phase1')),
  pairOf('phase3', bcfOf(path.join(VARIANTS, '1kgPhase3/chr1.vcf.gz'), 'phase3')),
  pairOf('example1', bcfOf(path.join(VARIANTS, 'example_1/example_1.vcf.gz'), 'example1')),
  pairOf('gvcf', bcfOf(path.join(VARIANTS, 'example_3/example_3.vcf.gz'), 'gvcf')),
  pairOf('csq', bcfOf(path.join(VARIANTS, '1kg.17.ann.edit/1kg.17.ann.edit.vcf.gz'), 'csq')),
  pairOf('snpeff', bcfOf(path.join(VARIANTS, 'WASH7P_annotation/WASH7P_annotation.vcf.gz'), 'snpeff')),
  pairOf('edge', bcfOf(edgeVcf, 'edge'), true),
];
const pairNamed = (name: string) => PAIRS.find((p) => p.name === name)!;

/** The contigs of a BCF with the number of records each holds, as `bcftools index -s` counts them. */
function contigCounts(bcf: string): Array<[string, number]> {
  return t
    .run('bcftools', 'index', '-s', bcf)
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'))
    .map(([name, , count]) => [name, Number(count)]);
}

/** The records of a BCF overlapping a 0-based region, as `bcftools view -r` gives them (its data lines). */
const bcftoolsLines = (bcf: string, contig: string, start: number, end: number) =>
  t.run('bcftools', 'view', '--no-version', '-H', '-r', `${contig}:${start + 1}-${end}`, bcf).split('\n').filter(Boolean);

let vcfServer: TestServer;
let bcfServer: TestServer;

before(async () => {
  const registries = [];
  for (const kind of ['vcf', 'bcf'] as const) {
    const { location, registry } = await newRegistry(dir, `${kind}.sqlite`);
    await addDataset(registry, 'ds');
    await loadDictionaryReferenceSet(registry, pairNamed('spec').bcf, { name: 'refs' });
    for (const pair of PAIRS) await loadVariantSet(registry, 'ds', [pair[kind]], { referenceset: 'refs', name: pair.name, allowMissingContigs: true });
    registries.push(location);
  }
  vcfServer = await startTestServer(registries[0]);
  bcfServer = await startTestServer(registries[1]);
});

/** Every page a search answers, following its tokens: the texts, on one server. */
async function pageTexts(server: TestServer, pathName: string, body: Record<string, unknown>): Promise<string[]> {
  const texts: string[] = [];
  let token: string | undefined;
  do {
    const res = await server.post(pathName, token ? { ...body, pageToken: token } : body);
    assert.equal(res.status, 200, `${pathName} ${JSON.stringify(body)}: ${res.text}`);
    texts.push(res.text);
    token = res.json.nextPageToken;
  } while (token);
  return texts;
}

/** Asks both servers the same search; asserts the same pages, byte for byte; returns the records. */
async function sameSearch(pathName: string, body: Record<string, unknown>, listField: string): Promise<any[]> {
  const [fromVcf, fromBcf] = await Promise.all([pageTexts(vcfServer, pathName, body), pageTexts(bcfServer, pathName, body)]);
  assert.equal(fromBcf.length, fromVcf.length, `${pathName} ${JSON.stringify(body)}: pages`);
  fromBcf.forEach((text, i) => assert.equal(text, fromVcf[i], `${pathName} ${JSON.stringify(body)}: page ${i + 1}`));
  return fromBcf.flatMap((text) => JSON.parse(text)[listField]);
}

const variantSetId = (name: string) => idOf('ds', 'vs', name);
const searchVariants = (name: string, body: Record<string, unknown>) => sameSearch('/variants/search', { variantSetId: variantSetId(name), ...body }, 'variants');

/** A genotype as bcftools query prints GT, as the calls give it (a missing allele is -1). */
const genotypeOf = (gt: string) => gt.split(/[/|]/).map((a) => (a === '.' ? -1 : Number(a)));

describe('a BCF variant set answers what the VCF bcftools converts it to answers', () => {
  it('the set (its header as metadata, without the IDX of BCF lines) and its call sets', async () => {
    for (const { name, bcf } of PAIRS) {
      const [fromVcf, fromBcf] = await Promise.all([vcfServer.get(`/variantsets/${variantSetId(name)}`), bcfServer.get(`/variantsets/${variantSetId(name)}`)]);
      assert.equal(fromBcf.status, 200);
      assert.equal(fromBcf.text, fromVcf.text, name);
      assert.ok(!fromBcf.text.includes('IDX'), name);
      const callSets = await sameSearch('/callsets/search', { variantSetId: variantSetId(name) }, 'callSets');
      assert.deepEqual(callSets.map((c) => c.name), t.run('bcftools', 'query', '-l', bcf).split('\n').filter(Boolean), name);
    }
  });

  it('every variant of every contig with every call, as bcftools counts and reads them', async () => {
    for (const { name, bcf } of PAIRS) {
      for (const [contig, count] of contigCounts(bcf)) {
        const variants = await searchVariants(name, { referenceName: contig, pageSize: 300 });
        assert.equal(variants.length, count, `${name} ${contig}`);
        const expected = t.run('bcftools', 'query', '-r', contig, '-f', '%POS\\t%REF\\t%ALT\\t%ID[\\t%GT]\\n', bcf).split('\n').filter(Boolean);
        variants.forEach((variant, i) => {
          const [pos, ref, alt, id, ...gts] = expected[i].split('\t');
          assert.equal(variant.start, Number(pos) - 1);
          assert.equal(variant.referenceBases, ref);
          assert.deepEqual(variant.alternateBases, alt === '.' ? undefined : alt.split(','));
          assert.deepEqual(variant.names, id === '.' ? undefined : id.split(';'));
          (variant.calls ?? []).forEach((call: any, j: number) => {
            if (gts[j] === '.' && call.genotype === undefined) return; // a record without GT
            assert.deepEqual(call.genotype, genotypeOf(gts[j]), `${name} ${contig}:${pos} call ${j}`);
          });
        });
      }
    }
  });

  it('pages of one variant follow one another with the same tokens', async () => {
    await searchVariants('phase1', { referenceName: '1', pageSize: 1 });
    const first = await searchVariants('edge', { referenceName: 'e1', end: 60_000, pageSize: 1 });
    assert.ok(first.length > 20, `${first.length} variants`);
    await searchVariants('edge', { referenceName: 'e2', start: 100_000, end: 140_000, pageSize: 7 });
  });

  it('the calls of the call sets asked for, in call set order, and none for callSetIds []', async () => {
    const callSetId = (name: string, sample: string) => idOf('ds', 'vs', name, sample);
    const cases: Array<[string, string, string[]]> = [
      ['edge', 'e1', ['S1']],
      ['edge', 'e1', ['S8', 'S3']],
      ['edge', 'e2', ['S2', 'S7', 'S4']],
      ['phase1', '1', ['HG00557', 'HG00531']],
      ['spec', '20', ['NA00002']],
    ];
    for (const [name, contig, samples] of cases) {
      const all = await searchVariants(name, { referenceName: contig, pageSize: 500 });
      const some = await searchVariants(name, { referenceName: contig, pageSize: 500, callSetIds: samples.map((s) => callSetId(name, s)) });
      const chosen = new Set(samples);
      assert.deepEqual(
        some.map((v) => v.calls),
        all.map((v) => v.calls.filter((c: any) => chosen.has(c.callSetName))),
        `${name} ${samples.join(',')}`,
      );
      const none = await searchVariants(name, { referenceName: contig, pageSize: 500, callSetIds: [] });
      assert.ok(none.every((v) => v.calls === undefined));
      assert.deepEqual(none.map((v) => v.id), all.map((v) => v.id));
    }
  });

  it('regions at BGZF block edges, inside the contig past coarse bins, and inside a long deletion', async () => {
    const { bcf } = pairNamed('edge');
    const regions: Array<[string, number, number]> = [...blockEdgeRegions(bcf)];
    // Windows deep in e1, across the 1 Mb and 2 Mb bin boundaries, and a window each inside three
    // deletions reaching far past POS (found by END, not by REF).
    regions.push(['e1', 1_048_000, 1_049_200], ['e1', 2_097_000, 2_098_500], ['e1', 3_500_000, 3_600_000], ['e1', 4_899_000, 5_000_000]);
    const deletions = t.run('bcftools', 'query', '-i', 'INFO/SVTYPE="DEL"', '-f', '%POS\\t%INFO/END\\n', bcf).split('\n').filter(Boolean);
    for (const line of deletions.slice(0, 3)) {
      const [pos, end] = line.split('\t').map(Number);
      regions.push(['e1', Math.floor((pos + end) / 2), Math.floor((pos + end) / 2) + 10]);
    }
    assert.ok(regions.length >= 12, `${regions.length} regions`);
    for (const [contig, start, end] of regions) {
      const variants = await searchVariants('edge', { referenceName: contig, start, end, pageSize: 50 });
      const expected = bcftoolsLines(bcf, contig, start, end);
      assert.equal(variants.length, expected.length, `e1:${start}-${end}`);
      assert.deepEqual(variants.map((v) => v.start), expected.map((l) => Number(l.split('\t')[1]) - 1));
    }
  });

  it('a variant by its id, as the search gives it', async () => {
    for (const name of ['edge', 'spec', 'phase3', 'gvcf']) {
      const variants = (await searchVariants(name, { referenceName: contigCounts(pairNamed(name).bcf)[0][0], pageSize: 40 })).slice(0, 40);
      for (const variant of variants.filter((_, i) => i % 7 === 0)) {
        const [fromVcf, fromBcf] = await Promise.all([vcfServer.get(`/variants/${variant.id}`), bcfServer.get(`/variants/${variant.id}`)]);
        assert.equal(fromBcf.status, 200);
        assert.equal(fromBcf.text, fromVcf.text);
        assert.deepEqual(fromBcf.json, variant);
      }
    }
  });

  it('the variant annotations of INFO CSQ and ANN', async () => {
    for (const [name, contig] of [['csq', '17'], ['snpeff', '1']]) {
      const sets = await sameSearch('/variantannotationsets/search', { variantSetId: variantSetId(name) }, 'variantAnnotationSets');
      assert.equal(sets.length, 1, name);
      const annotations = await sameSearch('/variantannotations/search', { variantAnnotationSetId: idOf('ds', 'vas', name), referenceName: contig, pageSize: 25 }, 'variantAnnotations');
      assert.ok(annotations.length > 0, name);
    }
  });
});

/**
 * Regions of a BCF at BGZF block edges, found by walking its records through its blocks: the record
 * that begins a block, one that spans two blocks, and the two records on either side of a boundary.
 */
function blockEdgeRegions(bcf: string): Array<[string, number, number]> {
  const bytes = fs.readFileSync(bcf);
  const starts = new Set<number>();
  const parts: Buffer[] = [];
  let dataStart = 0;
  for (let at = 0; at < bytes.length; ) {
    const size = bytes.readUInt16LE(at + 16) + 1;
    const data = zlib.gunzipSync(bytes.subarray(at, at + size));
    starts.add(dataStart);
    parts.push(data);
    dataStart += data.length;
    at += size;
  }
  const data = Buffer.concat(parts);
  const sortedStarts = [...starts].sort((a, b) => a - b);
  const blockOf = (offset: number) => sortedStarts.filter((s) => s <= offset).length - 1;
  const contigs = t.run('bcftools', 'view', '-h', bcf).split('\n').filter((l) => l.startsWith('##contig=')).map((l) => /ID=([^,>]+)/.exec(l)![1]);
  const regions: Array<[string, number, number]> = [];
  const found = { begins: 0, spans: 0, across: 0 };
  let previous: { contig: number; pos: number; block: number } | undefined;
  for (let at = 9 + data.readUInt32LE(5); at < data.length; ) {
    const end = at + 8 + data.readUInt32LE(at) + data.readUInt32LE(at + 4);
    const contig = data.readInt32LE(at + 8);
    const pos = data.readInt32LE(at + 12);
    const block = blockOf(at);
    if (starts.has(at) && found.begins++ < 3) regions.push([contigs[contig], pos, pos + 1]);
    if (blockOf(end - 1) !== block && found.spans++ < 3) regions.push([contigs[contig], pos, pos + 1]);
    if (previous && previous.block !== block && previous.contig === contig && found.across++ < 3) regions.push([contigs[contig], previous.pos, pos + 1]);
    previous = { contig, pos, block };
    at = end;
  }
  assert.ok(found.spans >= 3 && found.across >= 3, JSON.stringify(found));
  return regions;
}

/** The data lines of a VCF or BCF (bytes a ticket stands for, saved), in a region when given. */
const dataLines = (file: string, region?: string) =>
  t.run('bcftools', 'view', '--no-version', '-H', ...(region ? ['-t', region] : []), file).split('\n').filter(Boolean);

describe('htsget serves a BCF set as BCF, and as VCF only from a VCF alternate', () => {
  const ticket = async (server: TestServer, name: string, query: string) => request(`${server.url}/htsget/variants/ds/${name}?${query}`);

  it('format=BCF: the whole file and a region, each with every record bcftools reads there', async () => {
    const { bcf } = pairNamed('edge');
    const whole = await ticket(bcfServer, 'edge', 'format=BCF');
    assert.equal(whole.status, 200, whole.body.toString());
    assert.equal(whole.json.htsget.format, 'BCF');
    const served = saved(dir, 'whole.bcf', await ticketBytes(whole.json));
    assert.deepEqual(dataLines(served), dataLines(bcf));
    const region = await ticket(bcfServer, 'edge', 'format=BCF&referenceName=e1&start=2000000&end=2300000');
    const part = saved(dir, 'part.bcf', await ticketBytes(region.json));
    assert.deepEqual(dataLines(part, 'e1:2000001-2300000'), dataLines(bcf, 'e1:2000001-2300000'));
    assert.ok(dataLines(part).length < dataLines(bcf).length / 2);
  });

  it('format=VCF, the default, is UnsupportedFormat for a BCF set without a VCF alternate', async () => {
    for (const query of ['format=VCF', '']) {
      const res = await ticket(bcfServer, 'spec', query);
      assert.equal(res.status, 400);
      assert.equal(res.json.htsget.error, 'UnsupportedFormat');
      assert.match(res.json.htsget.message, /served as BCF, not VCF/);
    }
  });
});

/** The BGZF blocks of a file: where each begins, its size, and its data. */
function bgzfBlocks(bytes: Buffer): Array<{ at: number; size: number; data: Buffer }> {
  const blocks = [];
  for (let at = 0; at < bytes.length; ) {
    const size = bytes.readUInt16LE(at + 16) + 1;
    blocks.push({ at, size, data: zlib.gunzipSync(bytes.subarray(at, at + size)) });
    at += size;
  }
  return blocks;
}

describe('a damaged BCF is an error of its set (503), never a page with fewer records', () => {
  const { bcf: edge } = pairNamed('edge');
  const intact = fs.readFileSync(edge);
  const blocks = bgzfBlocks(intact);
  const last = blocks[blocks.length - 2]; // the last block of records, before the end-of-file block
  const lastDataStart = blocks.slice(0, -2).reduce((n, b) => n + b.data.length, 0);
  /** The file's last record (on e2, in the last block of records): where it begins in that block's data, and its place. */
  const victim = (() => {
    const data = Buffer.concat(blocks.map((b) => b.data));
    let found = { at: 0, shared: 0, contig: -1, pos: 0 };
    for (let at = 9 + data.readUInt32LE(5); at < data.length; at += 8 + data.readUInt32LE(at) + data.readUInt32LE(at + 4)) {
      found = { at: at - lastDataStart, shared: data.readUInt32LE(at), contig: data.readInt32LE(at + 8), pos: data.readInt32LE(at + 12) };
    }
    assert.ok(found.at > 0 && found.contig === 1, JSON.stringify(found));
    return found;
  })();
  /** The file with the last block of records made anew from `data` (later blocks' offsets are the index's still). */
  const withLastBlock = (data: Buffer) => {
    const remade = t.bytes('bgzip', '-c', saved(dir, 'block', data));
    return Buffer.concat([intact.subarray(0, last.at), remade]);
  };
  const patched = (at: number, byte: number) => {
    const data = Buffer.from(last.data);
    data[at] = byte;
    return withLastBlock(data);
  };
  let file: string;
  let server: TestServer;
  let location: string;

  before(async () => {
    file = path.join(fs.mkdtempSync(path.join(dir, 'damaged-')), 'broken.bcf');
    fs.copyFileSync(edge, file);
    fs.copyFileSync(`${edge}.csi`, `${file}.csi`);
    const made = await newRegistry(dir);
    location = made.location;
    await addDataset(made.registry, 'ds');
    await loadDictionaryReferenceSet(made.registry, pairNamed('spec').bcf, { name: 'refs' });
    await loadVariantSet(made.registry, 'ds', [file], { referenceset: 'refs', allowMissingContigs: true });
    server = await startTestServer(location);
  });

  const search = (body: Record<string, unknown>) => server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'broken'), referenceName: 'e2', pageSize: 1000, ...body });
  function assertUnavailable(res: { status: number; json: any }) {
    assert.equal(res.status, 503, JSON.stringify(res.json));
    assert.equal(res.json.errorCode, 22);
    assert.match(res.json.message, /the BCF files of variant set 'broken'/);
  }

  it('the intact copy answers every record', async () => {
    const res = await search({});
    assert.equal(res.status, 200);
    assert.equal(res.json.variants.length, contigCounts(edge).find(([c]) => c === 'e2')![1]);
  });

  const cases: Array<[string, () => Buffer]> = [
    ['a typed value of a type BCF2 has not (the ID of a record)', () => patched(victim.at + 32, 0x76)],
    ['a FORMAT key the header does not declare', () => patched(victim.at + 8 + victim.shared + 1, 0x7f)],
    ['a record longer than the data left', () => patched(victim.at + 3, 0x01)],
    ['a block cut short, without the end-of-file block', () => intact.subarray(0, last.at + Math.floor(last.size / 2))],
    ['a block whose bytes were overwritten', () => Buffer.concat([intact.subarray(0, last.at + 40), Buffer.alloc(64, 0x5a), intact.subarray(last.at + 104)])],
  ];
  for (const [what, damage] of cases) {
    it(what, async () => {
      fs.writeFileSync(file, damage());
      try {
        assertUnavailable(await search({}));
        assertUnavailable(await search({ start: victim.pos, end: victim.pos + 1 }));
        // A page whose first records lie before the damage.
        assertUnavailable(await search({ start: victim.pos - 5000, callSetIds: [] }));
      } finally {
        fs.writeFileSync(file, intact);
      }
    });
  }

  it('repo check --deep decodes every record and names the damaged one; the plain check reads only the first of each contig', async () => {
    const problems = async (...options: string[]) => (await runCliAsync('repo', 'check', location, ...options)).stderr.split('\n').filter((l) => /variant set 'broken'/.test(l));
    assert.deepEqual(await problems('--deep'), []);
    fs.writeFileSync(file, patched(victim.at + 32, 0x76));
    try {
      assert.deepEqual(await problems(), []);
      const deep = await problems('--deep');
      assert.equal(deep.length, 1, deep.join('\n'));
      assert.match(deep[0], /variant set 'broken' of dataset 'ds': .*damaged BCF record \(a typed value has type 6, not one of BCF2's\).*broken\.bcf/);
    } finally {
      fs.writeFileSync(file, intact);
    }
  });
});

describe('repo add-variantset with BCF files, as a user runs it', () => {
  let location: string;
  const cli = (...args: string[]) => runCliAsync('repo', ...args);
  const folder = fs.mkdtempSync(path.join(dir, 'cli-'));
  const at = (name: string) => path.join(folder, name);
  const { bcf: SPEC, vcf: SPEC_VCF } = pairNamed('spec');

  before(async () => {
    const made = await newRegistry(dir);
    location = made.location;
    await made.registry.close();
    assert.equal((await cli('add-dataset', location, 'ds')).code, 0);
    assert.equal((await cli('add-referenceset', location, '--dictionary', SPEC, '--name', 'b36')).code, 0);
  });

  async function refuses(args: string[], message: RegExp) {
    const r = await cli('add-variantset', location, 'ds', ...args);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^ga4gh: [^\n]+\n$/);
    assert.match(r.stderr, message);
  }

  it('registers a BCF with a VCF alternate: listed, checked, served by htsget as BCF and as VCF', async () => {
    const r = await cli('add-variantset', location, 'ds', SPEC, '--referenceset', 'b36', '--alternate', SPEC_VCF);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added variant set 'spec' to dataset 'ds': 1 BCF file\(s\) \(and 1 VCF alternate\(s\)\), 3 call set\(s\), contigs 20/);
    const listed = JSON.parse((await cli('list', location, '--json')).stdout);
    assert.deepEqual(listed.variant_set_alternates, [{ id: idOf('ds', 'vs', 'spec'), dataset: 'ds', name: 'spec', format: 'VCF', file: 0, path: SPEC_VCF }]);
    for (const options of [[], ['--deep']]) {
      const check = await cli('check', location, ...options);
      assert.equal(check.code, 0, check.stderr);
    }
    const server = await startTestServer(location);
    for (const format of ['BCF', 'VCF']) {
      const ticket = await request(`${server.url}/htsget/variants/ds/spec?format=${format}`);
      assert.equal(ticket.status, 200, ticket.body.toString());
      assert.deepEqual(dataLines(saved(dir, `spec.${format.toLowerCase()}`, await ticketBytes(ticket.json))), dataLines(SPEC), format);
    }
    const res = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'spec'), referenceName: '20' });
    assert.equal(res.json.variants.length, contigCounts(SPEC)[0][1]);
    await server.close();
    assert.equal((await cli('remove-variantset', location, 'ds', 'spec')).code, 0);
  });

  it('registers a folder of BCFs (one per contig) as one set of several files', async () => {
    const { bcf } = pairNamed('edge');
    const split = fs.mkdtempSync(path.join(dir, 'split-'));
    for (const contig of ['e1', 'e2']) {
      t.run('bcftools', 'view', '--no-version', '-Ob', '-r', contig, '-o', path.join(split, `${contig}.bcf`), bcf);
      t.run('bcftools', 'index', path.join(split, `${contig}.bcf`));
    }
    const r = await cli('add-variantset', location, 'ds', split, '--referenceset', 'b36', '--name', 'split', '--allow-missing-contigs');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /2 BCF file\(s\), 8 call set\(s\), contigs e1, e2/);
    const server = await startTestServer(location);
    for (const [contig, count] of contigCounts(bcf)) {
      const res = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'split'), referenceName: contig, pageSize: 1000, callSetIds: [] });
      const all = [...res.json.variants];
      let token = res.json.nextPageToken;
      while (token) {
        const next = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'split'), referenceName: contig, pageSize: 1000, callSetIds: [], pageToken: token });
        all.push(...next.json.variants);
        token = next.json.nextPageToken;
      }
      assert.equal(all.length, count, contig);
    }
    await server.close();
  });

  it('refuses a BCF without its .csi, one whose contigs the reference set lacks, and a mix of VCF and BCF', async () => {
    fs.copyFileSync(SPEC, at('unindexed.bcf'));
    await refuses([at('unindexed.bcf'), '--referenceset', 'b36'], /unindexed\.bcf has no index \(unindexed\.bcf\.csi\); create one with: bcftools index/);
    await refuses([pairNamed('edge').bcf, '--referenceset', 'b36'], /contig\(s\) e1, e2 of the BCF are not in reference set 'b36'; choose the matching reference set, or register anyway with --allow-missing-contigs/);
    await refuses([SPEC, SPEC_VCF, '--referenceset', 'b36', '--name', 'mixed'], /is a VCF file and .*spec\.bcf a BCF file; the files of a variant set are all VCF or all BCF/);
    await refuses([SPEC, '--referenceset', 'b36', '--alternate', SPEC], /--alternate .*spec\.bcf is not a bgzipped VCF .*; the alternate of a BCF is its VCF/);
    await refuses([SPEC, '--referenceset', 'b36', '--alternate', pairNamed('bcbio').vcf], /the header sequences of --alternate .*bcbio\.vcf\.gz differ from those of .*spec\.bcf/);
    fs.writeFileSync(at('cut.bcf'), fs.readFileSync(SPEC).subarray(0, -28));
    fs.copyFileSync(`${SPEC}.csi`, at('cut.bcf.csi'));
    await refuses([at('cut.bcf'), '--referenceset', 'b36'], /cannot read .*cut\.bcf with its index .*: it has no BGZF end-of-file block/);
    const listed = JSON.parse((await cli('list', location, '--json')).stdout);
    assert.deepEqual(listed.variant_sets.map((s: any) => s.name), ['split']);
  });
});

describe('a BCF behind HTTP range requests', () => {
  it('registers by URL with its .csi beside it, and answers as the local file; without the .csi it is refused', async () => {
    const { bcf } = pairNamed('phase1');
    const files = await startRangeServer(path.dirname(bcf));
    const url = `${files.url}/${path.basename(bcf)}`;
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadDictionaryReferenceSet(registry, pairNamed('spec').bcf, { name: 'refs' });
    await loadVariantSet(registry, 'ds', [url], { referenceset: 'refs', name: 'phase1', allowMissingContigs: true });
    const remote = await startTestServer(location);
    const body = { variantSetId: variantSetId('phase1'), referenceName: '1', pageSize: 30 };
    assert.deepEqual(await pageTexts(remote, '/variants/search', body), await pageTexts(bcfServer, '/variants/search', body));
    assert.ok(files.log.some((line) => line.startsWith(`GET /${path.basename(bcf)} bytes=`)), 'read by ranges');
    fs.copyFileSync(bcf, path.join(path.dirname(bcf), 'unindexed.bcf'));
    await assert.rejects(
      loadVariantSet(registry, 'ds', [`${files.url}/unindexed.bcf`], { referenceset: 'refs', allowMissingContigs: true }),
      /unindexed\.bcf has no index \(unindexed\.bcf\.csi\); create one with: bcftools index/,
    );
  });
});

describe('a registry made before BCF sets', () => {
  it('migrates: its files are VCF files, served as before', async () => {
    const { vcf } = pairNamed('spec');
    const location = path.join(fs.mkdtempSync(path.join(dir, 'old-')), 'old.sqlite');
    const old = await registryBefore(location, 'variant set files in BCF');
    await addDataset(old.registry, 'ds');
    await loadDictionaryReferenceSet(old.registry, pairNamed('spec').bcf, { name: 'refs' });
    // The rows a load wrote then: a file without a format.
    const owner = { dataset_name: 'ds', variant_set_name: 'spec' };
    const metadata = (await vcfServer.get(`/variantsets/${variantSetId('spec')}`)).json.metadata;
    const db = old.registry.db as any;
    await db.insertInto('variant_set').values({ dataset_name: 'ds', name: 'spec', reference_set_name: 'refs', metadata: JSON.stringify(metadata), created_at: new Date().toISOString() }).execute();
    await db.insertInto('variant_set_file').values({ ...owner, ordinal: 0, path: vcf, index_path: `${vcf}.tbi`, index_kind: 'tbi', contigs: '["20"]' }).execute();
    const samples = t.run('bcftools', 'query', '-l', vcf).split('\n').filter(Boolean);
    await db.insertInto('call_set').values(samples.map((name, ordinal) => ({ ...owner, ordinal, name }))).execute();
    await old.registry.close();
    const migrated = await servedAfterMigrating(location, ['variant set files in BCF']);
    const body = { variantSetId: variantSetId('spec'), referenceName: '20' };
    assert.deepEqual(await pageTexts(migrated, '/variants/search', body), await pageTexts(vcfServer, '/variants/search', body));
  });
});
