/** The layering of DESIGN.md, read from the import statements of the source files themselves. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers.js';

const SRC = path.join(ROOT, 'src');

/** Every relative module a file imports or re-exports (type-only imports included), resolved to a path under src/. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(pattern)) {
    const specifier = m[1] ?? m[2];
    if (!specifier.startsWith('.')) continue;
    found.push(path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts'));
  }
  return found;
}

const filesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(full) : full.endsWith('.ts') ? [full] : [];
  });

describe('layers', () => {
  it('the registry imports nothing from the areas: the composition roots hand it their migrations', () => {
    const areas = path.join(SRC, 'areas') + path.sep;
    const offending = filesUnder(path.join(SRC, 'registry')).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(areas))
        .map((target) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, target)}`),
    );
    assert.deepEqual(offending, []);
  });

  it('the page workers import nothing from the areas nor from the HTTP layer: areas register their operations with them', () => {
    const outside = [path.join(SRC, 'areas') + path.sep, path.join(SRC, 'http') + path.sep];
    const offending = filesUnder(path.join(SRC, 'workers')).flatMap((file) =>
      importsOf(file)
        .filter((target) => outside.some((dir) => target.startsWith(dir)))
        .map((target) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, target)}`),
    );
    assert.deepEqual(offending, []);
  });

  it('the formats (BGZF, binning indexes) import nothing of the server: the areas and the interfaces share them', () => {
    const offending = filesUnder(path.join(SRC, 'formats')).flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith(path.join(SRC, 'formats') + path.sep))
        .map((target) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, target)}`),
    );
    assert.deepEqual(offending, []);
  });

  it('no area imports an interface, and no interface imports another: what they share sits below them', () => {
    const interfaces = path.join(SRC, 'interfaces') + path.sep;
    // The interface a file belongs to (its folder), or undefined for the list of interfaces itself.
    const interfaceOf = (file: string) => {
      const parts = path.relative(interfaces, file).split(path.sep);
      return file.startsWith(interfaces) && parts.length > 1 ? parts[0] : undefined;
    };
    const offending = [
      ...filesUnder(path.join(SRC, 'areas')).flatMap((file) => importsOf(file).filter((target) => target.startsWith(interfaces)).map((target) => [file, target])),
      ...filesUnder(path.join(SRC, 'interfaces')).flatMap((file) =>
        importsOf(file)
          .filter((target) => interfaceOf(target) !== undefined && interfaceOf(file) !== undefined && interfaceOf(target) !== interfaceOf(file))
          .map((target) => [file, target]),
      ),
    ].map(([file, target]) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, target)}`);
    assert.deepEqual(offending, []);
  });

  it('access control imports nothing of the areas, the interfaces, the web page nor the HTTP layer: they ask it', () => {
    const outside = ['areas', 'interfaces', 'web', 'http'].map((dir) => path.join(SRC, dir) + path.sep);
    const offending = filesUnder(path.join(SRC, 'access')).flatMap((file) =>
      importsOf(file)
        .filter((target) => outside.some((dir) => target.startsWith(dir)))
        .map((target) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, target)}`),
    );
    assert.deepEqual(offending, []);
  });

  it('the reader of imports sees the imports it is meant to see', () => {
    // Guards the test above against a pattern that matches nothing.
    const app = importsOf(path.join(SRC, 'app.ts')).map((f) => path.relative(SRC, f));
    assert.ok(app.includes(path.join('areas', 'index.ts')) && app.includes(path.join('registry', 'registry.ts')), app.join(', '));
    const refget = importsOf(path.join(SRC, 'interfaces', 'refget', 'index.ts')).map((f) => path.relative(SRC, f));
    assert.ok(refget.includes(path.join('interfaces', 'refget', 'media.ts')), refget.join(', '));
  });
});
