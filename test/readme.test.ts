/**
 * The README's examples, run as a reader runs them. The code blocks it marks with an HTML comment
 * on the line before the fence:
 *
 *   <!-- example -->                      a query example: run against the demo and against own data
 *   <!-- example: demo -->                a query example of the demo's own ids: run against the demo
 *   <!-- example: after the one above --> a query example run after the block before it, in one script
 *   <!-- example: own data -->            the registration walkthrough, run on sample files put where
 *                                         its /data/ stands: the "own data" the query examples also run on
 *
 * The demo's registry is built by scripts/demo-registry.sh, as `npm run demo` builds it; both
 * registries are served by the real server on a loopback port, which replaces the README's
 * http://127.0.0.1:8000 (and the registry's path replaces my.sqlite). Every query example must
 * print an answer holding at least one record. The registration commands run in one process
 * (test/run-commands.ts), since a Node start-up for each would take most of a minute on a busy machine.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { copyFixture, ROOT, runAsync, runCliAsync, startTestServer, tempDir, TESTDATA, tool, type CliResult } from './helpers.js';

const README_URL = 'http://127.0.0.1:8000';
const README_REGISTRY = 'my.sqlite';

interface Example {
  /** Line of the README where the marker stands. */
  line: number;
  marker: string;
  language: string;
  code: string;
}

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The marked code blocks, in README order; a block "after the one above" holds the code of both. */
function readmeExamples(text: string): Example[] {
  const examples: Example[] = [];
  for (const m of text.matchAll(/^<!-- example(?:: ([^>]*?))? -->\n```(\w+)\n([\s\S]*?)^```$/gm)) {
    const example = { line: text.slice(0, m.index).split('\n').length, marker: m[1] ?? '', language: m[2], code: m[3] };
    if (example.marker === 'after the one above') example.code = `${examples.at(-1)!.code}\n${example.code}`;
    examples.push(example);
  }
  return examples;
}

const examples = readmeExamples(README);
const walkthrough = examples.find((e) => e.marker === 'own data');
const queries = examples.filter((e) => e.marker !== 'own data');

function assertRan(what: string, r: CliResult): void {
  assert.equal(r.code, 0, `${what} exited with ${r.code}:\n${r.stderr}${r.stdout}`);
}

const dir = tempDir('ga4gh-readme-');

/** `ga4gh` on the PATH, as `npm install -g .` puts it there. */
const bin = path.join(dir, 'bin');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'ga4gh'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'bin', 'ga4gh')}" "$@"\n`, { mode: 0o755 });
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };

/**
 * Runs a bash script whose `ga4gh` commands are recorded rather than run (a `serve` is left out: the
 * test serves the registry itself), then runs them all in one process.
 */
async function registerWith(script: string[], cwd: string): Promise<void> {
  const commands = path.join(dir, `commands-${Math.random().toString(36).slice(2)}`);
  fs.writeFileSync(commands, '');
  const record = `() { [ "$1" = serve ] || printf '%s\\0' "$#" "$@" >> '${commands}'; }`;
  assertRan(script.join(' '), await runAsync('bash', ['-e', '-o', 'pipefail', ...script], { cwd, env: { ...env, 'BASH_FUNC_ga4gh%%': record } }));
  assertRan('the recorded ga4gh commands', await runAsync(process.execPath, ['--import', import.meta.resolve('tsx'), path.join(ROOT, 'test', 'run-commands.ts'), commands], { cwd }));
}

/** The demo's registry, as `npm run demo` builds it. */
async function demoRegistry(): Promise<string> {
  const demo = path.join(dir, 'demo');
  await registerWith([path.join(ROOT, 'scripts', 'demo-registry.sh'), demo], ROOT);
  return path.join(demo, 'registry.sqlite');
}

/**
 * The walkthrough's registry, its /data/ a folder of sample files named as the walkthrough names
 * them: the compliance suite's BRCA1 reference, variants, reads and genes, and an RSEM table.
 */
async function ownDataRegistry(): Promise<string> {
  assert.ok(walkthrough, 'the README marks its registration walkthrough with <!-- example: own data -->');
  const own = path.join(dir, 'own');
  const data = path.join(own, 'data');
  for (const folder of ['vcf', 'bam', 'rsem']) fs.mkdirSync(path.join(data, folder), { recursive: true });
  fs.writeFileSync(path.join(data, 'GRCh37.fa.gz'), tool('bgzip', '-c', path.join(TESTDATA, 'compliance', 'ref_brca1.fa')));
  fs.writeFileSync(path.join(data, 'vcf', 'brca1.vcf.gz'), tool('bgzip', '-c', path.join(TESTDATA, 'compliance', 'brca1_1kgPhase3_variants.vcf')));
  tool('tabix', '-p', 'vcf', path.join(data, 'vcf', 'brca1.vcf.gz'));
  fs.copyFileSync(path.join(TESTDATA, 'compliance', 'brca1_HG00096.bam'), path.join(data, 'bam', 'NA12878.bam'));
  fs.copyFileSync(path.join(TESTDATA, 'compliance', 'brca1_HG00096.bam.bai'), path.join(data, 'bam', 'NA12878.bam.bai'));
  copyFixture('compliance/so-xp-simple.obo', data);
  fs.writeFileSync(path.join(data, 'gencode.v19.gff3.gz'), zlib.gzipSync(fs.readFileSync(path.join(TESTDATA, 'compliance', 'brca1_gencodev19.gff3'))));
  copyFixture('rna/sample1.isoforms.results', path.join(data, 'rsem'));
  const script = path.join(own, 'walkthrough.sh');
  fs.writeFileSync(script, walkthrough.code.replaceAll('/data/', `${data}/`));
  await registerWith([script], own);
  return path.join(own, README_REGISTRY);
}

/**
 * The TypeScript example in a project of its own, as a reader makes it: an ES module project with the
 * package installed as `npm install PATH` installs it (a link), compiled by tsc against the shipped
 * declarations; its JavaScript then runs with plain node, without tsx.
 */
async function typescriptProject(example: Example): Promise<string> {
  const project = path.join(dir, 'ts-project');
  fs.mkdirSync(path.join(project, 'node_modules'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(project, 'node_modules', 'ga4gh-server'));
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const compilerOptions = { module: 'nodenext', target: 'es2022', strict: true, types: [] };
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['example.ts'] }));
  fs.writeFileSync(path.join(project, 'example.ts'), example.code);
  assertRan('tsc on the README example', await runAsync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project]));
  return path.join(project, 'example.js');
}

const rInstalled = !spawnSync('Rscript', ['--version']).error;
const rPackages = new Map<string, boolean>();
const rHas = (name: string) =>
  rPackages.get(name) ?? rPackages.set(name, spawnSync('Rscript', ['-e', `quit(status = !requireNamespace("${name}", quietly = TRUE))`]).status === 0).get(name)!;

/** Why an R example cannot run here, or undefined when it can: Rscript and every library it loads. */
function rMissing(example: Example): string | undefined {
  if (!rInstalled) return 'Rscript is not installed';
  const missing = [...example.code.matchAll(/library\((\w+)\)/g)].map((m) => m[1]).find((name) => !rHas(name));
  return missing && `the R package ${missing} is not installed`;
}

/** Runs a query example against the server at `url` serving `registry`; what it printed. */
async function runQuery(example: Example, url: string, registry: string, compiledTypescript: string | undefined): Promise<CliResult> {
  const code = example.code.replaceAll(README_URL, url).replaceAll(README_REGISTRY, registry);
  const file = path.join(dir, `example-${example.line}-${Math.random().toString(36).slice(2)}`);
  switch (example.language) {
    case 'sh':
      return runAsync('bash', ['-o', 'pipefail', '-c', code], { env });
    case 'python':
      fs.writeFileSync(file + '.py', code);
      return runAsync('python3', [file + '.py']);
    case 'r':
      fs.writeFileSync(file + '.R', code);
      return runAsync('Rscript', [file + '.R']);
    case 'ts': {
      assert.ok(compiledTypescript, 'the TypeScript example was compiled');
      const script = path.join(path.dirname(compiledTypescript), `${path.basename(file)}.js`);
      fs.writeFileSync(script, fs.readFileSync(compiledTypescript, 'utf8').replaceAll(README_URL, url));
      return runAsync(process.execPath, [script], { cwd: path.dirname(script) });
    }
    default:
      throw new Error(`README line ${example.line}: no runner for \`\`\`${example.language} blocks`);
  }
}

/** An answer holding records: something printed, no error body, and no empty list where records were asked for. */
function assertAnswered(example: Example, r: CliResult): void {
  const where = `README line ${example.line}`;
  assertRan(where, r);
  assert.ok(r.stdout.trim(), `${where} printed nothing:\n${r.stderr}`);
  assert.doesNotMatch(r.stdout, /"errorCode"/, `${where} printed an error:\n${r.stdout}`);
  assert.doesNotMatch(r.stdout, /^\s*(\[\]|\{"\w+":\[\]\}|list\(\)|character\(0\)|NULL)\s*$/m, `${where} printed an empty answer:\n${r.stdout}`);
}

const targets: Record<string, { url: string; registry: string }> = {};
let compiledTypescript: string | undefined;

before(async () => {
  const typescript = queries.find((e) => e.language === 'ts');
  const [demo, own, compiled] = await Promise.all([demoRegistry(), ownDataRegistry(), typescript && typescriptProject(typescript)]);
  compiledTypescript = compiled;
  for (const [name, registry] of Object.entries({ demo, own })) targets[name] = { url: (await startTestServer(registry)).url, registry };
});

describe("the README's examples", () => {
  it('marks its query examples in every language the README shows, and the walkthrough', () => {
    assert.deepEqual([...new Set(queries.map((e) => e.language))].sort(), ['python', 'r', 'sh', 'ts']);
    assert.ok(walkthrough);
  });

  it('names the sections `repo list --json` prints, in its order', async () => {
    const commands = fs.readFileSync(path.join(ROOT, 'docs', 'commands.md'), 'utf8');
    const sentence = /`repo list --json` is meant for scripts: one key per section \(([^)]*)\)/.exec(commands);
    assert.ok(sentence, 'docs/commands.md says which keys `repo list --json` prints');
    const listed = await runCliAsync('repo', 'list', targets.demo.registry, '--json');
    assertRan('repo list --json', listed);
    assert.deepEqual([...sentence[1].matchAll(/`(\w+)`/g)].map((m) => m[1]), Object.keys(JSON.parse(listed.stdout)));
  });

  for (const [target, title] of [
    ['demo', 'the demo'],
    ['own', 'the own-data walkthrough'],
  ]) {
    describe(`against ${title}`, () => {
      for (const example of queries.filter((e) => e.marker !== 'demo' || target === 'demo')) {
        const skip = example.language === 'r' ? rMissing(example) : undefined;
        it(`${example.language} at README line ${example.line} prints records`, { skip }, async () => {
          const { url, registry } = targets[target];
          assertAnswered(example, await runQuery(example, url, registry, compiledTypescript));
        });
      }
    });
  }
});
