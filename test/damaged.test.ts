/**
 * Damaged and mismatched files: what the loader refuses, what a search over a damaged region answers,
 * and what `repo check` (plain and `--deep`) finds. The damaged files are made here from real files
 * copied to a temporary folder (the compliance VCF, compressed with the `bgzip` tool, and the compliance
 * FASTA), by cutting them and overwriting bytes; expected values come from the plain text.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { removeVariantSet } from '../src/areas/variants/store.js';
import { backends } from './backends.js';
import { bgzippedVcf, copyFixture, idOf, newRegistry, runCliAsync, startTestServer, tempDir, type TestServer, tool } from './helpers.js';

const dir = tempDir();
const vcfText = fs.readFileSync(copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir), 'utf8');
const fasta = copyFixture('compliance/ref_brca1.fa', dir);

const headerLines = vcfText.split('\n').filter((l) => l.startsWith('#'));
const dataLines = vcfText.split('\n').filter((l) => l && !l.startsWith('#'));
const posOf = (line: string) => Number(line.split('\t')[1]);

/** The BGZF blocks of a file, read from their headers: [offset, size, uncompressed size]. */
function blocksOf(bytes: Buffer): Array<[number, number, number]> {
  const blocks: Array<[number, number, number]> = [];
  for (let at = 0; at < bytes.length; ) {
    const size = bytes.readUInt16LE(at + 16) + 1;
    blocks.push([at, size, bytes.readUInt32LE(at + size - 4)]);
    at += size;
  }
  return blocks;
}

const intact = bgzippedVcf(dir, 'brca.vcf.gz', vcfText);
const intactBytes = fs.readFileSync(intact);
const blocks = blocksOf(intactBytes);
const EOF_BLOCK = '1f8b08040000000000ff0600424302001b0003000000000000000000';

/** The data lines held whole by the first `n` blocks' text. */
function linesInFirstBlocks(n: number): string[] {
  const textBytes = blocks.slice(0, n).reduce((sum, [, , isize]) => sum + isize, 0);
  const text = Buffer.from(vcfText).subarray(0, textBytes).toString('utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l && !l.startsWith('#'));
}

describe('the test files', () => {
  it('span several BGZF blocks and end with the end-of-file block', () => {
    assert.ok(blocks.length >= 5, `${blocks.length} blocks`);
    assert.equal(intactBytes.subarray(-28).toString('hex'), EOF_BLOCK);
  });
});

describe('loading refuses damaged and mismatched files', () => {
  let registry: Awaited<ReturnType<typeof newRegistry>>['registry'];
  before(async () => {
    ({ registry } = await newRegistry(dir));
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, { name: 'brca' });
  });
  const load = (file: string, name = 'x') => loadVariantSet(registry, 'ds', [file], { referenceset: 'brca', name });

  it('a bgzipped VCF cut at a block boundary, or in the middle of a block (no end-of-file block)', async () => {
    const atBoundary = bgzippedVcf(dir, 'boundary.vcf.gz', vcfText);
    fs.writeFileSync(atBoundary, intactBytes.subarray(0, blocks[3][0]));
    await assert.rejects(load(atBoundary), /no BGZF end-of-file block/);
    const midBlock = bgzippedVcf(dir, 'mid.vcf.gz', vcfText);
    fs.writeFileSync(midBlock, intactBytes.subarray(0, blocks[3][0] + 1000));
    await assert.rejects(load(midBlock), /no BGZF end-of-file block/);
  });

  it('a bgzipped VCF whose last record was cut short before it was compressed', async () => {
    // The last record loses its last sample column and half of the one before.
    const lastTab = vcfText.lastIndexOf('\t');
    const cut = vcfText.slice(0, vcfText.lastIndexOf('\t', lastTab - 1) + 3);
    const file = bgzippedVcf(dir, 'cut.vcf.gz', cut);
    const columns = cut.split('\n').filter(Boolean).at(-1)!.split('\t').length;
    assert.ok(columns < 12);
    await assert.rejects(load(file), new RegExp(`last record has ${columns} columns where the header has 12`));
  });

  it('a plain VCF cut in the middle of a record, and writes nothing beside it', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'plain-'));
    const plain = path.join(folder, 'cut.vcf');
    const cut = vcfText.slice(0, vcfText.length - 7);
    fs.writeFileSync(plain, cut);
    const lineNumber = cut.split('\n').length;
    await assert.rejects(load(plain), new RegExp(`line ${lineNumber} has \\d+ columns where the header has 12`));
    assert.deepEqual(fs.readdirSync(folder), ['cut.vcf']);
  });

  it("a VCF with another file's index", async () => {
    const file = bgzippedVcf(dir, 'other.vcf.gz', vcfText, false);
    fs.copyFileSync(path.join(copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase3', fs.mkdtempSync(path.join(dir, 'p3-'))), 'chr1.vcf.gz.tbi'), `${file}.tbi`);
    // The index's offset for contig 1 lands inside a ref_brca1 record of this file.
    // Contig 1 is not in the reference set: allowed, so that only the index check can refuse.
    await assert.rejects(
      loadVariantSet(registry, 'ds', [file], { referenceset: 'brca', name: 'x', allowMissingContigs: true }),
      /index does not belong to it: the index places contig 1 where the file has a line of '/,
    );
  });

  it('a gzip file that is not BGZF, with the way to recompress it (not a tabix hint)', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'gzip-'));
    const plain = path.join(folder, 'g.vcf');
    fs.writeFileSync(plain, vcfText);
    const gz = path.join(folder, 'g.vcf.gz');
    fs.writeFileSync(gz, spawnSync('gzip', ['-c', plain]).stdout);
    const error = await load(gz).then(
      () => assert.fail('loaded'),
      (e: Error) => e,
    );
    assert.match(error.message, /g\.vcf\.gz is gzip-compressed but not BGZF.*recompress it with bgzip/);
    assert.doesNotMatch(error.message, /tabix/);
  });

  it('leaves the registry as it was after every refusal', async () => {
    const sets = await registry.db.selectFrom('variant_set').select('name').execute();
    assert.deepEqual(sets, []);
  });
});

describe('a plain VCF that changed since its compressed copy was made', () => {
  /** A registry where the plain VCF `v.vcf` holding `text` was loaded once (its copy made) and removed. */
  async function loadedOnce(folderPrefix: string, text: string) {
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, { name: 'brca' });
    const folder = fs.mkdtempSync(path.join(dir, folderPrefix));
    const plain = path.join(folder, 'v.vcf');
    fs.writeFileSync(plain, text);
    await loadVariantSet(registry, 'ds', [plain], { referenceset: 'brca' });
    await removeVariantSet(registry, 'ds', 'v');
    return { location, registry, folder, plain };
  }

  it('is compressed again, so every record of the new file is served', async () => {
    const firstPart = [...headerLines, ...dataLines.slice(0, 179)].join('\n') + '\n';
    const { location, registry, folder, plain } = await loadedOnce('grow-', firstPart);
    fs.writeFileSync(plain, vcfText); // the file grew
    const loaded = await loadVariantSet(registry, 'ds', [plain], { referenceset: 'brca' });
    assert.match(loaded.notes.join('\n'), /rebuilt .*v\.vcf\.gz: v\.vcf changed/);
    // Through the folder too: the plain file is the source, its copy is checked against it.
    await removeVariantSet(registry, 'ds', 'v');
    await loadVariantSet(registry, 'ds', [folder], { referenceset: 'brca', name: 'v' });
    const server = await startTestServer(location, { paging: { defaultPageSize: 100, maxPageSize: 5000, pageByteBudget: 64 << 20 } });
    const res = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'v'), referenceName: 'ref_brca1', pageSize: 5000, callSetIds: [] });
    assert.equal(res.status, 200);
    assert.equal(res.json.variants.length, dataLines.length);
    // An unchanged copy is reused as it is.
    const copyTime = fs.statSync(`${plain}.gz`).mtimeMs;
    await removeVariantSet(registry, 'ds', 'v');
    const again = await loadVariantSet(registry, 'ds', [plain], { referenceset: 'brca' });
    assert.deepEqual([again.notes, again.createdFiles], [[], []]);
    assert.equal(fs.statSync(`${plain}.gz`).mtimeMs, copyTime);
  });

  it('is compressed again when replaced by a file of the same size with an older mtime', async () => {
    const { location, registry, plain } = await loadedOnce('same-size-', vcfText);
    // The same text with the first call's genotype changed (same length), given a time long past, as
    // `cp -p` of an older file would.
    const fields = dataLines[0].split('\t');
    const sample = fields.findIndex((f, i) => i >= 9 && f.startsWith('0|'));
    const replaced = fields.map((f, i) => (i === sample ? '1' + f.slice(1) : f)).join('\t');
    assert.notEqual(replaced, dataLines[0]);
    assert.equal(replaced.length, dataLines[0].length);
    fs.writeFileSync(plain, vcfText.replace(dataLines[0], replaced));
    const past = new Date('2001-01-01T00:00:00Z');
    fs.utimesSync(plain, past, past);
    const loaded = await loadVariantSet(registry, 'ds', [plain], { referenceset: 'brca' });
    assert.match(loaded.notes.join('\n'), /rebuilt .*v\.vcf\.gz: v\.vcf changed/);
    const server = await startTestServer(location);
    const res = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'v'), referenceName: 'ref_brca1', pageSize: 1 });
    assert.equal(res.status, 200);
    assert.equal(res.json.variants[0].calls[sample - 9].genotype[0], 1);
    await server.close();
  });
});

describe('structural variants and window searches', () => {
  it('returns a <DEL> whose INFO END reaches into the window, with END as its end', async () => {
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, { name: 'brca' });
    await loadVariantSet(registry, 'ds', [bgzippedVcf(dir, 'sv.vcf.gz', vcfText)], { referenceset: 'brca', name: 'sv' });
    const server = await startTestServer(location);
    const sv = dataLines.find((l) => /(^|;)END=/.test(l.split('\t')[7]))!;
    const end = Number(/(?:^|;)END=(\d+)/.exec(sv.split('\t')[7])![1]);
    const start = posOf(sv) - 1;
    const window = { start: start + 4000, end: start + 4100 };
    // Expected: every record overlapping the window by its REF, or by its END where it has one.
    const expected = dataLines.filter((l) => {
      const s = posOf(l) - 1;
      const tagged = /(?:^|;)END=(\d+)/.exec(l.split('\t')[7]);
      const e = tagged ? Number(tagged[1]) : s + l.split('\t')[3].length;
      return s < window.end && e > window.start;
    });
    assert.ok(expected.includes(sv));
    const res = await server.post('/variants/search', { variantSetId: idOf('ds', 'vs', 'sv'), referenceName: 'ref_brca1', ...window });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json.variants.map((v: any) => v.start), expected.map((l) => posOf(l) - 1));
    const served = res.json.variants.find((v: any) => v.start === start);
    assert.deepEqual([served.end, served.alternateBases], [end, ['<CN0>']]);
  });
});

for (const backend of backends) {
  describe(`searches over a damaged region, on ${backend.name}`, { skip: backend.skip }, () => {
    let server: TestServer;
    let file: string;
    const setId = idOf('ds', 'vs', 'brca');
    const search = (body: Record<string, unknown>) =>
      server.post('/variants/search', { variantSetId: setId, referenceName: 'ref_brca1', pageSize: 5000, ...body });

    before(async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      await addDataset(registry, 'ds');
      await loadReferenceSet(registry, fasta, { name: 'brca' });
      file = bgzippedVcf(dir, 'brca.vcf.gz', vcfText);
      await loadVariantSet(registry, 'ds', [file], { referenceset: 'brca', name: 'brca' });
      server = await startTestServer(location, { paging: { defaultPageSize: 100, maxPageSize: 5000, pageByteBudget: 64 << 20 } });
    });

    function assertUnavailable(res: { status: number; json: any }) {
      assert.equal(res.status, 503, JSON.stringify(res.json));
      assert.equal(res.json.errorCode, 22);
      assert.match(res.json.message, /variant set 'brca'/);
    }

    it('answers 503 for a region past a cut at a block boundary, and every record before it', async () => {
      fs.writeFileSync(file, intactBytes.subarray(0, blocks[3][0]));
      const kept = linesInFirstBlocks(3);
      const lost = dataLines[kept.length + 5];
      assertUnavailable(await search({ start: posOf(lost) - 1, end: posOf(lost) }));
      // A region the remaining blocks hold whole is still served, in full.
      const early = { start: 0, end: posOf(kept[kept.length - 20]) };
      const res = await search(early);
      assert.equal(res.status, 200);
      assert.equal(res.json.variants.length, dataLines.filter((l) => posOf(l) - 1 < early.end).length);
    });

    it('answers 503, not a reply cut short, for a long page over a cut in the middle of a block', async () => {
      fs.writeFileSync(file, intactBytes.subarray(0, blocks[3][0] + 3000));
      assertUnavailable(await search({}));
      assertUnavailable(await search({ start: posOf(linesInFirstBlocks(3).at(-1)!) }));
    });

    it('logs the cause of a 503 once, for the client it answered, and nothing for a page built ahead that failed', async () => {
      fs.writeFileSync(file, intactBytes.subarray(0, blocks[3][0]));
      const kept = linesInFirstBlocks(3);
      // Page 1 lies in the blocks left whole; pages 2 and 3, built ahead of their requests, reach the cut.
      const pageSize = kept.length - 5;
      const logged: string[] = [];
      const write = process.stderr.write;
      // Workers' output reaches the main thread's stderr too, so this sees every thread's log.
      process.stderr.write = ((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0) as typeof process.stderr.write;
      try {
        const first = await search({ pageSize, callSetIds: [] });
        assert.equal(first.status, 200);
        assert.equal(first.json.variants.length, pageSize);
        await new Promise((resolve) => setTimeout(resolve, 500)); // the pages built ahead fail meanwhile
        const second = await search({ pageSize, callSetIds: [], pageToken: first.json.nextPageToken });
        assertUnavailable(second);
        assert.doesNotMatch(second.json.message, new RegExp(path.basename(file)));
      } finally {
        process.stderr.write = write;
      }
      const lines = logged.join('').split('\n').filter(Boolean);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0], /POST \/variants\/search answered 503: reading variant set 'brca': /);
      fs.writeFileSync(file, intactBytes);
    });

    it('answers 503 for a page over a block whose bytes were overwritten', async () => {
      // The last data block: read after the first records of the page are written.
      const last = blocks.length - 2;
      const damaged = Buffer.from(intactBytes);
      damaged.fill(0x5a, blocks[last][0] + 2000, blocks[last][0] + 2064);
      fs.writeFileSync(file, damaged);
      assertUnavailable(await search({}));
      const get = await server.get(`/variants/${idOf('ds', 'vs', 'brca', 'ref_brca1', String(posOf(dataLines.at(-1)!) - 1), '0'.repeat(16))}`);
      assert.ok(get.status === 404 || get.status === 503);
      fs.writeFileSync(file, intactBytes);
      const whole = await search({ callSetIds: [] });
      assert.equal(whole.status, 200);
      assert.equal(whole.json.variants.length, dataLines.length);
    });
  });
}

describe('repo check and repo check --deep', () => {
  it('finds a corrupted middle block of a VCF and of a FASTA only when reading deep, with progress; a cut file either way', async () => {
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    // A FASTA of one long sequence (the compliance sequence three times), bgzipped: its first and last
    // bases lie in the first and last blocks, so a block in between is read only by --deep.
    const [head, ...rest] = fs.readFileSync(fasta, 'utf8').trimEnd().split('\n');
    const sequence = rest.join('').repeat(3);
    const lines = sequence.match(new RegExp(`.{1,${rest[0].length}}`, 'g'))!;
    const longFasta = path.join(fs.mkdtempSync(path.join(dir, 'fa-')), 'long.fa');
    fs.writeFileSync(longFasta, [head, ...lines].join('\n') + '\n');
    fs.writeFileSync(`${longFasta}.gz`, tool('bgzip', '-c', longFasta));
    await loadReferenceSet(registry, `${longFasta}.gz`, { name: 'long' });
    await loadReferenceSet(registry, fasta, { name: 'brca' });
    // A VCF of every record twice (still sorted), so that it spans blocks the plain check never reads.
    const doubled = [...headerLines, ...dataLines.flatMap((l) => [l, l])].join('\n') + '\n';
    const vcf = bgzippedVcf(dir, 'checked.vcf.gz', doubled);
    const vcfBytes = fs.readFileSync(vcf);
    const vcfBlocks = blocksOf(vcfBytes);
    await loadVariantSet(registry, 'ds', [vcf], { referenceset: 'brca', name: 'checked' });
    await registry.close();

    const env = { GA4GH_PROGRESS_INTERVAL: '0' };
    const check = (...args: string[]) => runCliAsync('repo', 'check', location, ...args);
    const withEnv = async (fn: () => Promise<any>) => {
      const saved = process.env.GA4GH_PROGRESS_INTERVAL;
      process.env.GA4GH_PROGRESS_INTERVAL = env.GA4GH_PROGRESS_INTERVAL;
      try {
        return await fn();
      } finally {
        if (saved === undefined) delete process.env.GA4GH_PROGRESS_INTERVAL;
        else process.env.GA4GH_PROGRESS_INTERVAL = saved;
      }
    };
    let r = await withEnv(() => check('--deep'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /checking .*checked\.vcf\.gz: [\d.]+ of [\d.]+ MB \(100%\)/);
    assert.match(r.stderr, /checking .*long\.fa\.gz: [\d.]+ of [\d.]+ MB \(100%\)/);

    const fastaBytes = fs.readFileSync(`${longFasta}.gz`);
    const fastaBlocks = blocksOf(fastaBytes);
    assert.ok(fastaBlocks.length >= 4, `${fastaBlocks.length} FASTA blocks`);
    const damagedFasta = Buffer.from(fastaBytes);
    damagedFasta.fill(0x5a, fastaBlocks[1][0] + 5000, fastaBlocks[1][0] + 5064);
    fs.writeFileSync(`${longFasta}.gz`, damagedFasta);
    // The plain check inflates the first blocks (header and first record, read ~256 KB of text at a
    // time) and the last: a block in between is read only by --deep.
    const middle = vcfBlocks.length - 4;
    assert.ok(vcfBlocks.slice(0, middle).reduce((n, [, , isize]) => n + isize, 0) > 300 * 1024);
    const damagedVcf = Buffer.from(vcfBytes);
    damagedVcf.fill(0x5a, vcfBlocks[middle][0] + 2000, vcfBlocks[middle][0] + 2064);
    fs.writeFileSync(vcf, damagedVcf);

    r = await check();
    assert.equal(r.code, 0, `the plain check reads only the ends: ${r.stderr}`);
    r = await withEnv(() => check('--deep'));
    assert.equal(r.code, 1);
    const problems = r.stderr.split('\n').filter((l: string) => l.startsWith('problem: '));
    assert.equal(problems.length, 2, r.stderr);
    assert.match(problems.find((p: string) => p.includes('long.fa.gz'))!, new RegExp(`reference set 'long': .*(block at byte ${fastaBlocks[1][0]}|MD5)`));
    assert.match(problems.find((p: string) => p.includes('checked.vcf.gz'))!, new RegExp(`variant set 'checked' of dataset 'ds': .*damaged BGZF block at byte ${vcfBlocks[middle][0]}`));
    assert.match(r.stderr, /ga4gh: 2 problem\(s\) found/);

    // A VCF cut at a block boundary fails the plain check too: its end-of-file block is missing.
    fs.writeFileSync(`${longFasta}.gz`, fastaBytes);
    fs.writeFileSync(vcf, vcfBytes.subarray(0, vcfBlocks[middle][0]));
    r = await check();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /problem: variant set 'checked' of dataset 'ds': .*no BGZF end-of-file block/);
  });
});
