/** The `ga4gh` command line as a user runs it: registry commands, reference set loading, refusals. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { backends, newPostgresDatabase } from './backends.js';
import { progressLine } from '../src/cli/output.js';
import { copyFixture, idOf, ROOT, runCli, tempDir, TESTDATA } from './helpers.js';

const dir = tempDir();
const registry = path.join(dir, 'reg.sqlite');

function assertOneLineFailure(r: { code: number; stderr: string; stdout: string }, message: RegExp) {
  assert.notEqual(r.code, 0, 'expected a non-zero exit');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `expected one line, got:\n${r.stderr}`);
  assert.match(lines[0], message);
  assert.doesNotMatch(r.stderr, /\s+at\s.+:\d+:\d+/, 'no stack trace');
}

const listJson = () => JSON.parse(runCli('repo', 'list', registry, '--json').stdout);

describe('registry commands', () => {
  it('init creates a registry; other commands refuse a missing one', () => {
    assertOneLineFailure(runCli('repo', 'list', registry), /no registry at .*repo init/);
    const r = runCli('repo', 'init', registry);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.existsSync(registry));
    const listed = listJson();
    assert.deepEqual([listed.datasets, listed.reference_sets], [[], []]);
  });

  it('migrate refuses a missing registry, creating nothing, and a file that is no registry', () => {
    const mistyped = path.join(dir, 'mistyped', 'reg.sqlite');
    assertOneLineFailure(runCli('repo', 'migrate', mistyped), /no registry at .*mistyped.*; create one with: ga4gh repo init/);
    assert.ok(!fs.existsSync(path.dirname(mistyped)), 'no folder or file created');
    const empty = path.join(dir, 'empty.sqlite');
    fs.writeFileSync(empty, '');
    assertOneLineFailure(runCli('repo', 'migrate', empty), /empty\.sqlite is not an initialised registry; run: ga4gh repo init/);
  });

  it('init on an existing registry says so, exits 0 and keeps what it holds', () => {
    const again = path.join(dir, 'again.sqlite');
    const first = runCli('repo', 'init', again);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout.trim(), `created registry ${again}`);
    assert.equal(runCli('repo', 'add-dataset', again, 'kept').code, 0);
    const second = runCli('repo', 'init', again);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout.trim(), `registry ${again} already exists: it is up to date, nothing changed`);
    assert.deepEqual(JSON.parse(runCli('repo', 'list', again, '--json').stdout).datasets.map((d: any) => d.name), ['kept']);
  });

  it('adds and removes datasets, refusing duplicates and unknown names', () => {
    assert.equal(runCli('repo', 'add-dataset', registry, 'ds1', '--description', 'first one').code, 0);
    assertOneLineFailure(runCli('repo', 'add-dataset', registry, 'ds1'), /dataset 'ds1' already exists/);
    assert.equal(runCli('repo', 'add-dataset', registry, 'ds2').code, 0);
    assert.equal(runCli('repo', 'remove-dataset', registry, 'ds2').code, 0);
    assertOneLineFailure(runCli('repo', 'remove-dataset', registry, 'ds2'), /no dataset 'ds2'/);
    assert.deepEqual(listJson().datasets, [{ id: idOf('ds1'), name: 'ds1', description: 'first one', beacon_granularity: 'boolean' }]);
  });
});

describe('add-referenceset', () => {
  it('creates missing .fai and .gzi beside a bgzipped FASTA, the same as samtools wrote them', () => {
    const fasta = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', dir);
    const r = runCli('repo', 'add-referenceset', registry, fasta, '--assembly-id', 'GRCh37', '--species-term-id', 'NCBITaxon:9606', '--species-term', 'Homo sapiens');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added reference set 'NCBI37': 3 reference\(s\)/);
    const shipped = path.join(TESTDATA, 'ga4gh-server/referenceSets/NCBI37.fa.gz');
    assert.deepEqual(fs.readFileSync(fasta + '.fai'), fs.readFileSync(shipped + '.fai'));
    assert.deepEqual(fs.readFileSync(fasta + '.gzi'), fs.readFileSync(shipped + '.gzi'));
    const [set] = listJson().reference_sets;
    assert.equal(set.name, 'NCBI37');
    assert.equal(set.assembly, 'GRCh37');
  });

  it('names the set after the file, and indexes a plain FASTA', () => {
    const fasta = copyFixture('compliance/ref_brca1.fa', dir);
    assert.equal(runCli('repo', 'add-referenceset', registry, fasta).code, 0);
    const fai = fs.readFileSync(fasta + '.fai', 'utf8').trim().split('\t');
    // samtools faidx: name, length, offset of the first base, bases per line, bytes per line.
    const text = fs.readFileSync(fasta, 'utf8');
    const header = text.slice(0, text.indexOf('\n') + 1);
    const lines = text.slice(header.length).trim().split('\n');
    assert.deepEqual(fai, ['ref_brca1', String(lines.join('').length), String(header.length), String(lines[0].length), String(lines[0].length + 1)]);
    assert.deepEqual(listJson().reference_sets.map((s: any) => s.name), ['NCBI37', 'ref_brca1']);
  });

  it('refuses bad input with one line, leaving the registry as it was', () => {
    const before = listJson();
    const gz = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', path.join(dir, 'x'));
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, path.join(dir, 'x')), /is not a file/);
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, path.join(dir, 'missing.fa')), /no such file/);
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, gz), /reference set 'NCBI37' already exists/);
    // gzip that is not BGZF cannot be read by index.
    const plainGz = path.join(dir, 'plain.fa.gz');
    fs.writeFileSync(plainGz, zlib.gzipSync('>a\nACGT\n'));
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, plainGz), /not BGZF.*bgzip/);
    // A stale index.
    const stale = path.join(dir, 'stale.fa');
    fs.writeFileSync(stale, '>a\nACGTACGT\n');
    fs.writeFileSync(stale + '.fai', 'a\t4\t3\t4\t5\n');
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, stale), /does not match/);
    // Lines of uneven length cannot be indexed.
    const ragged = path.join(dir, 'ragged.fa');
    fs.writeFileSync(ragged, '>a\nACG\nACGTA\nAC\n');
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, ragged), /line 3: .*different lengths/);
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, ragged, '--species-term-id', 'NCBITaxon:1'), /go together/);
    const accessions = path.join(dir, 'accessions.txt');
    fs.writeFileSync(accessions, '1 NC_000001.10\nchr9 NC_000009.11\n');
    const example = copyFixture('ga4gh-server/referenceSets/example_1.fa.gz', dir);
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry, example, '--reference-accessions', accessions), /accessions\.txt line 1: the FASTA has no sequence '1'/);
    assertOneLineFailure(runCli('repo', 'add-referenceset', registry), /missing required argument/);
    assert.deepEqual(listJson(), before);
  });
});

describe('check and remove', () => {
  it('check passes while files are readable and reports a missing file', () => {
    assert.equal(runCli('repo', 'check', registry).code, 0);
    const fasta = path.join(dir, 'ref_brca1.fa');
    fs.renameSync(fasta, fasta + '.moved');
    const r = runCli('repo', 'check', registry);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /reference set 'ref_brca1'/);
    fs.renameSync(fasta + '.moved', fasta);
    assert.equal(runCli('repo', 'check', registry).code, 0);
  });

  it('removes a reference set', () => {
    assert.equal(runCli('repo', 'remove-referenceset', registry, 'ref_brca1').code, 0);
    assertOneLineFailure(runCli('repo', 'remove-referenceset', registry, 'ref_brca1'), /no reference set 'ref_brca1'/);
  });
});

describe('serve', () => {
  it('refuses a registry that needs migrations, until repo migrate', async () => {
    const old = path.join(dir, 'old.sqlite');
    assert.equal(runCli('repo', 'init', old).code, 0);
    // Make it look like a registry from before the reference migrations.
    const db = new BetterSqlite3(old);
    db.exec('DROP TABLE reference_set_accession; DROP TABLE reference; DROP TABLE reference_set; DELETE FROM ga4gh_schema_version WHERE version IN (2, 8);');
    db.close();
    assertOneLineFailure(runCli('serve', old, '--port', '0'), /needs 2 schema migration.*repo migrate/);
    const migrated = runCli('repo', 'migrate', old);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied 2 reference sets/);
    assert.equal(runCli('repo', 'add-referenceset', old, copyFixture('ga4gh-server/referenceSets/Default.fa.gz', dir)).code, 0);
  });

  it('serves a registry on the port asked for', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'ga4gh'), 'serve', registry, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const m = out.match(/at (http:\/\/\S+)/);
          if (m) resolve(m[1]);
        });
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
      });
      const res = await fetch(url + '/referencesets/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.deepEqual((await res.json()).referenceSets.map((s: any) => s.name), ['NCBI37']);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('the same commands on a PostgreSQL registry', { skip: backends.find((b) => b.name === 'postgres')!.skip }, () => {
  it('init, load, list, refuse to serve an unmigrated registry, migrate', async () => {
    const url = await newPostgresDatabase();
    assertOneLineFailure(runCli('repo', 'migrate', url), /is not an initialised registry; run: ga4gh repo init/);
    assert.equal(runCli('repo', 'init', url).code, 0);
    assert.equal(runCli('repo', 'add-dataset', url, 'pg1').code, 0);
    const fasta = copyFixture('ga4gh-server/referenceSets/example_2.fa.gz', path.join(dir, 'pg'));
    const added = runCli('repo', 'add-referenceset', url, fasta);
    assert.equal(added.code, 0, added.stderr);
    const listed = JSON.parse(runCli('repo', 'list', url, '--json').stdout);
    assert.deepEqual(listed.datasets, [{ id: idOf('pg1'), name: 'pg1', description: null, beacon_granularity: 'boolean' }]);
    assert.deepEqual(listed.reference_sets.map((s: any) => s.name), ['example_2']);
    assertOneLineFailure(runCli('repo', 'add-dataset', url, 'pg1'), /dataset 'pg1' already exists/);
    // Undo the newest migration, as if the registry came from an older version.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('DROP TABLE reference_accession; DELETE FROM ga4gh_schema_version WHERE version = 7');
    await admin.end();
    assertOneLineFailure(runCli('serve', url, '--port', '0'), /needs 1 schema migration.*repo migrate/);
    const migrated = runCli('repo', 'migrate', url);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied 7 reference accessions/);
  });
});

describe('progress lines', () => {
  /** What progressLine writes to standard error while `body` runs, GA4GH_PROGRESS_INTERVAL set to `interval`. */
  async function progressWritten(interval: string, body: (line: ReturnType<typeof progressLine>) => Promise<void>): Promise<string> {
    const saved = { interval: process.env.GA4GH_PROGRESS_INTERVAL, write: process.stderr.write };
    let written = '';
    process.env.GA4GH_PROGRESS_INTERVAL = interval;
    process.stderr.write = ((chunk: string) => ((written += chunk), true)) as typeof process.stderr.write;
    try {
      await body(progressLine());
    } finally {
      process.stderr.write = saved.write;
      if (saved.interval === undefined) delete process.env.GA4GH_PROGRESS_INTERVAL;
      else process.env.GA4GH_PROGRESS_INTERVAL = saved.interval;
    }
    return written;
  }

  it('GA4GH_PROGRESS_INTERVAL is in milliseconds, as documented', async () => {
    assert.ok(!process.stderr.isTTY, 'standard error is not a terminal under the test runner');
    const steps = async (line: ReturnType<typeof progressLine>) => {
      line.show('step 1');
      await new Promise((resolve) => setTimeout(resolve, 150));
      line.show('step 2');
    };
    assert.equal(await progressWritten('100', steps), 'step 2\n', 'a line once 100 ms have passed');
    assert.equal(await progressWritten('60000', steps), '', 'none within a minute');
  });
});
