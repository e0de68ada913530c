/**
 * MD and NM of CRAM files that left them out. samtools writes CRAM without MD and NM when they can be
 * computed from the reference (its default), and `samtools view` computes them again when it decodes;
 * the server must give the same. The reads here are made to meet every rule: mismatches, N in the
 * reference and in the read, ambiguity codes, soft-masked (lower-case) reference, insertions,
 * deletions (also in lower case), soft clips, skipped regions, reads without bases or without a
 * position, and reads whose MD or NM was stored because it differs from the computed one. Expected
 * values are what `samtools view` prints for the CRAM, parsed here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { collectPages, idOf, newRegistry, startTestServer, tempDir, type TestServer } from './helpers.js';
import { parseSam, samtools, seededRandom, withoutSamtools, type SamRecord } from './sam-text.js';

const skip = withoutSamtools;

const next = seededRandom(29);
const pick = (text: string) => text[Math.floor(next() * text.length)];
const bases = (n: number) => Array.from({ length: n }, () => pick('ACGT')).join('');

/** 3,000 bases, with a run of N at 100-103 and a soft-masked run at 200-259. */
const REFERENCE = (() => {
  const text = bases(3000);
  return text.slice(0, 100) + 'NNNN' + text.slice(104, 200) + text.slice(200, 260).toLowerCase() + text.slice(260);
})();

/** Reads as [name, flag, 1-based position, CIGAR, SEQ, extra tags]. */
function reads(): Array<[string, number, number, string, string, string?]> {
  const ref = (from: number, to: number) => REFERENCE.slice(from, to).toUpperCase();
  const list: Array<[string, number, number, string, string, string?]> = [
    ['overN', 0, 91, '20M', REFERENCE.slice(90, 110)],
    ['overNwithA', 16, 91, '20M', ref(90, 100) + 'AAAA' + ref(104, 110)],
    ['lowercase', 0, 191, '30M', ref(190, 220)],
    ['deleteLower', 0, 196, '6M3D11M', ref(195, 201) + ref(204, 215)],
    ['indels', 0, 301, '2S10M2I10M5D10M', 'TT' + ref(300, 310) + 'GG' + ref(310, 320) + ref(325, 335)],
    ['skip', 0, 401, '10M50N10M', ref(400, 410) + ref(460, 470)],
    ['readN', 0, 11, '10M', 'N' + ref(11, 20)],
    ['iupac', 0, 21, '10M', 'R' + ref(21, 25) + 'Y' + ref(26, 30)],
    ['noBases', 256, 501, '10M', '*'],
    ['storedMd', 0, 601, '10M', ref(600, 610), 'MD:Z:99'],
    ['storedNm', 0, 611, '10M', ref(610, 615) + 'A' + ref(616, 620), 'NM:i:7'],
    ['placedUnmapped', 4, 701, '*', ref(700, 710)],
  ];
  // Many ordinary reads with a few mismatches each, some reversed, some clipped.
  for (let i = 0; i < 300; i++) {
    const start = 800 + Math.floor(next() * 2000);
    const length = 30 + Math.floor(next() * 60);
    const read = [...ref(start, start + length)].map((b) => (next() < 0.05 ? pick('ACGTN') : b)).join('');
    const clip = i % 7 === 0 ? 3 : 0;
    list.push([`r${i}`, i % 2 ? 16 : 0, start + 1 + clip, `${clip ? `${clip}S` : ''}${length - clip}M`, read]);
  }
  return list.sort((a, b) => a[2] - b[2]);
}

function samText(): string {
  const lines = ['@HD\tVN:1.6\tSO:coordinate', `@SQ\tSN:c1\tLN:${REFERENCE.length}`, '@RG\tID:g1\tSM:s1'];
  for (const [name, flag, position, cigar, seq, tags] of reads()) {
    const qual = seq === '*' ? '*' : 'I'.repeat(seq.length);
    lines.push([name, flag, 'c1', position, 60, cigar, '*', 0, 0, seq, qual, ...(tags ? [tags] : []), 'RG:Z:g1'].join('\t'));
  }
  lines.push(['unplaced', 4, '*', 0, 0, '*', '*', 0, 0, 'ACGT', 'IIII', 'RG:Z:g1'].join('\t'));
  return lines.join('\n') + '\n';
}

describe('MD and NM of a CRAM that left them out', { skip }, () => {
  const dir = tempDir();
  const fasta = path.join(dir, 'ref.fa');
  const cram = path.join(dir, 'reads.cram');
  let expected: SamRecord[] = [];
  let server: TestServer;

  before(async () => {
    fs.writeFileSync(fasta, '>c1\n' + REFERENCE.match(/.{1,60}/g)!.join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'reads.sam'), samText());
    samtools('faidx', fasta);
    samtools('view', '-C', '-T', fasta, '-o', cram, path.join(dir, 'reads.sam'));
    samtools('index', cram);
    // What was stored: MD and NM only where they differ from the computed ones.
    const stored = parseSam(samtools('view', '--input-fmt-option', 'decode_md=0', '-T', fasta, cram)).records;
    assert.ok(stored.filter((r) => r.tags.some((t) => t.startsWith('MD:') || t.startsWith('NM:'))).length <= 2);
    expected = parseSam(samtools('view', '-T', fasta, cram)).records;
    const { location, registry } = await newRegistry(dir);
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, fasta, { name: 'ref' });
    await loadReadGroupSet(registry, 'ds', cram, { referenceset: 'ref', name: 'crammed' });
    server = await startTestServer(location);
  });

  after(() => server?.close());

  it('gives every read the MD and NM samtools view gives it, and none where it gives none', async () => {
    const { records } = await collectPages(server, '/reads/search', { readGroupIds: [idOf('ds', 'rgs', 'crammed', 'g1')], pageSize: 100 }, 'alignments');
    // Placed reads in file order, then the unplaced one.
    const inOrder = [...expected.filter((r) => r.rname !== '*'), ...expected.filter((r) => r.rname === '*')];
    assert.equal(records.length, inOrder.length);
    let computed = 0;
    records.forEach((a: any, i: number) => {
      const r = inOrder[i];
      const tag = (key: string) => r.tags.find((t) => t.startsWith(key + ':'))?.slice(5);
      assert.equal(a.fragmentName, r.qname);
      assert.equal(a.attributes?.attr.MD?.values[0].stringValue, tag('MD'), `MD of ${r.qname}`);
      const nm = tag('NM');
      assert.deepEqual(a.attributes?.attr.NM?.values, nm === undefined ? undefined : [{ int32Value: Number(nm) }], `NM of ${r.qname}`);
      if (tag('MD') !== undefined) computed++;
    });
    // Every mapped read with bases got them (the read without bases, the unmapped ones did not).
    assert.equal(computed, expected.filter((r) => !(r.flag & 4) && r.seq !== '*').length);
  });
});
