/**
 * What a new user meets on the command line: hand-made FASTA files, progress of long loads, port
 * checks, removals that say what they did, `repo list --json` for scripts, the server's start and
 * stop lines, and the licence. Runs bin/ga4gh as a user would.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { copyFixture, idOf, ROOT, runCli, runCliAsync, tempDir } from './helpers.js';

const dir = tempDir();

function assertOneLineFailure(r: { code: number; stderr: string }, message: RegExp) {
  assert.notEqual(r.code, 0);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], message);
}

describe('a FASTA without a final newline', () => {
  it('loads, with the .fai samtools faidx writes for it', () => {
    const registry = path.join(dir, 'fasta.sqlite');
    assert.equal(runCli('repo', 'init', registry).code, 0);
    const files = { two: '>a\nACGT\nACGT', one: '>b\nACGTA', several: '>c\nACGTA\nAC\n>d\nAAAAA\nAA' };
    for (const [name, text] of Object.entries(files)) {
      const ours = path.join(dir, `${name}.fa`);
      fs.writeFileSync(ours, text);
      const r = runCli('repo', 'add-referenceset', registry, ours);
      assert.equal(r.code, 0, r.stderr);
      // samtools on a copy of the same bytes gives the expected index.
      const theirs = path.join(fs.mkdtempSync(path.join(dir, 'samtools-')), `${name}.fa`);
      fs.writeFileSync(theirs, text);
      const samtools = spawnSync('samtools', ['faidx', theirs], { encoding: 'utf8' });
      assert.equal(samtools.status, 0, samtools.stderr);
      assert.equal(fs.readFileSync(`${ours}.fai`, 'utf8'), fs.readFileSync(`${theirs}.fai`, 'utf8'), name);
    }
  });
});

describe('progress of a long reference load', () => {
  it('is shown on standard error while the FASTA is read', async () => {
    const registry = path.join(dir, 'progress.sqlite');
    assert.equal(runCli('repo', 'init', registry).code, 0);
    // 9 MB of sequence: read in several slices, each one reported.
    const line = 'ACGT'.repeat(15) + '\n';
    const fasta = path.join(dir, 'big.fa');
    fs.writeFileSync(fasta, '>big\n' + line.repeat(150_000));
    const size = fs.statSync(fasta).size;
    const child = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), 'repo', 'add-referenceset', registry, fasta], {
      encoding: 'utf8',
      env: { ...process.env, GA4GH_PROGRESS_INTERVAL: '0' },
    });
    assert.equal(child.status, 0, child.stderr);
    const lines = child.stderr.split('\n').filter(Boolean);
    assert.ok(lines.length >= 2, child.stderr);
    for (const l of lines) assert.match(l, /^reading .*big\.fa: [\d.]+ of [\d.]+ MB \(\d+%\)$/);
    assert.match(lines.at(-1)!, new RegExp(`${(size / 1e6).toFixed(1)} of ${(size / 1e6).toFixed(1)} MB \\(100%\\)`));
  });
});

describe('serve --port', () => {
  it('refuses a port out of range in one line, as it refuses one that is not a number', () => {
    const registry = path.join(dir, 'port.sqlite');
    assert.equal(runCli('repo', 'init', registry).code, 0);
    for (const port of ['99999', '65536', '-1', 'abc', '80.5']) {
      const r = runCli('serve', registry, '--port', port);
      assertOneLineFailure(r, /option '--port <port>' argument '.*' is invalid\. expected a port number from 0 to 65535/);
      assert.doesNotMatch(r.stderr, /unexpected error/);
    }
  });
});

describe('the server says when it starts and when it stops', () => {
  it('on standard error, with its URL', async () => {
    const registry = path.join(dir, 'serve.sqlite');
    assert.equal(runCli('repo', 'init', registry).code, 0);
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), 'serve', registry, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 30_000;
    while (!/started/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const url = /started: serving .* at (http:\/\/\S+)/.exec(stderr)?.[1];
    assert.ok(url, stderr);
    assert.equal((await fetch(`${url}/info`)).status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(stderr, /stopping \(SIGTERM\)/);
    assert.match(stderr, /stopped serving .*serve\.sqlite\n$/);
  });
});

describe('removals and repo list --json', () => {
  it('name the variant sets that keep a reference set, report what a dataset held, and list ids for scripts', async () => {
    const registry = path.join(dir, 'list.sqlite');
    const ok = async (...args: string[]) => {
      const r = await runCliAsync(...args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await ok('repo', 'init', registry);
    await ok('repo', 'add-dataset', registry, 'ds');
    const sets = path.join(dir, 'sets');
    fs.mkdirSync(sets);
    const fasta = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
    copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
    copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);
    await ok('repo', 'add-referenceset', registry, fasta);
    const phase1 = copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase1', dir);
    await ok('repo', 'add-variantset', registry, 'ds', phase1, '--referenceset', 'NCBI37', '--name', 'p1');
    await ok('repo', 'add-rnaquantificationset', registry, 'ds', 'rna');
    const kallisto = copyFixture('ga4gh-server/abundance.trimmed.txt', dir);
    await ok('repo', 'add-rnaquantification', registry, 'ds', 'rna', kallisto);

    const listed = JSON.parse((await ok('repo', 'list', registry, '--json')).stdout);
    for (const section of ['datasets', 'reference_sets', 'variant_sets', 'rna_quantification_sets', 'rna_quantifications', 'peers']) {
      assert.ok(Array.isArray(listed[section]), section);
    }
    for (const section of Object.keys(listed)) assert.match(section, /^[a-z0-9_]+$/);
    for (const rows of Object.values(listed) as any[][]) {
      for (const row of rows) for (const key of Object.keys(row)) assert.match(key, /^[a-z0-9_]+$/);
    }
    const vcfText = spawnSync('bgzip', ['-dc', path.join(phase1, 'chr1.vcf.gz')], { encoding: 'utf8' }).stdout;
    const sampleCount = vcfText.split('\n').find((l) => l.startsWith('#CHROM'))!.split('\t').length - 9;
    const rnaRows = fs.readFileSync(kallisto, 'utf8').split('\n').filter(Boolean).length - 1;
    assert.deepEqual(listed.datasets, [{ id: idOf('ds'), name: 'ds', description: null, beacon_granularity: 'boolean' }]);
    assert.deepEqual(listed.reference_sets[0].id, idOf('NCBI37'));
    assert.equal(listed.reference_sets[0].references, 3);
    assert.deepEqual(listed.variant_sets[0], {
      id: idOf('ds', 'vs', 'p1'),
      dataset: 'ds',
      name: 'p1',
      reference_set: 'NCBI37',
      files: 3,
      call_sets: sampleCount,
      contigs: ['1', '2', '3'],
    });
    assert.equal(listed.rna_quantification_sets[0].id, idOf('ds', 'rna'));
    assert.equal(listed.rna_quantification_sets[0].quantifications, 1);
    assert.deepEqual([listed.rna_quantifications[0].id, listed.rna_quantifications[0].levels], [idOf('ds', 'rna', 'abundance.trimmed'), rnaRows]);
    const table = (await ok('repo', 'list', registry)).stdout;
    assert.ok(table.includes(idOf('ds', 'vs', 'p1')) && table.includes(idOf('NCBI37')), table);

    const refused = await runCliAsync('repo', 'remove-referenceset', registry, 'NCBI37');
    assertOneLineFailure(refused, /reference set 'NCBI37' is used by variant set 'p1' of dataset 'ds'; remove it first/);
    const removed = await ok('repo', 'remove-dataset', registry, 'ds');
    assert.equal(
      removed.stdout.trim(),
      `removed dataset 'ds' with 1 variant set(s), ${sampleCount} call set(s), 1 RNA quantification set(s), 1 RNA quantification(s), ${rnaRows} expression level(s)`,
    );
    assert.match((await ok('repo', 'remove-referenceset', registry, 'NCBI37')).stdout, /removed reference set 'NCBI37'/);
  });
});

describe('the licence', () => {
  it('is the Apache License 2.0 that package.json names', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(pkg.license, 'Apache-2.0');
    const text = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    assert.match(text, /^\s*Apache License\s+Version 2\.0, January 2004/);
    assert.match(text, /END OF TERMS AND CONDITIONS/);
  });
});
