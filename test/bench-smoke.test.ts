/**
 * The benchmark (npm run bench) at tiny sizes, so that it cannot rot: every part runs end to end
 * against a real server and real baselines, and every figure comes out as a positive number. No
 * targets are checked: timings on a shared machine are noise at these sizes.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from './helpers.js';

const missing = ['bcftools', 'samtools', 'bgzip', 'tabix'].filter((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0);
const skip = missing.length ? `needs ${missing.join(', ')} (apt-get install -y bcftools samtools tabix; .ci/run installs them)` : false;

test('npm run bench at tiny sizes measures every figure', { skip, timeout: 180_000 }, async () => {
  const dir = tempDir('ga4gh-bench-');
  const out = path.join(dir, 'results', 'latest.json');
  const args = [
    '--import', 'tsx', path.join(ROOT, 'bench', 'run.ts'),
    '--sites', '200', '--samples', '50', '--reference-length', '1M', '--rna-rows', '20k',
    '--duration', '1', '--repetitions', '2', '--deep-pages', '50', '--no-targets',
    '--scratch', path.join(dir, 'scratch'), '--out', out,
  ];
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  assert.equal(code, 0, `bench failed:\n${stderr.slice(-3000)}`);

  const result = JSON.parse(fs.readFileSync(out, 'utf8'));
  const parts = new Set(result.figures.map((f: { part: string }) => f.part));
  assert.deepEqual([...parts].sort(), ['P1', 'P2', 'P3', 'P4', 'P5', 'P6']);
  // P1 twice (two page sizes; a per-CPU-second row only when the pass used a second of CPU), P3 five
  // endpoints, P4 first/deep/names and four thresholds, P6 one probe figure.
  const count = (part: string, unit?: string) =>
    result.figures.filter((f: { part: string; unit: string }) => f.part === part && (!unit || f.unit === unit)).length;
  assert.deepEqual([count('P1', 'calls/s'), count('P2'), count('P3'), count('P4'), count('P5'), count('P6')], [2, 1, 5, 7, 1, 1]);
  for (const f of result.figures) {
    for (const key of ['value', 'baseline', 'ratio']) {
      assert.ok(typeof f[key] === 'number' && Number.isFinite(f[key]) && f[key] > 0, `${f.part} ${f.name}: ${key} is ${f[key]}`);
    }
    assert.equal(f.pass, undefined, 'no targets are judged with --no-targets');
  }
  // The answers behind the figures were complete: every call of the region, every base.
  const p1 = result.figures.find((f: { part: string }) => f.part === 'P1');
  const vcf = path.join(dir, 'scratch', fs.readdirSync(path.join(dir, 'scratch'))[0], 'cohort.vcf.gz');
  const records = spawnSync('bcftools', ['view', '-H', '-r', p1.detail.region, vcf], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  assert.ok(records.length > 100, `${records.length} records in ${p1.detail.region}`);
  assert.equal(p1.detail.variants, records.length);
  assert.equal(p1.detail.verifiedCalls, records.length * 50, "every call counted one by one");
  assert.equal(result.figures.find((f: { part: string }) => f.part === 'P2').detail.bases, 1_000_000);
  for (const step of ['repo init', 'repo add-referenceset', 'repo add-variantset', 'repo add-rnaquantification']) {
    assert.ok(result.loadSeconds[step] > 0, `load time of ${step}`);
  }
  // The table printed on standard output names every part.
  for (const part of ['P1', 'P2', 'P3', 'P4', 'P5']) assert.match(stdout, new RegExp(`^${part} `, 'm'));
});
