/**
 * Beacon geneId and aminoacidChange queries over test/beacon-fixture.ts: genes of GFF3 feature sets on
 * the variant sets' reference sets (the compliance suite's GENCODE genes, and genes written for the
 * tests, one across the 16 kb boundary of the index's windows, one in two places), and the amino acid
 * changes and molecular attributes of the reference server's SnpEff and VEP annotated VCFs. Expected
 * variants are read with bcftools (`-r` over the gene's places, `query` of the ANN and CSQ fields);
 * every answer is validated against the Beacon schemas.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { beaconFixture, GENES, query, splitAlleles, type BeaconFixture } from './beacon-fixture.js';
import { tempDir, TESTDATA, tool } from './helpers.js';

let f: BeaconFixture;
let split: { snpEff: string; vep: string };

/** Alleles of a split file in regions (`-r`), '*' left out. */
function inRegions(file: string, regions: string[]): number {
  return tool('bcftools', 'view', '-H', '-r', regions.join(','), file)
    .toString('utf8')
    .split('\n')
    .filter((line) => line && line.split('\t')[4] !== '*').length;
}

async function countOf(dataset: string, parameters: Record<string, unknown>): Promise<number> {
  const { status, body } = await f.beacon.post('/beacon/g_variants', {
    meta: { apiVersion: 'v2.0' },
    query: { requestedGranularity: 'count', includeResultsetResponses: 'ALL', requestParameters: { datasetIds: [dataset], g_variant: parameters } },
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.response.resultSets.find((s: any) => s.id === dataset).resultsCount;
}

const placesOf = (referenceSet: keyof typeof GENES, name: string) => GENES[referenceSet].filter((g) => g[1] === name).map(([seqid, , start, end]) => `${seqid}:${start}-${end}`);

const THREE: Record<string, string> = { Ala: 'A', Arg: 'R', Asn: 'N', Asp: 'D', Cys: 'C', Gln: 'Q', Glu: 'E', Gly: 'G', His: 'H', Ile: 'I', Leu: 'L', Lys: 'K', Met: 'M', Phe: 'F', Pro: 'P', Ser: 'S', Thr: 'T', Trp: 'W', Tyr: 'Y', Val: 'V' };

/** Each allele's amino acid changes, from SnpEff's HGVS.p (column 11 of ANN) or VEP's Protein_position and Amino_acids (CSQ columns 8, 9). */
function changesIn(file: string, field: 'ANN' | 'CSQ'): Array<{ pos: number; alt: string; changes: string[]; genes: string[]; effects: string[] }> {
  return query(file, `%POS\t%ALT\t%${field}\n`).map((line) => {
    const [pos, alt, entries] = line.split('\t');
    const changes = new Set<string>();
    const genes = new Set<string>();
    const effects = new Set<string>();
    for (const entry of entries.split(',')) {
      const c = entry.split('|');
      const allele = c[0];
      if (allele !== alt && allele !== alt.slice(1) && !(alt.length === 1 && allele === alt)) continue;
      if (field === 'ANN') {
        const m = /p\.([A-Z][a-z]{2})(\d+)([A-Z][a-z]{2})$/.exec(c[10] ?? '');
        if (m && THREE[m[1]] && THREE[m[3]]) changes.add(`${THREE[m[1]]}${m[2]}${THREE[m[3]]}`);
        if (c[3]) genes.add(c[3]);
        for (const e of c[1].split('&')) effects.add(e);
      } else {
        const [ref, to = ref] = (c[8] ?? '').split('/');
        if (c[7] && ref?.length === 1 && to.length === 1) changes.add(`${ref}${c[7]}${to}`);
        if (c[1]) genes.add(c[1]);
        for (const e of c[4].split('&')) effects.add(e);
      }
    }
    return { pos: Number(pos), alt, changes: [...changes], genes: [...genes], effects: [...effects] };
  });
}

/** The Sequence Ontology's term ids by name, read from the OBO file. */
function soIds(): Map<string, string> {
  const ids = new Map<string, string>();
  for (const stanza of fs.readFileSync(path.join(TESTDATA, 'compliance/so-xp-simple.obo'), 'utf8').split('\n\n')) {
    const id = /^id: (SO:\d+)$/m.exec(stanza)?.[1];
    const name = /^name: (.+)$/m.exec(stanza)?.[1];
    if (id && name) ids.set(name, id);
  }
  return ids;
}

before(async () => {
  f = await beaconFixture();
  const dir = tempDir();
  split = { snpEff: splitAlleles(f.vcfs.snpEff, dir), vep: splitAlleles(f.vcfs.vep, dir) };
});

describe('beacon geneId', () => {
  it('a gene across the 16 kb boundary of the index windows: what bcftools finds over its place', async () => {
    for (const name of ['EDGE1', 'WASH7P']) {
      const places = placesOf('NCBI37', name);
      assert.ok(places.length === 1);
      assert.equal(await countOf('kg', { geneId: name }), inRegions(f.split.kg[0], places), name);
    }
  });

  it('a gene in two places finds each allele once; with variantType, the structural variants overlapping it', async () => {
    const places = placesOf('synthetic', 'SYNG');
    assert.equal(places.length, 2);
    assert.equal(await countOf('synthetic', { geneId: 'SYNG' }), inRegions(f.split.synthetic, places));
    const dels = query(f.split.synthetic, '%POS\n', 'INFO/SVTYPE="DEL"', '-r', places.join(',')).length;
    assert.equal(await countOf('synthetic', { geneId: 'SYNG', variantType: 'DEL' }), dels);
    const got = await f.beacon.get('/beacon/g_variants?datasetIds=synthetic&geneid=SYNH&requestedGranularity=count');
    assert.equal(got.body.responseSummary.numTotalResults, inRegions(f.split.synthetic, placesOf('synthetic', 'SYNH')));
  });

  it("the genes of the compliance suite's GENCODE file, by gene_name", async () => {
    const genes = fs
      .readFileSync(path.join(TESTDATA, 'compliance/brca1_gencodev19.gff3'), 'utf8')
      .split('\n')
      .filter((l) => l.split('\t')[2] === 'gene')
      .map((l) => l.split('\t'))
      .map((c) => ({ name: /gene_name=([^;]+)/.exec(c[8])![1], region: `${c[0]}:${c[3]}-${c[4]}` }));
    assert.ok(genes.length >= 2);
    for (const gene of genes) assert.equal(await countOf('compliance', { geneId: gene.name }), inRegions(f.split.compliance, [gene.region]), gene.name);
  });

  it('a gene of another reference set, or of none, finds nothing', async () => {
    assert.equal(await countOf('synthetic', { geneId: 'EDGE1' }), 0);
    assert.equal(await countOf('kg', { geneId: 'NOSUCHGENE' }), 0);
  });
});

describe('beacon aminoacidChange and molecularAttributes', () => {
  it('SnpEff HGVS.p and VEP Amino_acids changes, in one-letter or three-letter form', async () => {
    const snpEff = changesIn(split.snpEff, 'ANN');
    const vep = changesIn(split.vep, 'CSQ');
    const asked = new Set([...snpEff, ...vep].flatMap((a) => a.changes).slice(0, 12));
    assert.ok(asked.size >= 5, [...asked].join(' '));
    for (const change of asked) {
      const expected = [...snpEff, ...vep].filter((a) => a.changes.includes(change)).length;
      assert.equal(await countOf('annotated', { aminoacidChange: change }), expected, change);
    }
    const [first] = snpEff.filter((a) => a.changes.length);
    const long = Object.entries(THREE).find(([, one]) => one === first.changes[0][0])![0];
    assert.equal(await countOf('annotated', { aminoacidChange: `p.${long}${first.changes[0].slice(1, -1)}${Object.entries(THREE).find(([, one]) => one === first.changes[0].at(-1))![0]}` }), await countOf('annotated', { aminoacidChange: first.changes[0] }));
  });

  it('aminoacidChange with geneId: the changes inside the gene', async () => {
    const snpEff = changesIn(split.snpEff, 'ANN');
    const [, , start, end] = GENES.NCBI37.find((g) => g[1] === 'OR4F5')!;
    const change = snpEff.find((a) => a.changes.length && a.pos >= start && a.pos <= end)!.changes[0];
    const expected = [...snpEff, ...changesIn(split.vep, 'CSQ')].filter((a) => a.changes.includes(change) && a.pos >= start && a.pos <= end).length;
    assert.equal(await countOf('annotated', { aminoacidChange: change, geneId: 'OR4F5' }), expected);
    assert.equal(await countOf('annotated', { aminoacidChange: change, geneId: 'EDGE1' }), 0);
  });

  it("molecularAttributes: the allele's genes, effects as Sequence Ontology terms, amino acid changes", async () => {
    const so = soIds();
    const snpEff = changesIn(split.snpEff, 'ANN').filter((a) => a.changes.length).slice(0, 5);
    for (const allele of snpEff) {
      const { body } = await f.beacon.post('/beacon/g_variants', {
        meta: { apiVersion: 'v2.0' },
        query: { requestParameters: { datasetIds: ['annotated'], g_variant: { referenceName: '1', start: [allele.pos - 1], alternateBases: allele.alt } } },
      });
      const record = body.response.resultSets[0].results.find((r: any) => JSON.parse(Buffer.from(r.variantInternalId, 'base64url').toString())[2] === 'snpeff');
      assert.deepEqual(record.molecularAttributes.aminoacidChanges.sort(), allele.changes.sort());
      assert.deepEqual(record.molecularAttributes.geneIds.sort(), allele.genes.sort());
      assert.deepEqual(record.molecularAttributes.molecularEffects.map((e: any) => e.id).sort(), allele.effects.map((e) => so.get(e)).filter(Boolean).sort());
    }
  });

  it('an aminoacidChange that is no change of one amino acid is a 400', async () => {
    for (const bad of ['V600', 'banana', '600E']) {
      const { status, body } = await f.beacon.get(`/beacon/g_variants?aminoacidChange=${bad}`);
      assert.equal(status, 400);
      assert.match(body.error.errorMessage, /aminoacidChange must be a change of one amino acid/);
    }
  });
});
