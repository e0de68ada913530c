/**
 * The docs kept in step with the command line and with themselves:
 *
 * - every option `ga4gh serve --help` prints is in a table of docs/serving.md, and every option there
 *   is one `--help` prints; the same for each `repo` command and its section of docs/commands.md;
 * - every relative link of the repository's markdown leads to a file, and every `#anchor` to a heading
 *   of the page it names;
 * - every section a source file or a doc cites by title (`README, "Title"`, `docs/x.md, "Title"`) is a
 *   heading of that page.
 *
 * The help is the text commander prints for `--help`, from the real command line's program; both
 * sides are parsed, so the test holds no list of commands or options of its own.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import { ROOT } from './helpers.js';

/** What `ga4gh NAMES... --help` prints. */
function helpOf(...names: string[]): string {
  let command: Command = buildProgram();
  for (const name of names) {
    const sub = command.commands.find((c) => c.name() === name);
    assert.ok(sub, `ga4gh ${names.join(' ')} is a command`);
    command = sub;
  }
  return command.helpInformation();
}

/** The lines of one block of a help text (`Options:`, `Commands:`) that start an entry, not a wrapped description. */
function helpEntries(help: string, block: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${block}:`);
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && !line.startsWith(' '));
  return lines.slice(start + 1, end < 0 ? undefined : end).filter((line) => /^ {2}\S/.test(line));
}

/** The options a help text lists, without the --help and --version every command has. */
const optionsInHelp = (help: string) =>
  new Set(helpEntries(help, 'Options').map((line) => /--[\w-]+/.exec(line)![0]).filter((o) => o !== '--help' && o !== '--version'));

const commandsInHelp = (help: string) => helpEntries(help, 'Commands').map((line) => line.trim().split(' ')[0]).filter((c) => c !== 'help');

/** Markdown without its fenced code blocks (whose `#` lines are no headings and whose brackets are no links). */
const withoutFences = (text: string) => text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');

/** The options named in the first column of the tables of a piece of markdown. */
function optionsInTables(markdown: string): Set<string> {
  const options = new Set<string>();
  for (const row of withoutFences(markdown).split('\n').filter((line) => line.startsWith('|'))) {
    const firstCell = row.split(/(?<!\\)\|/)[1] ?? '';
    for (const m of firstCell.matchAll(/--[a-z][\w-]*/g)) options.add(m[0]);
  }
  return options;
}

function assertSameOptions(inDocs: Set<string>, inHelp: Set<string>, where: string, help: string): void {
  assert.deepEqual([...inHelp].filter((o) => !inDocs.has(o)), [], `${where} lacks options that ${help} prints`);
  assert.deepEqual([...inDocs].filter((o) => !inHelp.has(o)), [], `${where} lists options that ${help} does not print`);
}

const read = (relative: string) => fs.readFileSync(path.join(ROOT, relative), 'utf8');

interface Heading {
  level: number;
  /** The heading as rendered: without its `#`s, code marks and emphasis, links as their text. */
  text: string;
  /** Where it starts in the text it was found in. */
  index: number;
}

function headingsOf(markdown: string): Heading[] {
  const text = withoutFences(markdown);
  return [...text.matchAll(/^(#{1,6})\s+(.+?)\s*#*$/gm)].map((m) => ({
    level: m[1].length,
    text: m[2].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, ''),
    index: m.index,
  }));
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of headingsOf(markdown)) {
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

/** Files below `dir` (relative to the repository) whose names match `pattern`, outside dependencies, builds and test data. */
function filesUnder(dir: string, pattern: RegExp): string[] {
  const skipped = new Set(['.git', 'node_modules', 'build', 'dist', 'demo', 'testdata', 'test-output']);
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : filesUnder(relative, pattern);
    return pattern.test(entry.name) ? [relative] : [];
  });
}

describe('the option tables of the docs', () => {
  it('docs/serving.md lists exactly the options of `ga4gh serve --help`', () => {
    assertSameOptions(optionsInTables(read('docs/serving.md')), optionsInHelp(helpOf('serve')), 'docs/serving.md', '`ga4gh serve --help`');
  });

  const commandsMarkdown = read('docs/commands.md');
  /** The sections of docs/commands.md, by the `repo` command their heading names. */
  const sections = new Map<string, string>();
  const headings = headingsOf(commandsMarkdown);
  const text = withoutFences(commandsMarkdown);
  headings.forEach((heading, i) => {
    const command = /^repo ([\w-]+)$/.exec(heading.text)?.[1];
    const next = headings.slice(i + 1).find((h) => h.level <= heading.level);
    if (command) sections.set(command, text.slice(heading.index, next?.index));
  });

  const commands = commandsInHelp(helpOf('repo'));

  it('docs/commands.md has a section for every command of `ga4gh repo --help`, and only for those', () => {
    assert.ok(commands.length > 0, '`ga4gh repo --help` lists commands');
    assert.deepEqual(commands.filter((c) => !sections.has(c)), [], 'commands without a section');
    assert.deepEqual([...sections.keys()].filter((c) => !commands.includes(c)), [], 'sections of no command');
  });

  for (const command of commands) {
    it(`the section of \`repo ${command}\` lists exactly the options of its --help`, () => {
      const section = sections.get(command);
      assert.ok(section, `docs/commands.md has a section headed \`repo ${command}\``);
      assertSameOptions(optionsInTables(section), optionsInHelp(helpOf('repo', command)), `docs/commands.md, "repo ${command}"`, `\`ga4gh repo ${command} --help\``);
    });
  }
});

describe('the links of the docs', () => {
  const files = filesUnder('.', /\.md$/);

  it('finds the README and the docs', () => {
    assert.ok(files.includes('README.md') && files.includes(path.join('docs', 'commands.md')), files.join(', '));
  });

  for (const file of files) {
    it(`every relative link of ${file} leads to a file, and every anchor to a heading`, () => {
      const markdown = read(file);
      // Links outside code: code spans may show link syntax without being links.
      const prose = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
      const broken: string[] = [];
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (/^[a-z][\w+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [pathPart, anchor] = target.split('#');
        const linked = pathPart ? path.join(path.dirname(file), decodeURIComponent(pathPart)) : file;
        if (!fs.existsSync(path.join(ROOT, linked))) {
          broken.push(`${target}: no file ${linked}`);
        } else if (anchor !== undefined && !anchorsOf(read(linked)).has(anchor)) {
          broken.push(`${target}: no heading of ${linked} has the anchor #${anchor}`);
        }
      }
      assert.deepEqual(broken, []);
    });
  }

  it('every section cited by title in the sources and docs is a heading of the page cited', () => {
    const sources = ['src', 'bench', 'test', 'scripts', 'docs'].flatMap((dir) => filesUnder(dir, /\.(ts|c|sh|md)$/));
    const stale: string[] = [];
    for (const file of [...sources, 'README.md']) {
      if (file === path.join('test', 'docs-options.test.ts')) continue; // its comment shows the form
      // A citation may run over lines of a comment: join them first.
      const text = read(file).replace(/\s*\n\s*(?:\*|\/\/|#)?\s*/g, ' ');
      for (const [, page, title] of text.matchAll(/\b(README|docs\/[\w-]+\.md)(?:'s)?,? "([^"]+)"/g)) {
        const cited = page === 'README' ? 'README.md' : page;
        const titles = headingsOf(read(cited)).map((h) => h.text.toLowerCase());
        if (!titles.includes(title.toLowerCase())) stale.push(`${file}: ${page}, "${title}"`);
      }
    }
    assert.deepEqual(stale, []);
  });
});
