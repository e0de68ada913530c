/**
 * `repo add-variantset` / `repo remove-variantset` as a user runs them: every refusal is one line on
 * standard error, exit code 1, and leaves the registry (and the folder) as it was.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import type { Registry } from '../src/registry/registry.js';
import { copyFixture, newRegistry, runCli, tempDir } from './helpers.js';

const dir = tempDir();
const sets = path.join(dir, 'sets');
fs.mkdirSync(sets);
const ncbi37 = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);
const V = 'ga4gh-server/datasets/dataset1/variants';

let location: string;
let registry: Registry;

before(async () => {
  ({ location, registry } = await newRegistry(dir));
  await addDataset(registry, 'ds');
  await loadReferenceSet(registry, ncbi37, {});
});

const count = async (table: 'variant_set' | 'call_set' | 'variant_set_file') =>
  Number((await registry.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** Runs a command expected to fail: one line, exit 1, nothing registered. */
async function refuses(args: string[], message: RegExp) {
  const before = [await count('variant_set'), await count('call_set'), await count('variant_set_file')];
  const r = runCli('repo', 'add-variantset', location, ...args);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^ga4gh: [^\n]+\n$/);
  assert.match(r.stderr, message);
  assert.deepEqual([await count('variant_set'), await count('call_set'), await count('variant_set_file')], before);
}

function folder(name: string, fixtures: string[]): string {
  const target = path.join(dir, name);
  fs.mkdirSync(target);
  for (const f of fixtures) copyFixture(f, target);
  return target;
}

describe('add-variantset refusals', () => {
  it('refuses a VCF without an index', async () => {
    const target = folder('noindex', [`${V}/example_2/example_2.vcf.gz`]);
    await refuses(['ds', target, '--referenceset', 'NCBI37', '--allow-missing-contigs'], /no index .*tabix -p vcf/);
  });

  it('refuses files whose samples differ', async () => {
    const target = folder('mixed', [`${V}/1kgPhase1/chr1.vcf.gz`, `${V}/1kgPhase1/chr1.vcf.gz.tbi`, `${V}/example_1/example_1.vcf.gz`, `${V}/example_1/example_1.vcf.gz.tbi`]);
    await refuses(['ds', target, '--referenceset', 'NCBI37'], /samples of .* differ/);
  });

  it('refuses duplicate sample names, and removes the files it made from a plain VCF', async () => {
    const target = path.join(dir, 'dup');
    fs.mkdirSync(target);
    fs.writeFileSync(
      path.join(target, 'dup.vcf'),
      '##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS1\n1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\t1/1\n',
    );
    await refuses(['ds', target, '--referenceset', 'NCBI37'], /sample 'S1' twice/);
    assert.deepEqual(fs.readdirSync(target), ['dup.vcf']);
  });

  it('refuses contigs the reference set lacks unless allowed', async () => {
    const target = folder('ex2', [`${V}/example_2/example_2.vcf.gz`, `${V}/example_2/example_2.vcf.gz.tbi`]);
    await refuses(['ds', target, '--referenceset', 'NCBI37'], /contig\(s\) 20 .*--allow-missing-contigs/);
    const ok = runCli('repo', 'add-variantset', location, 'ds', target, '--referenceset', 'NCBI37', '--allow-missing-contigs');
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /added variant set 'ex2' to dataset 'ds': 1 file\(s\), 3 call set\(s\)/);
  });

  it('refuses unknown datasets, reference sets and paths, and a name already used', async () => {
    const target = folder('1kgPhase1', [`${V}/1kgPhase1/chr1.vcf.gz`, `${V}/1kgPhase1/chr1.vcf.gz.tbi`]);
    await refuses(['nods', target, '--referenceset', 'NCBI37'], /no dataset 'nods'/);
    await refuses(['ds', target, '--referenceset', 'GRCh99'], /no reference set 'GRCh99'/);
    await refuses(['ds', path.join(dir, 'nothing-here.vcf.gz'), '--referenceset', 'NCBI37'], /no such file/);
    await refuses(['ds', target, '--referenceset', 'NCBI37', '--name', 'ex2'], /variant set 'ex2' already exists/);
  });
});

describe('remove-variantset', () => {
  it('keeps the reference set while a variant set uses it, then removes the set and its call sets', async () => {
    const blocked = runCli('repo', 'remove-referenceset', location, 'NCBI37');
    assert.equal(blocked.code, 1);
    assert.match(blocked.stderr, /used by variant set 'ex2' of dataset 'ds'; remove it first/);
    const removed = runCli('repo', 'remove-variantset', location, 'ds', 'ex2');
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(await count('variant_set'), 0);
    assert.equal(await count('call_set'), 0);
    const again = runCli('repo', 'remove-variantset', location, 'ds', 'ex2');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^ga4gh: no variant set 'ex2'/);
  });
});
