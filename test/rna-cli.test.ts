/**
 * The RNA commands as a user runs them: what they print, their exit codes, and that a refused load
 * leaves the registry exactly as it was. Malformed files are made here from the real sample files.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import type { Registry } from '../src/registry/registry.js';
import { copyFixture, newRegistry, runCli, tempDir } from './helpers.js';

const dir = tempDir();
let location: string;
let registry: Registry;

const kallisto = copyFixture('ga4gh-server/abundance.trimmed.txt', dir);
const cufflinks = copyFixture('ga4gh-server/cufflinks.txt', dir);
const salmon = copyFixture('rna/quant.sf', dir);
const rsem = copyFixture('rna/sample1.isoforms.results', dir);
const linesOf = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** A copy of `file` with line `number` (1-based) replaced. */
function withLine(file: string, number: number, edit: (line: string) => string, name = path.basename(file)): string {
  const lines = linesOf(file);
  lines[number - 1] = edit(lines[number - 1]);
  const out = path.join(fs.mkdtempSync(path.join(dir, 'bad-')), name);
  fs.writeFileSync(out, lines.join('\n') + '\n');
  return out;
}

async function snapshot() {
  const count = async (table: 'rna_quantification' | 'rna_expression' | 'rna_quantification_set') =>
    Number((await registry.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return { sets: await count('rna_quantification_set'), quantifications: await count('rna_quantification'), levels: await count('rna_expression') };
}

function assertRefused(result: { code: number; stdout: string; stderr: string }, message: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  const lines = result.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0], /^ga4gh: /);
  assert.match(lines[0], message);
}

before(async () => {
  ({ location, registry } = await newRegistry(dir));
  await addDataset(registry, 'ds');
});

describe('repo add-rnaquantificationset / add-rnaquantification', () => {
  it('adds a set and loads a table, detecting its format', async () => {
    assertRefused(runCli('repo', 'add-rnaquantificationset', location, 'nope', 'set'), /no dataset 'nope'/);
    let r = runCli('repo', 'add-rnaquantificationset', location, 'ds', 'set', '--description', 'samples');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added RNA quantification set 'set'/);
    assertRefused(runCli('repo', 'add-rnaquantificationset', location, 'ds', 'set'), /already exists/);
    r = runCli('repo', 'add-rnaquantification', location, 'ds', 'set', kallisto, '--program', 'kallisto:0.46.1', '--units', 'TPM');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `added RNA quantification 'abundance.trimmed' to set 'set': ${linesOf(kallisto).length - 1} expression level(s), kallisto, TPM`);
    assert.equal(r.stderr, '');
    assert.deepEqual(await snapshot(), { sets: 1, quantifications: 1, levels: linesOf(kallisto).length - 1 });
  });

  it('refuses malformed files of each format with the line and the reason, leaving the registry unchanged', async () => {
    const before = await snapshot();
    const cases: Array<[string[], RegExp]> = [
      [[withLine(kallisto, 4, (l) => l.replace(/\t[^\t]*$/, '\tabc'))], /line 4: column 'tpm' is not a number: 'abc'/],
      [[withLine(cufflinks, 10, (l) => l.split('\t').slice(0, -1).join('\t'))], /line 10: 12 column\(s\), the header has 13/],
      [[withLine(salmon, 1, (l) => l.replace('NumReads', 'Reads')), '--format', 'salmon'], /line 1: not a salmon header: missing column\(s\) 'NumReads'/],
      [[withLine(rsem, 6, () => linesOf(rsem)[2])], /line 6: feature '[^']+' appears again \(first on line 3\)/],
      [[kallisto, '--format', 'cufflinks'], /line 1: not a Cufflinks header: the first column is 'target_id'/],
      // A header most like one format's is read as that format, so the error can say what is wrong.
      [[withLine(salmon, 1, (l) => l.replace('Name', 'transcript'))], /line 1: not a salmon header: the first column is 'transcript', expected 'Name'/],
      [[withLine(salmon, 1, () => 'feature\tvalue')], /line 1: .*not that of an RSEM, kallisto, salmon or Cufflinks table/],
      // Without --format, a kallisto table missing a column is still kallisto's, and the column is named.
      [[withLine(kallisto, 1, (l) => l.replace('\teff_length', ''))], /line 1: not a kallisto header: missing column\(s\) 'eff_length'/],
      [[kallisto, '--name', 'fpkm', '--units', 'FPKM'], /kallisto tables give TPM only/],
    ];
    for (const [args, message] of cases) {
      const result = runCli('repo', 'add-rnaquantification', location, 'ds', 'set', ...args, '--name', 'bad');
      assertRefused(result, message);
      assert.ok(result.stderr.includes(args[0]), `the error names the file: ${result.stderr}`);
    }
    const missing = path.join(dir, 'no-such-abundance.tsv');
    const gone = runCli('repo', 'add-rnaquantification', location, 'ds', 'set', missing);
    assertRefused(gone, /no such file/);
    assert.ok(gone.stderr.includes(missing) && !/ENOENT/.test(gone.stderr), gone.stderr);
    assertRefused(runCli('repo', 'add-rnaquantification', location, 'ds', 'set', kallisto), /already exists in set 'set'/);
    assertRefused(runCli('repo', 'add-rnaquantification', location, 'ds', 'nope', salmon), /no RNA quantification set 'nope'/);
    assert.deepEqual(await snapshot(), before);
  });
});

describe('repo remove-rnaquantification / remove-rnaquantificationset', () => {
  it('removes one quantification, then a set with everything in it', async () => {
    let r = runCli('repo', 'add-rnaquantification', location, 'ds', 'set', cufflinks, '--name', 'cuff');
    assert.equal(r.code, 0, r.stderr);
    r = runCli('repo', 'remove-rnaquantification', location, 'ds', 'set', 'abundance.trimmed');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await snapshot(), { sets: 1, quantifications: 1, levels: linesOf(cufflinks).length - 1 });
    assertRefused(runCli('repo', 'remove-rnaquantification', location, 'ds', 'set', 'abundance.trimmed'), /no RNA quantification 'abundance.trimmed'/);
    r = runCli('repo', 'remove-rnaquantificationset', location, 'ds', 'set');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await snapshot(), { sets: 0, quantifications: 0, levels: 0 });
  });
});
