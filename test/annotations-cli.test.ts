/**
 * The sequence-annotation commands as a user runs them: add/remove feature and continuous sets, every
 * refusal (one line on stderr, non-zero exit, registry unchanged), `repo list` and `repo check`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { readGffLines, writeContigFasta } from './annotation-fixture.js';
import { backends } from './backends.js';
import { copyFixture, runCliAsync, tempDir } from './helpers.js';

const dir = tempDir();
const ANNOTATIONS = 'ga4gh-server/datasets/dataset1/sequenceAnnotations';
const CONTINUOUS = 'ga4gh-server/datasets/dataset1/continuous';
const files = {
  brca1: copyFixture('compliance/brca1_gencodev19.gff3', dir),
  gencode: copyFixture(`${ANNOTATIONS}/gencodeV21Set1.gff3`, dir),
  obo: copyFixture('compliance/so-xp-simple.obo', dir),
  fasta: copyFixture('compliance/ref_brca1.fa', dir),
  bigwig: copyFixture(`${CONTINUOUS}/bigwig_1.bw`, dir),
  wiggle: copyFixture(`${CONTINUOUS}/wiggle.txt`, dir),
};
const bedGraph = path.join(dir, 'signal.bedGraph');
fs.writeFileSync(bedGraph, 'chr19\t100\t200\t1.5\nchr19\t200\t300\t2.5\n');
const badLine = path.join(dir, 'bad.gff3');
const brca1Text = fs.readFileSync(files.brca1, 'utf8').split('\n');
fs.writeFileSync(badLine, [...brca1Text.slice(0, 40), 'ref_brca1\tHAVANA\texon\tten\t20\t.\t+\t.\tID=x', ...brca1Text.slice(40)].join('\n'));
// chr1 is in the contig FASTA below, chrX and chrY are not: the first line naming chrX is refused.
const onlyChr1 = writeContigFasta(path.join(dir, 'chr1', 'chr1.fa'), ['chr1']);
const firstMissing = readGffLines(files.gencode).find((l) => l.seqid !== 'chr1')!.seqid;
const contigs = writeContigFasta(path.join(dir, 'contigs', 'chr19.fa'), ['chr19']);

for (const backend of backends) {
  describe(`annotation commands (${backend.name})`, { skip: backend.skip }, () => {
    let registry: string;
    const cli = (...args: string[]) => runCliAsync(...args);
    /**
     * Runs refused commands one after the other (SQLite lets one writer in at a time); then the registry
     * must list exactly what it did before. On PostgreSQL only the refusals that come in the middle of a
     * load run: the rest are decided before any backend is written to.
     */
    const refused = async (...cases: Array<[RegExp, ...string[]]>) => {
      const before = (await cli('repo', 'list', registry)).stdout;
      const results: Awaited<ReturnType<typeof cli>>[] = [];
      for (const [, ...args] of cases) results.push(await cli(...args));
      cases.forEach(([pattern, ...args], i) => {
        const r = results[i];
        assert.notEqual(r.code, 0, `${args.join(' ')} should fail`);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, pattern);
      });
      assert.equal((await cli('repo', 'list', registry)).stdout, before, 'the registry is unchanged');
    };

    before(async () => {
      registry = await backend.newLocation(dir);
      for (const args of [
        ['repo', 'init', registry],
        ['repo', 'add-dataset', registry, 'ds'],
        ['repo', 'add-referenceset', registry, files.fasta, '--name', 'hg37'],
        ['repo', 'add-referenceset', registry, onlyChr1, '--name', 'chr1only'],
        ['repo', 'add-referenceset', registry, contigs, '--name', 'chr19only'],
        ['repo', 'add-ontology', registry, files.obo, '--name', 'so'],
      ]) {
        const r = await cli(...args);
        assert.equal(r.code, 0, r.stderr);
      }
    });

    // The commands decide the same on both backends; PostgreSQL runs the refusals that come in the
    // middle of a load, where its transaction must undo what was written.
    const sqliteOnly = { skip: backend.name === 'postgres' && 'the same commands; covered on SQLite' };

    it('adds, lists, checks and removes feature sets and continuous sets', sqliteOnly, async () => {
      const added = await cli('repo', 'add-featureset', registry, 'ds', files.brca1, '--referenceset', 'hg37', '--ontology', 'so', '--source-uri', 'https://example.org/x.gff3');
      assert.equal(added.code, 0, added.stderr);
      assert.match(added.stdout, new RegExp(`added feature set 'brca1_gencodev19' to dataset 'ds': ${readGffLines(files.brca1).length} feature`));
      const cs = await cli('repo', 'add-continuousset', registry, 'ds', files.bigwig, '--referenceset', 'chr19only', '--name', 'signal');
      assert.equal(cs.code, 0, cs.stderr);
      const list = await cli('repo', 'list', registry);
      assert.match(list.stdout, /Feature sets \(1\)/);
      assert.match(list.stdout, /brca1_gencodev19\s+902\s+hg37\s+so/);
      assert.match(list.stdout, /Continuous sets \(1\)/);
      assert.match(list.stdout, /signal\s+chr19only/);
      const check = await cli('repo', 'check', registry);
      assert.equal(check.code, 0, check.stdout + check.stderr);

      await refused(
        [/ontology 'so' is used/, 'repo', 'remove-ontology', registry, 'so'],
        [/already exists/, 'repo', 'add-featureset', registry, 'ds', files.brca1, '--referenceset', 'hg37'],
        [/already exists/, 'repo', 'add-continuousset', registry, 'ds', files.bigwig, '--referenceset', 'chr19only', '--name', 'signal'],
      );
      assert.equal((await cli('repo', 'remove-featureset', registry, 'ds', 'brca1_gencodev19')).code, 0);
      assert.equal((await cli('repo', 'remove-continuousset', registry, 'ds', 'signal')).code, 0);
      await refused(
        [/no feature set 'brca1_gencodev19'/, 'repo', 'remove-featureset', registry, 'ds', 'brca1_gencodev19'],
        [/no continuous set 'signal'/, 'repo', 'remove-continuousset', registry, 'ds', 'signal'],
      );
      assert.doesNotMatch((await cli('repo', 'list', registry)).stdout, /brca1_gencodev19|signal/);
    });

    it('refuses bad feature loads, leaving the registry as it was', async () => {
      await refused(
        [new RegExp(`reference '${firstMissing}' is not in reference set 'chr1only'`), 'repo', 'add-featureset', registry, 'ds', files.gencode, '--referenceset', 'chr1only'],
        [/line 41: start 'ten'/, 'repo', 'add-featureset', registry, 'ds', badLine, '--referenceset', 'hg37'],
      );
      if (backend.name === 'postgres') return;
      await refused(
        [/no dataset 'nope'/, 'repo', 'add-featureset', registry, 'nope', files.brca1, '--referenceset', 'hg37'],
        [/no reference set 'nope'/, 'repo', 'add-featureset', registry, 'ds', files.brca1, '--referenceset', 'nope'],
        [/no ontology 'nope'/, 'repo', 'add-featureset', registry, 'ds', files.brca1, '--referenceset', 'hg37', '--ontology', 'nope'],
        [/no such file/, 'repo', 'add-featureset', registry, 'ds', path.join(dir, 'missing.gff3'), '--referenceset', 'hg37'],
        [/not a GFF3 file|columns/, 'repo', 'add-featureset', registry, 'ds', files.bigwig, '--referenceset', 'hg37'],
        [/required option/, 'repo', 'add-featureset', registry, 'ds', files.brca1],
      );
    });

    it('refuses wiggle, bedGraph and other files as continuous sets, with a hint', sqliteOnly, async () => {
      await refused(
        [/wiggle.*wigToBigWig/, 'repo', 'add-continuousset', registry, 'ds', files.wiggle, '--referenceset', 'chr19only'],
        [/bedGraph.*bedGraphToBigWig/, 'repo', 'add-continuousset', registry, 'ds', bedGraph, '--referenceset', 'chr19only'],
        [/not a bigWig/, 'repo', 'add-continuousset', registry, 'ds', files.brca1, '--referenceset', 'chr19only'],
        [/reference 'chr19' is not in reference set 'hg37'/, 'repo', 'add-continuousset', registry, 'ds', files.bigwig, '--referenceset', 'hg37'],
        [/no such file/, 'repo', 'add-continuousset', registry, 'ds', path.join(dir, 'nope.bw'), '--referenceset', 'chr19only'],
      );
    });
  });
}
