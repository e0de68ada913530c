/**
 * `repo add-readgroupset` / `repo remove-readgroupset` as a user runs them (every refusal is one line
 * on standard error, exit code 1, and leaves the registry as it was), `repo list` and `repo check`, and
 * a BAM read over HTTP ranges giving the same answers as the same file on disk.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addBiosampleFromFile } from '../src/areas/biometadata/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import type { Registry } from '../src/registry/registry.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { collectPages, copyFixture, idOf, newRegistry, runCli, runCliAsync, startTestServer, tempDir, TESTDATA } from './helpers.js';
import { startRangeServer } from './range-server.js';

const dir = tempDir();
const files = path.join(dir, 'files');
fs.mkdirSync(files);
const brca1Fasta = copyFixture('compliance/ref_brca1.fa', dir);
const ncbi37 = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', dir);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', dir);
const R = 'ga4gh-server/datasets/dataset1/reads';
const kg = 'HG00096.mapped.ILLUMINA.bwa.GBR.low_coverage.20120522.bam';
for (const f of [kg, `${kg}.bai`, 'wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam', 'wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam.bai']) copyFixture(`${R}/${f}`, files);
for (const f of ['brca1_HG00096.bam', 'brca1_HG00096.bam.bai', 'brca1_HG00101.bam', 'brca1_HG00096.sam']) copyFixture(`compliance/${f}`, files);
copyFixture('reads/chr17.1-250.byname.bam', files);
const served = path.join(dir, 'served');
fs.mkdirSync(served);
copyFixture('compliance/brca1_HG00096.bam', served);
copyFixture('compliance/brca1_HG00096.bam.bai', served);

let location: string;
let registry: Registry;

before(async () => {
  const made = await newRegistry(dir);
  location = made.location;
  registry = made.registry;
  await addDataset(made.registry, 'ds');
  await addBiosampleFromFile(made.registry, 'ds', path.join(TESTDATA, 'compliance', 'biosample_HG00096.json'));
  await loadReferenceSet(made.registry, brca1Fasta, { name: 'hg37' });
  await loadReferenceSet(made.registry, ncbi37, {});
});

const listed = () => JSON.parse(runCli('repo', 'list', location, '--json').stdout)['read_group_sets'];

const rows = () => registry.db.selectFrom('read_group_set').selectAll().orderBy('name').execute();

/** A command expected to fail: one line, exit 1, nothing registered. */
async function refuses(args: string[], message: RegExp) {
  const before = await rows();
  const r = await runCliAsync('repo', 'add-readgroupset', location, ...args);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^ga4gh: [^\n]+\n$/);
  assert.match(r.stderr, message);
  assert.deepEqual(await rows(), before);
}

describe('repo add-readgroupset', () => {
  it('registers a BAM, says what it found, lists and checks it, and removes it', async () => {
    const r = runCli('repo', 'add-readgroupset', location, 'ds', path.join(files, 'brca1_HG00096.bam'), '--referenceset', 'hg37', '--biosample-id', 'HG00096');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /warning: reference 'ref_brca1' is 171823 bases long .* but 81188/);
    assert.match(r.stdout, /added read group set 'brca1_HG00096' \(BAM\) to dataset 'ds': read group\(s\) SRR062634, SRR062635, SRR062641, 4053 aligned and 15 unaligned/);
    assert.deepEqual(listed(), [
      {
        id: idOf('ds', 'rgs', 'brca1_HG00096'),
        dataset: 'ds',
        name: 'brca1_HG00096',
        reference_set: 'hg37',
        format: 'BAM',
        read_groups: ['SRR062634', 'SRR062635', 'SRR062641'],
        aligned: 4053,
        unaligned: 15,
        biosample: 'HG00096',
      },
    ]);
    assert.equal(runCli('repo', 'check', location).code, 0);
    await refuses(['ds', path.join(files, 'brca1_HG00096.bam'), '--referenceset', 'hg37'], /already exists in dataset 'ds'; choose another with --name/);
    const removed = runCli('repo', 'remove-readgroupset', location, 'ds', 'brca1_HG00096');
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(listed(), []);
    const again = runCli('repo', 'remove-readgroupset', location, 'ds', 'brca1_HG00096');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^ga4gh: no read group set 'brca1_HG00096' in dataset 'ds'/);
  });

  it('refuses what it cannot serve, saying how to make what is needed', async () => {
    // Run side by side: each refusal leaves the registry as it was, so they cannot disturb each other.
    await Promise.all([
      refuses(['ds', path.join(files, 'brca1_HG00099.bam'), '--referenceset', 'hg37', '--biosample-id', 'HG00099'], /--biosample-id: no biosample 'HG00099' in dataset 'ds'/),
      refuses(['ds', path.join(files, 'brca1_HG00096.sam'), '--referenceset', 'hg37'], /is a SAM file; .*samtools sort -o brca1_HG00096\.bam .* samtools index .*samtools view -b/),
      refuses(['ds', path.join(files, 'brca1_HG00101.bam'), '--referenceset', 'hg37'], /has no index \(\.bai or \.csi\); create one with: samtools index /),
      refuses(['ds', path.join(files, 'chr17.1-250.byname.bam'), '--referenceset', 'hg37'], /sorted by queryname, not by coordinate .*samtools sort -o sorted\.bam .* samtools index/),
      refuses(['ds', path.join(files, 'wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam'), '--referenceset', 'hg37'], /reference 'chr1' of .* \(@SQ\) is not in reference set 'hg37'/),
      refuses(['ds', path.join(files, kg), '--referenceset', 'NCBI37'], /reference '1' of .* has M5 1b22b98cdeb4a9304cb5d48026a85128, but reference set 'NCBI37' has /),
      refuses(['ds', path.join(files, 'missing.bam'), '--referenceset', 'hg37'], /no such file/),
      refuses(['ds', path.join(files, 'brca1_HG00096.bam.bai'), '--referenceset', 'hg37'], /neither a BAM .* nor a CRAM/),
      refuses(['nods', path.join(files, 'brca1_HG00096.bam'), '--referenceset', 'hg37'], /no dataset 'nods'/),
      refuses(['ds', path.join(files, 'brca1_HG00096.bam'), '--referenceset', 'nope'], /no reference set 'nope'/),
    ]);
  });

  it('reports an unreadable registered file in repo check', () => {
    const copy = path.join(dir, 'gone.bam');
    fs.copyFileSync(path.join(files, 'brca1_HG00096.bam'), copy);
    fs.copyFileSync(path.join(files, 'brca1_HG00096.bam.bai'), `${copy}.bai`);
    assert.equal(runCli('repo', 'add-readgroupset', location, 'ds', copy, '--referenceset', 'hg37').code, 0);
    fs.rmSync(copy);
    const r = runCli('repo', 'check', location);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /problem: read group set 'gone' of dataset 'ds'/);
    assert.equal(runCli('repo', 'remove-readgroupset', location, 'ds', 'gone').code, 0);
  });
});

describe('a remote BAM', () => {
  it('is read by byte ranges and answers as the same file on disk', async () => {
    const ranges = await startRangeServer(served);
    const far = await runCliAsync('repo', 'add-readgroupset', location, 'ds', `${ranges.url}/brca1_HG00096.bam`, '--referenceset', 'hg37', '--name', 'remote');
    assert.equal(far.code, 0, far.stderr);
    const near = await runCliAsync('repo', 'add-readgroupset', location, 'ds', path.join(served, 'brca1_HG00096.bam'), '--referenceset', 'hg37', '--name', 'local');
    assert.equal(near.code, 0, near.stderr);
    const missing = await runCliAsync('repo', 'add-readgroupset', location, 'ds', `${ranges.url}/nothing.bam`, '--referenceset', 'hg37');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot be read/);
    const server = await startTestServer(location);
    ranges.log.length = 0;
    const pages = (set: string, extra: object) =>
      collectPages(server, '/reads/search', { readGroupIds: ['SRR062634', 'SRR062641'].map((g) => idOf('ds', 'rgs', set, g)), ...extra }, 'alignments');
    const bamReads = () => ranges.log.filter((l) => l.startsWith('GET /brca1_HG00096.bam '));
    for (const extra of [{ pageSize: 500 }, { referenceId: idOf('hg37', 'ref_brca1'), start: 41_000, end: 42_000, pageSize: 7 }, { pageSize: 40 }]) {
      const readsBefore = bamReads().length;
      const remote = await pages('remote', extra);
      const remoteReads = bamReads().length - readsBefore;
      const local = await pages('local', extra);
      const neutral = (a: any) => ({ ...a, id: undefined, readGroupId: undefined });
      assert.ok(remote.records.length > 0);
      assert.deepEqual(remote.records.map(neutral), local.records.map(neutral));
      assert.equal(remote.pages, local.pages);
      // Each page starts where the one before stopped, in bytes read already: one range request serves
      // many pages (a request per block of the file that a page entered was 18 here).
      if (extra.pageSize === 40) assert.ok(remote.pages >= 20 && remoteReads <= remote.pages / 10, `${remoteReads} range requests for ${remote.pages} pages`);
    }
    const reads = bamReads();
    assert.ok(reads.length > 0 && reads.every((l) => /bytes=\d+-\d+$/.test(l)), 'the BAM is read by ranges');
    // Once by each thread that builds pages: the main thread the small ones, the page worker the others.
    assert.ok(ranges.log.filter((l) => l.startsWith('GET /brca1_HG00096.bam.bai')).length <= 2, 'the index is fetched once a thread');
  });
});
