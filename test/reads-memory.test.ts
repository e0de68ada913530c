/**
 * Memory while reads are paged for long, and the blocks kept from one page for the next. A page worker
 * pages reads with little allocation of its own, so the inflated BGZF blocks it keeps for the next
 * page must be memory that starts a full collection when it piles up. Blocks kept on shared memory (which V8 leaves out of that count) moved to the old
 * generation and were never freed: the worker grew by ~40 MB per 200,000 reads paged, without end.
 * Here a generated BAM of ~150 blocks (more than the recent-block cache holds, so blocks are inflated
 * again on every pass) is paged many times, in this process as a page worker pages it, and the memory
 * held by array buffers must stay bounded. Counts come from `samtools view -c`.
 *
 * The page worker keeps the blocks it inflated last, by file and position, for the next page that
 * starts in one of them. Two queries paged in turn, each starting its pages in blocks the other may
 * have inflated or dropped, must each get exactly the records `samtools view` gives.
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
import { pieceSent } from '../src/protocol/chunk-pool.js';
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

  /** One page of a search, parsed: each alignment as `name@position`, and the next page's token. */
  const page = async (request: Record<string, unknown>): Promise<{ reads: string[]; token?: string }> => {
    const stream = await service.searchReads(request as never);
    const chunks: Buffer[] = [];
    await stream.write(
      {
        write(chunk) {
          chunks.push(Buffer.from(chunk)); // a copy: the piece's buffer is reused once reported sent
          pieceSent(chunk);
        },
      },
      'camel',
    );
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      alignments?: Array<{ fragmentName: string; alignment: { position: { position: number } } }>;
      nextPageToken?: string;
    };
    return { reads: (body.alignments ?? []).map((a) => `${a.fragmentName}@${a.alignment.position.position}`), token: body.nextPageToken || undefined };
  };

  /** `samtools view` of the file, optionally of one read group and one region, as `name@position` (0-based). */
  const samtoolsReads = (...args: string[]) =>
    samtools('view', bam, ...args)
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const fields = line.split('\t');
        return `${fields[0]}@${Number(fields[3]) - 1}`;
      });

  it('gives two queries paged in turn, each starting where the other stopped, the records samtools gives', async () => {
    const group = (g: string) => idOf('ds', 'rgs', 'many', g);
    const queries = [
      { request: { readGroupIds: [group('a')], referenceId: idOf('many', 'chrM1'), start: 300_000, end: 1_500_000, pageSize: 37 }, expected: samtoolsReads('-r', 'a', 'chrM1:300001-1500000') },
      { request: { readGroupIds: [group('a'), group('b')], pageSize: 53 }, expected: samtoolsReads() },
    ];
    const got: string[][] = queries.map(() => []);
    const tokens: Array<string | undefined> = queries.map(() => undefined);
    const done = queries.map(() => false);
    while (done.includes(false)) {
      for (let q = 0; q < queries.length; q++) {
        if (done[q]) continue;
        const { reads, token } = await page(tokens[q] ? { ...queries[q].request, pageToken: tokens[q] } : queries[q].request);
        got[q].push(...reads);
        tokens[q] = token;
        done[q] = token === undefined;
      }
    }
    assert.ok(queries[0].expected.length > 10_000 && queries[1].expected.length === expected);
    queries.forEach((query, q) => assert.deepEqual(got[q], query.expected, `query ${q + 1}`));
  });

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
