/**
 * The variant area over HTTP, against a real registry file, the reference server's test VCFs (with
 * their tabix indexes) and small plain VCFs written here (bgzipped and indexed by the loader).
 * Expected values come from the VCF text, read here with gunzip and split, never from the server.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';

interface VcfLine {
  chrom: string;
  pos: number;
  id: string;
  ref: string;
  alt: string;
  filter: string;
  info: string;
  format: string[];
  samples: string[];
}

/** Reads a VCF the simple way: header lines, sample names, data lines split on tabs. */
function readVcf(file: string): { header: string[]; samples: string[]; lines: VcfLine[] } {
  const raw = fs.readFileSync(file);
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
  const header: string[] = [];
  let samples: string[] = [];
  const lines: VcfLine[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('##')) header.push(line);
    else if (line.startsWith('#')) samples = line.split('\t').slice(9);
    else {
      const c = line.split('\t');
      lines.push({
        chrom: c[0],
        pos: Number(c[1]),
        id: c[2],
        ref: c[3],
        alt: c[4],
        filter: c[6],
        info: c[7],
        format: c[8] ? c[8].split(':') : [],
        samples: c.slice(9),
      });
    }
  }
  return { header, samples, lines };
}

const readVcfDir = (dir: string) => {
  const files = fs.readdirSync(dir).filter((n) => /\.vcf(\.gz)?$/.test(n)).sort();
  const parts = files.map((n) => readVcf(path.join(dir, n)));
  return { header: parts[0].header, samples: parts[0].samples, lines: parts.flatMap((p) => p.lines) };
};

const start0 = (l: VcfLine) => l.pos - 1;
/** The end a variant is served with: INFO END when the line has one past its start, else POS-1+len(REF). */
const end0 = (l: VcfLine) => {
  const tagged = /(?:^|;)END=(\d+)(?:;|$)/.exec(l.info);
  return tagged && Number(tagged[1]) > l.pos - 1 ? Number(tagged[1]) : l.pos - 1 + l.ref.length;
};

function expectedGenotype(gt: string): number[] {
  return gt.split(/[/|]/).map((a) => (a === '.' ? -1 : Number(a)));
}

/** The checks every returned variant gets against its VCF line. */
function assertVariantMatches(v: any, line: VcfLine, samples: string[], which?: number[]) {
  assert.equal(v.referenceName, line.chrom);
  assert.equal(v.start, start0(line));
  assert.equal(v.end, end0(line));
  assert.equal(v.referenceBases, line.ref);
  // Empty lists are left out of records: no names for ID '.', no alternates for ALT '.'.
  assert.deepEqual(v.alternateBases, line.alt === '.' ? undefined : line.alt.split(','));
  assert.deepEqual(v.names, line.id === '.' ? undefined : line.id.split(';'));
  assert.equal(v.filtersApplied, line.filter !== '.');
  if (line.filter !== '.') assert.equal(v.filtersPassed, line.filter === 'PASS');
  const columns = which ?? samples.map((_, i) => i);
  if (columns.length === 0) assert.equal(v.calls, undefined, 'no calls: the list is left out');
  else assert.equal(v.calls.length, columns.length);
  (v.calls ?? []).forEach((call: any, i: number) => {
    const sample = columns[i];
    assert.equal(call.callSetName, samples[sample]);
    const values = line.samples[sample].split(':');
    const gt = values[line.format.indexOf('GT')];
    assert.deepEqual(call.genotype, expectedGenotype(gt));
    assert.equal(call.phaseset, gt.includes('|') ? 'True' : undefined);
    const gl = line.format.indexOf('GL');
    if (gl !== -1) assert.deepEqual(call.genotypeLikelihood, values[gl].split(',').map(Number));
    const ds = line.format.indexOf('DS');
    if (ds !== -1) assert.deepEqual(call.attributes.attr.DS.values, [{ doubleValue: Number(values[ds]) }]);
  });
}

const dir = tempDir();
const variants = path.join(dir, 'variants');
fs.mkdirSync(variants);
const phase1 = copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase1', variants);
const phase3 = copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase3', variants);
const example2 = copyFixture('ga4gh-server/datasets/dataset1/variants/example_2', variants);
const example4 = copyFixture('ga4gh-server/datasets/dataset1/variants/example_4', variants);
const sets = path.join(dir, 'sets');
fs.mkdirSync(sets);
const ncbi37 = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);

/**
 * Two plain VCFs of one contig in one folder (so paging crosses files), written here with the cases
 * the shipped files lack: several records at one position, PS, PL without GL, missing genotypes,
 * structural-variant INFO, failed filters, a haploid call.
 */
const crafted = path.join(dir, 'crafted');
fs.mkdirSync(crafted);
const craftedHeader = [
  '##fileformat=VCFv4.2',
  '##contig=<ID=1,length=330>',
  '##FILTER=<ID=q10,Description="Quality below 10">',
  '##FILTER=<ID=s50,Description="Less than 50% of samples have data">',
  '##INFO=<ID=DP,Number=1,Type=Integer,Description="Total Depth">',
  '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele Frequency">',
  '##INFO=<ID=DB,Number=0,Type=Flag,Description="dbSNP membership">',
  '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Type of structural variant">',
  '##INFO=<ID=SVLEN,Number=.,Type=Integer,Description="Difference in length">',
  '##INFO=<ID=CIPOS,Number=2,Type=Integer,Description="Confidence interval around POS">',
  '##INFO=<ID=CIEND,Number=2,Type=Integer,Description="Confidence interval around END">',
  '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
  '##FORMAT=<ID=PS,Number=1,Type=Integer,Description="Phase set">',
  '##FORMAT=<ID=PL,Number=G,Type=Integer,Description="Phred-scaled likelihoods">',
  '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Read depth">',
  '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\tB\tC',
];
const craftedA = [
  '1\t10\trs1;rs1b\tA\tG\t50\tPASS\tDP=10;AF=1e-05;DB\tGT:PS:PL:DP\t0|1:7:0,57,715\t./.:.:.:.\t1/1:.:40,3,0:12',
  '1\t20\t.\tACGT\tA\t50\tq10;s50\tDP=4\tGT:PL\t0/1:10,0,90\t0/0:0,30,300\t1\t',
  '1\t20\t.\tA\tT,C\t50\t.\tAF=0.25,0.5\tGT\t1/2\t0|2\t.',
  '1\t20\t.\tA\tAT\t50\tPASS\t.\tGT\t0/0\t0/1\t0/0',
  '1\t40\t.\tC\t<DEL>\t50\tPASS\tSVTYPE=DEL;SVLEN=-100;CIPOS=-5,5;CIEND=-10,10\tGT\t0/1\t0/0\t0/0',
].map((l) => l.replace(/\t$/, ''));
const craftedB = [
  '1\t100\t.\tG\tA\t50\tPASS\tDP=3\tGT\t0/0\t0/1\t1/1',
  '1\t100\t.\tG\tC\t50\tPASS\tDP=3\tGT\t0/1\t0/0\t0/0',
  '1\t200\t.\tT\tA\t50\tPASS\tDP=3\tGT\t0/0\t0/0\t0/1',
];
fs.writeFileSync(path.join(crafted, 'a.vcf'), [...craftedHeader, ...craftedA, ''].join('\n'));
fs.writeFileSync(path.join(crafted, 'b.vcf'), [...craftedHeader, ...craftedB, ''].join('\n'));

const expected = {
  phase1: readVcfDir(phase1),
  phase3: readVcfDir(phase3),
  example2: readVcfDir(example2),
  example4: readVcfDir(example4),
  crafted: readVcfDir(crafted),
};

const ds = idOf('ds');
const setId = (name: string) => idOf('ds', 'vs', name);
const callSetIdOf = (set: string, sample: string) => idOf('ds', 'vs', set, sample);

for (const backend of backends) {
describe(`on ${backend.name}`, { skip: backend.skip }, () => {
  let server: TestServer;

  before(async () => {
    const { location, registry } = await newRegistry(await backend.newLocation(dir));
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, ncbi37, {});
    await loadVariantSet(registry, 'ds', [phase1], { referenceset: 'NCBI37' });
    await loadVariantSet(registry, 'ds', [phase3], { referenceset: 'NCBI37' });
    await loadVariantSet(registry, 'ds', [example2], { referenceset: 'NCBI37', allowMissingContigs: true });
    await loadVariantSet(registry, 'ds', [example4], { referenceset: 'NCBI37', allowMissingContigs: true });
    await loadVariantSet(registry, 'ds', [crafted], { referenceset: 'NCBI37' });
    server = await startTestServer(location);
  });

  async function searchAll(request: Record<string, unknown>) {
    return collectPages(server, '/variants/search', request, 'variants');
  }

  describe('variant sets', () => {
    it('lists the sets of a dataset by name, with the header as metadata', async () => {
      const { records } = await collectPages(server, '/variantsets/search', { datasetId: ds, pageSize: 2 }, 'variantSets');
      assert.deepEqual(
        records.map((r) => r.name),
        ['1kgPhase1', '1kgPhase3', 'crafted', 'example_2', 'example_4'],
      );
      const set = records.find((r) => r.name === '1kgPhase1');
      assert.equal(set.id, setId('1kgPhase1'));
      assert.equal(set.datasetId, ds);
      assert.equal(set.referenceSetId, idOf('NCBI37'));
      for (const line of expected.phase1.header) {
        const m = /^##(INFO|FORMAT)=<ID=([^,]+),Number=([^,]+),Type=([^,]+),Description="(.*)">$/.exec(line);
        if (!m) continue;
        const entry = set.metadata.find((e: any) => e.key === `${m[1]}.${m[2]}`);
        if (m[1] === 'FORMAT' && m[2] === 'GT') continue;
        assert.deepEqual(entry, { key: `${m[1]}.${m[2]}`, id: m[2], number: m[3], type: m[4], description: m[5] });
      }
      // FORMAT.GT is left out, as the reference server does (the R client adds it itself).
      assert.ok(expected.phase1.header.some((l) => l.startsWith('##FORMAT=<ID=GT,')));
      assert.ok(!set.metadata.some((e: any) => e.key === 'FORMAT.GT'));
      assert.deepEqual(set.metadata[0], { key: 'fileformat', value: 'VCFv4.1' });
      const got = await server.get(`/variantsets/${set.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.json, set);
    });

    it('keeps the extra pairs of a structured header line as attributes', async () => {
      const set = (await server.get(`/variantsets/${setId('example_2')}`)).json;
      const contig = set.metadata.find((e: any) => e.key === 'contig.20');
      assert.equal(contig.id, '20');
      assert.deepEqual(contig.attributes.attr.length.values, [{ stringValue: '62435964' }]);
    });

    it('answers 404 for unknown sets and datasets, 400 without datasetId', async () => {
      assert.equal((await server.get(`/variantsets/${setId('nope')}`)).status, 404);
      assert.equal((await server.get(`/variantsets/${idOf('ds', 'xx', '1kgPhase1')}`)).status, 404);
      assert.equal((await server.get('/variantsets/garbage!')).status, 404);
      assert.equal((await server.post('/variantsets/search', { datasetId: idOf('other') })).status, 404);
      const missing = await server.post('/variantsets/search', {});
      assert.equal(missing.status, 400);
      assert.match(missing.json.message, /datasetId/);
    });
  });

  describe('call sets', () => {
    it('lists the samples in VCF column order, one page at a time', async () => {
      const { records, pages } = await collectPages(server, '/callsets/search', { variantSetId: setId('1kgPhase1'), pageSize: 1 }, 'callSets');
      assert.deepEqual(
        records.map((r) => r.name),
        expected.phase1.samples,
      );
      assert.equal(pages, expected.phase1.samples.length);
      for (const r of records) {
        assert.deepEqual(r, { id: callSetIdOf('1kgPhase1', r.name), name: r.name, variantSetIds: [setId('1kgPhase1')] });
        assert.deepEqual((await server.get(`/callsets/${r.id}`)).json, r);
      }
    });

    it('filters by exact name; a biosampleId of no biosample matches none; unknown set is 404', async () => {
      const name = expected.phase1.samples[3];
      const hit = await server.post('/callsets/search', { variantSetId: setId('1kgPhase1'), name });
      assert.deepEqual(hit.json.callSets.map((c: any) => c.name), [name]);
      const lower = await server.post('/callsets/search', { variantSetId: setId('1kgPhase1'), name: name.toLowerCase() });
      assert.deepEqual(lower.json.callSets, []);
      const bio = await server.post('/callsets/search', { variantSetId: setId('1kgPhase1'), biosampleId: idOf('ds', 'bs', name) });
      assert.deepEqual(bio.json, { callSets: [] });
      assert.equal((await server.post('/callsets/search', { variantSetId: setId('1kgPhase1'), biosampleId: 'x' })).status, 404);
      assert.equal((await server.post('/callsets/search', { variantSetId: setId('nope') })).status, 404);
      assert.equal((await server.get(`/callsets/${callSetIdOf('1kgPhase1', 'nobody')}`)).status, 404);
    });
  });

  describe('variant search', () => {
    it('pages through a whole chromosome one variant at a time, matching the VCF', async () => {
      const lines = expected.phase1.lines.filter((l) => l.chrom === '1');
      const { records, pages } = await searchAll({ variantSetId: setId('1kgPhase1'), referenceName: '1', start: 0, end: 0, pageSize: 1 });
      assert.equal(records.length, lines.length);
      assert.equal(pages, lines.length);
      records.forEach((v, i) => assertVariantMatches(v, lines[i], expected.phase1.samples));
      assert.equal(new Set(records.map((v) => v.id)).size, records.length);
    });

    it('writes INFO values from their text, typed by the header', async () => {
      const line = expected.phase1.lines[0];
      const res = await server.post('/variants/search', { variantSetId: setId('1kgPhase1'), referenceName: '1', start: 0, end: line.pos, callSetIds: [] });
      const v = res.json.variants[0];
      for (const item of line.info.split(';')) {
        const [key, value] = item.split('=');
        if (value === '.') continue;
        const header = expected.phase1.header.find((h) => h.startsWith(`##INFO=<ID=${key},`))!;
        const type = /Type=(\w+)/.exec(header)![1];
        const typed = type === 'Float' ? { doubleValue: Number(value) } : type === 'Integer' ? { int32Value: Number(value) } : { stringValue: value };
        assert.deepEqual(v.attributes.attr[key].values, [typed], key);
      }
      // The text as written: no float32 round-off in the JSON itself.
      assert.match(res.text, /"doubleValue":0\.7707\b/);
    });

    it('returns variants overlapping the window, including a deletion that begins before it', async () => {
      const lines = expected.phase3.lines.filter((l) => l.chrom === '2');
      const deletion = lines.find((l) => l.ref.length > 1)!;
      const windows: Array<[number, number]> = [
        [start0(deletion) + 1, start0(deletion) + 2], // inside the deletion only
        [end0(deletion) - 1, end0(deletion)], // its last base
        [end0(deletion), end0(deletion) + 50], // just after it
        [start0(deletion) - 30, start0(deletion)], // just before it: end is exclusive
        [start0(deletion), start0(deletion) + 1],
      ];
      for (const [start, end] of windows) {
        const want = lines.filter((l) => start0(l) < end && end0(l) > start);
        const { records } = await searchAll({ variantSetId: setId('1kgPhase3'), referenceName: '2', start, end, pageSize: 2 });
        assert.deepEqual(
          records.map((v) => [v.start, v.referenceBases, (v.alternateBases ?? ['.']).join(',')]),
          want.map((l) => [start0(l), l.ref, l.alt]),
          `window [${start}, ${end})`,
        );
        records.forEach((v, i) => assertVariantMatches(v, want[i], expected.phase3.samples));
      }
      const inside = await server.post('/variants/search', {
        variantSetId: setId('1kgPhase3'),
        referenceName: '2',
        start: start0(deletion) + 1,
        end: start0(deletion) + 2,
      });
      assert.ok(inside.json.variants.some((v: any) => v.start === start0(deletion) && v.referenceBases === deletion.ref));
    });

    it('pages stably over several variants at one position and across the files of a folder', async () => {
      const lines = expected.crafted.lines;
      const all = await searchAll({ variantSetId: setId('crafted'), referenceName: '1', start: 0, end: 0, pageSize: 1 });
      assert.deepEqual(
        all.records.map((v) => [v.start, v.referenceBases, v.alternateBases]),
        lines.map((l) => [start0(l), l.ref, l.alt === '.' ? undefined : l.alt.split(',')]),
      );
      assert.equal(all.pages, lines.length);
      // The ids of variants at one position differ.
      assert.equal(new Set(all.records.map((v) => v.id)).size, lines.length);
      const phase3dup = await searchAll({ variantSetId: setId('1kgPhase3'), referenceName: '1', start: 13288, end: 13289, pageSize: 1 });
      const want = expected.phase3.lines.filter((l) => l.chrom === '1' && l.pos === 13289);
      assert.ok(want.length >= 2);
      assert.deepEqual(phase3dup.records.map((v) => v.alternateBases.join(',')), want.map((l) => l.alt));
    });

    it('pages many queries at once, and the same token twice, as the VCF has them', async () => {
      // More queries than the server keeps readers open for (each page goes on from where the one
      // before stopped, when it can), paged in turn, each token asked for twice.
      const lines = expected.phase1.lines.filter((l) => l.chrom === '1');
      const queries = Array.from({ length: 12 }, (_, i) => ({
        request: { variantSetId: setId('1kgPhase1'), referenceName: '1', start: start0(lines[i]), end: 0, pageSize: 1 + (i % 3) },
        want: lines.filter((l) => end0(l) > start0(lines[i])),
        got: [] as any[],
        token: undefined as string | undefined,
        done: false,
      }));
      while (queries.some((q) => !q.done)) {
        for (const q of queries.filter((q) => !q.done)) {
          const body = q.token ? { ...q.request, pageToken: q.token } : q.request;
          const page = await server.post('/variants/search', body);
          const again = await server.post('/variants/search', body);
          assert.equal(page.status, 200, page.text);
          assert.deepEqual(again.json, page.json);
          q.got.push(...page.json.variants);
          q.token = page.json.nextPageToken;
          q.done = q.token === undefined;
        }
      }
      for (const q of queries) {
        assert.equal(q.got.length, q.want.length, `from ${q.request.start}`);
        q.got.forEach((v, i) => assertVariantMatches(v, q.want[i], expected.phase1.samples));
      }
    });

    it('continues a pageSize 1 token with another page size', async () => {
      const request = { variantSetId: setId('crafted'), referenceName: '1', start: 0, end: 1000 };
      const first = await server.post('/variants/search', { ...request, pageSize: 2 });
      const rest = await server.post('/variants/search', { ...request, pageSize: 3, pageToken: first.json.nextPageToken });
      const last = await server.post('/variants/search', { ...request, pageSize: 100, pageToken: rest.json.nextPageToken });
      assert.equal(last.json.nextPageToken, undefined);
      const one = await server.post('/variants/search', { ...request, pageSize: 1 });
      const afterOne = await server.post('/variants/search', { ...request, pageSize: 100, pageToken: one.json.nextPageToken });
      const joined = [...first.json.variants, ...rest.json.variants, ...last.json.variants];
      assert.deepEqual([...one.json.variants, ...afterOne.json.variants], joined);
      assert.equal(joined.length, expected.crafted.lines.length);
      assert.equal(afterOne.json.nextPageToken, undefined);
    });

    it('handles every callSetIds case', async () => {
      const base = { variantSetId: setId('1kgPhase1'), referenceName: '2', start: 0, end: 0, pageSize: 3 };
      const lines = expected.phase1.lines.filter((l) => l.chrom === '2').slice(0, 3);
      const samples = expected.phase1.samples;
      const absent = await server.post('/variants/search', base);
      absent.json.variants.forEach((v: any, i: number) => assertVariantMatches(v, lines[i], samples));
      const nullIds = await server.post('/variants/search', { ...base, callSetIds: null });
      assert.deepEqual(nullIds.json, absent.json);
      const none = await server.post('/variants/search', { ...base, callSetIds: [] });
      none.json.variants.forEach((v: any, i: number) => assertVariantMatches(v, lines[i], samples, []));
      // A list: those calls only, in call-set order whatever the request order, duplicates once.
      const chosen = [samples[5], samples[1], samples[5]].map((s) => callSetIdOf('1kgPhase1', s));
      const some = await server.post('/variants/search', { ...base, callSetIds: chosen });
      assert.equal(some.status, 200);
      some.json.variants.forEach((v: any, i: number) => assertVariantMatches(v, lines[i], samples, [1, 5]));
      for (const bad of [callSetIdOf('1kgPhase1', 'nobody'), callSetIdOf('1kgPhase3', samples[0]), 'garbage']) {
        const res = await server.post('/variants/search', { ...base, callSetIds: [bad] });
        assert.equal(res.status, 404, bad);
        assert.deepEqual(Object.keys(res.json).sort(), ['errorCode', 'message']);
      }
    });

    it('checks its request', async () => {
      const base = { variantSetId: setId('1kgPhase1'), referenceName: '1', start: 0, end: 100000 };
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ ...base, start: -1 }, 400, /start/],
        [{ ...base, end: -5 }, 400, /end/],
        [{ ...base, start: 100, end: 50 }, 400, /end/],
        [{ referenceName: '1', start: 0, end: 10 }, 400, /variantSetId/],
        [{ variantSetId: setId('1kgPhase1'), start: 0, end: 10 }, 400, /referenceName/],
        [{ ...base, variantSetId: setId('nope') }, 404, /variant set/],
        [{ ...base, pageToken: 'bogus' }, 400, /pageToken/],
        [{ ...base, pageSize: -1 }, 400, /pageSize/],
      ];
      for (const [body, status, message] of cases) {
        const res = await server.post('/variants/search', body);
        assert.equal(res.status, status, JSON.stringify(body));
        assert.match(res.json.message, message);
      }
      const token = (await server.post('/variants/search', { ...base, pageSize: 1 })).json.nextPageToken;
      const other = await server.post('/variants/search', { ...base, end: 200000, pageToken: token });
      assert.equal(other.status, 400);
      const unknown = await server.post('/variants/search', { ...base, referenceName: 'chrNope' });
      assert.deepEqual([unknown.status, unknown.json], [200, { variants: [] }]);
      const emptyWindow = await server.post('/variants/search', { ...base, start: 5, end: 5 });
      assert.deepEqual(emptyWindow.json, { variants: [] });
    });

    it('answers in the naming form of the request', async () => {
      const res = await server.post('/variants/search', {
        variant_set_id: setId('1kgPhase1'),
        reference_name: '1',
        start: '0',
        end: '20000',
        page_size: 1,
      });
      assert.equal(res.status, 200);
      const v = res.json.variants[0];
      assert.equal(v.reference_name, '1');
      assert.equal(v.variant_set_id, setId('1kgPhase1'));
      assert.ok(v.calls[0].call_set_id && v.calls[0].call_set_name && v.calls[0].genotype_likelihood);
      assert.ok(v.attributes.attr.AVGPOST.values[0].double_value !== undefined);
      assert.ok(res.json.next_page_token);
      assert.ok(!/[a-z][A-Z]/.test(res.text.replace(/"[^"]*":\s*"[^"]*"/g, '').replace(/"(attr|[A-Z_]+)"/g, '')));
    });
  });

  describe('calls and fields the shipped files lack', () => {
    let records: any[];
    before(async () => {
      records = (await searchAll({ variantSetId: setId('crafted'), referenceName: '1', start: 0, end: 0 })).records;
    });

    it('writes genotypes, phase sets and likelihoods', () => {
      const [first, deletion, multi] = records;
      assert.deepEqual(first.names, ['rs1', 'rs1b']);
      assert.deepEqual(first.calls[0], {
        callSetName: 'A',
        callSetId: callSetIdOf('crafted', 'A'),
        genotype: [0, 1],
        phaseset: '7',
        genotypeLikelihood: [0, -5.7, -71.5], // PL / -10; trailing DP left out of the column
      });
      // ./. with every other field missing: genotype of -1s, nothing else.
      assert.deepEqual(first.calls[1], { callSetName: 'B', callSetId: callSetIdOf('crafted', 'B'), genotype: [-1, -1] });
      assert.deepEqual(first.calls[2].genotypeLikelihood, [-4, -0.3, 0]);
      assert.deepEqual(first.calls[2].attributes, { attr: { DP: { values: [{ int32Value: 12 }] } } });
      assert.equal(first.calls[2].phaseset, undefined);
      assert.deepEqual(first.attributes.attr, {
        DP: { values: [{ int32Value: 10 }] },
        AF: { values: [{ doubleValue: 1e-5 }] },
        DB: { values: [{ boolValue: true }] },
      });
      assert.deepEqual([deletion.start, deletion.end], [19, 23]);
      assert.deepEqual(deletion.calls[2].genotype, [1]); // haploid
      assert.deepEqual(multi.calls.map((c: any) => c.genotype), [[1, 2], [0, 2], [-1]]);
      assert.deepEqual(multi.calls.map((c: any) => c.phaseset), [undefined, 'True', undefined]);
    });

    it('writes filters and structural-variant fields', () => {
      const [first, deletion, multi, , sv] = records;
      assert.deepEqual([first.filtersApplied, first.filtersPassed, first.filtersFailed], [true, true, undefined]);
      assert.deepEqual([deletion.filtersApplied, deletion.filtersPassed, deletion.filtersFailed], [true, false, ['q10', 's50']]);
      assert.deepEqual([multi.filtersApplied, multi.filtersPassed], [false, undefined]);
      assert.deepEqual(multi.attributes.attr.AF.values, [{ doubleValue: 0.25 }, { doubleValue: 0.5 }]);
      assert.deepEqual([sv.variantType, sv.svlen, sv.cipos, sv.ciend], ['DEL', -100, [-5, 5], [-10, 10]]);
      assert.deepEqual(sv.alternateBases, ['<DEL>']);
    });
  });

  describe('get variant by id', () => {
    it('returns the object the search returned, with every call', async () => {
      for (const [set, ref] of [
        ['example_2', '20'],
        ['crafted', '1'],
        ['example_4', 'chr1'],
      ]) {
        const { records } = await searchAll({ variantSetId: setId(set), referenceName: ref, start: 0, end: 0 });
        assert.ok(records.length > 0);
        for (const v of records) {
          const got = await server.get(`/variants/${v.id}`);
          assert.equal(got.status, 200);
          assert.deepEqual(got.json, v);
        }
      }
      const some = (await server.post('/variants/search', { variantSetId: setId('1kgPhase1'), referenceName: '3', start: 0, end: 0, pageSize: 5 }))
        .json.variants;
      for (const v of some) assert.deepEqual((await server.get(`/variants/${v.id}`)).json, v);
    });

    it('answers 404 for ids that name nothing', async () => {
      const v = (await server.post('/variants/search', { variantSetId: setId('example_2'), referenceName: '20', start: 0, end: 0 })).json.variants[0];
      const names = JSON.parse(Buffer.from(v.id, 'base64url').toString());
      for (const bad of [
        idOf(...names.slice(0, 5), '0000000000000000'),
        idOf(names[0], names[1], names[2], names[3], String(names[4] - 1), names[5]),
        idOf(names[0], names[1], names[2], names[3], '0' + names[4], names[5]),
        idOf(names[0], 'xx', names[2], names[3], names[4], names[5]),
        idOf('nods', ...names.slice(1)),
        'not-an-id',
      ]) {
        assert.equal((await server.get(`/variants/${bad}`)).status, 404, bad);
      }
    });
  });

  describe('contig names', () => {
    it('serves chr-prefixed and plain names side by side (example_4)', async () => {
      for (const ref of ['1', '20', 'chr1', 'chrM']) {
        const lines = expected.example4.lines.filter((l) => l.chrom === ref);
        const { records } = await searchAll({ variantSetId: setId('example_4'), referenceName: ref, start: 0, end: 0, pageSize: 7 });
        assert.equal(records.length, lines.length, ref);
        records.forEach((v, i) => assertVariantMatches(v, lines[i], expected.example4.samples));
      }
    });
  });
});
}
