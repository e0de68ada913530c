/**
 * The patched lines of the variant writer (src/areas/variants/call-scan.ts), in C and in its TypeScript
 * twin: the scan on lines made here from a few short texts (the common genotypes, texts of 0 to 6
 * bytes, the first sample's text at the end without a tab after it) against the columns found by
 * splitting each line on its tabs, with patch tables that know some of the diploid texts; and the
 * patching of calls against bytes set one by one here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatches, findInScript, findPatches, nativeScan, PatchTable, UNPATCHABLE } from '../src/areas/variants/call-scan.js';
import { seededRandom } from './sam-text.js';

const TEXTS = ['0|0', '0|1', '1|0', '1|1', '0/0', './.', '0', '1', '', '0|0|', '10|1', '0|0:1', '12|13', '0|00'];
const SHORT = TEXTS.filter((t) => t.length <= 4);
const PREFIX = 'chr1\t100\t.\tA\tG\t.\tPASS\t.\tGT\t';

/** The diploid genotypes of one-digit alleles, as the table's slots number them. */
function slotOf(text: string): number {
  const m = /^([0-9])([|/])([0-9])$/.exec(text);
  return m ? (Number(m[1]) * 10 + Number(m[3])) * 2 + (m[2] === '|' ? 1 : 0) : -1;
}

/** A table whose slots know some texts' patches (at made-up pool places) and find others unpatchable. */
function tableKnowing(known: Record<string, number>): PatchTable {
  const table = new PatchTable();
  for (const [text, patch] of Object.entries(known)) table.slots[slotOf(text)] = patch;
  return table;
}

type Answer = { found: Array<[number, number]>; waiting: number } | number;

/** What the scan should answer, read off the columns themselves. */
function expected(columns: string[], samples: number, known: Record<string, number>): Answer {
  const found: Array<[number, number]> = [];
  let start = PREFIX.length + columns[0].length + 1;
  for (let sample = 1; sample < samples; sample++) {
    if (sample >= columns.length) return -1;
    const text = columns[sample];
    if (text.length > 4) return -2;
    // A diploid text is read as one when a tab follows it (the last column's has none).
    const diploid = slotOf(text) >= 0 && sample < columns.length - 1;
    if (text !== columns[0]) {
      const patch = diploid ? known[text] : undefined;
      if (patch === UNPATCHABLE) return -3;
      found.push([sample, patch ?? -1 - start]);
    }
    start += text.length + 1;
  }
  return { found, waiting: found.filter(([, p]) => p < 0).length };
}

type Find = (bytes: Uint8Array, baseStart: number, baseLength: number, lineEnd: number, samples: number, table: PatchTable, found: Int32Array) => number;

function run(find: Find, columns: string[], samples: number, table: PatchTable): Answer {
  const bytes = Buffer.from(PREFIX + columns.join('\t') + '\n0|1\t1|1', 'latin1');
  const out = new Int32Array(2 * samples + 1).fill(-99);
  const count = find(bytes, PREFIX.length, columns[0].length, PREFIX.length + columns.join('\t').length, samples, table, out);
  if (count < 0) return count;
  return { found: Array.from({ length: count }, (_, i) => [out[2 * i], out[2 * i + 1]] as [number, number]), waiting: out[out.length - 1] };
}

function randomLine(random: () => number): { columns: string[]; samples: number; known: Record<string, number> } {
  const base = SHORT[Math.floor(random() * SHORT.length)];
  const count = 1 + Math.floor(random() * 40);
  const columns = [base];
  for (let s = 1; s < count; s++) {
    // Mostly the first sample's text, as in a cohort; now and then a text longer than 4 bytes.
    const r = random();
    columns.push(r < 0.6 ? base : r < 0.98 ? SHORT[Math.floor(random() * SHORT.length)] : TEXTS[Math.floor(random() * TEXTS.length)]);
  }
  const known: Record<string, number> = {};
  for (const text of ['0|1', '1|0', '1|1', '0/0']) {
    const r = random();
    if (r < 0.4) known[text] = Math.floor(random() * 1000);
    else if (r < 0.45) known[text] = UNPATCHABLE;
  }
  return { columns, samples: random() < 0.1 ? count + 1 : count, known };
}

describe('the patched lines of a cohort', () => {
  const finds: Array<[string, Find]> = [['in TypeScript', findInScript]];
  if (nativeScan) finds.push(['in C', findPatches]);

  for (const [name, find] of finds) {
    it(`finds every column that is not the first sample's text, with the patches the table knows, ${name}`, () => {
      const random = seededRandom(31);
      for (let line = 0; line < 4000; line++) {
        const { columns, samples, known } = randomLine(random);
        assert.deepEqual(run(find, columns, samples, tableKnowing(known)), expected(columns, samples, known), `line ${line}: ${JSON.stringify(columns)} for ${samples} samples, knowing ${JSON.stringify(known)}`);
      }
    });

    it(`reads the last column up to the line's end, not the bytes after it, ${name}`, () => {
      const none = new PatchTable();
      const secondAt = PREFIX.length + '0|0\t'.length;
      assert.deepEqual(run(find, ['0|0', '0|1', '0|0'], 3, none), { found: [[1, -1 - secondAt]], waiting: 1 });
      assert.deepEqual(run(find, ['1', '1', '1'], 3, none), { found: [], waiting: 0 });
      assert.deepEqual(run(find, ['0|0', '0|0', '0|0|1'], 3, none), -2);
      assert.deepEqual(run(find, ['0|0', '0|0'], 3, none), -1);
      assert.deepEqual(run(find, ['0|0', '0|1', '1|1'], 3, tableKnowing({ '0|1': UNPATCHABLE })), -3);
    });
  }

  it('gives the same answers in C as in TypeScript', { skip: nativeScan ? false : 'the native scan is not built (npm ci builds it) or GA4GH_NATIVE_SCAN=0' }, () => {
    const random = seededRandom(7);
    for (let line = 0; line < 3000; line++) {
      const { columns, samples, known } = randomLine(random);
      const table = tableKnowing(known);
      assert.deepEqual(run(findPatches, columns, samples, table), run(findInScript, columns, samples, table));
    }
  });

  it('patches the bytes each patch names, at its distance from the end of its call', () => {
    const random = seededRandom(11);
    for (let round = 0; round < 200; round++) {
      const calls = 1 + Math.floor(random() * 50);
      const offsets = new Int32Array(calls + 1);
      for (let i = 1; i <= calls; i++) offsets[i] = offsets[i - 1] + 10 + Math.floor(random() * 20);
      const table = new PatchTable();
      const patches = Array.from({ length: 4 }, () => Int32Array.from(Array.from({ length: 2 * (1 + Math.floor(random() * 3)) }, (_, j) => (j % 2 ? 65 + Math.floor(random() * 26) : 1 + Math.floor(random() * 9)))));
      const places = patches.map((p) => table.add(p));
      const at = Math.floor(random() * 100);
      const chosen: number[] = [];
      const found = new Int32Array(2 * calls + 1);
      let count = 0;
      for (let sample = 1; sample < calls; sample++) {
        if (random() < 0.3) continue;
        const which = Math.floor(random() * patches.length);
        chosen[sample] = which;
        found[2 * count] = sample;
        found[2 * count + 1] = places[which];
        count++;
      }
      const buffer = new Uint8Array(at + offsets[calls] + 10).fill(46);
      const want = buffer.slice();
      for (let sample = 1; sample < calls; sample++) {
        if (chosen[sample] === undefined) continue;
        // The call of `sample` ends just before at + offsets[sample + 1] - 1 (the copy has no first comma).
        const pairs = patches[chosen[sample]];
        for (let j = 0; j < pairs.length; j += 2) want[at + offsets[sample + 1] - 1 - pairs[j]] = pairs[j + 1];
      }
      applyPatches(buffer, at, offsets, found, count, table.pool);
      assert.deepEqual(buffer, want, `round ${round}`);
    }
  });

  it('refuses positions outside the bytes instead of reading or writing past them (C)', { skip: nativeScan ? false : 'the native scan is not built' }, () => {
    const bytes = Buffer.from(PREFIX + '0|0\t0|1', 'latin1');
    const table = new PatchTable();
    assert.throws(() => findPatches(bytes, PREFIX.length, 3, bytes.length + 1, 2, table, new Int32Array(5)), /out of range/);
    assert.throws(() => findPatches(bytes, PREFIX.length, 3, bytes.length, 2, table, new Int32Array(4)), /out of range/);
    const place = table.add(Int32Array.of(50, 65));
    assert.throws(() => applyPatches(new Uint8Array(8), 0, Int32Array.of(0, 10, 20), Int32Array.of(1, place, 0), 1, table.pool), /outside the buffer/);
    assert.throws(() => applyPatches(new Uint8Array(40), 0, Int32Array.of(0, 10, 20), Int32Array.of(5, place, 0), 1, table.pool), /out of range/);
  });
});
