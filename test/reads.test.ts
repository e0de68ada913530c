/**
 * The reads area over HTTP, on both registry backends, against the reference server's test BAMs and
 * the compliance data set's BRCA1 reads (converted to BAM, and to CRAM, with samtools while writing
 * these tests). Expected values come from the SAM text (the compliance SAM as published, and
 * `samtools view -h` of chr17.1-250.bam), read here by splitting lines, never from the server.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addBiosampleFromFile } from '../src/areas/biometadata/loader.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { MAIN_THREAD_MAX_READS } from '../src/areas/reads/index.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { readService } from '../src/areas/reads/service.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { defaultPagingLimits } from '../src/protocol/paging.js';
import type { Registry } from '../src/registry/registry.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';
import { expectedAttributes, readSam, samEnd, type SamRecord } from './sam-text.js';


const OPERATIONS: Record<string, string> = {
  M: 'ALIGNMENT_MATCH',
  I: 'INSERT',
  D: 'DELETE',
  N: 'SKIP',
  S: 'CLIP_SOFT',
  H: 'CLIP_HARD',
  P: 'PAD',
  '=': 'SEQUENCE_MATCH',
  X: 'SEQUENCE_MISMATCH',
};

const cigarUnits = (cigar: string) => (cigar === '*' ? [] : [...cigar.matchAll(/(\d+)([MIDNSHP=X])/g)].map((m) => ({ operation: OPERATIONS[m[2]], operationLength: Number(m[1]) })));

/** Every field of a returned alignment against its SAM line. */
export function assertAlignmentMatches(a: any, r: SamRecord, readGroupId: string) {
  const where = `${r.qname} at ${r.rname}:${r.pos}`;
  assert.equal(a.fragmentName, r.qname, where);
  assert.equal(a.readGroupId, readGroupId, where);
  assert.equal(a.improperPlacement, (r.flag & 2) === 0, where);
  assert.equal(a.duplicateFragment, (r.flag & 1024) !== 0, where);
  assert.equal(a.failedVendorQualityChecks, (r.flag & 512) !== 0, where);
  assert.equal(a.secondaryAlignment, (r.flag & 256) !== 0, where);
  assert.equal(a.supplementaryAlignment, (r.flag & 2048) !== 0, where);
  assert.equal(a.numberReads, r.flag & 1 ? 2 : 1, where);
  // A paired read says which read it is by exactly one of 0x40 and 0x80; with both or neither, it does not.
  if (r.flag & 1 && ((r.flag & 192) === 192 || (r.flag & 192) === 0)) assert.equal(a.readNumber, undefined, where);
  else assert.equal(a.readNumber, r.flag & 128 ? 1 : 0, where);
  assert.equal(a.fragmentLength, r.tlen, where);
  if (r.flag & 4 || r.rname === '*') assert.equal(a.alignment, undefined, where);
  else {
    const alignment: any = {
      position: { referenceName: r.rname, position: r.pos - 1, strand: r.flag & 16 ? 'NEG_STRAND' : 'POS_STRAND' },
      mappingQuality: r.mapq,
    };
    const cigar = cigarUnits(r.cigar);
    if (cigar.length) alignment.cigar = cigar;
    assert.deepEqual(a.alignment, alignment, where);
  }
  assert.equal(a.alignedSequence, r.seq === '*' ? undefined : r.seq, where);
  assert.deepEqual(a.alignedQuality, r.qual === '*' ? undefined : [...r.qual].map((c) => c.charCodeAt(0) - 33), where);
  if (r.rnext === '*' || r.pnext === 0) assert.equal(a.nextMatePosition, undefined, where);
  else {
    assert.deepEqual(
      a.nextMatePosition,
      { referenceName: r.rnext === '=' ? r.rname : r.rnext, position: r.pnext - 1, strand: r.flag & 32 ? 'NEG_STRAND' : 'POS_STRAND' },
      where,
    );
  }
  assert.deepEqual(a.attributes, expectedAttributes(r.tags), where);
  // The documented id: [dataset, "rgs", set, group, reference or "*", 0-based position, read name, flag].
  const group = JSON.parse(Buffer.from(a.readGroupId, 'base64url').toString());
  assert.equal(a.id, idOf(...group, r.rname, String(r.pos - 1), r.qname, String(r.flag)), where);
}

/** The RG tag of a record (undefined without one). */
export const rgOf = (r: SamRecord) => r.tags.find((t) => t.startsWith('RG:Z:'))?.slice(5);

const dir = tempDir();
const sets = path.join(dir, 'sets');
fs.mkdirSync(sets);
const brca1Fasta = copyFixture('compliance/ref_brca1.fa', sets);
const defaultFasta = copyFixture('ga4gh-server/referenceSets/Default.fa.gz', sets);
copyFixture('ga4gh-server/referenceSets/Default.fa.gz.fai', sets);
copyFixture('ga4gh-server/referenceSets/Default.fa.gz.gzi', sets);
const hg19Names = copyFixture('reads/hg19-names.fa', sets);
const files = path.join(dir, 'files');
fs.mkdirSync(files);
const R = 'ga4gh-server/datasets/dataset1/reads';
for (const f of ['chr17.1-250.bam', 'chr17.1-250.bam.bai', 'wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam', 'wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam.bai']) {
  copyFixture(`${R}/${f}`, files);
}
for (const f of ['brca1_HG00096.bam', 'brca1_HG00096.bam.bai', 'brca1_HG00096.cram', 'brca1_HG00096.cram.crai', 'brca1_HG00101.bam', 'brca1_HG00101.bam.bai']) {
  copyFixture(`compliance/${f}`, files);
}
// The same reads as a CRAM written with samtools' defaults, which leave MD and NM out (samtools view computes them again).
copyFixture('reads/brca1_HG00096.md-dropped.cram', files);
copyFixture('reads/brca1_HG00096.md-dropped.cram.crai', files);
// The same BAM with a CSI index only.
const csiDir = path.join(dir, 'csi');
fs.mkdirSync(csiDir);
copyFixture('compliance/brca1_HG00101.bam', csiDir);
copyFixture('compliance/brca1_HG00101.bam.csi', csiDir);

const brca1 = readSam(path.join(TESTDATA, 'compliance/brca1_HG00096.sam'));
const chr17 = readSam(path.join(TESTDATA, 'reads/chr17.1-250.sam'));
const BRCA1_GROUPS = brca1.header.filter((l) => l.startsWith('@RG')).map((l) => /\tID:([^\t]+)/.exec(l)![1]);
const CHR17_GROUPS = chr17.header.filter((l) => l.startsWith('@RG')).map((l) => /\tID:([^\t]+)/.exec(l)![1]);
const groupId = (set: string, group: string) => idOf('ds', 'rgs', set, group);
const setId = (set: string) => idOf('ds', 'rgs', set);
/** The read group id the server gives a record: its RG tag's group, or the set's first group. */
const recordGroupId = (set: string, groups: string[], r: SamRecord) => groupId(set, groups.includes(rgOf(r) ?? '') ? rgOf(r)! : groups[0]);
const brca1Ref = idOf('hg37', 'ref_brca1');

/** Records in server order: mapped (and placed) by position in file order, then those without a position. */
const inServerOrder = (records: SamRecord[]) => [...records.filter((r) => r.rname !== '*'), ...records.filter((r) => r.rname === '*')];

for (const backend of backends) {
  describe(`reads on ${backend.name}`, { skip: backend.skip }, () => {
    let server: TestServer;
    let registry: Registry;
    // A BAM that will be damaged after it is registered.
    const damagedDir = path.join(dir, `damaged-${backend.name}`);

    before(async () => {
      fs.mkdirSync(damagedDir);
      copyFixture('compliance/brca1_HG00096.bam', damagedDir);
      copyFixture('compliance/brca1_HG00096.bam.bai', damagedDir);
      const { location, registry: made } = await newRegistry(await backend.newLocation(dir));
      registry = made;
      await addDataset(registry, 'ds');
      await addDataset(registry, 'other');
      await addBiosampleFromFile(registry, 'ds', path.join(TESTDATA, 'compliance', 'biosample_HG00096.json'));
      await loadReferenceSet(registry, brca1Fasta, { name: 'hg37' });
      await loadReferenceSet(registry, defaultFasta, { name: 'Default' });
      await loadReferenceSet(registry, hg19Names, { name: 'hg19names' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'brca1_HG00096.bam'), { referenceset: 'hg37', biosampleId: 'HG00096' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'brca1_HG00096.bam'), { referenceset: 'hg37', name: 'copy96' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'brca1_HG00096.cram'), { referenceset: 'hg37', name: 'cram96' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'brca1_HG00096.md-dropped.cram'), { referenceset: 'hg37', name: 'mddropped96' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'brca1_HG00101.bam'), { referenceset: 'hg37', name: 'bai101' });
      await loadReadGroupSet(registry, 'ds', path.join(csiDir, 'brca1_HG00101.bam'), { referenceset: 'hg37', name: 'csi101' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'chr17.1-250.bam'), { referenceset: 'Default', name: 'chr17' });
      await loadReadGroupSet(registry, 'ds', path.join(files, 'wgEncodeUwRepliSeqBg02esG1bAlnRep1_sample.bam'), { referenceset: 'hg19names', name: 'wg' });
      await loadReadGroupSet(registry, 'ds', path.join(damagedDir, 'brca1_HG00096.bam'), { referenceset: 'hg37', name: 'damaged' });
      server = await startTestServer(location);
    });

    const reads = async (request: Record<string, unknown>) => (await collectPages(server, '/reads/search', request, 'alignments')).records;

    it('serves every alignment of a file once, in position order, each field as the SAM line says', async () => {
      const all = await reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId('brca1_HG00096', g)), pageSize: 1000 });
      const expected = inServerOrder(brca1.records);
      assert.equal(all.length, expected.length);
      all.forEach((a, i) => assertAlignmentMatches(a, expected[i], recordGroupId('brca1_HG00096', BRCA1_GROUPS, expected[i])));
      assert.equal(new Set(all.map((a) => a.id)).size, all.length, 'ids are unique');
    });

    it('serves the last alignment, unmapped reads last, and reads without qualities (chr17.1-250.bam)', async () => {
      const request = { readGroupIds: CHR17_GROUPS.map((g) => groupId('chr17', g)) };
      const all = await reads(request);
      assert.equal(chr17.records.length, 15);
      assert.equal(all.length, 15);
      all.forEach((a, i) => assertAlignmentMatches(a, chr17.records[i], recordGroupId('chr17', CHR17_GROUPS, chr17.records[i])));
      assert.equal(all[14].fragmentName, 'u1');
      assert.equal(all[14].alignment, undefined);
      assert.ok(all.some((a) => a.alignedQuality === undefined && a.alignedSequence !== undefined), 'a read without qualities');
      // pageSize 1 through the whole reference: one alignment a page, the token gone after the last.
      // (The reference set's chr17 is 9 bases long; the BAM's @SQ says 599: the window is given.)
      const paged = await collectPages(server, '/reads/search', { ...request, referenceId: idOf('Default', 'chr17'), end: 599, pageSize: 1 }, 'alignments');
      assert.equal(paged.pages, 14);
      assert.deepEqual(paged.records, all.slice(0, 14));
    });

    it('pages the same whatever the page size', async () => {
      const request = { readGroupIds: [groupId('brca1_HG00096', BRCA1_GROUPS[0]), groupId('brca1_HG00096', BRCA1_GROUPS[2])], referenceId: brca1Ref };
      const big = await reads({ ...request, pageSize: 1000 });
      for (const pageSize of [1, 7, 100]) assert.deepEqual(await reads({ ...request, pageSize }), big, `pageSize ${pageSize}`);
    });

    it('builds small pages of BAM reads on the main thread and the rest in the page workers, and pages across both alike', async () => {
      // Which pages are quick to build: a page size up to the bound (absent and 0 are the default, 100),
      // from BAM files only; a CRAM's slices are decoded in the workers.
      const service = readService(registry, defaultPagingLimits, 0);
      const bam = { readGroupIds: BRCA1_GROUPS.map((g) => groupId('brca1_HG00096', g)) };
      const cram = { readGroupIds: BRCA1_GROUPS.map((g) => groupId('cram96', g)) };
      assert.equal(defaultPagingLimits.defaultPageSize <= MAIN_THREAD_MAX_READS, true);
      assert.equal(await service.quickPage(bam, MAIN_THREAD_MAX_READS), true);
      assert.equal(await service.quickPage({ ...bam, pageSize: 0 }, MAIN_THREAD_MAX_READS), true);
      assert.equal(await service.quickPage({ ...bam, pageSize: MAIN_THREAD_MAX_READS }, MAIN_THREAD_MAX_READS), true);
      assert.equal(await service.quickPage({ ...bam, pageSize: MAIN_THREAD_MAX_READS + 1 }, MAIN_THREAD_MAX_READS), false);
      assert.equal(await service.quickPage({ ...cram, pageSize: 10 }, MAIN_THREAD_MAX_READS), false);
      assert.equal(await service.quickPage({ readGroupIds: [...bam.readGroupIds, cram.readGroupIds[0]], pageSize: 10 }, MAIN_THREAD_MAX_READS), false);
      assert.equal(await service.quickPage({ readGroupIds: [groupId('missing', 'g')], pageSize: 10 }, MAIN_THREAD_MAX_READS), false);
      // A client changing its page size from page to page, so that pages are built on one thread then
      // the other, each resuming where the other stopped, reads every alignment once, in order.
      const request = { ...bam, referenceId: brca1Ref };
      const whole = await reads({ ...request, pageSize: 1000 });
      const sizes = [MAIN_THREAD_MAX_READS, MAIN_THREAD_MAX_READS + 1, 7, 300, 1, 129];
      const pagedAcross: any[] = [];
      let token: string | undefined;
      for (let i = 0; ; i++) {
        const res = await server.post('/reads/search', { ...request, pageSize: sizes[i % sizes.length], pageToken: token });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.alignments.length <= sizes[i % sizes.length], true);
        pagedAcross.push(...res.json.alignments);
        token = res.json.nextPageToken;
        if (!token) break;
      }
      assert.ok(whole.length > 3 * sizes.reduce((a, b) => a + b), `${whole.length} alignments: several rounds of page sizes`);
      assert.deepEqual(pagedAcross, whole);
      // The same in gzip, which the main thread compresses as it writes and the workers as they build.
      const gzipped = await fetch(server.url + '/reads/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
        body: JSON.stringify({ ...request, pageSize: 50 }),
      });
      assert.equal(gzipped.headers.get('content-encoding'), 'gzip');
      assert.deepEqual((await gzipped.json()).alignments, whole.slice(0, 50));
    });

    it('answers windows by overlap on [start, end), including reads that begin before the window', async () => {
      const mapped = brca1.records.filter((r) => r.rname !== '*');
      for (const [start, end] of [
        [0, 1],
        [1000, 1001],
        [41_000, 41_250],
        [41_100, 60_000],
        [81_000, 81_188],
      ]) {
        const expected = mapped.filter((r) => r.pos - 1 < end && samEnd(r) > start);
        const got = await reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId('brca1_HG00096', g)), referenceId: brca1Ref, start, end, pageSize: 50 });
        assert.deepEqual(got.map((a) => a.fragmentName + a.alignment?.position.position), expected.map((r) => r.qname + (r.flag & 4 ? undefined : r.pos - 1)), `[${start}, ${end})`);
        if (start === 41_100) assert.ok(got.some((a) => a.alignment.position.position < start), 'a read that starts before the window');
      }
      // Windows whose edges lie exactly on reads' starts and ends, each window holding many reads of one
      // page: a read that ends at `start` or starts at `end` is out, whichever place it has in the page.
      const edged = mapped.filter((r, i) => i % 397 === 11 && r.pos > 1000);
      let tested = 0;
      for (const r of edged) {
        for (const [start, end] of [
          [samEnd(r), samEnd(r) + 400],
          [r.pos - 1 - 400, r.pos - 1],
        ]) {
          const expected = mapped.filter((m) => m.pos - 1 < end && samEnd(m) > start);
          const got = await reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId('brca1_HG00096', g)), referenceId: brca1Ref, start, end, pageSize: 1000 });
          assert.deepEqual(got.map((a) => a.fragmentName + a.alignment?.position.position), expected.map((m) => m.qname + (m.pos - 1)), `[${start}, ${end})`);
          // The edge is met inside the window's reads, not only by its first or last one.
          if (mapped.some((m) => m.pos - 1 < end && samEnd(m) === start) || mapped.some((m) => m.pos - 1 === end)) tested++;
        }
      }
      assert.ok(tested >= 8, `${tested} windows with a read on their edge`);
      // The window's edges: a read ending exactly at start is out, one starting at end - 1 is in.
      const one = mapped.find((r) => !(r.flag & 4) && r.pos > 2000)!;
      const endOf = samEnd(one);
      const at = (start: number, end: number) =>
        reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId('brca1_HG00096', g)), referenceId: brca1Ref, start, end });
      assert.ok(!(await at(endOf, endOf + 1)).some((a) => a.id === undefined || (a.fragmentName === one.qname && a.alignment?.position.position === one.pos - 1)));
      assert.ok((await at(one.pos - 1, one.pos)).some((a) => a.fragmentName === one.qname && a.alignment?.position.position === one.pos - 1));
      assert.ok((await at(endOf - 1, endOf)).some((a) => a.fragmentName === one.qname && a.alignment?.position.position === one.pos - 1));
    });

    it('merges read groups of several sets in position order, sets by name at equal positions', async () => {
      const groups = [groupId('brca1_HG00096', 'SRR062634'), groupId('copy96', 'SRR062641'), groupId('copy96', 'SRR062634')];
      const got = await reads({ readGroupIds: groups, referenceId: brca1Ref, pageSize: 333 });
      const mapped = brca1.records.filter((r) => r.rname !== '*');
      const tagged = (set: string, wanted: string[]) => mapped.filter((r) => wanted.includes(rgOf(r)!)).map((r, i) => ({ r, set, i }));
      const expected = [...tagged('brca1_HG00096', ['SRR062634']), ...tagged('copy96', ['SRR062634', 'SRR062641'])].sort(
        (a, b) => a.r.pos - b.r.pos || (a.set < b.set ? -1 : a.set > b.set ? 1 : a.i - b.i),
      );
      assert.equal(got.length, expected.length);
      got.forEach((a, i) => assertAlignmentMatches(a, expected[i].r, groupId(expected[i].set, rgOf(expected[i].r)!)));
      assert.deepEqual(await reads({ readGroupIds: groups, referenceId: brca1Ref, pageSize: 9 }), got);
    });

    for (const cram of ['cram96', 'mddropped96']) {
      it(`gives identical answers from a CRAM made from the BAM (${cram})`, async () => {
        const fromBam = await reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId('brca1_HG00096', g)), pageSize: 500 });
        const fromCram = await reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId(cram, g)), pageSize: 500 });
        const neutral = (a: any) => ({ ...a, id: undefined, readGroupId: Buffer.from(a.readGroupId, 'base64url').toString().replace(cram, 'brca1_HG00096') });
        assert.equal(fromCram.length, fromBam.length);
        assert.deepEqual(fromCram.map(neutral), fromBam.map(neutral));
        const window = { referenceId: brca1Ref, start: 41_100, end: 43_000 };
        const bamWindow = await reads({ readGroupIds: [groupId('brca1_HG00096', 'SRR062635')], ...window, pageSize: 3 });
        const cramWindow = await reads({ readGroupIds: [groupId(cram, 'SRR062635')], ...window, pageSize: 3 });
        assert.ok(bamWindow.length > 0);
        assert.deepEqual(cramWindow.map(neutral), bamWindow.map(neutral));
      });
    }

    it('computes MD and NM of a CRAM that left them out as samtools does, for every mapped read', async () => {
      // The compliance SAM is what samtools view prints for this CRAM too (checked while writing the test).
      const fromCram = await reads({ readGroupIds: BRCA1_GROUPS.map((g) => groupId('mddropped96', g)), pageSize: 1000 });
      const expected = inServerOrder(brca1.records);
      assert.equal(fromCram.length, expected.length);
      let withMd = 0;
      fromCram.forEach((a, i) => {
        const tags = Object.fromEntries(expected[i].tags.map((t) => [t.slice(0, 2), t.slice(5)]));
        assert.equal(a.fragmentName, expected[i].qname);
        assert.equal(a.attributes?.attr.MD?.values[0].stringValue, tags.MD, `MD of ${a.fragmentName}`);
        assert.equal(a.attributes?.attr.NM?.values[0].int32Value, tags.NM === undefined ? undefined : Number(tags.NM), `NM of ${a.fragmentName}`);
        if (tags.MD !== undefined) withMd++;
      });
      assert.ok(withMd > 4000);
    });

    it('gives the same answers through a CSI index as through a BAI', async () => {
      const neutral = (a: any) => ({ ...a, id: undefined, readGroupId: undefined });
      const bai = await reads({ readGroupIds: [groupId('bai101', 'ERR229776')], referenceId: brca1Ref, start: 30_000, end: 50_000 });
      const csi = await reads({ readGroupIds: [groupId('csi101', 'ERR229776')], referenceId: brca1Ref, start: 30_000, end: 50_000 });
      assert.ok(bai.length > 100);
      assert.deepEqual(csi.map(neutral), bai.map(neutral));
    });

    it('describes read group sets and read groups from the header, the index and the load options', async () => {
      const search = await server.post('/readgroupsets/search', { datasetId: idOf('ds') });
      assert.equal(search.status, 200);
      const names = search.json.readGroupSets.map((s: any) => s.name);
      assert.deepEqual(names, [...names].sort());
      const set = search.json.readGroupSets.find((s: any) => s.name === 'brca1_HG00096');
      const mapped = brca1.records.filter((r) => !(r.flag & 4)).length;
      assert.deepEqual(set.stats, { alignedReadCount: mapped, unalignedReadCount: brca1.records.length - mapped });
      assert.deepEqual(set.readGroups.map((g: any) => g.name), BRCA1_GROUPS);
      const group = set.readGroups[0];
      const line = brca1.header.find((l) => l.startsWith(`@RG\tID:${BRCA1_GROUPS[0]}\t`))!;
      const tag = (key: string) => new RegExp(`\\t${key}:([^\\t]+)`).exec(line)![1];
      assert.equal(group.id, groupId('brca1_HG00096', BRCA1_GROUPS[0]));
      assert.equal(group.sampleName, tag('SM'));
      assert.equal(group.description, tag('DS'));
      assert.equal(group.predictedInsertSize, Number(tag('PI')));
      assert.deepEqual(group.experiment, { library: tag('LB'), instrumentModel: tag('PL'), sequencingCenter: tag('CN') });
      assert.equal(group.biosampleId, idOf('ds', 'bs', 'HG00096'));
      assert.equal(group.referenceSetId, idOf('hg37'));
      assert.equal(group.datasetId, idOf('ds'));
      assert.deepEqual(group.programs.map((p: any) => p.id), brca1.header.filter((l) => l.startsWith('@PG')).map((l) => /\tID:([^\t]+)/.exec(l)![1]));
      assert.equal(group.programs[1].prevProgramId, group.programs[0].id);
      // Get by id equals the search result; a read group equals the one inside its set.
      assert.deepEqual((await server.get(`/readgroupsets/${set.id}`)).json, set);
      assert.deepEqual((await server.get(`/readgroups/${group.id}`)).json, group);
      // CRAM indexes keep no counts: no stats. A BAM without @RG has one default read group.
      assert.equal(search.json.readGroupSets.find((s: any) => s.name === 'cram96').stats, undefined);
      const wg = search.json.readGroupSets.find((s: any) => s.name === 'wg');
      assert.deepEqual(wg.readGroups.map((g: any) => g.name), ['default']);
      const wgReads = await reads({ readGroupIds: [wg.readGroups[0].id] });
      assert.equal(wgReads.length, 10);
    });

    it('filters read group sets by name and biosample', async () => {
      const search = (body: object) => server.post('/readgroupsets/search', { datasetId: idOf('ds'), ...body });
      assert.deepEqual((await search({ name: 'copy96' })).json.readGroupSets.map((s: any) => s.name), ['copy96']);
      assert.deepEqual((await search({ name: 'nothing' })).json, { readGroupSets: [] });
      // The set registered with --biosample-id, and those of the other HG00096 files, whose @RG SM names that biosample.
      assert.deepEqual((await search({ biosampleId: idOf('ds', 'bs', 'HG00096') })).json.readGroupSets.map((s: any) => s.name), ['brca1_HG00096', 'copy96', 'cram96', 'damaged', 'mddropped96']);
      assert.deepEqual((await search({ biosampleId: idOf('other', 'bs', 'HG00096') })).json, { readGroupSets: [] });
      const paged = await collectPages(server, '/readgroupsets/search', { datasetId: idOf('ds'), pageSize: 2 }, 'readGroupSets');
      assert.equal(paged.records.length, 9);
      assert.deepEqual((await server.post('/readgroupsets/search', { datasetId: idOf('other') })).json, { readGroupSets: [] });
    });

    it('refuses bad requests with 400 and unknown ids with 404, naming the field', async () => {
      const good = groupId('brca1_HG00096', BRCA1_GROUPS[0]);
      const cases: Array<[object, number, RegExp]> = [
        [{ readGroupIds: [] }, 400, /readGroupIds/],
        [{}, 400, /readGroupIds/],
        [{ readGroupIds: [good], referenceId: brca1Ref, start: -1 }, 400, /start/],
        [{ readGroupIds: [good], referenceId: brca1Ref, start: 10, end: 5 }, 400, /end/],
        [{ readGroupIds: [good], start: 10 }, 400, /referenceId/],
        [{ readGroupIds: [good], referenceId: idOf('Default', 'chr17') }, 400, /referenceId/],
        [{ readGroupIds: [good, groupId('chr17', 'fish')] }, 400, /reference sets/],
        [{ readGroupIds: [good], pageToken: 'nonsense' }, 400, /pageToken/],
        [{ readGroupIds: [groupId('brca1_HG00096', 'nope')] }, 404, /readGroupIds/],
        [{ readGroupIds: ['garbage'] }, 404, /garbage/],
        [{ readGroupIds: [good], referenceId: idOf('hg37', 'nope') }, 404, /referenceId/],
      ];
      for (const [body, status, message] of cases) {
        const r = await server.post('/reads/search', body);
        assert.equal(r.status, status, JSON.stringify(body) + ' ' + r.text);
        assert.match(r.json.message, message);
        assert.deepEqual(Object.keys(r.json).sort(), ['errorCode', 'message']);
      }
      assert.equal((await server.get(`/readgroupsets/${setId('nope')}`)).status, 404);
      assert.equal((await server.get(`/readgroups/${groupId('brca1_HG00096', 'nope')}`)).status, 404);
      assert.equal((await server.get(`/readgroups/${setId('brca1_HG00096')}`)).status, 404);
      assert.equal((await server.post('/readgroupsets/search', {})).status, 400);
    });

    it('answers 503 naming the set when its file is damaged, never a short 200', async () => {
      const bam = path.join(damagedDir, 'brca1_HG00096.bam');
      const bytes = fs.readFileSync(bam);
      bytes.fill(0x55, 200, bytes.length - 100); // keep the header's first block, destroy the records
      fs.writeFileSync(bam, bytes);
      const r = await server.post('/reads/search', { readGroupIds: [groupId('damaged', BRCA1_GROUPS[0])], referenceId: brca1Ref, start: 40_000, end: 41_000 });
      assert.equal(r.status, 503);
      assert.equal(r.json.errorCode, 22);
      assert.match(r.json.message, /'damaged'/);
    });
  });
}
