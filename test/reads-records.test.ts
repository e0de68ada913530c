/**
 * Alignment records at the edges of what BAM holds and of how pages and blocks are cut: every tag type
 * (B arrays of each element type, floats with NaN and infinities, H, A, values above 2^31 - 1), names
 * and tags that need escaping, odd-length sequences, reads without qualities or without a sequence, a
 * read longer than a BGZF block (and than a page buffer's megabyte of JSON), and thousands of ordinary
 * records. The BAM is made in the setup by samtools from SAM text written here; samtools ends its BGZF
 * blocks between records, so a copy of it is cut into blocks at fixed sizes, as other writers do, where
 * many records straddle two blocks. Expected values come from `samtools view` of the first BAM, parsed
 * here, never from the server.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { AlignmentWriter, nativeAlignmentJson } from '../src/areas/reads/alignment-writer.js';
import { BamRecords, readBamHeader } from '../src/areas/reads/bam-file.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { bgzfCompress } from '../src/formats/bgzf.js';
import { ByteChunks } from '../src/areas/variants/variant-writer.js';
import { openFile } from '../src/files.js';
import { collectPages, idOf, newRegistry, startServeProcessWith, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';
import { expectedAttributes, parseSam, samEnd, samtools, seededRandom, withoutSamtools, type SamRecord } from './sam-text.js';

const skip = withoutSamtools;

const GROUPS = ['g1', 'g"2', 'g3'];
const LONG_READ = 70_000;
const MANY_OPERATIONS = 70_000;

function samText(): string {
  const next = seededRandom(17);
  const lines = [
    '@HD\tVN:1.6\tSO:unsorted',
    '@SQ\tSN:chrW\tLN:200000',
    '@SQ\tSN:chrV\tLN:500',
    ...GROUPS.map((g, i) => `@RG\tID:${g}\tSM:s${i}`),
    'r"1\t0\tchrW\t10\t60\t5M\t*\t0\t0\tACGTA\tIIIII\tXA:A:"\tXB:B:c,-128,0,127\tXC:B:C,0,255\tXS:B:s,-32768,32767\tXT:B:S,65535\t' +
      'XI:B:i,-2147483648,2147483647\tXU:B:I,4294967295,0\tXF:B:f,0.1,-1e-38,3.4e+38,1.5\tXH:H:1AE301\tXZ:Z:ünïcode "q" \\ end\t' +
      'XN:f:-0.333\tXL:i:4294967295\tXM:i:-2147483648\tRG:Z:g"2',
    'r\\9\t1107\tchrW\t10\t255\t1H2S3M1I1D2N1=1X1P1M2S1H\tchrV\t20\t-150\tACGTNACGTNA\t!"#$%&()*+~\tRG:Z:g3',
    'odd\t179\tchrW\t20\t7\t5M\t=\t30\t12\tACGTN\t~~~!!\tRG:Z:g1\tXY:Z:',
    'noqual\t1\tchrW\t25\t3\t4M\t*\t0\t0\tACGT\t*\tRG:Z:nope',
    'both12\t193\tchrW\t30\t0\t4M\t=\t10\t-25\tNNNN\t5555',
    'flags\t3844\tchrW\t40\t0\t*\t*\t0\t0\t*\t*\tAS:i:0\tRG:Z:g1',
    'empty\t0\tchrW\t101\t60\t3M\t*\t0\t0\tACG\t*\tXE:B:c\tXO:Z:odd',
    '~x\t1589\tchrW\t999\t30\t2M\tchrV\t1\t0\tGG\tAB\tXQ:i:-5',
    'r@v\t0\tchrV\t5\t1\t3M\t=\t5\t0\tTTT\tIII\tXF:f:1e+20\tXG:f:nan\tXK:f:inf\tXJ:f:-inf',
    'unm1\t77\t*\t0\t0\t*\t*\t0\t0\tAC\tII\tRG:Z:g1',
    'unm2\t141\t*\t0\t0\t*\t*\t0\t0\t*\t*',
  ];
  const bases = (n: number) => Array.from({ length: n }, () => 'ACGT'[Math.floor(next() * 4)]).join('');
  const qualities = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(35 + ((i * 7) % 40))).join('');
  lines.push(`long\t0\tchrW\t100\t60\t${LONG_READ}M\t*\t0\t0\t${bases(LONG_READ)}\t${qualities(LONG_READ)}\tRG:Z:g3`);
  // More than 65,535 CIGAR operations: BAM keeps them in a CG tag, which samtools shows as the CIGAR.
  lines.push(`manyops\t0\tchrW\t150\t60\t${'1M1I'.repeat(MANY_OPERATIONS / 2)}\t*\t0\t0\t${bases(MANY_OPERATIONS)}\t${qualities(MANY_OPERATIONS)}\tNM:i:3\tRG:Z:g2`);
  for (let i = 0; i < 3000; i++) {
    const length = 50 + Math.floor(next() * 100);
    lines.push(`n${i}\t${i % 3 ? 0 : 16}\tchrW\t${1000 + i * 40}\t${i % 60}\t${length}M\t*\t0\t0\t${bases(length)}\t${qualities(length)}\tNM:i:${i % 5}\tRG:Z:${GROUPS[i % 3]}`);
  }
  return lines.join('\n') + '\n';
}


const OPERATIONS: Record<string, string> = {
  M: 'ALIGNMENT_MATCH', I: 'INSERT', D: 'DELETE', N: 'SKIP', S: 'CLIP_SOFT', H: 'CLIP_HARD', P: 'PAD', '=': 'SEQUENCE_MATCH', X: 'SEQUENCE_MISMATCH',
};

/** The alignment the server should give for a SAM line, built from its text alone. */
function expectedAlignment(r: SamRecord, set: string) {
  const group = GROUPS.includes(r.tags.find((t) => t.startsWith('RG:Z:'))?.slice(5) ?? '') ? r.tags.find((t) => t.startsWith('RG:Z:'))!.slice(5) : GROUPS[0];
  const mapped = !(r.flag & 4) && r.rname !== '*';
  const cigar = r.cigar === '*' ? [] : [...r.cigar.matchAll(/(\d+)([MIDNSHP=X])/g)].map((m) => ({ operation: OPERATIONS[m[2]], operationLength: Number(m[1]) }));
  return {
    id: idOf('ds', 'rgs', set, group, r.rname, String(r.pos - 1), r.qname, String(r.flag)),
    readGroupId: idOf('ds', 'rgs', set, group),
    fragmentName: r.qname,
    improperPlacement: (r.flag & 2) === 0,
    duplicateFragment: (r.flag & 1024) !== 0,
    numberReads: r.flag & 1 ? 2 : 1,
    fragmentLength: r.tlen,
    // Unpaired: 0; paired: 0 or 1 from 0x40 / 0x80, none when both or neither say.
    readNumber: !(r.flag & 1) || (r.flag & 192) === 64 ? 0 : (r.flag & 192) === 128 ? 1 : undefined,
    failedVendorQualityChecks: (r.flag & 512) !== 0,
    alignment: mapped
      ? {
          position: { referenceName: r.rname, position: r.pos - 1, strand: r.flag & 16 ? 'NEG_STRAND' : 'POS_STRAND' },
          mappingQuality: r.mapq,
          ...(cigar.length ? { cigar } : {}),
        }
      : undefined,
    secondaryAlignment: (r.flag & 256) !== 0,
    supplementaryAlignment: (r.flag & 2048) !== 0,
    alignedSequence: r.seq === '*' ? undefined : r.seq,
    alignedQuality: r.qual === '*' ? undefined : [...r.qual].map((c) => c.charCodeAt(0) - 33),
    nextMatePosition:
      r.rnext === '*' || r.pnext === 0
        ? undefined
        : { referenceName: r.rnext === '=' ? r.rname : r.rnext, position: r.pnext - 1, strand: r.flag & 32 ? 'NEG_STRAND' : 'POS_STRAND' },
    attributes: expectedAttributes(r.tags),
  };
}

/** Drops undefined fields, as JSON does. */
const plain = (value: object) => JSON.parse(JSON.stringify(value));

describe('alignment records at the edges', { skip }, () => {
  const dir = tempDir();
  const bam = path.join(dir, 'edges.bam');
  const reblocked = path.join(dir, 'reblocked.bam');
  let records: SamRecord[] = [];
  let server: TestServer;
  let registryLocation = '';

  before(async () => {
    fs.writeFileSync(path.join(dir, 'edges.sam'), samText());
    samtools('sort', '-o', bam, path.join(dir, 'edges.sam'));
    samtools('index', bam);
    fs.writeFileSync(reblocked, bgzfCompress(gunzipSync(fs.readFileSync(bam))).bytes);
    samtools('index', reblocked);
    records = parseSam(samtools('view', bam)).records;
    const fasta = path.join(dir, 'edges.fa');
    const line = (n: number) => 'ACGTACGTAC'.repeat(6).slice(0, n);
    const contig = (name: string, length: number) => `>${name}\n` + Array.from({ length: Math.ceil(length / 60) }, (_, i) => line(Math.min(60, length - i * 60))).join('\n') + '\n';
    fs.writeFileSync(fasta, contig('chrW', 200000) + contig('chrV', 500));
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, { name: 'edges' });
    await loadReadGroupSet(registry, 'ds', bam, { referenceset: 'edges', name: 'edges' });
    await loadReadGroupSet(registry, 'ds', reblocked, { referenceset: 'edges', name: 'reblocked' });
    server = await startTestServer(location);
    registryLocation = location;
  });

  const search = (request: Record<string, unknown>, set = 'edges') =>
    collectPages(server, '/reads/search', { readGroupIds: GROUPS.map((g) => idOf('ds', 'rgs', set, g)), ...request }, 'alignments');

  it('gives every field of every record as the SAM text says, whatever the page size', async () => {
    // Placed reads by position (file order at a position), then the unplaced ones.
    for (const set of ['edges', 'reblocked']) {
      const expected = [...records.filter((r) => r.rname !== '*'), ...records.filter((r) => r.rname === '*')].map((r) => plain(expectedAlignment(r, set)));
      const { records: all } = await search({ pageSize: 1000 }, set);
      assert.equal(all.length, expected.length);
      for (let i = 0; i < all.length; i++) assert.deepEqual(all[i], expected[i], `${set}: ${expected[i].fragmentName}`);
      const long = all.find((a) => a.fragmentName === 'long');
      assert.equal(long.alignedSequence.length, LONG_READ);
      assert.equal(all.find((a) => a.fragmentName === 'manyops').alignment.cigar.length, MANY_OPERATIONS);
      for (const pageSize of [1, 7, 333]) {
        const paged = await search({ pageSize }, set);
        assert.deepEqual(paged.records, all, `${set}, pageSize ${pageSize}`);
      }
    }
  });

  it('pages a window of one reference the same whatever the page size', async () => {
    const window = { referenceId: idOf('edges', 'chrW'), start: 50, end: 60_000 };
    const whole = await search({ ...window, pageSize: 1000 });
    // Every read placed on chrW that overlaps the window (an unmapped read covers one base at its position).
    const overlapping = records.filter((r) => r.rname === 'chrW' && r.pos - 1 < 60_000 && samEnd(r) > 50).map((r) => r.qname);
    assert.ok(overlapping.includes('long') && !overlapping.includes('r"1') && overlapping.includes('~x'));
    assert.deepEqual(
      whole.records.map((a) => a.fragmentName),
      overlapping,
    );
    for (const pageSize of [3, 250]) assert.deepEqual((await search({ ...window, pageSize })).records, whole.records, `pageSize ${pageSize}`);
  });

  it('gives whole pages to several clients at once, plain and compressed (reply buffers are reused once sent)', async () => {
    const { records: expected } = await search({ pageSize: 1000 });
    const readGroupIds = GROUPS.map((g) => idOf('ds', 'rgs', 'edges', g));
    const pageThrough = async (coding: string, pageSize: number) => {
      const all: unknown[] = [];
      let pageToken: string | undefined;
      do {
        const res = await server.post('/reads/search', { readGroupIds, pageSize, pageToken }, { 'accept-encoding': coding });
        assert.equal(res.status, 200, res.text);
        all.push(...res.json.alignments);
        pageToken = res.json.nextPageToken;
      } while (pageToken);
      return all;
    };
    const runs: Array<[string, number]> = [['identity', 1000], ['gzip', 1000], ['identity', 999], ['br', 700], ['gzip', 400], ['identity', 1000]];
    const results = await Promise.all(runs.map(([coding, pageSize]) => pageThrough(coding, pageSize)));
    results.forEach((result, i) => assert.deepEqual(result, expected, `${runs[i][0]}, pageSize ${runs[i][1]}`));
  });

  it('gives, for every record, a file offset from which reading starts at that record', async () => {
    for (const name of [bam, reblocked]) {
      const file = openFile(name);
      const header = await readBamHeader(file, name);
      const cursor = new BamRecords(file, header.firstRecord, name);
      let n = 0;
      while (await cursor.next()) {
        const record = Buffer.from(cursor.bytes.subarray(cursor.at, cursor.end));
        assert.equal(record.toString('latin1', 36, 36 + record[12] - 1), records[n].qname);
        const again = new BamRecords(file, cursor.offset(), name);
        assert.ok(await again.next(), `record ${n}`);
        assert.ok(record.equals(again.bytes.subarray(again.at, again.end)), `${name}: record ${n} (${records[n].qname}) read again from its offset`);
        await again.close();
        n++;
      }
      await cursor.close();
      assert.equal(n, records.length);
    }
  });

  it('writes every record with the native writer byte for byte as the TypeScript writer does, damaged records too', { skip: nativeAlignmentJson ? false : 'the native alignment writer is not built (npm ci builds it) or GA4GH_NATIVE_WRITER=0' }, async () => {
    const files = [
      bam,
      reblocked,
      ...['ga4gh-server/datasets/dataset1/reads', 'compliance'].flatMap((dir) =>
        fs.readdirSync(path.join(TESTDATA, dir)).filter((f) => f.endsWith('.bam')).map((f) => path.join(TESTDATA, dir, f)),
      ),
    ];
    /** The JSON each writer gives for a record, or the message it refuses it with. */
    const written = (writer: AlignmentWriter, record: Buffer, group: number, form: 'camel' | 'snake', comma: boolean) => {
      const out = new ByteChunks();
      try {
        writer.write(record, 0, record.length, group, form, out, comma);
      } catch (e) {
        return `refused: ${(e as Error).message}`;
      }
      return Buffer.concat(out.finish()).toString('latin1');
    };
    const random = seededRandom(5);
    let compared = 0;
    let damaged = 0;
    for (const name of files) {
      const file = openFile(name);
      const header = await readBamHeader(file, name);
      const referenceNames = header.references.map((r) => r.name);
      const groups = header.text.split('\n').filter((l) => l.startsWith('@RG')).map((l) => /\tID:([^\t]*)/.exec(l)![1]);
      const readGroupNames = groups.length ? groups : ['default'];
      const context = { datasetName: 'ds', setName: path.basename(name), readGroupNames, readGroupIds: readGroupNames.map((g) => idOf('ds', 'rgs', 'x', g)), referenceNames };
      const native = new AlignmentWriter(context);
      const typescript = new AlignmentWriter(context, null);
      const cursor = new BamRecords(file, header.firstRecord, name);
      for (let n = 0; await cursor.next(); n++) {
        const record = Buffer.from(cursor.bytes.subarray(cursor.at, cursor.end));
        const group = native.groupOf(record, 0, record.length);
        for (const form of ['camel', 'snake'] as const) {
          const expected = written(typescript, record, group, form, n % 2 === 1);
          assert.ok(!expected.startsWith('refused'), `${name}: record ${n}: ${expected}`);
          assert.equal(written(native, record, group, form, n % 2 === 1), expected, `${name}: record ${n} (${form})`);
          compared++;
        }
        // The same record damaged: a byte changed, or the record cut short. Either writer writes the
        // same bytes or refuses it with the same message (the native one hands such records back).
        if (n % 7 === 0) {
          for (let trial = 0; trial < 8; trial++) {
            const copy = Buffer.from(record);
            const cut = random() < 0.3 ? 36 + Math.floor(random() * (copy.length - 36)) : copy.length;
            copy[Math.floor(random() * copy.length)] = Math.floor(random() * 256);
            const piece = copy.subarray(0, cut);
            assert.equal(written(native, piece, group, 'camel', false), written(typescript, piece, group, 'camel', false), `${name}: record ${n}, damaged`);
            damaged++;
          }
        }
      }
      await cursor.close();
    }
    // Every file's records were compared (the edge BAM alone has thousands).
    assert.ok(compared > 2 * records.length * 2, `${compared} records compared`);
    assert.ok(damaged > 1000, `${damaged} damaged records compared`);
  });

  it('pages the same bytes with the native writer and its runs of records as with the TypeScript writer alone', { skip: nativeAlignmentJson ? false : 'the native alignment writer is not built (npm ci builds it)' }, async () => {
    const typescriptOnly = await startServeProcessWith({ ...process.env, GA4GH_NATIVE_WRITER: '0' }, registryLocation);
    /** Every page's bytes, following the tokens. */
    const pages = async (url: string, request: Record<string, unknown>) => {
      const bodies: string[] = [];
      for (let token: string | undefined; ; ) {
        const response = await fetch(url + '/reads/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, pageToken: token }) });
        const body = await response.text();
        assert.equal(response.status, 200, body.slice(0, 300));
        bodies.push(body);
        token = JSON.parse(body).nextPageToken;
        if (!token) return bodies;
      }
    };
    const groups = (set: string) => GROUPS.map((g) => idOf('ds', 'rgs', set, g));
    const requests = [
      ...[1, 7, 100, 1000].map((pageSize) => ({ readGroupIds: groups('edges'), pageSize })),
      { readGroupIds: groups('reblocked'), pageSize: 250 },
      { readGroupIds: groups('edges'), referenceId: idOf('edges', 'chrW'), start: 1150, end: 61_000, pageSize: 300 },
      { readGroupIds: groups('edges'), referenceId: idOf('edges', 'chrW'), start: 99, end: 100, pageSize: 2 },
      { readGroupIds: [idOf('ds', 'rgs', 'edges', 'g3')], pageSize: 100 },
    ];
    let compared = 0;
    for (const request of requests) {
      const native = await pages(server.url, request);
      assert.deepEqual(native, await pages(typescriptOnly.url, request), JSON.stringify(request));
      compared += native.length;
    }
    assert.ok(compared > 3000, `${compared} pages compared`);
    await typescriptOnly.stop();
  });

  it('refuses a record whose tags or fields run past its end, instead of reading the next one', () => {
    const writer = new AlignmentWriter({ datasetName: 'ds', setName: 's', readGroupNames: ['g'], readGroupIds: ['id'], referenceNames: ['chrW'] });
    // A record of read "r" (no CIGAR, 1 base), then an i tag cut after 2 of its 4 bytes.
    const fields = Buffer.alloc(36);
    fields.writeInt32LE(0, 4); // reference
    fields.writeInt32LE(9, 8); // position
    fields[12] = 2; // name length, with its NUL
    fields.writeUInt16LE(0, 16); // CIGAR units
    fields.writeUInt16LE(4, 18); // flag: unmapped
    fields.writeInt32LE(1, 20); // sequence length
    fields.writeInt32LE(-1, 24);
    fields.writeInt32LE(-1, 28);
    const body = Buffer.concat([fields, Buffer.from('r\0'), Buffer.from([0x10, 30]), Buffer.from('NMi'), Buffer.from([1, 0])]);
    body.writeInt32LE(body.length - 4, 0);
    assert.throws(() => writer.write(body, 0, body.length, 0, 'camel', new ByteChunks()), /runs past the end/);
    // The sequence declared longer than the record holds.
    const long = Buffer.from(body.subarray(0, 36 + 2 + 2));
    long.writeInt32LE(long.length - 4, 0);
    long.writeInt32LE(9, 20);
    assert.throws(() => writer.write(long, 0, long.length, 0, 'camel', new ByteChunks()), /run past the end/);
    // A CIGAR held in a CG tag (`1S` then `<n>N` in its place, SAM spec 4.2.2) whose count runs past the record.
    const placeholder = Buffer.alloc(8);
    placeholder.writeUInt32LE((1 << 4) | 4, 0); // 1S: the read's length, soft-clipped
    placeholder.writeUInt32LE((10 << 4) | 3, 4); // 10N
    const cg = Buffer.concat([Buffer.from('CGBI'), Buffer.alloc(4), Buffer.alloc(4)]);
    cg.writeInt32LE(1000, 4); // 1000 units declared, one present
    cg.writeUInt32LE((1 << 4) | 0, 8);
    const mapped = Buffer.concat([fields, Buffer.from('r\0'), placeholder, Buffer.from([0x10, 30]), cg]);
    mapped.writeInt32LE(mapped.length - 4, 0);
    mapped.writeUInt16LE(2, 16); // two CIGAR units: the placeholder
    mapped.writeUInt16LE(0, 18); // mapped
    assert.throws(() => writer.write(mapped, 0, mapped.length, 0, 'camel', new ByteChunks()), /CIGAR of read r runs past the end/);
    // Whole, the same record is written.
    const whole = Buffer.concat([body.subarray(0, 36 + 2 + 2), Buffer.from('NMi'), Buffer.from([1, 0, 0, 0])]);
    whole.writeInt32LE(whole.length - 4, 0);
    const out = new ByteChunks();
    writer.write(whole, 0, whole.length, 0, 'camel', out);
    const json = JSON.parse(Buffer.concat(out.finish()).toString());
    assert.equal(json.fragmentName, 'r');
    assert.equal(json.alignedSequence, 'A');
    assert.deepEqual(json.alignedQuality, [30]);
    assert.deepEqual(json.attributes, { attr: { NM: { values: [{ int32Value: 1 }] } } });
  });
});
