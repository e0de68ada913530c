/**
 * CRAM files of many slices: a page that begins in the middle of a slice must neither decode the slice
 * again nor give other records than the BAM the CRAM was made from. The setup writes SAM text of reads
 * copied from a generated reference with a few substitutions (and a few unmapped reads at the end),
 * sorts it into a BAM with samtools, and writes a CRAM of 100 reads a slice from that BAM (registered
 * twice: as a local file and by URL, read by HTTP ranges). The BAM's answers are the expected values
 * (other suites check BAM answers against `samtools view`); MD and NM, which the CRAM decoder computes
 * as `samtools view` does and the BAM does not hold, are left out of the comparison.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { IndexedCramFile } from '@gmod/cram';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { readService } from '../src/areas/reads/service.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import type { Registry } from '../src/registry/registry.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import { collectPages, idOf, newRegistry, pageReadsInProcess, startTestServer, tempDir, type TestServer } from './helpers.js';
import { startRangeServer } from './range-server.js';
import { samtools, seededRandom, withoutSamtools } from './sam-text.js';

const CONTIG = 'chrC';
const CONTIG_LENGTH = 300_000;
const MAPPED = 2_400;
const UNMAPPED = 30;
const PER_SLICE = 100;

function generated(): { fasta: string; sam: string } {
  const next = seededRandom(11);
  const base = () => 'ACGT'[Math.floor(next() * 4)];
  const reference = Array.from({ length: CONTIG_LENGTH }, base).join('');
  const fasta = `>${CONTIG}\n` + reference.match(/.{1,60}/g)!.join('\n') + '\n';
  const lines = ['@HD\tVN:1.6\tSO:unsorted', `@SQ\tSN:${CONTIG}\tLN:${CONTIG_LENGTH}`, '@RG\tID:x\tSM:s1', '@RG\tID:y\tSM:s2'];
  const quality = (n: number) => Array.from({ length: n }, () => String.fromCharCode(35 + Math.floor(next() * 40))).join('');
  for (let i = 0; i < MAPPED; i++) {
    // Several reads start at the same position now and then, so that a page can end between them.
    const start = i % 9 === 1 ? Number(lines[lines.length - 1].split('\t')[3]) - 1 : Math.floor(next() * (CONTIG_LENGTH - 200));
    const cigar = i % 10 === 3 ? '5S95M' : i % 10 === 7 ? '50M2I48M' : i % 10 === 8 ? '60M3D40M' : '100M';
    const span = cigar === '60M3D40M' ? 103 : cigar === '5S95M' ? 95 : cigar === '50M2I48M' ? 98 : 100;
    let bases = reference.slice(start, start + span).split('');
    if (cigar === '50M2I48M') bases.splice(50, 0, 'T', 'T');
    if (cigar === '60M3D40M') bases.splice(60, 3);
    if (cigar === '5S95M') bases = [...'GGGGG', ...bases];
    bases = bases.map((b) => (next() < 0.01 ? base() : b));
    lines.push(`r${i}\t${i % 2 ? 16 : 0}\t${CONTIG}\t${start + 1}\t${i % 61}\t${cigar}\t*\t0\t0\t${bases.join('')}\t${quality(bases.length)}\tRG:Z:${i % 3 ? 'x' : 'y'}\tXS:i:${i}`);
  }
  for (let i = 0; i < UNMAPPED; i++) lines.push(`u${i}\t4\t*\t0\t0\t*\t*\t0\t0\t${Array.from({ length: 50 }, base).join('')}\t${quality(50)}\tRG:Z:x`);
  return { fasta, sam: lines.join('\n') + '\n' };
}

/** An alignment without what tells the two sets apart (ids) and without MD and NM. */
function neutral(a: any): any {
  const attr = { ...a.attributes?.attr };
  delete attr.MD;
  delete attr.NM;
  return { ...a, id: undefined, readGroupId: Buffer.from(a.readGroupId, 'base64url').toString().replace(/"(cram|remote)"/, '"bam"'), attributes: { attr } };
}

describe('CRAM files of many slices', { skip: withoutSamtools }, () => {
  const dir = tempDir();
  let server: TestServer;
  let registry: Registry;
  const groups = (set: string) => ['x', 'y'].map((g) => idOf('ds', 'rgs', set, g));

  before(async () => {
    const { fasta, sam } = generated();
    const fastaPath = path.join(dir, 'c.fa');
    fs.writeFileSync(fastaPath, fasta);
    fs.writeFileSync(path.join(dir, 'c.sam'), sam);
    const bam = path.join(dir, 'c.bam');
    const cram = path.join(dir, 'c.cram');
    samtools('sort', '-o', bam, path.join(dir, 'c.sam'));
    samtools('index', bam);
    samtools('view', '-C', '-T', fastaPath, '--output-fmt-option', `seqs_per_slice=${PER_SLICE}`, '-o', cram, bam);
    samtools('index', cram);
    const made = await newRegistry(dir);
    registry = made.registry;
    const location = made.location;
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fastaPath, { name: 'c' });
    await loadReadGroupSet(registry, 'ds', bam, { referenceset: 'c', name: 'bam' });
    await loadReadGroupSet(registry, 'ds', cram, { referenceset: 'c', name: 'cram' });
    // The same CRAM read by HTTP ranges, as from object storage.
    const files = await startRangeServer(dir);
    await loadReadGroupSet(registry, 'ds', `${files.url}/c.cram`, { referenceset: 'c', name: 'remote' });
    server = await startTestServer(location);
  });
  after(() => server?.close());

  it('is cut into many slices (what the other cases rely on)', () => {
    const entries = gunzipSync(fs.readFileSync(path.join(dir, 'c.cram.crai'))).toString().trim().split('\n');
    assert.ok(entries.length >= (MAPPED + UNMAPPED) / PER_SLICE, `${entries.length} index entries`);
  });

  it('pages every read as the BAM does, whatever the page size', async () => {
    const expected = (await collectPages(server, '/reads/search', { readGroupIds: groups('bam'), pageSize: 1000 }, 'alignments')).records.map(neutral);
    assert.equal(expected.length, MAPPED + UNMAPPED);
    for (const [set, pageSize] of [['cram', 1000], ['cram', 37], ['cram', 7], ['remote', 37]] as const) {
      const { records } = await collectPages(server, '/reads/search', { readGroupIds: groups(set), pageSize }, 'alignments');
      assert.deepEqual(records.map(neutral), expected, `${set}, pageSize ${pageSize}`);
    }
  });

  it('pages a window across slices, and one read group, as the BAM does', async () => {
    const window = { referenceId: idOf('c', CONTIG), start: 61_234, end: 187_000 };
    for (const [names, pageSize] of [[['x', 'y'], 3], [['y'], 5]] as const) {
      const ids = (set: string) => names.map((g) => idOf('ds', 'rgs', set, g));
      const expected = (await collectPages(server, '/reads/search', { readGroupIds: ids('bam'), ...window, pageSize: 1000 }, 'alignments')).records.map(neutral);
      assert.ok(expected.length > 300, `${expected.length} reads in the window`);
      const { records } = await collectPages(server, '/reads/search', { readGroupIds: ids('cram'), ...window, pageSize }, 'alignments');
      assert.deepEqual(records.map(neutral), expected, `groups ${names.join(', ')}, pageSize ${pageSize}`);
    }
  });

  /** Pages through the reference in process, 10 reads a page, with a service of its own (so none of its slices is kept yet). */
  const pageThrough = (service: ReturnType<typeof readService>) =>
    pageReadsInProcess(service, { readGroupIds: groups('cram'), referenceId: idOf('c', CONTIG), pageSize: 10 });

  /** How many slices `run` makes the library decode. */
  async function slicesDecodedBy(run: () => Promise<void>): Promise<number> {
    const original = IndexedCramFile.prototype.getRecordsInSlice;
    let decoded = 0;
    IndexedCramFile.prototype.getRecordsInSlice = function (...args: Parameters<typeof original>) {
      decoded++;
      return original.apply(this, args);
    };
    try {
      await run();
    } finally {
      IndexedCramFile.prototype.getRecordsInSlice = original;
    }
    return decoded;
  }

  const slices = Math.ceil(MAPPED / PER_SLICE);

  it('decodes each slice once while a client pages through it', async () => {
    let paged = { pages: 0, alignments: 0 };
    const decoded = await slicesDecodedBy(async () => {
      paged = await pageThrough(readService(registry, defaultPagingLimits, 60_000));
    });
    assert.equal(paged.alignments, MAPPED);
    // Each slice once (a page that ends where a slice ends may look into the next one more).
    assert.ok(decoded <= slices + 2, `${decoded} slices decoded for ${paged.pages} pages of ${slices} slices`);
  });

  it('decodes each slice once while three clients page through it at once', async () => {
    const service = readService(registry, defaultPagingLimits, 60_000);
    let paged: Array<{ alignments: number }> = [];
    const decoded = await slicesDecodedBy(async () => {
      paged = await Promise.all([pageThrough(service), pageThrough(service), pageThrough(service)]);
    });
    assert.deepEqual(paged.map((p) => p.alignments), [MAPPED, MAPPED, MAPPED]);
    assert.ok(decoded <= slices + 2, `${decoded} slices decoded for three clients over ${slices} slices`);
  });
});
