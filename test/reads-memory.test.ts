/**
 * Memory while reads are paged for long: a page worker pages reads with little allocation of its own,
 * so the inflated BGZF blocks it keeps for the next page must be memory that starts a full collection
 * when it piles up. Blocks kept on shared memory (which V8 leaves out of that count) moved to the old
 * generation and were never freed: the worker grew by ~40 MB per 200,000 reads paged, without end.
 * Here a generated BAM of ~150 blocks (more than the recent-block cache holds, so blocks are inflated
 * again on every pass) is paged many times, in this process as a page worker pages it, and the memory
 * held by array buffers must stay bounded. Counts come from `samtools view -c`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { readService } from '../src/areas/reads/service.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import { idOf, newRegistry, pageReadsInProcess, tempDir } from './helpers.js';
import { samtools, seededRandom, withoutSamtools } from './sam-text.js';

const READS = 40_000;
const READ_LENGTH = 100;
const CONTIG_LENGTH = 2_000_000;
const PASSES = 14;
/**
 * The array buffers this process may hold at any pass's end. The passes inflate ~140 MB of blocks in
 * all; kept on shared memory they reached 129 MB here (and grew on), collected as they go 3-45 MB.
 */
const BOUND = 80 * 1024 * 1024;

function samText(): string {
  const next = seededRandom(7);
  const lines = ['@HD\tVN:1.6\tSO:coordinate', `@SQ\tSN:chrM1\tLN:${CONTIG_LENGTH}`, '@RG\tID:a\tSM:s1', '@RG\tID:b\tSM:s2'];
  const positions = Array.from({ length: READS }, () => 1 + Math.floor(next() * (CONTIG_LENGTH - READ_LENGTH))).sort((x, y) => x - y);
  positions.forEach((pos, i) => {
    const bases = Array.from({ length: READ_LENGTH }, () => 'ACGT'[Math.floor(next() * 4)]).join('');
    const qualities = Array.from({ length: READ_LENGTH }, () => String.fromCharCode(35 + Math.floor(next() * 40))).join('');
    lines.push(`r${i}\t${i % 2 ? 16 : 0}\tchrM1\t${pos}\t60\t${READ_LENGTH}M\t*\t0\t0\t${bases}\t${qualities}\tNM:i:${i % 4}\tRG:Z:${i % 3 ? 'a' : 'b'}`);
  });
  return lines.join('\n') + '\n';
}

describe('paging reads for long', { skip: withoutSamtools }, () => {
  const dir = tempDir();
  const bam = path.join(dir, 'many.bam');
  let service: ReturnType<typeof readService>;
  let expected = 0;

  before(async () => {
    fs.writeFileSync(path.join(dir, 'many.sam'), samText());
    samtools('view', '-b', '-o', bam, path.join(dir, 'many.sam'));
    samtools('index', bam);
    expected = Number(samtools('view', '-c', bam).trim());
    const fasta = path.join(dir, 'many.fa');
    const line = 'ACGTTGCA'.repeat(8);
    fs.writeFileSync(fasta, '>chrM1\n' + Array.from({ length: CONTIG_LENGTH / 64 }, () => line).join('\n') + '\n');
    const { registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, { name: 'many' });
    await loadReadGroupSet(registry, 'ds', bam, { referenceset: 'many', name: 'many' });
    service = readService(registry, defaultPagingLimits, 60_000);
  });

  /** Every alignment of the file, 100 a page, written as a page worker writes them; the count. */
  const pass = async () =>
    (await pageReadsInProcess(service, { readGroupIds: [idOf('ds', 'rgs', 'many', 'a'), idOf('ds', 'rgs', 'many', 'b')], pageSize: 100 })).alignments;

  it('keeps the memory of inflated blocks bounded however many pages are read', async () => {
    const held: number[] = [];
    for (let i = 0; i < PASSES; i++) {
      assert.equal(await pass(), expected, `pass ${i + 1}`);
      held.push(process.memoryUsage().arrayBuffers);
    }
    const mb = held.map((b) => Math.round(b / (1024 * 1024)));
    assert.ok(Math.max(...held) < BOUND, `array buffers held after each pass (MB): ${mb.join(', ')}`);
  });
});
