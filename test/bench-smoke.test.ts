/**
 * The benchmark (npm run bench) at tiny sizes, so that it cannot rot: every part runs end to end
 * against a real server and real baselines, and every figure comes out as a positive number; so does
 * its audit of one mechanism on and off. No targets are checked: timings on a shared machine are
 * noise at these sizes.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from './helpers.js';

const missing = ['bcftools', 'samtools', 'bgzip', 'tabix'].filter((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0);
const skip = missing.length ? `needs ${missing.join(', ')} (apt-get install -y bcftools samtools tabix; .ci/run installs them)` : false;

const TINY = ['--sites', '200', '--samples', '50', '--reference-length', '1M', '--rna-rows', '20k', '--reads', '20k', '--duration', '1'];

/** `npm run bench -- ARGS`: its exit code and output. */
function bench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'run.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The generated files of a scratch folder whose names end with `suffix`. */
const generated = (scratch: string, suffix: string) =>
  fs
    .readdirSync(scratch)
    .flatMap((d) => (fs.statSync(path.join(scratch, d)).isDirectory() ? fs.readdirSync(path.join(scratch, d)).map((n) => path.join(scratch, d, n)) : []))
    .filter((f) => f.endsWith(suffix));

test('npm run bench at tiny sizes measures every figure', { skip, timeout: 240_000 }, async () => {
  const dir = tempDir('ga4gh-bench-');
  const out = path.join(dir, 'results', 'latest.json');
  const { code, stdout, stderr } = await bench([
    ...TINY, '--repetitions', '2', '--deep-pages', '50', '--features', '20k', '--bigwig-length', '200k', '--no-targets',
    '--scratch', path.join(dir, 'scratch'), '--out', out,
  ]);
  assert.equal(code, 0, `bench failed:\n${stderr.slice(-3000)}`);

  const result = JSON.parse(fs.readFileSync(out, 'utf8'));
  const parts = new Set(result.figures.map((f: { part: string }) => f.part));
  assert.deepEqual([...parts].sort(), ['B1', 'C1', 'F1', 'F2', 'H1', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'READS']);
  // P1: two page sizes against bcftools, three codings against the replay, the least work of a server
  // beside the replay, 2 and 4 clients in two codings (a per-CPU-second row only when the pass used a
  // second of CPU); bytes per call of two codings. P3 five endpoints, P4 first/deep/names and four
  // thresholds, P6 the probe of the server and of the bare replay, READS pages of 1000 against
  // samtools and the replay, the least work of a server beside the replay, pages of the default size
  // against their replay, and the CRAM's pages against samtools.
  const count = (part: string, unit?: string) =>
    result.figures.filter((f: { part: string; unit: string }) => f.part === part && (!unit || f.unit === unit)).length;
  assert.deepEqual(
    [count('P1', 'calls/s'), count('P1', 'B/call'), count('P2'), count('P3'), count('P4'), count('P5'), count('P6'), count('READS')],
    [10, 2, 1, 5, 7, 1, 2, 5],
  );
  // F1 the load, F2 a region, a name and a symbol page (over HTTP and in process), C1 one window; H1
  // samtools and bcftools through htsget and from a bare range server (the floor) against the local
  // files, and the one-region ticket.
  assert.deepEqual([count('F1'), count('F2'), count('C1'), count('H1', 'records/s'), count('H1', 'ms')], [1, 6, 1, 4, 1]);
  // B1: sequence queries at boolean and count granularity beside the reader's own lookup, and records
  // with their caseLevelData beside the 0.6.0a10 record of the same line.
  const b1 = result.figures.filter((f: { part: string }) => f.part === 'B1');
  assert.deepEqual(b1.map((f: { name: string }) => f.name), [
    'sequence query, boolean (median latency)',
    'sequence query, count (median latency)',
    'sequence query, record with caseLevelData (median latency)',
  ]);
  for (const f of b1.slice(0, 2)) assert.ok(f.detail.queries === 1000 && f.detail.roundTripMs > 0 && f.detail.p99Ms >= f.detail.p50Ms, JSON.stringify(f.detail));
  const replayed = result.figures.filter(
    (f: { part: string; baselineName: string; detail: { leastWork?: boolean } }) => f.part === 'P1' && f.baselineName === 'bare replay' && !f.detail.leastWork,
  );
  assert.deepEqual(replayed.map((f: { name: string }) => f.name), ['pageSize 1000, uncompressed', 'pageSize 1000, gzip', 'pageSize 1000, br']);
  // Compressed pages are smaller on the wire and hold the same JSON.
  const [plain, gzip, br] = replayed.map((f: { detail: Record<string, number> }) => f.detail);
  for (const compressed of [gzip, br]) {
    assert.ok(compressed.wireBytesPerCall * 5 < plain.wireBytesPerCall, `${compressed.wireBytesPerCall} against ${plain.wireBytesPerCall} bytes per call`);
    assert.equal(compressed.bytesPerCall, plain.bytesPerCall);
  }
  for (const f of result.figures) {
    for (const key of ['value', 'baseline', 'ratio']) {
      assert.ok(typeof f[key] === 'number' && Number.isFinite(f[key]) && f[key] > 0, `${f.part} ${f.name}: ${key} is ${f[key]}`);
    }
    assert.equal(f.pass, undefined, 'no targets are judged with --no-targets');
  }
  // The answers behind the figures were complete: every call of the region, every base.
  const p1 = result.figures.find((f: { part: string }) => f.part === 'P1');
  const vcf = path.join(dir, 'scratch', fs.readdirSync(path.join(dir, 'scratch')).find((d) => d.startsWith('data-'))!, 'cohort.vcf.gz');
  const records = spawnSync('bcftools', ['view', '-H', '-r', p1.detail.region, vcf], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  assert.ok(records.length > 100, `${records.length} records in ${p1.detail.region}`);
  assert.equal(p1.detail.variants, records.length);
  // At both page sizes: each timed pass read exactly the bytes of a pass that counted every call.
  for (const name of ['variants with every call, pageSize 1000', 'variants with every call, default pageSize']) {
    const figure = result.figures.find((f: { name: string }) => f.name === name);
    assert.equal(figure.detail.verifiedCalls, records.length * 50, `${name}: every call counted one by one`);
  }
  assert.equal(result.figures.find((f: { part: string }) => f.part === 'P2').detail.bases, 1_000_000);
  // Every read of the reads region, as samtools counts them in the generated BAM.
  const readsFigure = result.figures.find((f: { part: string }) => f.part === 'READS');
  const [bam] = generated(path.join(dir, 'scratch'), '.bam');
  const inRegion = Number(spawnSync('samtools', ['view', '-c', bam, readsFigure.detail.region], { encoding: 'utf8' }).stdout.trim());
  assert.ok(inRegion > 1000, `${inRegion} reads in ${readsFigure.detail.region}`);
  assert.equal(readsFigure.detail.alignments, inRegion);
  const [large, , floor, small, cram] = result.figures.filter((f: { part: string }) => f.part === 'READS').map((f: { detail: Record<string, any> }) => f.detail);
  // The least work of a server beside the replay (bench/floor.ts), for reads and for calls: passes
  // held to the bytes the server sent, each page made by the floor before it went out.
  assert.equal(floor.leastWork, true);
  assert.equal(floor.ratios.length, 5);
  const p1Floor = result.figures.find((f: { part: string; detail: { leastWork?: boolean } }) => f.part === 'P1' && f.detail.leastWork);
  assert.equal(p1Floor.baselineName, 'bare replay');
  assert.equal(p1Floor.detail.calls, records.length * 50);
  for (const [from, to] of [[p1Floor.detail.regionBlocks.from, p1Floor.detail.regionBlocks.to]]) assert.ok(0 <= from && from < to && to <= 1, `${from}..${to}`);
  assert.equal(small.alignments, inRegion);
  assert.equal(small.pages, Math.ceil(inRegion / 100), 'pages of the default size, 100');
  assert.equal(large.pages, Math.ceil(inRegion / 1000));
  // The CRAM of the same reads: its window's reads as samtools counts them there.
  const fasta = path.join(path.dirname(bam), 'bench-ref.fa');
  const inCramWindow = Number(spawnSync('samtools', ['view', '-c', '-T', fasta, bam.replace(/\.bam$/, '.cram'), cram.region], { encoding: 'utf8' }).stdout.trim());
  assert.ok(inCramWindow > 100, `${inCramWindow} reads in ${cram.region}`);
  assert.equal(cram.alignments, inCramWindow);
  assert.ok(cram.firstPassSeconds > 0);
  for (const step of ['repo init', 'repo add-referenceset', 'repo add-variantset', 'repo add-rnaquantification', 'repo add-readgroupset']) {
    assert.ok(result.loadSeconds[step] > 0, `load time of ${step}`);
  }
  // The table printed on standard output names every part.
  for (const part of ['P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'READS', 'F1', 'F2', 'C1', 'B1']) assert.match(stdout, new RegExp(`^${part} `, 'm'));
});

test('npm run bench -- --audit at tiny sizes compares a mechanism on and off', { skip, timeout: 120_000 }, async () => {
  const dir = tempDir('ga4gh-audit-');
  const scratch = path.join(dir, 'scratch');
  const out = path.join(dir, 'audit.json');
  const { code, stdout, stderr } = await bench([...TINY, '--audit', 'native-scan', '--rounds', '2', '--scratch', scratch, '--out', out]);
  assert.equal(code, 0, `audit failed:\n${stderr.slice(-3000)}`);
  const result = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.equal(result.mechanism, 'native-scan');
  assert.deepEqual(result.off, { env: { GA4GH_NATIVE_SCAN: '0' } });
  // Both sides read every call of P1's region and every read of the reads region, as bcftools and samtools count them.
  const [vcf] = generated(scratch, 'cohort.vcf.gz');
  const [bam] = generated(scratch, '.bam');
  const records = spawnSync('bcftools', ['view', '-H', '-r', result.p1Region, vcf], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).length;
  assert.ok(records > 100, `${records} records in ${result.p1Region}`);
  assert.equal(result.verified.p1Calls, records * 50);
  assert.equal(result.verified.alignments, Number(spawnSync('samtools', ['view', '-c', bam, result.readsRegion], { encoding: 'utf8' }).stdout.trim()));
  // Alternated rounds, each side's four figures positive; the summary's medians are the rounds' figures.
  assert.equal(result.rounds.length, 2);
  for (const round of result.rounds) {
    for (const side of [round.on, round.off]) {
      for (const key of ['p1CallsPerSecond', 'readsPerSecond', 'p6P99Ms', 'peakRssMegabytes']) {
        assert.ok(Number.isFinite(side[key]) && side[key] > 0, `${key}: ${side[key]}`);
      }
    }
  }
  const p1 = result.summary.rows.find((r: { key: string }) => r.key === 'p1CallsPerSecond');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.equal(p1.on, mean(result.rounds.map((r: { on: { p1CallsPerSecond: number } }) => r.on.p1CallsPerSecond)), 'the median of two rounds');
  assert.match(stdout, /^native-scan \(/m);
  assert.match(stdout, /^verdict: (keep|remove): /m);
});
