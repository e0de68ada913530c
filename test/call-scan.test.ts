/**
 * The sample scan of the variant writer's patched lines (src/areas/variants/call-scan.ts): the C scan
 * and its TypeScript twin, on lines made here from a few short texts (the common genotypes, texts of 0
 * to 6 bytes, the first sample's text at the end without a tab after it), against the columns found by
 * splitting each line on its tabs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nativeScan, scanColumns, scanInScript } from '../src/areas/variants/call-scan.js';
import { seededRandom } from './sam-text.js';

const TEXTS = ['0|0', '0|1', '1|0', '1|1', '0/0', './.', '0', '1', '', '0|0|', '10|1', '0|0:1', '12|13', '0|00'];

/** A line of `columns` sample columns between a prefix and a suffix of other bytes, and where its columns are. */
function lineOf(columns: string[]): { bytes: Buffer; baseStart: number; lineEnd: number } {
  const prefix = 'chr1\t100\t.\tA\tG\t.\tPASS\t.\tGT\t';
  const bytes = Buffer.from(prefix + columns.join('\t') + '\nnext line', 'latin1');
  return { bytes, baseStart: prefix.length, lineEnd: prefix.length + columns.join('\t').length };
}

/** What the scan should find, read off the columns themselves. */
function expected(columns: string[], samples: number): Array<[number, number]> | number {
  if (columns.length < samples) {
    // The scan stops at the first column longer than 4 bytes, if one comes before the missing ones.
    const long = columns.slice(1).findIndex((c) => c.length > 4);
    return long >= 0 ? -2 : -1;
  }
  const found: Array<[number, number]> = [];
  let start = 'chr1\t100\t.\tA\tG\t.\tPASS\t.\tGT\t'.length + columns[0].length + 1;
  for (let sample = 1; sample < samples; sample++) {
    if (columns[sample].length > 4) return -2;
    if (columns[sample] !== columns[0]) found.push([sample, start]);
    start += columns[sample].length + 1;
  }
  return found;
}

function run(scan: typeof scanColumns, columns: string[], samples: number): Array<[number, number]> | number {
  const { bytes, baseStart, lineEnd } = lineOf(columns);
  const out = new Int32Array(2 * samples);
  const count = scan(bytes, baseStart, columns[0].length, lineEnd, samples, out);
  if (count < 0) return count;
  return Array.from({ length: count }, (_, i) => [out[2 * i], out[2 * i + 1]] as [number, number]);
}

describe('the sample scan of patched lines', () => {
  const scans: Array<[string, typeof scanColumns]> = [['in TypeScript', scanInScript]];
  if (nativeScan) scans.push(['in C', scanColumns]);

  for (const [name, scan] of scans) {
    it(`finds every column that is not the first sample's text, ${name}`, () => {
      const random = seededRandom(31);
      for (let line = 0; line < 3000; line++) {
        const short = TEXTS.filter((t) => t.length <= 4);
        const base = short[Math.floor(random() * 9)];
        const samples = 1 + Math.floor(random() * 40);
        const columns = [base];
        for (let s = 1; s < samples; s++) {
          // Mostly the first sample's text, as in a cohort; sometimes a text longer than 4 bytes.
          const r = random();
          columns.push(r < 0.6 ? base : r < 0.98 ? short[Math.floor(random() * short.length)] : TEXTS[Math.floor(random() * TEXTS.length)]);
        }
        const asked = random() < 0.1 ? samples + 1 : samples; // sometimes a column short
        assert.deepEqual(run(scan, columns, asked), expected(columns, asked), `line ${line}: ${JSON.stringify(columns)} for ${asked} samples`);
      }
    });

    it(`reads the last column up to the line's end, not the bytes after it, ${name}`, () => {
      // The last column has no tab after it: "0|0" followed by the next line's bytes is still "0|0".
      assert.deepEqual(run(scan, ['0|0', '0|1', '0|0'], 3), [[1, 'chr1\t100\t.\tA\tG\t.\tPASS\t.\tGT\t0|0\t'.length]]);
      assert.deepEqual(run(scan, ['1', '1', '1'], 3), []);
      assert.deepEqual(run(scan, ['0|0', '0|0', '0|0|1'], 3), -2);
      assert.deepEqual(run(scan, ['0|0', '0|0'], 3), -1);
    });
  }

  it('gives the same answers in C as in TypeScript', { skip: nativeScan ? false : 'the native scan is not built (npm ci builds it) or GA4GH_NATIVE_SCAN=0' }, () => {
    const random = seededRandom(7);
    for (let line = 0; line < 2000; line++) {
      const samples = 1 + Math.floor(random() * 30);
      const columns = Array.from({ length: samples }, () => TEXTS[Math.floor(random() * TEXTS.length)]);
      columns[0] = TEXTS[Math.floor(random() * 9)];
      assert.deepEqual(run(scanColumns, columns, samples), run(scanInScript, columns, samples));
    }
  });

  it('refuses positions outside the bytes instead of reading past them (C)', { skip: nativeScan ? false : 'the native scan is not built' }, () => {
    const { bytes, baseStart } = lineOf(['0|0', '0|1']);
    assert.throws(() => scanColumns(bytes, baseStart, 3, bytes.length + 1, 2, new Int32Array(4)), /out of range/);
    assert.throws(() => scanColumns(bytes, baseStart, 3, bytes.length, 2, new Int32Array(2)), /out of range/);
  });
});
