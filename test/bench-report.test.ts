/**
 * Which of the bench's figures carry a target (bench/report.ts): the replay targets that the floor
 * showed beyond two cores are figures for reading; the others are still judged. The figures are
 * built as the bench's parts build them (bench/p1.ts, bench/reads.ts), at ratios that would fail.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable, judge, type Figure } from '../bench/report.js';

const figure = (f: Partial<Figure> & Pick<Figure, 'part' | 'name' | 'baselineName'>): Omit<Figure, 'target' | 'pass'> => ({
  unit: 'x/s',
  value: 1,
  baseline: 4,
  ratio: 0.25,
  ...f,
});
const pick = (f: Figure) => [f.target, f.pass];

test('uncompressed variant pages and reads against their replays carry no target; compressed pages do', () => {
  const retired = [
    judge(figure({ part: 'P1', name: 'pageSize 1000, uncompressed', baselineName: 'bare replay', detail: { coding: 'identity' } })),
    judge(figure({ part: 'READS', name: 'reads of a region, pageSize 1000', baselineName: 'samtools view REGION', detail: { pageSize: 1000 } })),
    judge(figure({ part: 'READS', name: 'reads of a region, pageSize 1000, beside the same bytes replayed', baselineName: 'bare replay', detail: { pageSize: 1000 } })),
  ];
  for (const f of retired) assert.deepEqual([f.name, f.target, f.pass], [f.name, undefined, undefined]);

  for (const coding of ['gzip', 'br']) {
    const compressed = { part: 'P1', name: `pageSize 1000, ${coding}`, baselineName: 'bare replay', detail: { coding } } as const;
    assert.deepEqual(pick(judge(figure({ ...compressed, ratio: 0.25 }))), ['ratio >= 0.90', false]);
    assert.deepEqual(pick(judge(figure({ ...compressed, ratio: 1.09 }))), ['ratio >= 0.90', true]);
  }
  // The printed table shows no verdict for the retired rows.
  const table = formatTable([...retired, judge(figure({ part: 'P1', name: 'pageSize 1000, gzip', baselineName: 'bare replay', detail: { coding: 'gzip' } }))], true);
  const rows = table.split('\n').slice(2);
  for (const row of rows.slice(0, 3)) assert.match(row, /0\.25x\s+-\s+-$/);
  assert.match(rows[3], /ratio >= 0\.90\s+FAIL$/);
});

test('the other targets are still judged', () => {
  assert.deepEqual(pick(judge(figure({ part: 'P2', name: 'bases/s', baselineName: 'samtools faidx', ratio: 0.4 }))), ['ratio >= 0.5', false]);
  assert.deepEqual(pick(judge(figure({ part: 'P5', name: 'server peak RSS', unit: 'MB', value: 173, baselineName: 'at rest' }))), ['<= 300 MB', true]);
  const loaded = { loaded: { maxMs: 40 }, load: { megabytesPerSecond: 1 } };
  assert.deepEqual(pick(judge(figure({ part: 'P6', name: 'GET /info p99', baselineName: 'idle server', ratio: 9.39, detail: loaded }))), ['ratio <= 3, max <= 1000 ms', false]);
});
