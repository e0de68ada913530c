/**
 * Reference sets without their bases, registered with the real CLI from sequence dictionaries: the
 * headers of BAM and CRAM files, a Picard .dict written by `samtools dict`, VCF and BCF headers (the
 * BCF written by bcftools), a .fai with a list of MD5s. What each should register is read here from
 * samtools' and bcftools' own view of the headers, or from the files; the server answers metadata and
 * searches, and 404 for bases; reads of a BAM on such a set are served, those of a CRAM refused.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { bgzippedVcf, collectPages, copyFixture, idOf, runCli, startTestServer, tempDir, TESTDATA, tool, type TestServer } from './helpers.js';

const dir = tempDir();
const registry = path.join(dir, 'registry.sqlite');
const hg00096 = copyFixture('ga4gh-server/datasets/dataset1/reads/HG00096.mapped.ILLUMINA.bwa.GBR.low_coverage.20120522.bam', dir);
copyFixture('ga4gh-server/datasets/dataset1/reads/HG00096.mapped.ILLUMINA.bwa.GBR.low_coverage.20120522.bam.bai', dir);
const brca1Cram = copyFixture('compliance/brca1_HG00096.cram', dir);
copyFixture('compliance/brca1_HG00096.cram.crai', dir);
const brca1Fasta = path.join(TESTDATA, 'compliance/ref_brca1.fa');

interface Listed {
  name: string;
  length: number;
  md5: string | undefined;
}

/** The @SQ lines samtools prints for a header. */
function sqLines(file: string): Listed[] {
  return tool('samtools', 'view', '-H', file)
    .toString()
    .split('\n')
    .filter((l) => l.startsWith('@SQ'))
    .map((l) => {
      const tags = Object.fromEntries(l.split('\t').slice(1).map((f) => [f.slice(0, 2), f.slice(3)]));
      return { name: tags.SN, length: Number(tags.LN), md5: tags.M5 };
    });
}

/** The ##contig lines bcftools prints for a header. */
function contigLines(file: string): Listed[] {
  return tool('bcftools', 'view', '-h', file)
    .toString()
    .split('\n')
    .filter((l) => l.startsWith('##contig='))
    .map((l) => {
      const body = l.slice(l.indexOf('<') + 1, l.lastIndexOf('>'));
      const pairs = Object.fromEntries([...body.matchAll(/(\w+)=("[^"]*"|[^,]*)/g)].map((m) => [m[1], m[2]]));
      return { name: pairs.ID, length: Number(pairs.length), md5: pairs.md5 };
    });
}

const VCF = `##fileformat=VCFv4.2
##contig=<ID=20,length=62435964,assembly=B36,md5=f126cdf8a6e0c7f379d618ff66beb2da,species="Homo sapiens">
##contig=<ID=chrM,length=16571,assembly=hg19>
##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth">
#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO
20\t14370\t.\tG\tA\t29\tPASS\tDP=14
chrM\t100\t.\tA\tG\t29\tPASS\tDP=3
`;

let server: TestServer;

const cli = (...args: string[]) => {
  const r = runCli(...args);
  assert.equal(r.code, 0, r.stderr);
  return r;
};

/** A failed command: one line on standard error, a non-zero exit, and the registry as it was. */
function refused(args: string[], message: RegExp) {
  const before = runCli('repo', 'list', registry, '--json').stdout;
  const r = runCli('repo', 'add-referenceset', registry, ...args);
  assert.notEqual(r.code, 0, `accepted: ${args.join(' ')}`);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, message);
  assert.equal(runCli('repo', 'list', registry, '--json').stdout, before);
}

/** Every reference of a set as the 0.6.0a10 search gives them: name, length, MD5 ('' when none). */
async function referencesOf(setName: string): Promise<Listed[]> {
  const { records } = await collectPages(server, '/references/search', { referenceSetId: idOf(setName) }, 'references');
  return records.map((r) => ({ name: r.name, length: Number(r.length), md5: r.md5checksum || undefined }));
}

const vcfPlain = path.join(dir, 'contigs.vcf');
let vcfGz: string;
const bcf = path.join(dir, 'contigs.bcf');
const fai = path.join(dir, 'ref_brca1.fa.fai');
const md5List = path.join(dir, 'md5s.txt');
const dict = path.join(dir, 'ref_brca1.dict');
const brca1Md5 = createHash('md5')
  .update(fs.readFileSync(brca1Fasta, 'latin1').split('\n').filter((l) => !l.startsWith('>')).join('').toUpperCase())
  .digest('hex');

before(async () => {
  fs.writeFileSync(vcfPlain, VCF);
  vcfGz = bgzippedVcf(dir, 'contigs.vcf.gz', VCF);
  tool('bcftools', 'view', '-Ob', '-o', bcf, vcfGz);
  fs.copyFileSync(brca1Fasta + '.fai', fai);
  fs.writeFileSync(md5List, `# name md5\nref_brca1 ${brca1Md5}\n`);
  fs.writeFileSync(dict, tool('samtools', 'dict', brca1Fasta));
  cli('repo', 'init', registry);
  cli('repo', 'add-dataset', registry, 'ds');
  cli('repo', 'add-referenceset', registry, '--dictionary', hg00096, '--name', 'hs37d5', '--assembly-id', 'NCBI37');
  cli('repo', 'add-referenceset', registry, '--dictionary', brca1Cram, '--name', 'brca1-cram');
  cli('repo', 'add-referenceset', registry, '--dictionary', dict, '--name', 'brca1-dict', '--circular', 'ref_brca1');
  cli('repo', 'add-referenceset', registry, '--dictionary', vcfPlain, '--name', 'vcf');
  cli('repo', 'add-referenceset', registry, '--dictionary', vcfGz, '--name', 'vcf-gz');
  cli('repo', 'add-referenceset', registry, '--dictionary', bcf, '--name', 'bcf');
  cli('repo', 'add-referenceset', registry, '--dictionary', fai, '--md5', md5List, '--name', 'fai');
  cli('repo', 'add-readgroupset', registry, 'ds', hg00096, '--referenceset', 'hs37d5', '--name', 'bam');
  cli('repo', 'add-readgroupset', registry, 'ds', brca1Cram, '--referenceset', 'brca1-cram', '--name', 'cram');
  server = await startTestServer(registry);
});

describe('add-referenceset --dictionary', () => {
  // First, before any connection to the server sits idle while these commands hold the event loop.
  it('refuses what it cannot register with one line, leaving the registry as it was', () => {
    const write = (name: string, text: string) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      return file;
    };
    refused(['--dictionary', brca1Fasta, '--name', 'x'], /is not a sequence dictionary this server reads/);
    refused(['--dictionary', path.join(dir, 'missing.dict'), '--name', 'x'], /no such file/);
    refused([brca1Fasta, '--dictionary', dict, '--name', 'x'], /either a FASTA file or --dictionary FILE, not both/);
    refused([brca1Fasta, '--md5', md5List, '--name', 'x'], /--md5 completes the MD5s of a --dictionary/);
    refused(['--dictionary', write('empty.dict', '@HD\tVN:1.0\n'), '--name', 'x'], /lists no sequences \(no @SQ lines\)/);
    refused(['--dictionary', write('twice.dict', '@SQ\tSN:a\tLN:5\n@SQ\tSN:a\tLN:5\n'), '--name', 'x'], /lists sequence 'a' twice/);
    refused(['--dictionary', write('nolength.vcf', VCF.replace(',length=16571', '')), '--name', 'x'], /sequence 'chrM' .* has no length \(length=\)/);
    refused(['--dictionary', write('badmd5.dict', '@SQ\tSN:a\tLN:5\tM5:xyz\n'), '--name', 'x'], /MD5 that is not 32 hexadecimal digits/);
    refused(['--dictionary', write('notvcf.vcf', '#CHROM\tPOS\n'), '--name', 'x'], /no ##fileformat=VCF line/);
    refused(['--dictionary', fai, '--md5', write('other.md5', `chr1 ${brca1Md5}\n`), '--name', 'x'], /line 1: the dictionary has no sequence 'chr1'/);
    refused(['--dictionary', fai, '--md5', write('short.md5', 'ref_brca1 abc\n'), '--name', 'x'], /line 1: expected a sequence name and its MD5/);
    refused(['--dictionary', dict, '--md5', write('differs.md5', `ref_brca1 ${'0'.repeat(32)}\n`), '--name', 'x'], /has MD5 .* in .* but 0{32} in/);
    refused(['--dictionary', dict, '--circular', 'chr1', '--name', 'x'], /--circular names 'chr1', but .* has no sequence of that name/);
    refused(['--dictionary', dict, '--name', 'hs37d5'], /reference set 'hs37d5' already exists/);
  });

  it('registers the names, lengths and MD5s of BAM and CRAM headers and of a .dict, as samtools reads them', async () => {
    assert.equal(sqLines(hg00096).length, 86);
    assert.deepEqual(await referencesOf('hs37d5'), sqLines(hg00096));
    assert.deepEqual(await referencesOf('brca1-cram'), sqLines(brca1Cram));
    assert.deepEqual(await referencesOf('brca1-dict'), sqLines(dict));
    const set = (await server.get(`/referencesets/${idOf('hs37d5')}`)).json;
    assert.equal(set.assemblyId, 'NCBI37');
    // Spec 2.3: the MD5 of the references' MD5s, sorted and concatenated.
    const md5s = sqLines(hg00096).map((s) => s.md5!).sort().join('');
    assert.equal(set.md5checksum, createHash('md5').update(md5s).digest('hex'));
  });

  it('registers the ##contig lines of VCF, bgzipped VCF and BCF headers, as bcftools reads them, md5 where they have one', async () => {
    const expected = contigLines(bcf);
    assert.deepEqual(expected.map((c) => c.md5 !== undefined), [true, false]);
    for (const set of ['vcf', 'vcf-gz', 'bcf']) assert.deepEqual(await referencesOf(set), expected, set);
    // Without every reference's MD5, the set has no checksum of its own.
    assert.equal((await server.get(`/referencesets/${idOf('bcf')}`)).json.md5checksum, undefined);
  });

  it('registers a .fai with its MD5s from a list', async () => {
    const [name, length] = fs.readFileSync(fai, 'utf8').split('\t');
    assert.deepEqual(await referencesOf('fai'), [{ name, length: Number(length), md5: brca1Md5 }]);
  });

});

describe('a reference set without bases', () => {
  it('answers its references and their metadata, and 404 for their bases, saying the set holds no sequence', async () => {
    const [first] = sqLines(hg00096);
    const reference = (await server.get(`/references/${idOf('hs37d5', first.name)}`)).json;
    assert.deepEqual([reference.name, Number(reference.length), reference.md5checksum], [first.name, first.length, first.md5]);
    const byMd5 = await server.post('/references/search', { md5checksum: first.md5 });
    assert.deepEqual(byMd5.json.references.map((r: any) => r.id), [idOf('hs37d5', first.name)]);
    const bases = await server.get(`/references/${idOf('hs37d5', first.name)}/bases?start=0&end=10`);
    assert.equal(bases.status, 404);
    assert.match(bases.json.message, /reference set 'hs37d5' holds no sequence/);

    const metadata = await fetch(`${server.url}/refget/sequence/${first.md5}/metadata`);
    assert.equal(metadata.status, 200);
    assert.deepEqual((await metadata.json()).metadata, { id: first.md5, md5: first.md5, ga4gh: null, trunc512: null, length: first.length, aliases: [] });
    const sequence = await fetch(`${server.url}/refget/sequence/${first.md5}`);
    assert.equal(sequence.status, 404);
    assert.match((await sequence.json()).message, /is in reference set 'hs37d5', which holds no sequence/);
  });

  it('serves the reads of a BAM on it, as samtools reads them', async () => {
    const groups = (await server.post('/readgroupsets/search', { datasetId: idOf('ds'), name: 'bam' })).json.readGroupSets[0].readGroups;
    const readGroupIds = groups.map((g: any) => g.id);
    const { records } = await collectPages(server, '/reads/search', { readGroupIds, referenceId: idOf('hs37d5', '1'), start: 0, end: 249250621 }, 'alignments');
    assert.ok(records.length > 0);
    assert.equal(records.length, Number(tool('samtools', 'view', '-c', hg00096, '1').toString()));
  });

  it('refuses a reads search of a CRAM on it, saying there are no bases to decode it with', async () => {
    const [group] = (await server.post('/readgroupsets/search', { datasetId: idOf('ds'), name: 'cram' })).json.readGroupSets[0].readGroups;
    const res = await server.post('/reads/search', { readGroupIds: [group.id] });
    assert.equal(res.status, 400);
    assert.match(res.json.message, /field 'readGroupIds': read group set 'cram' is a CRAM file on reference set 'brca1-cram', which holds no bases to decode it with/);
  });
});
