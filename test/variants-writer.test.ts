/**
 * The fast paths of the variant search, held to the general ones: calls copied from precomputed runs
 * must be the bytes the call-by-call writer gives, output cut into chunks must not change, and every
 * record must be found again from the file offset that paging remembers. Expected genotypes come
 * from the VCF text, split here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { bgzipAndIndex } from '../src/areas/variants/tabix-write.js';
import { ByteChunks, VariantWriter, type LineBytes } from '../src/areas/variants/variant-writer.js';
import { fieldTypesOf, parseHeader } from '../src/areas/variants/vcf-header.js';
import { openVcf, recordsIn } from '../src/areas/variants/vcf-files.js';
import type { NamingForm } from '../src/protocol/schema.js';
import { copyFixture, idOf, newRegistry, startTestServer, tempDir } from './helpers.js';

const VARIANTS = path.join(import.meta.dirname, '..', 'testdata', 'ga4gh-server', 'datasets', 'dataset1', 'variants');

/**
 * A cohort like 1000 Genomes phase 3 (phased GT only, mostly 0|0) with every genotype shape the fast
 * path must get right: multi-allelic, two-digit alleles (5 bytes, past the packed key), haploid,
 * missing, unphased, and a trailing FORMAT field on some lines.
 */
function cohortText(samples: number, sites: number): string {
  let seed = 7;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const odd = ['1|2', '2|2', '0|1', '1', '.', './.', '.|.', '0/1', '1/0', '10|11', '0|10', ''];
  const lines = [
    '##fileformat=VCFv4.2',
    '##contig=<ID=22,length=1000000>',
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
    '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Depth">',
    '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t' + Array.from({ length: samples }, (_, i) => `S${i}`).join('\t'),
  ];
  for (let s = 0; s < sites; s++) {
    const withDepth = s % 7 === 3;
    // Mostly rare variants (long runs of 0|0), some common ones (the genotype changes every few samples).
    const other = s % 4 === 0 ? 0.3 : 0.01;
    const columns = Array.from({ length: samples }, () => {
      const r = rand() / other;
      const gt = r > 1 ? '0|0' : r < 0.5 ? '0|1' : r < 0.75 ? '1|1' : odd[Math.floor(rand() * odd.length)];
      return withDepth ? `${gt}:${Math.floor(rand() * 40)}` : gt;
    });
    const alt = s % 5 === 0 ? 'C,G' : 'C';
    lines.push(`22\t${1000 + s * 3}\trs${s}\tA\t${alt}\t50\tPASS\t.\t${withDepth ? 'GT:DP' : 'GT'}\t${columns.join('\t')}`);
  }
  return lines.join('\n') + '\n';
}

function textOf(file: string): string {
  const raw = fs.readFileSync(file);
  return (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
}

function writerFor(text: string, runAfter: number) {
  const header = parseHeader(text.slice(0, text.indexOf('\n', text.indexOf('#CHROM')) + 1), 'test');
  const ids = header.samples.map((n) => idOf('ds', 'vs', 'set', n));
  return {
    samples: header.samples,
    writer: new VariantWriter('ds', 'set', idOf('ds', 'vs', 'set'), { names: header.samples, ids }, fieldTypesOf(header.metadata), { runAfter }),
  };
}

const dataLines = (text: string): LineBytes[] =>
  text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const bytes = Buffer.from(l, 'utf8');
      return { bytes, lineStart: 0, lineEnd: bytes.length };
    });

/** The text written for `lines`, and the length of the longest piece handed out. */
function written(writer: VariantWriter, lines: LineBytes[], samples: number[] | 'all', form: NamingForm, chunkSize?: number) {
  const out = new ByteChunks(chunkSize);
  const pieces: Buffer[] = [];
  lines.forEach((line, i) => {
    if (i) out.text(',');
    writer.write(line, samples, form, out);
    pieces.push(...out.take());
  });
  pieces.push(...out.finish());
  return { text: Buffer.concat(pieces).toString('utf8'), longest: pieces.reduce((m, p) => Math.max(m, p.length), 0) };
}

const shipped = ['1kgPhase1', '1kgPhase3', 'example_1', 'example_2', 'example_3', 'example_4'].flatMap((set) =>
  fs
    .readdirSync(path.join(VARIANTS, set))
    .filter((n) => n.endsWith('.vcf.gz'))
    .map((n) => ({ name: `${set}/${n}`, text: textOf(path.join(VARIANTS, set, n)) })),
);
const cohort = { name: 'generated cohort', text: cohortText(300, 60) };

describe('variant writer fast paths', () => {
  for (const { name, text } of [...shipped, cohort]) {
    it(`writes ${name} the same with runs of calls as call by call, in pieces or whole`, () => {
      const runs = writerFor(text, 0);
      const oneByOne = writerFor(text, Number.POSITIVE_INFINITY);
      const lines = dataLines(text);
      const n = runs.samples.length;
      const choices: Array<number[] | 'all'> = ['all', [], [0], [n - 1], Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 !== 1)];
      for (const form of ['camel', 'snake'] as const) {
        for (const samples of choices) {
          const expected = written(oneByOne.writer, lines, samples, form).text;
          assert.equal(written(runs.writer, lines, samples, form).text, expected, `${form} ${JSON.stringify(samples)}`);
          // Chunks a little larger than a line: lines copied whole then patched lie across two buffers.
          const lineSized = Math.max(...lines.map((line) => written(runs.writer, [line], samples, form).text.length)) + 100;
          assert.equal(written(runs.writer, lines, samples, form, lineSized).text, expected, `${form} ${JSON.stringify(samples)} in ${lineSized}-byte chunks`);
          const small = written(runs.writer, lines, samples, form, 7);
          assert.equal(small.text, expected, `${form} ${JSON.stringify(samples)} in 7-byte chunks`);
          assert.ok(small.longest <= 7, 'pieces are no longer than a chunk');
        }
      }
    });
  }

  it('writes every genotype of the generated cohort as its text says', () => {
    const { writer, samples } = writerFor(cohort.text, 0);
    const lines = dataLines(cohort.text);
    const variants = JSON.parse('[' + written(writer, lines, 'all', 'camel').text + ']');
    assert.equal(variants.length, lines.length);
    variants.forEach((v: any, i: number) => {
      const columns = lines[i].bytes.toString('utf8').split('\t').slice(9);
      assert.equal(v.calls.length, samples.length);
      v.calls.forEach((call: any, s: number) => {
        const [gt, dp] = columns[s].split(':');
        assert.equal(call.callSetName, samples[s]);
        assert.equal(call.callSetId, idOf('ds', 'vs', 'set', samples[s]));
        assert.deepEqual(call.genotype, gt.split(/[/|]/).map((a) => (a === '.' || a === '' ? -1 : Number(a))), `${v.start} ${samples[s]} ${gt}`);
        assert.equal(call.phaseset, gt.includes('|') ? 'True' : undefined);
        assert.deepEqual(call.attributes, dp === undefined ? undefined : { attr: { DP: { values: [{ int32Value: Number(dp) }] } } });
      });
    });
  });

  it('finds every record again from its offset, across blocks and inflate groups', async () => {
    // ~1 MB of text: many 64 KB BGZF blocks, several 256 KB inflate groups, lines cut between them.
    const text = cohortText(400, 600);
    const dir = tempDir();
    const file = path.join(dir, 'cohort.vcf.gz');
    const { bgzf, tbi } = bgzipAndIndex(Buffer.from(text), 'cohort.vcf');
    fs.writeFileSync(file, bgzf);
    fs.writeFileSync(file + '.tbi', tbi);
    const vcf = openVcf({ path: file, indexPath: file + '.tbi', indexKind: 'tbi' });
    const expected = text.split('\n').filter((l) => l.startsWith('22\t'));
    const records = [];
    for await (const record of recordsIn(vcf, '22', 0, Number.POSITIVE_INFINITY)) records.push({ line: record.line, offset: record.offset });
    assert.deepEqual(records.map((r) => r.line), expected);
    assert.ok(records.some((r) => r.offset.dataPosition > 65536), 'some offsets lie past the first block of their group');
    for (const [i, { offset }] of records.entries()) {
      const again = recordsIn(vcf, '22', 0, Number.POSITIVE_INFINITY, undefined, offset);
      const first = await again.next();
      await again.return(undefined);
      assert.equal(first.done ? undefined : first.value.line, expected[i], `record ${i} from ${JSON.stringify(offset)}`);
    }
  });
});

describe('paging from remembered file offsets', () => {
  it('continues two windows that share a page position, each with its own next record', async () => {
    // Window [100, 200) begins inside the deletion at 90 and skips the SNP at 95 (it ends at 96);
    // window [0, 200) returns it. Both windows page through the deletion, so after it each must go on
    // with its own next record, whatever the other remembered.
    const dir = tempDir();
    const samples = ['A', 'B'];
    const sites: Array<[number, string]> = [[90, 'ACGTACGTACGTACGTACGTA'], [95, 'C'], [105, 'G'], [105, 'T'], [150, 'A']];
    const text = [
      '##fileformat=VCFv4.2',
      '##contig=<ID=1,length=1000>',
      '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
      '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t' + samples.join('\t'),
      ...sites.map(([pos, ref]) => `1\t${pos + 1}\t.\t${ref}\t${ref === 'A' ? 'C' : 'A'}\t50\tPASS\t.\tGT\t0|1\t1|1`),
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'windows.vcf'), text + '\n');
    const sets = path.join(dir, 'sets');
    fs.mkdirSync(sets);
    const reference = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
    copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
    copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, reference, {});
    await loadVariantSet(registry, 'ds', [path.join(dir, 'windows.vcf')], { referenceset: 'NCBI37', allowMissingContigs: true });
    const server = await startTestServer(location);
    const expected = (start: number) => sites.filter(([pos, ref]) => pos + ref.length > start).map(([pos]) => pos);
    const windows = [0, 100].map((start) => ({ start, starts: [] as number[], token: undefined as string | undefined, done: false }));
    // One page of each window in turn, pageSize 1, until both are through.
    while (windows.some((w) => !w.done)) {
      for (const w of windows.filter((x) => !x.done)) {
        const request = { variantSetId: idOf('ds', 'vs', 'windows'), referenceName: '1', start: w.start, end: 200, pageSize: 1, pageToken: w.token };
        const res = await server.post('/variants/search', request);
        assert.equal(res.status, 200, res.text);
        w.starts.push(...res.json.variants.map((v: any) => v.start));
        w.token = res.json.nextPageToken;
        w.done = w.token === undefined;
      }
    }
    for (const w of windows) assert.deepEqual(w.starts, expected(w.start), `window from ${w.start}`);
  });
});
