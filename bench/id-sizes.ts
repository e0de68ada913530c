/**
 * What shorter ids would save on a variant page: `node --import tsx bench/id-sizes.ts [PAGE.json]`
 * (default: bench/results/p1-page.json, the first page `npm run bench` recorded in P1). Every variant
 * id and call set id of the page is rewritten in each candidate encoding, and the page's bytes per
 * call are measured as they are, in gzip (level 1) and in brotli (quality 3), the server's defaults.
 * Every candidate keeps ids self-contained (any replica decodes them without shared state).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { brotliParams, defaultCompression } from '../src/content-coding.js';
import { ROOT } from './processes.js';

const file = process.argv[2] ?? path.join(ROOT, 'bench', 'results', 'p1-page.json');
const page = fs.readFileSync(file, 'utf8');
const settings = defaultCompression();

const decodeCurrent = (id: string) => JSON.parse(Buffer.from(id, 'base64url').toString('utf8')) as string[];

/** Candidate encodings of an id's names. */
const schemes: Array<[string, (names: string[]) => string]> = [
  ['current: base64url of the JSON array', (n) => Buffer.from(JSON.stringify(n)).toString('base64url')],
  ['base64url of the names joined by NUL', (n) => Buffer.from(n.join('\0')).toString('base64url')],
  ['readable: "~" then the names percent-escaped, joined by ":"', (n) => '~' + n.map(encodeURIComponent).join(':')],
  ['readable, without the area tag', (n) => '~' + n.filter((_, i) => i !== 1).map(encodeURIComponent).join(':')],
];

const calls = (page.match(/"callSetId"/g) ?? []).length;
if (!calls) throw new Error(`${file} holds no calls`);
const ID_VALUE = /"(id|callSetId|variantSetId)":"([A-Za-z0-9_-]+)"/g;

const rows: string[][] = [];
let current = { plain: 0, gzip: 0, br: 0 };
for (const [name, encode] of schemes) {
  const rewritten = page.replace(ID_VALUE, (_, key: string, id: string) => `"${key}":"${encode(decodeCurrent(id))}"`);
  const bytes = Buffer.from(rewritten);
  const sizes = {
    plain: bytes.length,
    gzip: zlib.gzipSync(bytes, { level: settings.gzipLevel }).length,
    br: zlib.brotliCompressSync(bytes, {
      params: brotliParams(settings),
    }).length,
  };
  if (!rows.length) current = sizes;
  const sample = /"callSetId":"([^"]+)"/.exec(rewritten)![1];
  const cell = (k: keyof typeof sizes) => `${(sizes[k] / calls).toFixed(2)} (${((1 - sizes[k] / current[k]) * 100).toFixed(1)}%)`;
  rows.push([name, `${sample.length}: ${sample}`, cell('plain'), cell('gzip'), cell('br')]);
}

console.log(`${file}: ${calls.toLocaleString('en')} calls, ${page.length.toLocaleString('en')} bytes of JSON`);
console.log('bytes per call (saving against the current ids) as JSON, gzip level 1, brotli quality 3\n');
const header = ['id encoding', 'a call set id', 'JSON', 'gzip', 'br'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
console.log([line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n'));
