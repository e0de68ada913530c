/**
 * `--alternate` on `repo add-readgroupset` and `repo add-variantset`, as a user runs them: another
 * encoding of the same records is registered beside the set (repo list shows it, repo check opens it,
 * removing the set removes it), and an alternate that is not the same records' other encoding is
 * refused in one line on standard error, leaving the registry as it was.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { idOf, newRegistry, runCliAsync, tempDir, TESTDATA } from './helpers.js';
import { tools } from './htsget-fixture.js';

const dir = tempDir('ga4gh-alternates-');
const t = tools(dir);
const files = path.join(dir, 'files');
fs.mkdirSync(files);
for (const f of fs.readdirSync(path.join(TESTDATA, 'htsget'))) fs.copyFileSync(path.join(TESTDATA, 'htsget', f), path.join(files, f));
const at = (name: string) => path.join(files, name);
const BAM = at('htsnexus_test_NA12878.bam');
const CRAM = at('htsnexus_test_NA12878.cram');
const VCF = at('spec-v4.3.vcf.gz');
const BCF = at('spec-v4.3.bcf');

let location: string;

const cli = (...args: string[]) => runCliAsync('repo', ...args);
const listed = async () => JSON.parse((await cli('list', location, '--json')).stdout);

/** The problems `repo check` finds that name `what` (its lines about other sets are not this test's). */
const problemsNaming = async (what: RegExp) => (await cli('check', location)).stderr.split('\n').filter((line) => what.test(line));

async function refuses(command: string, args: string[], message: RegExp) {
  const before = await listed();
  const r = await cli(command, location, 'ds', ...args);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^ga4gh: [^\n]+\n$/);
  assert.match(r.stderr, message);
  assert.deepEqual(await listed(), before);
}

before(async () => {
  const made = await newRegistry(dir);
  location = made.location;
  await made.registry.close();
  assert.equal((await cli('add-dataset', location, 'ds')).code, 0);
  assert.equal((await cli('add-referenceset', location, '--dictionary', BAM, '--name', 'hs37d5')).code, 0);
  assert.equal((await cli('add-referenceset', location, '--dictionary', VCF, '--name', 'b36')).code, 0);
});

describe('repo add-readgroupset --alternate', () => {
  it('registers a CRAM beside a BAM: repo list shows it, repo check opens it, removing the set removes it', async () => {
    const r = await cli('add-readgroupset', location, 'ds', BAM, '--referenceset', 'hs37d5', '--alternate', CRAM);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added read group set 'htsnexus_test_NA12878' \(BAM; alternate CRAM\) to dataset 'ds'/);
    assert.deepEqual((await listed()).read_group_set_alternates, [
      { id: idOf('ds', 'rgs', 'htsnexus_test_NA12878'), dataset: 'ds', name: 'htsnexus_test_NA12878', format: 'CRAM', path: CRAM },
    ]);
    assert.deepEqual(await problemsNaming(/read group set/), []);
    assert.equal((await cli('remove-readgroupset', location, 'ds', 'htsnexus_test_NA12878')).code, 0);
    assert.deepEqual((await listed()).read_group_set_alternates, []);
  });

  it('refuses an alternate of the same format, or whose header sequences differ', async () => {
    await refuses('add-readgroupset', [BAM, '--referenceset', 'hs37d5', '--alternate', BAM], /--alternate .* is a BAM like .*; an alternate is the other encoding/);
    // The same reads under a header that names reference 20 otherwise.
    const header = t.run('samtools', 'view', '-H', BAM).replace('@SQ\tSN:20\t', '@SQ\tSN:chr20\t');
    fs.writeFileSync(at('renamed.sam'), header);
    fs.writeFileSync(at('renamed.bam'), t.bytes('samtools', 'reheader', at('renamed.sam'), BAM));
    t.run('samtools', 'index', at('renamed.bam'));
    await refuses(
      'add-readgroupset',
      [CRAM, '--referenceset', 'hs37d5', '--alternate', at('renamed.bam')],
      /the header sequences of --alternate .*renamed\.bam differ from those of .*: sequence 20 is '20' \(length 63025520\) in one and 'chr20' \(length 63025520\) in the other/,
    );
    await refuses('add-readgroupset', [BAM, '--referenceset', 'hs37d5', '--alternate', at('missing.cram')], /no such file: .*missing\.cram/);
  });
});

describe('repo add-variantset --alternate', () => {
  it('registers a BCF beside a VCF: repo list shows it, repo check opens it', async () => {
    const r = await cli('add-variantset', location, 'ds', VCF, '--referenceset', 'b36', '--alternate', BCF);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added variant set 'spec-v4\.3' to dataset 'ds': 1 file\(s\) \(and 1 BCF alternate\(s\)\)/);
    assert.deepEqual((await listed()).variant_set_alternates, [{ id: idOf('ds', 'vs', 'spec-v4.3'), dataset: 'ds', name: 'spec-v4.3', format: 'BCF', file: 0, path: BCF }]);
    assert.deepEqual(await problemsNaming(/variant set/), []);
    // A BCF that went missing is a problem repo check names.
    fs.renameSync(BCF, at('moved.bcf'));
    try {
      const problems = await problemsNaming(/variant set/);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0], /variant set 'spec-v4\.3' of dataset 'ds': .*spec-v4\.3\.bcf/);
    } finally {
      fs.renameSync(at('moved.bcf'), BCF);
    }
    assert.equal((await cli('remove-variantset', location, 'ds', 'spec-v4.3')).code, 0);
    assert.deepEqual((await listed()).variant_set_alternates, []);
  });

  it('refuses alternates that are not a BCF of each file, with the same contigs and samples, indexed', async () => {
    const vcf = [VCF, '--referenceset', 'b36'];
    await refuses('add-variantset', [...vcf, '--alternate', VCF], /--alternate .*spec-v4\.3\.vcf\.gz is not a BCF file \(\.bcf\)/);
    await refuses('add-variantset', [...vcf, '--alternate', BCF, '--alternate', BCF], /give one --alternate for each VCF file of the set, in the same order: 1 VCF file\(s\), 2 alternate\(s\)/);
    t.run('bcftools', 'view', '--no-version', '-s', 'NA00001', '-Ob', '-o', at('one-sample.bcf'), BCF);
    t.run('bcftools', 'index', at('one-sample.bcf'));
    await refuses('add-variantset', [...vcf, '--alternate', at('one-sample.bcf')], /the samples of --alternate .*one-sample\.bcf differ from those of .*; an alternate holds the same records/);
    const header = t.run('bcftools', 'view', '-h', BCF).replace('##contig=<ID=20,length=62435964', '##contig=<ID=20,length=62435965');
    fs.writeFileSync(at('longer.txt'), header);
    t.run('bcftools', 'reheader', '-h', at('longer.txt'), '-o', at('longer.bcf'), BCF);
    t.run('bcftools', 'index', at('longer.bcf'));
    await refuses('add-variantset', [...vcf, '--alternate', at('longer.bcf')], /the header sequences of --alternate .*longer\.bcf differ .*: sequence 1 is '20' \(length 62435964\) in one and '20' \(length 62435965\) in the other/);
    fs.copyFileSync(BCF, at('unindexed.bcf'));
    await refuses('add-variantset', [...vcf, '--alternate', at('unindexed.bcf')], /has no index \(unindexed\.bcf\.csi\); create one with: bcftools index/);
    fs.writeFileSync(at('plain.bcf'), t.bytes('bgzip', '-dc', BCF));
    await refuses('add-variantset', [...vcf, '--alternate', at('plain.bcf')], /plain\.bcf is not compressed .*bcftools view -Ob/);
  });
});
