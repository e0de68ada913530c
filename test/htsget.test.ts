/**
 * htsget 1.3 against the tools that read it: for every test file, `samtools view` / `bcftools view` of
 * the htsget URL on a real server prints the records the same tool prints of the local file (whole
 * files, regions, regions at BGZF block edges, the unplaced reads, several regions in one POST, the
 * header alone), a variant set of one file per contig reads as `bcftools concat` of its files, and
 * every error is in htsget's form with its status. A region's ticket may hold more records than the
 * region (the specification allows it): the stream is indexed here and the region read from it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { copyFixture, idOf, newRegistry, startServeProcess, tempDir, TESTDATA, type ServeProcess } from './helpers.js';
import { addHeaderReferenceSet, request, saved, ticketBytes, tools, vcfSequences } from './htsget-fixture.js';

const dir = tempDir('ga4gh-htsget-');
const t = tools(dir);
const H = path.join(TESTDATA, 'htsget');
const BAM = path.join(H, 'htsnexus_test_NA12878.bam');
const CRAM = path.join(H, 'htsnexus_test_NA12878.cram');
const VCF_FILES = ['spec-v4.3', 'sample1-bcbio-cancer'];
const PHASE1 = path.join(TESTDATA, 'ga4gh-server/datasets/dataset1/variants/1kgPhase1');
const PHASE1_FILES = ['chr1', 'chr2', 'chr3'].map((c) => path.join(PHASE1, `${c}.vcf.gz`));
const BRCA1 = path.join(TESTDATA, 'compliance');

/**
 * `file` compressed again by bgzip, which cuts blocks every 64 KB whatever they hold: records then
 * span blocks (htslib's writers end blocks between records when they can).
 */
function recompressed(file: string, name: string): string {
  const folder = fs.mkdtempSync(path.join(dir, 'recompressed-'));
  const plain = path.join(folder, `${name}.plain`);
  fs.writeFileSync(plain, t.bytes('bgzip', '-dc', file));
  const out = path.join(folder, name);
  fs.writeFileSync(out, t.bytes('bgzip', '-c', plain));
  return out;
}

/** A VCF of many BGZF blocks, made here, with its BCF (records across blocks): ~24,000 records on two contigs. */
function manyBlocksVcf(): { vcf: string; bcf: string } {
  const lines = ['##fileformat=VCFv4.2', '##contig=<ID=g1,length=2000000>', '##contig=<ID=g2,length=500000>', '##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth">'];
  lines.push('##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">', '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2');
  for (let pos = 1; pos <= 1_900_000; pos += 97) lines.push(`g1\t${pos}\trs${pos}\tA\tC,G\t${pos % 100}\tPASS\tDP=${pos % 50}\tGT\t0/1\t1|2`);
  for (let pos = 5; pos <= 400_000; pos += 89) lines.push(`g2\t${pos}\t.\tT\tTA\t.\t.\tDP=3\tGT\t0|0\t./.`);
  const folder = fs.mkdtempSync(path.join(dir, 'many-'));
  const plain = path.join(folder, 'many.vcf');
  fs.writeFileSync(plain, lines.join('\n') + '\n');
  const vcf = `${plain}.gz`;
  fs.writeFileSync(vcf, t.bytes('bgzip', '-c', plain));
  t.run('tabix', '-p', 'vcf', vcf);
  const written = path.join(folder, 'written.bcf');
  t.run('bcftools', 'view', '--no-version', '-Ob', '-o', written, vcf);
  const bcf = recompressed(written, 'many.bcf');
  t.run('bcftools', 'index', bcf);
  return { vcf, bcf };
}

/** The blocks of a BGZF file, each with where its data begins in the whole inflated text. */
function blocksOf(file: string): Array<{ at: number; dataStart: number; data: Buffer }> {
  const bytes = fs.readFileSync(file);
  const blocks = [];
  let dataStart = 0;
  for (let at = 0; at < bytes.length; ) {
    const size = bytes.readUInt16LE(at + 16) + 1;
    const data = zlib.gunzipSync(bytes.subarray(at, at + size));
    blocks.push({ at, dataStart, data });
    dataStart += data.length;
    at += size;
  }
  return blocks;
}

/**
 * Regions of a BAM file at BGZF block edges, found by walking its records through its blocks: a
 * record that begins a block, one that spans two blocks, and the two records on either side of a
 * block boundary together; with how many of each kind the file has.
 */
function blockEdgeRegions(file: string): { regions: Array<[string, number, number]>; found: Record<'begins' | 'spans' | 'across', number> } {
  const blocks = blocksOf(file);
  const data = Buffer.concat(blocks.map((b) => b.data));
  const names: string[] = [];
  let at = 8 + data.readInt32LE(4);
  const count = data.readInt32LE(at);
  at += 4;
  for (let i = 0; i < count; i++) {
    const length = data.readInt32LE(at);
    names.push(data.toString('latin1', at + 4, at + 4 + length - 1));
    at += 8 + length;
  }
  const starts = new Set(blocks.map((b) => b.dataStart));
  const blockOf = (offset: number) => {
    let i = blocks.length - 1;
    while (blocks[i].dataStart > offset) i--;
    return i;
  };
  const regions: Array<[string, number, number]> = [];
  let previous: { refId: number; pos: number; block: number } | undefined;
  const found = { begins: 0, spans: 0, across: 0 };
  for (; at < data.length; at += 4 + data.readInt32LE(at)) {
    const refId = data.readInt32LE(at + 4);
    const pos = data.readInt32LE(at + 8);
    const block = blockOf(at);
    if (refId < 0) break;
    const end = at + 4 + data.readInt32LE(at);
    if (starts.has(at) && found.begins++ < 2) regions.push([names[refId], pos, pos + 1]);
    if (blockOf(end - 1) !== block && found.spans++ < 2) regions.push([names[refId], pos, pos + 1]);
    if (previous && previous.block !== block && previous.refId === refId && found.across++ < 2) regions.push([names[refId], previous.pos, pos + 1]);
    previous = { refId, pos, block };
  }
  return { regions, found };
}

/** Regions of a bgzipped VCF at block edges: the line that begins a block, and the line cut by a block boundary. */
function vcfBlockEdgeRegions(file: string): Array<[string, number, number]> {
  const blocks = blocksOf(file);
  const text = Buffer.concat(blocks.map((b) => b.data)).toString('latin1');
  const regions: Array<[string, number, number]> = [];
  for (const block of blocks.slice(2, 6)) {
    const lineStart = text.lastIndexOf('\n', block.dataStart - 1) + 1;
    const [chrom, pos] = text.slice(lineStart, text.indexOf('\n', lineStart)).split('\t');
    regions.push([chrom, Number(pos) - 1, Number(pos)]);
  }
  return regions;
}

/** A region as samtools and bcftools write it: 1-based, inclusive. */
const spelled = ([name, start, end]: [string, number, number]) => `${name}:${start + 1}-${end}`;

/** The server runs in a process of its own: the tools are run with spawnSync, which would stall a server in this one. */
let server: ServeProcess;
let many: { vcf: string; bcf: string };
/** The htsget BAM with records across its blocks. */
let spanning: string;

before(async () => {
  const { location, registry } = await newRegistry(dir);
  await addDataset(registry, 'ds');
  await addDataset(registry, 'other');
  await addHeaderReferenceSet(location, 'hs37d5', BAM);
  for (const name of VCF_FILES) await addHeaderReferenceSet(location, name, path.join(H, `${name}.vcf.gz`));
  many = manyBlocksVcf();
  await addHeaderReferenceSet(location, 'generated', many.vcf);
  await loadReadGroupSet(registry, 'ds', BAM, { referenceset: 'hs37d5', alternate: CRAM });
  await loadReadGroupSet(registry, 'ds', CRAM, { referenceset: 'hs37d5', name: 'cram-only' });
  spanning = recompressed(BAM, 'spanning.bam');
  t.run('samtools', 'index', spanning);
  await loadReadGroupSet(registry, 'ds', spanning, { referenceset: 'hs37d5' });
  for (const name of VCF_FILES) {
    await loadVariantSet(registry, 'ds', [path.join(H, `${name}.vcf.gz`)], { referenceset: name, alternate: [path.join(H, `${name}.bcf`)] });
  }
  await loadVariantSet(registry, 'ds', [many.vcf], { referenceset: 'generated', alternate: [many.bcf] });
  // A FASTA reference set: the compliance BAMs (a .bai and a .csi) and the 1000 Genomes files of one contig each.
  await loadReferenceSet(registry, copyFixture('compliance/ref_brca1.fa', dir), { name: 'hg37' });
  const ncbi37 = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir);
  copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', dir);
  copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', dir);
  await loadReferenceSet(registry, ncbi37, {});
  await loadReadGroupSet(registry, 'ds', path.join(BRCA1, 'brca1_HG00096.bam'), { referenceset: 'hg37' });
  const csiDir = fs.mkdtempSync(path.join(dir, 'csi-'));
  copyFixture('compliance/brca1_HG00101.bam', csiDir);
  copyFixture('compliance/brca1_HG00101.bam.csi', csiDir);
  await loadReadGroupSet(registry, 'ds', path.join(csiDir, 'brca1_HG00101.bam'), { referenceset: 'hg37' });
  await loadVariantSet(registry, 'ds', [PHASE1], { referenceset: 'NCBI37', name: 'phase1' });
  // The same name in two datasets: a bare name is then ambiguous.
  await loadVariantSet(registry, 'ds', [path.join(H, 'spec-v4.3.vcf.gz')], { referenceset: 'spec-v4.3', name: 'twice' });
  await loadVariantSet(registry, 'other', [path.join(H, 'spec-v4.3.vcf.gz')], { referenceset: 'spec-v4.3', name: 'twice' });
  server = await startServeProcess(location, '--page-workers', '0');
});

const url = (datatype: string, id: string, query = '') => `${server.url}/htsget/${datatype}/${id}${query ? `?${query}` : ''}`;
const query = (region: [string, number, number]) => `referenceName=${encodeURIComponent(region[0])}&start=${region[1]}&end=${region[2]}`;

/** The records of `regions` in the stream at `source` (a URL or a file), read back through an index made here. */
function readsIn(source: string | Buffer, regions: string[], format: 'BAM' | 'CRAM'): string {
  const file = typeof source === 'string' ? saved(dir, `blob.${format.toLowerCase()}`, t.bytes('samtools', 'view', '--no-PG', format === 'CRAM' ? '-C' : '-b', source)) : saved(dir, `blob.${format.toLowerCase()}`, source);
  t.run('samtools', 'index', file);
  return t.run('samtools', 'view', '--no-PG', '-M', file, ...regions);
}

function variantsIn(source: string | Buffer, regions: string[], format: 'VCF' | 'BCF'): string {
  const name = format === 'BCF' ? 'blob.bcf' : 'blob.vcf.gz';
  const file = typeof source === 'string' ? saved(dir, name, t.bytes('bcftools', 'view', '--no-version', format === 'BCF' ? '-Ob' : '-Oz', source)) : saved(dir, name, source);
  t.run('bcftools', 'index', file);
  return t.run('bcftools', 'view', '--no-version', '-H', file, '-r', regions.join(','));
}

const lineCount = (text: string) => text.split('\n').filter(Boolean).length;

describe('htsget reads, as samtools reads them', () => {
  const SET = 'ds/htsnexus_test_NA12878';
  const files = { BAM, CRAM };

  for (const format of ['BAM', 'CRAM'] as const) {
    const local = files[format];
    const q = (more = '') => `format=${format}${more ? `&${more}` : ''}`;

    it(`${format}: the whole file, header and records, as samtools prints the local file`, () => {
      const remote = t.run('samtools', 'view', '--no-PG', '-h', url('reads', SET, q()));
      assert.equal(remote, t.run('samtools', 'view', '--no-PG', '-h', local));
      assert.equal(lineCount(t.run('samtools', 'view', url('reads', SET, q()))), Number(t.run('samtools', 'view', '-c', local).trim()));
    });

    it(`${format}: class=header is the header and no record`, () => {
      assert.equal(t.run('samtools', 'view', '--no-PG', '-H', url('reads', SET, q('class=header'))), t.run('samtools', 'view', '--no-PG', '-H', local));
      assert.equal(t.run('samtools', 'view', url('reads', SET, q('class=header'))), '');
    });

    it(`${format}: referenceName=* is the unplaced unmapped reads, exactly`, () => {
      const unplaced = t.run('samtools', 'view', '--no-PG', local, '*');
      assert.ok(lineCount(unplaced) > 1000, 'the file has unplaced reads');
      assert.equal(t.run('samtools', 'view', '--no-PG', url('reads', SET, q('referenceName=*'))), unplaced);
    });

    it(`${format}: single regions hold every record the region holds`, () => {
      const regions: Array<[string, number, number]> = [
        ['11', 5_000_000, 5_010_000],
        ['11', 5_020_000, 5_020_001],
        ['20', 6_000_000, 6_100_000],
        ['20', 0, 6_000_000],
        ['11', 4_000_000, 4_100_000], // before the reads: none
      ];
      for (const region of regions) {
        const expected = t.run('samtools', 'view', '--no-PG', local, spelled(region));
        assert.equal(readsIn(url('reads', SET, q(query(region))), [spelled(region)], format), expected, spelled(region));
      }
      // A whole reference, and start alone.
      assert.equal(readsIn(url('reads', SET, q('referenceName=20')), ['20'], format), t.run('samtools', 'view', '--no-PG', local, '20'));
      assert.equal(readsIn(url('reads', SET, q('referenceName=11&start=5060000')), ['11:5060001'], format), t.run('samtools', 'view', '--no-PG', local, '11:5060001'));
    });

    it(`${format}: a region's ticket covers part of the file, not all of it`, async () => {
      const bytes = await ticketBytes((await request(url('reads', SET, q('referenceName=20&start=6050000&end=6050100')))).json);
      assert.ok(bytes.length < fs.statSync(local).size / 2, `${bytes.length} bytes of ${fs.statSync(local).size}`);
      // A 100-base region gets a share of its reference's reads: BAM cut where the records pass the
      // region (~16 kb of reads beside it), CRAM a container of 10,000 reads.
      const held = Number(t.run('samtools', 'view', '-c', saved(dir, `small.${format.toLowerCase()}`, bytes)).trim());
      const reference = Number(t.run('samtools', 'view', '-c', local, '20').trim());
      assert.ok(held >= lineCount(t.run('samtools', 'view', local, '20:6050001-6050100')) && held < reference / (format === 'BAM' ? 4 : 1), `${held} of ${reference} reads`);
    });

    it(`${format}: several regions in one POST, overlapping and out of order, give each record once, in file order`, async () => {
      const regions: Array<[string, number, number]> = [
        ['20', 6_000_000, 6_050_000],
        ['11', 5_000_000, 5_010_000],
        ['20', 6_040_000, 6_060_000],
      ];
      const res = await request(url('reads', SET), { method: 'POST', body: { format, regions: regions.map(([referenceName, start, end]) => ({ referenceName, start, end })) } });
      assert.equal(res.status, 200);
      const bytes = await ticketBytes(res.json);
      const all = t.run('samtools', 'view', '--no-PG', saved(dir, `post.${format.toLowerCase()}`, bytes)).split('\n').filter(Boolean);
      assert.equal(new Set(all).size, all.length, 'no record twice');
      const order = all.map((line) => line.split('\t')).map((f) => [f[2] === '11' ? 0 : 1, Number(f[3])]);
      assert.ok(order.every((p, i) => i === 0 || p[0] > order[i - 1][0] || (p[0] === order[i - 1][0] && p[1] >= order[i - 1][1])), 'in file order');
      const spelledRegions = regions.map(spelled);
      assert.equal(readsIn(bytes, spelledRegions, format), t.run('samtools', 'view', '--no-PG', '-M', local, ...spelledRegions));
    });
  }

  it('BAM: regions at BGZF block edges (a record that begins a block, one across two blocks, the records on either side of a boundary)', () => {
    const kinds = { begins: 0, spans: 0, across: 0 };
    // htslib's file ends its blocks between records; bgzip's copy cuts records across blocks.
    for (const [id, local] of [[SET, BAM], ['spanning', spanning]]) {
      const { regions, found } = blockEdgeRegions(local);
      for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>) kinds[kind] += found[kind];
      for (const region of regions) {
        const expected = t.run('samtools', 'view', '--no-PG', local, spelled(region));
        assert.ok(lineCount(expected) >= 1, `${spelled(region)} holds a record`);
        assert.equal(readsIn(url('reads', id, query(region)), [spelled(region)], 'BAM'), expected, `${id} ${spelled(region)}`);
      }
    }
    assert.ok(kinds.begins && kinds.spans && kinds.across, `records at block edges of every kind (${JSON.stringify(kinds)})`);
    assert.equal(t.run('samtools', 'view', '--no-PG', url('reads', 'spanning', 'referenceName=*')), t.run('samtools', 'view', '--no-PG', spanning, '*'));
  });

  it('BAM: a sweep of small regions across both references, cut anywhere in their blocks', () => {
    for (const [name, from, to] of [['11', 4_999_000, 5_100_000], ['20', 5_999_000, 6_101_000]] as const) {
      for (let start = from; start < to; start += Math.floor((to - from) / 7)) {
        const region: [string, number, number] = [name, start, start + 700];
        for (const [id, local] of [[SET, BAM], ['spanning', spanning]]) {
          assert.equal(readsIn(url('reads', id, query(region)), [spelled(region)], 'BAM'), t.run('samtools', 'view', '--no-PG', local, spelled(region)), `${id} ${spelled(region)}`);
        }
      }
    }
  });

  it('BAM indexed by .bai and by .csi, registered on a FASTA reference set', () => {
    for (const name of ['brca1_HG00096', 'brca1_HG00101']) {
      const local = path.join(BRCA1, `${name}.bam`);
      assert.equal(t.run('samtools', 'view', '--no-PG', '-h', url('reads', `ds/${name}`)), t.run('samtools', 'view', '--no-PG', '-h', local));
      const region: [string, number, number] = ['ref_brca1', 40_000, 41_000];
      const expected = t.run('samtools', 'view', '--no-PG', local, spelled(region));
      assert.ok(lineCount(expected) > 10);
      assert.equal(readsIn(url('reads', `ds/${name}`, query(region)), [spelled(region)], 'BAM'), expected);
      assert.equal(t.run('samtools', 'view', '--no-PG', url('reads', `ds/${name}`, 'referenceName=*')), t.run('samtools', 'view', '--no-PG', local, '*'));
    }
  });

  it('every form of id: the 0.6.0a10 id, DATASET/NAME and a bare NAME', async () => {
    const header = t.run('samtools', 'view', '--no-PG', '-H', BAM);
    for (const id of [idOf('ds', 'rgs', 'htsnexus_test_NA12878'), 'ds/htsnexus_test_NA12878', 'htsnexus_test_NA12878']) {
      assert.equal(t.run('samtools', 'view', '--no-PG', '-H', url('reads', id, 'class=header')), header, id);
    }
  });

  it('the ticket: {"htsget": ...} alone, data URLs with Range headers, inline parts as data:;base64, a class on every URL', async () => {
    // A client that takes compressed answers still gets the ticket as it is: htsget allows transfer-coding only.
    const res = await request(url('reads', SET, 'referenceName=11&start=5000000&end=5001000'), { headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], undefined);
    assert.ok(res.body.length > 16 * 1024, 'larger than the compression threshold');
    assert.match(res.headers['content-type'] ?? '', /^application\/vnd\.ga4gh\.htsget\.v1\.3\.0\+json/);
    const text = res.body.toString('utf8');
    assert.ok(text.startsWith('{"htsget":'), 'htslib checks the first bytes');
    const ticket = JSON.parse(text);
    assert.deepEqual(Object.keys(ticket), ['htsget']);
    assert.equal(ticket.htsget.format, 'BAM');
    const urls: Array<{ url: string; headers?: Record<string, string>; class: string }> = ticket.htsget.urls;
    assert.ok(urls.every((u) => u.class === 'header' || u.class === 'body'));
    assert.equal(urls[0].class, 'header');
    for (const u of urls) {
      if (u.url.startsWith('data:')) assert.match(u.url, /^data:;base64,[A-Za-z0-9+/]+=*$/);
      else {
        assert.ok(u.url.startsWith(`${server.url}/htsget/data/`), u.url);
        assert.match(u.headers?.Range ?? '', /^bytes=\d+-\d+$/);
      }
    }
    // The data ends with the BGZF end-of-file marker.
    const last = Buffer.from(urls[urls.length - 1].url.slice('data:;base64,'.length), 'base64');
    assert.equal(last.subarray(-28).toString('hex'), '1f8b08040000000000ff0600424302001b0003000000000000000000');
  });
});

describe('htsget variants, as bcftools reads them', () => {
  for (const name of VCF_FILES) {
    for (const format of ['VCF', 'BCF'] as const) {
      const local = path.join(H, format === 'VCF' ? `${name}.vcf.gz` : `${name}.bcf`);
      const q = (more = '') => `format=${format}${more ? `&${more}` : ''}`;

      it(`${name} as ${format}: the whole file, header and records; class=header; each contig`, () => {
        assert.equal(t.run('bcftools', 'view', '--no-version', url('variants', name, q())), t.run('bcftools', 'view', '--no-version', local));
        assert.equal(t.run('bcftools', 'view', '--no-version', url('variants', `ds/${name}`, q('class=header'))), t.run('bcftools', 'view', '--no-version', '-h', local));
        for (const contig of vcfSequences(t, local).map((s) => s.name)) {
          const expected = t.run('bcftools', 'view', '--no-version', '-H', local, '-r', contig);
          assert.equal(t.run('bcftools', 'view', '--no-version', '-H', url('variants', name, q(`referenceName=${contig}`))), expected, contig);
        }
      });
    }
  }

  it('a BGZF file of many blocks, as VCF and as BCF: regions at block edges and a sweep, each with every record it holds', () => {
    const regions = [...vcfBlockEdgeRegions(many.vcf)];
    for (let start = 0; start < 1_850_000; start += 211_111) regions.push(['g1', start, start + 5_000]);
    regions.push(['g2', 100_000, 300_000]);
    for (const format of ['VCF', 'BCF'] as const) {
      const local = format === 'VCF' ? many.vcf : many.bcf;
      for (const region of regions) {
        const expected = t.run('bcftools', 'view', '--no-version', '-H', local, '-r', spelled(region));
        assert.ok(lineCount(expected) >= 1, spelled(region));
        assert.equal(variantsIn(url('variants', 'many', `format=${format}&${query(region)}`), [spelled(region)], format), expected, `${format} ${spelled(region)}`);
      }
      assert.equal(t.run('bcftools', 'view', '--no-version', url('variants', 'many', `format=${format}`)), t.run('bcftools', 'view', '--no-version', local));
    }
  });

  it('several regions in one POST, as VCF and BCF', async () => {
    const regions: Array<[string, number, number]> = [
      ['g2', 10_000, 20_000],
      ['g1', 500_000, 510_000],
      ['g1', 505_000, 520_000],
    ];
    for (const format of ['VCF', 'BCF'] as const) {
      const res = await request(url('variants', 'many'), { method: 'POST', body: { format, regions: regions.map(([referenceName, start, end]) => ({ referenceName, start, end })) } });
      assert.equal(res.status, 200);
      const bytes = await ticketBytes(res.json);
      const local = format === 'VCF' ? many.vcf : many.bcf;
      const all = t.run('bcftools', 'view', '--no-version', '-H', saved(dir, format === 'VCF' ? 'post.vcf.gz' : 'post.bcf', bytes)).split('\n').filter(Boolean);
      assert.equal(new Set(all).size, all.length, 'no record twice');
      assert.equal(variantsIn(bytes, regions.map(spelled), format), t.run('bcftools', 'view', '--no-version', '-H', local, '-r', regions.map(spelled).join(',')));
    }
  });

  it('a set of one VCF per contig reads as bcftools concat of its files; a region comes from the file of its contig', () => {
    assert.equal(t.run('bcftools', 'view', '--no-version', url('variants', 'phase1')), t.run('bcftools', 'concat', '--no-version', ...PHASE1_FILES));
    const region: [string, number, number] = ['2', 0, 300_000_000];
    const expected = t.run('bcftools', 'view', '--no-version', '-H', PHASE1_FILES[1], '-r', '2');
    assert.equal(lineCount(expected), 100);
    assert.equal(t.run('bcftools', 'view', '--no-version', '-H', url('variants', 'phase1', query(region))), expected);
    assert.equal(t.run('bcftools', 'view', '--no-version', '-H', url('variants', 'phase1', 'class=header')), '');
  });
});

describe('htsget errors: {"htsget": {"error", "message"}} with the status of each', () => {
  // Paths, not URLs: the server's port is known once it has started.
  const cases: Array<[string, () => string, number, string, RegExp]> = [
    ['an unknown set', () => url('reads', 'ds/nothing'), 404, 'NotFound', /no read group set 'ds\/nothing'/],
    ['an unknown reference', () => url('reads', 'htsnexus_test_NA12878', 'referenceName=chr1'), 404, 'NotFound', /no reference 'chr1'/],
    ['a bare name two datasets hold', () => url('variants', 'twice'), 404, 'NotFound', /datasets ds, other each hold .*DATASET\/twice/],
    ['a format of the other endpoint', () => url('reads', 'htsnexus_test_NA12878', 'format=VCF'), 400, 'UnsupportedFormat', /BAM or CRAM/],
    ['a CRAM asked as BAM', () => url('reads', 'cram-only', 'format=BAM'), 400, 'UnsupportedFormat', /served as CRAM, not BAM/],
    ['a VCF set without BCF', () => url('variants', 'phase1', 'format=BCF'), 400, 'UnsupportedFormat', /served as VCF, not BCF/],
    ['start after end', () => url('reads', 'htsnexus_test_NA12878', 'referenceName=11&start=20&end=10'), 400, 'InvalidRange', /start \(20\) is greater than end \(10\)/],
    ['start without a reference', () => url('reads', 'htsnexus_test_NA12878', 'start=10'), 400, 'InvalidInput', /need a referenceName/],
    ['a position with *', () => url('reads', 'htsnexus_test_NA12878', 'referenceName=*&end=10'), 400, 'InvalidInput', /referenceName '\*'/],
    ['a position that is not a number', () => url('reads', 'htsnexus_test_NA12878', 'referenceName=11&start=-1'), 400, 'InvalidInput', /start must be an unsigned 32-bit integer/],
    ['a position beyond 32 bits', () => url('reads', 'htsnexus_test_NA12878', 'referenceName=11&end=4294967296'), 400, 'InvalidInput', /end must be/],
    ['class=header with a region', () => url('reads', 'htsnexus_test_NA12878', 'class=header&referenceName=11'), 400, 'InvalidInput', /class=header takes no other parameter/],
    ['another class', () => url('reads', 'htsnexus_test_NA12878', 'class=body'), 400, 'InvalidInput', /class must be 'header'/],
    ['an unknown field', () => url('reads', 'htsnexus_test_NA12878', 'fields=QNAME,COLOUR'), 400, 'InvalidInput', /'COLOUR' is not a field/],
    ['a tag in tags and notags', () => url('reads', 'htsnexus_test_NA12878', 'tags=NM,MD&notags=MD'), 400, 'InvalidInput', /tag 'MD' is in both/],
    ['a parameter given twice', () => url('reads', 'htsnexus_test_NA12878', 'format=BAM&format=CRAM'), 400, 'InvalidInput', /given twice/],
  ];
  for (const [what, target, status, error, message] of cases) {
    it(`${what}: ${status} ${error}`, async () => {
      const res = await request(target());
      assert.equal(res.status, status);
      assert.match(res.headers['content-type'] ?? '', /^application\/json/);
      const body = res.json;
      assert.deepEqual(Object.keys(body), ['htsget']);
      assert.deepEqual(Object.keys(body.htsget), ['error', 'message']);
      assert.equal(body.htsget.error, error);
      assert.match(body.htsget.message, message);
    });
  }

  const post = (body: unknown, target = url('reads', 'htsnexus_test_NA12878')) => request(target, { method: 'POST', body });
  const postCases: Array<[string, unknown, number, string, RegExp, (() => string)?]> = [
    ['a region without referenceName', { regions: [{ start: 1 }] }, 400, 'InvalidInput', /regions\[0\]\.referenceName/],
    ['regions that are not a list', { regions: { referenceName: '11' } }, 400, 'InvalidInput', /regions must be a non-empty array/],
    ['an empty list of regions', { regions: [] }, 400, 'InvalidInput', /regions must be a non-empty array/],
    ['a region with start after end', { regions: [{ referenceName: '11', start: 9, end: 2 }] }, 400, 'InvalidRange', /regions\[0\]\.start \(9\) is greater than end \(2\)/],
    ['a position as a string', { regions: [{ referenceName: '11', start: '9' }] }, 400, 'InvalidInput', /numbers in a POST body/],
    ['class=header with regions', { class: 'header', regions: [{ referenceName: '11' }] }, 400, 'InvalidInput', /class=header takes no other parameter/],
    ['an unknown reference', { regions: [{ referenceName: 'chrX' }] }, 404, 'NotFound', /no reference 'chrX'/],
    ['a format that is not a string', { format: 5 }, 400, 'InvalidInput', /format must be a string/],
    ['fields that are not a list', { fields: 'QNAME' }, 400, 'InvalidInput', /fields must be an array of strings/],
    ['a body that is not JSON', '{"regions": [', 400, 'InvalidInput', /not valid JSON/],
    ['query parameters on a POST', {}, 400, 'InvalidInput', /query parameter 'format'/, () => url('reads', 'htsnexus_test_NA12878', 'format=BAM')],
  ];
  for (const [what, body, status, error, message, target] of postCases) {
    it(`POST, ${what}: ${status} ${error}`, async () => {
      const res = await post(body, target?.());
      assert.equal(res.status, status);
      const json = res.json;
      assert.deepEqual(Object.keys(json), ['htsget']);
      assert.equal(json.htsget.error, error);
      assert.match(json.htsget.message, message);
    });
  }

  it('POST, a body larger than the server takes: 413 PayloadTooLarge', async () => {
    const res = await post({ regions: Array.from({ length: 40_000 }, (_, i) => ({ referenceName: '11', start: i, end: i + 1 })) });
    assert.equal(res.status, 413);
    assert.equal(res.json.htsget.error, 'PayloadTooLarge');
  });

  it('unknown query parameters are ignored (htsget clients send their own)', async () => {
    const res = await request(url('reads', 'htsnexus_test_NA12878', 'class=header&encryptionScheme=c4gh&vendor=x'));
    assert.equal(res.status, 200);
  });
});

describe('htsget service-info', () => {
  for (const [datatype, formats] of [['reads', ['BAM', 'CRAM']], ['variants', ['VCF', 'BCF']]] as const) {
    it(`/htsget/${datatype}/service-info: a GA4GH service-info document of type org.ga4gh:htsget:1.3.0`, async () => {
      const res = await request(`${server.url}/htsget/${datatype}/service-info`);
      assert.equal(res.status, 200);
      const info = res.json;
      for (const field of ['id', 'name', 'version']) assert.equal(typeof info[field], 'string', field);
      assert.equal(typeof info.organization.name, 'string');
      assert.match(info.organization.url, /^https?:\/\//);
      assert.deepEqual(info.type, { group: 'org.ga4gh', artifact: 'htsget', version: '1.3.0' });
      assert.deepEqual(info.htsget, { datatype, formats, fieldsParameterEffective: false, tagsParametersEffective: false });
    });
  }
});
