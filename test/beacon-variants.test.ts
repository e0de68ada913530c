/**
 * Beacon g_variants over the registered VCFs (test/beacon-fixture.ts): sequence, range and bracket
 * queries, variant types, lengths, wildcards, sites at the first and last base of a contig,
 * multi-allelic lines as one variant per allele, structural variants with END, assembly aliases,
 * the legacy and VRS forms, identifiers, caseLevelData, frequencies, the granularity of each dataset,
 * paging, bad input and a damaged file. What each query should find is read with bcftools from the
 * same files split into one line per allele (`bcftools norm -m -`); every answer is validated against
 * the Beacon schemas.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { beaconFixture, COMPLIANCE_ACCESSION, query, SYNTHETIC_SAMPLES, type BeaconFixture } from './beacon-fixture.js';
import { bgzippedVcf, idOf, newRegistry, runAsync, runCli, startTestServer, tool } from './helpers.js';
import { beaconClient } from './beacon-harness.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';

let f: BeaconFixture;

/** An allele as bcftools reads it from a split file: 0-based start, 0-based exclusive end (%END). */
interface Row {
  chrom: string;
  start: number;
  end: number;
  ref: string;
  alt: string;
  id: string;
  svlen: string;
}

/** The alleles of a split file (spanning deletions '*' are no variants), optionally those `include` selects. */
function rows(file: string, include?: string): Row[] {
  return query(file, '%CHROM\t%POS\t%END\t%REF\t%ALT\t%ID\t%INFO/SVLEN\n', include)
    .map((line) => {
      const [chrom, pos, end, ref, alt, id, svlen] = line.split('\t');
      return { chrom, start: Number(pos) - 1, end: Number(end), ref, alt, id, svlen };
    })
    .filter((r) => r.alt !== '*');
}

/** How many alleles of a split file bcftools finds in a region (`-r`, 1-based inclusive), '*' left out. */
function inRegion(file: string, region: string): number {
  return tool('bcftools', 'view', '-H', '-r', region, file)
    .toString('utf8')
    .split('\n')
    .filter((line) => line && line.split('\t')[4] !== '*').length;
}

/** The allele number a variantInternalId names (docs/beacon.md: the id's last name). */
const alleleOfId = (id: string) => Number(JSON.parse(Buffer.from(id, 'base64url').toString('utf8')).at(-1));

/** The result set of a dataset in a g_variants answer, by POST. */
async function resultSet(dataset: string, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const { status, body } = await f.beacon.post('/beacon/g_variants', {
    meta: { apiVersion: 'v2.0' },
    query: { requestParameters: { datasetIds: [dataset], g_variant: parameters }, includeResultsetResponses: 'ALL', ...extra },
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.response.resultSets.find((s: any) => s.id === dataset);
}

const countOf = async (dataset: string, parameters: Record<string, unknown>) => (await resultSet(dataset, parameters, { requestedGranularity: 'count' })).resultsCount;

/** Every record of a query, following the pages. */
async function recordsOf(dataset: string, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<any[]> {
  return (await resultSet(dataset, parameters, { pagination: { limit: 0 }, ...extra })).results;
}

before(async () => {
  f = await beaconFixture();
});

describe('beacon g_variants: sequence queries', () => {
  it('finds each allele of the 1000 Genomes extract at its 0-based start, by GET, and nothing one base off', async () => {
    const alleles = rows(f.split.kg[0]);
    for (const a of alleles.slice(0, 25)) {
      const same = alleles.filter((b) => b.start === a.start && b.ref === a.ref && b.alt === a.alt).length;
      const { body } = await f.beacon.get(`/beacon/g_variants?datasetIds=kg&referenceName=${a.chrom}&start=${a.start}&referenceBases=${a.ref}&alternateBases=${a.alt}&requestedGranularity=count`);
      assert.equal(body.responseSummary.numTotalResults, same, `${a.chrom}:${a.start + 1} ${a.ref}>${a.alt}`);
      const shifted = alleles.filter((b) => b.start === a.start + 1 && b.ref === a.ref && b.alt === a.alt).length;
      const off = await f.beacon.get(`/beacon/g_variants?datasetIds=kg&referenceName=${a.chrom}&start=${a.start + 1}&referenceBases=${a.ref}&alternateBases=${a.alt}&requestedGranularity=count`);
      assert.equal(off.body.responseSummary.numTotalResults, shifted);
    }
  });

  it('N stands for any base, in alternateBases and referenceBases', async () => {
    const alleles = rows(f.split.synthetic);
    for (const pos of [1, 10, 40]) {
      const here = alleles.filter((a) => a.chrom === 'c1' && a.start === pos - 1);
      const ref = here[0].ref;
      const single = here.filter((a) => a.alt.length === 1).length;
      assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [pos - 1], alternateBases: 'N' }), single, `c1:${pos} N`);
      const same = here.filter((a) => a.alt.length === ref.length).length;
      assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [pos - 1], referenceBases: 'N'.repeat(ref.length), alternateBases: 'N'.repeat(ref.length) }), same);
    }
  });

  it('an indel is matched as the VCF writes it, and without its padding base', async () => {
    const [deletion] = rows(f.split.synthetic, 'POS=20');
    assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [deletion.start], referenceBases: deletion.ref, alternateBases: deletion.alt }), 1);
    assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [deletion.start + 1], referenceBases: deletion.ref.slice(1), alternateBases: '' }), 1);
    const [insertion] = rows(f.split.synthetic, 'POS=30');
    assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [insertion.start + 1], referenceBases: '', alternateBases: insertion.alt.slice(1) }), 1);
  });
});

describe('beacon g_variants: sites at the first and last base of a contig', () => {
  for (const [contig, pos] of [['c1', 1], ['c1', 1000], ['c2', 1], ['c2', 300]] as const) {
    it(`${contig}:${pos} is start ${pos - 1}, and the range [${pos - 1}, ${pos}) holds it`, async () => {
      const [site] = rows(f.split.synthetic, `CHROM="${contig}" && POS=${pos}`);
      assert.equal(await countOf('synthetic', { referenceName: contig, start: [pos - 1], referenceBases: site.ref, alternateBases: site.alt }), 1);
      assert.equal(await countOf('synthetic', { referenceName: contig, start: [pos - 1], end: [pos] }), inRegion(f.split.synthetic, `${contig}:${pos}-${pos}`));
      assert.equal(await countOf('synthetic', { referenceName: contig, start: [pos], referenceBases: site.ref, alternateBases: site.alt }), 0);
    });
  }
});

describe('beacon g_variants: range and bracket queries', () => {
  const windows: Array<[string, number, number]> = [
    ['c1', 0, 1000],
    ['c1', 150, 160],
    ['c1', 260, 310],
    ['c1', 399, 401],
    ['c1', 550, 551],
    ['c2', 0, 300],
  ];
  for (const [contig, start, end] of windows) {
    it(`[${start}, ${end}) of ${contig} holds what bcftools finds in ${contig}:${start + 1}-${end}, structural variants by their END`, async () => {
      assert.equal(await countOf('synthetic', { referenceName: contig, start: [start], end: [end] }), inRegion(f.split.synthetic, `${contig}:${start + 1}-${end}`));
    });
  }

  it('ranges of the 1000 Genomes extract, by GET', async () => {
    for (const [chrom, start, end] of [['1', 10000, 10600], ['2', 0, 100000000], ['3', 60000, 70000]] as const) {
      const { body } = await f.beacon.get(`/beacon/g_variants?datasetIds=kg&referenceName=${chrom}&start=${start}&end=${end}&requestedGranularity=count`);
      const file = f.split.kg.find((x) => path.basename(x).startsWith(`chr${chrom}.`))!;
      assert.equal(body.responseSummary.numTotalResults, inRegion(file, `${chrom}:${start + 1}-${end}`), `${chrom}:${start}-${end}`);
    }
  });

  it('a referenceName alone is every allele of it; no position at all is every allele', async () => {
    assert.equal(await countOf('synthetic', { referenceName: 'c2' }), rows(f.split.synthetic, 'CHROM="c2"').length);
    assert.equal(await countOf('synthetic', {}), rows(f.split.synthetic).length);
  });

  it('brackets: starting in [start[0], start[1]) and ending in [end[0], end[1])', async () => {
    const alleles = rows(f.split.synthetic).filter((a) => a.chrom === 'c1');
    for (const [s, e] of [
      [[99, 100], [250, 251]],
      [[90, 130], [200, 500]],
      [[0, 1000], [600, 601]],
      [[0, 1], [0, 1000]],
    ]) {
      const expected = alleles.filter((a) => a.start >= s[0] && a.start < s[1] && a.end >= e[0] && a.end < e[1]).length;
      assert.equal(await countOf('synthetic', { referenceName: 'c1', start: s, end: e }), expected, `${s} ${e}`);
      const { body } = await f.beacon.get(`/beacon/g_variants?datasetIds=synthetic&referenceName=c1&start=${s.join(',')}&end=${e.join(',')}&requestedGranularity=count`);
      assert.equal(body.responseSummary.numTotalResults, expected);
    }
  });
});

describe('beacon g_variants: variant types and lengths', () => {
  const byType: Array<[string, string]> = [
    ['SNP', 'TYPE="snp"'],
    ['MNP', 'TYPE="mnp"'],
    ['INDEL', 'TYPE="indel"'],
    ['DEL', 'INFO/SVTYPE="DEL"'],
    ['EFO:0030067', 'INFO/SVTYPE="DEL"'],
    ['DUP', 'INFO/SVTYPE="DUP"'],
    ['EFO:0030070', 'INFO/SVTYPE="DUP"'],
    ['INS', 'INFO/SVTYPE="INS"'],
    ['CNV', 'INFO/SVTYPE="CNV"'],
    ['BND', 'INFO/SVTYPE="BND"'],
  ];
  for (const [type, include] of byType) {
    it(`variantType ${type} finds what bcftools selects with ${include}`, async () => {
      const expected = rows(f.split.synthetic, include).length;
      assert.ok(expected > 0, include);
      assert.equal(await countOf('synthetic', { variantType: type }), expected);
      assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [0], end: [1000], variantType: type.toLowerCase() }), rows(f.split.synthetic, `CHROM="c1" && ${include}`).length);
    });
  }

  it('the types of the records: from the ALT, and INFO SVTYPE for symbolic alleles', async () => {
    const records = await recordsOf('synthetic', { referenceName: 'c1', start: [0], end: [1000] });
    const types = new Map(records.map((r) => [`${r.variation.location.interval.start.value}:${r.variation.variantType}`, r]));
    for (const a of rows(f.split.synthetic, 'CHROM="c1" && INFO/SVTYPE!="."')) {
      const svtype = query(f.split.synthetic, '%INFO/SVTYPE\n', `POS=${a.start + 1} && ALT="${a.alt}"`)[0];
      assert.ok(types.has(`${a.start}:${svtype}`), `${a.start} ${svtype}`);
    }
  });

  it('variantMinLength and variantMaxLength: bases changed, |SVLEN| or END - POS for structural variants', async () => {
    const lengthOf = (a: Row) =>
      a.alt.startsWith('<') ? (a.svlen !== '.' ? Math.abs(Number(a.svlen)) : a.end - (a.start + 1)) : /^[ACGTN]+$/.test(a.alt) ? (a.ref.length === a.alt.length ? a.ref.length : Math.abs(a.alt.length - a.ref.length)) : undefined;
    const alleles = rows(f.split.synthetic);
    for (const [min, max] of [[100, undefined], [1, 1], [2, 60], [undefined, 1], [150, 150]]) {
      const expected = alleles.filter((a) => {
        const n = lengthOf(a);
        return n !== undefined && (min === undefined || n >= min) && (max === undefined || n <= max);
      }).length;
      const asked: Record<string, unknown> = {};
      if (min !== undefined) asked.variantMinLength = min;
      if (max !== undefined) asked.variantMaxLength = max;
      assert.equal(await countOf('synthetic', asked), expected, `${min}-${max}`);
    }
  });
});

describe('beacon g_variants: records', () => {
  it('a multi-allelic line is one variant per alternate allele, each with an id that resolves to it', async () => {
    const alleles = rows(f.split.synthetic, 'CHROM="c1" && POS=10');
    const records = await recordsOf('synthetic', { referenceName: 'c1', start: [9], end: [10] });
    assert.deepEqual(records.map((r) => r.variation.alternateBases).sort(), alleles.map((a) => a.alt).sort());
    assert.equal(new Set(records.map((r) => r.variantInternalId)).size, alleles.length);
    for (const record of records) {
      const { body } = await f.beacon.get(`/beacon/g_variants/${record.variantInternalId}`);
      assert.deepEqual(body.response.resultSets.map((s: any) => s.id), ['synthetic']);
      assert.deepEqual(body.response.resultSets[0].results, [record]);
    }
  });

  it('caseLevelData: the calls that carry the allele, with their GENO zygosity', async () => {
    const genotypes = query(f.vcfs.synthetic, '%POS\t%ALT[\t%GT]\n', 'CHROM="c1"');
    const zygosity = (gt: string, k: number) => {
      const alleles = gt.split(/[/|]/).map((a) => (a === '.' ? -1 : Number(a)));
      if (!alleles.includes(k)) return undefined;
      if (alleles.length === 1) return 'GENO:0000134';
      if (alleles.every((a) => a === k)) return 'GENO:0000136';
      return alleles.every((a) => a > 0) ? 'GENO:0000402' : 'GENO:0000135';
    };
    const records = await recordsOf('synthetic', { referenceName: 'c1', start: [0], end: [1000] });
    for (const line of genotypes) {
      const [pos, alt, ...gts] = line.split('\t');
      alt.split(',').forEach((allele, i) => {
        if (allele === '*') return;
        const record = records.find((r) => r.variation.location.interval.start.value === Number(pos) - 1 && alleleOfId(r.variantInternalId) === i + 1);
        assert.ok(record, `${pos} ${allele}`);
        const expected = gts.flatMap((gt, s) => {
          const z = zygosity(gt, i + 1);
          return z ? [{ biosampleId: SYNTHETIC_SAMPLES[s], zygosity: z }] : [];
        });
        assert.deepEqual((record.caseLevelData ?? []).map((c: any) => ({ biosampleId: c.biosampleId, zygosity: c.zygosity.id })), expected, `${pos} ${allele}`);
      });
    }
  });

  it('caseLevelData names the biosample of a call set, and its individual; a sample without one by its name', async () => {
    const [line] = query(f.vcfs.compliance, '%POS\t%REF\t%ALT[\t%GT]\n', 'GT[0]="alt" && GT[2]="alt" && N_ALT=1');
    const [pos, ref, alt] = line.split('\t');
    const [record] = await recordsOf('compliance', { referenceName: 'ref_brca1', start: [Number(pos) - 1], referenceBases: ref, alternateBases: alt });
    const cases = new Map(record.caseLevelData.map((c: any) => [c.biosampleId, c.individualId]));
    assert.equal(cases.get(idOf('compliance', 'bs', 'HG00096')), idOf('compliance', 'ind', 'HG00096'));
    assert.ok(cases.has('HG00101') && cases.get('HG00101') === undefined, JSON.stringify([...cases]));
  });

  it('identifiers from the ID column; the legacy location in 0-based coordinates, END for a structural variant', async () => {
    const [deletion] = await recordsOf('synthetic', { referenceName: 'c1', start: [19], referenceBases: rows(f.split.synthetic, 'POS=20')[0].ref, alternateBases: rows(f.split.synthetic, 'POS=20')[0].alt });
    assert.deepEqual(deletion.identifiers.variantAlternativeIds, [{ id: 'dbSNP:rs2', reference: 'https://www.ncbi.nlm.nih.gov/snp/rs2' }, { id: 'id2' }]);
    const [sv] = rows(f.split.synthetic, 'INFO/SVTYPE="DEL"');
    const [record] = await recordsOf('synthetic', { referenceName: 'c1', start: [sv.start, sv.start + 1], end: [sv.end, sv.end + 1] });
    assert.deepEqual([record.variation.location.interval.start.value, record.variation.location.interval.end.value], [sv.start, sv.end]);
    assert.equal(record.variation.variantType, 'DEL');
  });

  it('frequencyInPopulations from the INFO fields mapped to populations, per allele, leaving out missing values', async () => {
    const records = await recordsOf('synthetic', { referenceName: 'c1', start: [9], end: [10] });
    for (const line of query(f.split.synthetic, '%ALT\t%AF\t%EAS_AF\n', 'POS=10')) {
      const [alt, af, eas] = line.split('\t');
      const record = records.find((r) => r.variation.alternateBases === alt);
      const expected = [
        ...(af === '.' ? [] : [{ population: 'All', alleleFrequency: Number(af) }]),
        ...(eas === '.' ? [] : [{ population: 'East Asian', alleleFrequency: Number(eas) }]),
      ];
      assert.deepEqual(record.frequencyInPopulations, [{ source: 'The synthetic study', sourceReference: 'https://example.org/synthetic', version: 'v1', frequencies: expected }]);
    }
  });

  it('VRS 1.3 Alleles when requestedSchemas asks for them: the padding base left out, never realigned', async () => {
    const vrs = { meta: { apiVersion: 'v2.0', requestedSchemas: [{ entityType: 'genomicVariation', schema: 'ga4gh-vrs-allele-v1.3' }] } };
    const ask = async (parameters: Record<string, unknown>) => {
      const { body } = await f.beacon.post('/beacon/g_variants', { ...vrs, query: { requestParameters: { datasetIds: ['synthetic'], g_variant: parameters } } });
      assert.deepEqual(body.meta.returnedSchemas, [{ entityType: 'genomicVariant', schema: 'ga4gh-vrs-allele-v1.3' }]);
      return body.response.resultSets[0].results[0].variation;
    };
    for (const pos of [1, 20, 30]) {
      const [a] = rows(f.split.synthetic, `CHROM="c1" && POS=${pos}`);
      const variation = await ask({ referenceName: 'c1', start: [a.start], referenceBases: a.ref, alternateBases: a.alt });
      const common = a.ref[0] === a.alt[0] ? 1 : 0;
      assert.equal(variation.type, 'Allele');
      assert.equal(variation.state.sequence, a.alt.slice(common));
      assert.deepEqual([variation.location.interval.start.value, variation.location.interval.end.value], [a.start + common, a.start + a.ref.length]);
    }
    const [sv] = rows(f.split.synthetic, 'INFO/SVTYPE="DEL"');
    const deletion = await ask({ referenceName: 'c1', start: [sv.start, sv.start + 1], end: [sv.end, sv.end + 1] });
    assert.deepEqual([deletion.state.sequence, deletion.location.interval.start.value, deletion.location.interval.end.value], ['', sv.start + 1, sv.end]);
    const got = await f.beacon.get(`/beacon/g_variants?datasetIds=synthetic&referenceName=c1&start=0&end=1&requestedSchema=ga4gh-vrs-allele-v1.3`);
    assert.equal(got.body.response.resultSets[0].results[0].variation.type, 'Allele');
  });

  it('pages of records: skip counts pages of limit, resultsCount every match', async () => {
    const total = inRegion(f.split.kg[0], '1:1-20000000');
    const page = (skip: number) => resultSet('kg', { referenceName: '1', start: [0], end: [20000000] }, { pagination: { skip, limit: 7 } });
    const [first, second] = [await page(0), await page(1)];
    assert.equal(first.resultsCount, total);
    assert.equal(first.results.length, 7);
    const all = await recordsOf('kg', { referenceName: '1', start: [0], end: [20000000] });
    assert.deepEqual([...first.results, ...second.results].map((r: any) => r.variantInternalId), all.slice(0, 14).map((r) => r.variantInternalId));
  });
});

describe('beacon g_variants: assemblies', () => {
  it('assemblyId matches the reference set assembly id or an alias named for it, ignoring case', async () => {
    const at = { referenceName: '1', start: [10000], end: [10600] };
    const expected = inRegion(f.split.kg[0], '1:10001-10600');
    for (const assemblyId of ['NCBI37', 'GRCh37', 'hs37d5', 'grch37']) assert.equal(await countOf('kg', { ...at, assemblyId }), expected, assemblyId);
    assert.equal(await countOf('kg', { ...at, assemblyId: 'hg19' }), 0);
    assert.equal(await countOf('synthetic', { referenceName: 'c1', start: [0], end: [1], assemblyId: 'GRCh37' }), 0);
  });

  it('referenceName: a contig of the VCF, or an accession of its reference, with or without a prefix', async () => {
    const region = { start: [10000], end: [20000] };
    const expected = inRegion(f.split.compliance, 'ref_brca1:10001-20000');
    assert.ok(expected > 0);
    for (const referenceName of ['ref_brca1', COMPLIANCE_ACCESSION, `insdc:${COMPLIANCE_ACCESSION}`]) {
      assert.equal(await countOf('compliance', { referenceName, ...region }), expected, referenceName);
    }
    assert.equal(await countOf('compliance', { referenceName: 'brca1', ...region }), 0);
  });

  it('repo set-assembly-aliases joins groups; remove-assembly-alias takes one out', () => {
    const { location } = { location: path.join(f.dir, 'aliases.sqlite') };
    assert.equal(runCli('repo', 'init', location).code, 0);
    assert.match(runCli('repo', 'set-assembly-aliases', location, 'GRCh37', 'hg19').stdout, /GRCh37, hg19/);
    assert.match(runCli('repo', 'set-assembly-aliases', location, 'hs37d5', 'HG19').stdout, /GRCh37, hg19, hs37d5/);
    assert.equal(runCli('repo', 'remove-assembly-alias', location, 'HG19').code, 0);
    const listed = JSON.parse(runCli('repo', 'list', location, '--json').stdout);
    assert.deepEqual(listed.assembly_aliases, [{ names: ['GRCh37', 'hs37d5'] }]);
    const refused = runCli('repo', 'set-assembly-aliases', location, 'GRCh38');
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
  });
});

describe('beacon g_variants: the granularity of each dataset', () => {
  const site = { referenceName: 'c1', start: [0], end: [1000] };
  const all = () => rows(f.split.synthetic, 'CHROM="c1"').length;

  it('record, count and boolean datasets in one answer: records, a count, and only the existence', async () => {
    const { body } = await f.beacon.post('/beacon/g_variants', { meta: { apiVersion: 'v2.0' }, query: { requestParameters: { datasetIds: ['synthetic', 'counted', 'closed'], g_variant: site } } });
    assert.equal(body.meta.returnedGranularity, 'record');
    const sets = new Map(body.response.resultSets.map((s: any) => [s.id, s]));
    assert.deepEqual([...sets.keys()].sort(), ['counted', 'synthetic']);
    assert.equal((sets.get('counted') as any).results.length, 0);
    assert.equal((sets.get('counted') as any).resultsCount, all());
    assert.equal((sets.get('counted') as any).info.returnedGranularity, 'count');
    assert.equal(body.responseSummary.numTotalResults, 2 * all());
  });

  it('the lower of what was asked and what the dataset allows', async () => {
    const asked = async (granularity: string, datasets: string[]) =>
      (await f.beacon.post('/beacon/g_variants', { meta: { apiVersion: 'v2.0' }, query: { requestedGranularity: granularity, requestParameters: { datasetIds: datasets, g_variant: site } } })).body;
    assert.equal((await asked('count', ['synthetic'])).meta.returnedGranularity, 'count');
    assert.deepEqual((await asked('boolean', ['synthetic', 'counted'])).responseSummary, { exists: true });
    const closed = await asked('record', ['closed']);
    assert.equal(closed.meta.returnedGranularity, 'boolean');
    assert.deepEqual(closed.responseSummary, { exists: true });
    const miss = await f.beacon.get('/beacon/g_variants?datasetIds=closed&referenceName=c1&start=2&end=3');
    assert.deepEqual(miss.body.responseSummary, { exists: rows(f.split.synthetic, 'CHROM="c1" && POS=3').length > 0 });
  });

  it('one variant by id of a boolean dataset: whether it exists, not its record', async () => {
    const [record] = await recordsOf('synthetic', { referenceName: 'c1', start: [0], end: [1] });
    const idInClosed = Buffer.from(JSON.stringify(['closed', ...JSON.parse(Buffer.from(record.variantInternalId, 'base64url').toString()).slice(1)])).toString('base64url');
    const { body } = await f.beacon.get(`/beacon/g_variants/${idInClosed}`);
    assert.equal(body.meta.returnedGranularity, 'boolean');
    assert.deepEqual(body.responseSummary, { exists: true });
  });

  it('includeResultsetResponses: HIT by default, MISS, ALL, NONE', async () => {
    const miss = { referenceName: 'c1', start: [5], end: [6] };
    const sets = async (include: string | undefined, parameters: Record<string, unknown>) =>
      (await f.beacon.post('/beacon/g_variants', { meta: { apiVersion: 'v2.0' }, query: { requestedGranularity: 'count', ...(include ? { includeResultsetResponses: include } : {}), requestParameters: { datasetIds: ['synthetic', 'kg'], g_variant: parameters } } }))
        .body.response.resultSets.map((s: any) => s.id)
        .sort();
    assert.equal(rows(f.split.synthetic, 'CHROM="c1" && POS=6').length, 0);
    assert.deepEqual(await sets(undefined, site), ['synthetic']);
    assert.deepEqual(await sets('MISS', site), ['kg']);
    assert.deepEqual(await sets('ALL', miss), ['kg', 'synthetic']);
    assert.deepEqual(await sets('NONE', site), []);
  });
});

describe('beacon g_variants: bad input is a 400 naming the parameter', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['start without referenceName', 'start=100&alternateBases=A', /referenceName is required with start/],
    ['end without start', 'referenceName=1&end=100', /end needs a start/],
    ['inverted start brackets', 'referenceName=1&start=200,100&end=300,400', /start brackets \[200,100\] are inverted/],
    ['inverted end brackets', 'referenceName=1&start=100,200&end=400,300', /end brackets \[400,300\] are inverted/],
    ['a range that ends before it starts', 'referenceName=1&start=200&end=100', /end \(100\) must be greater than start \(200\)/],
    ['a start that is no number', 'referenceName=1&start=ten&alternateBases=A', /start must hold non-negative integers/],
    ['three starts', 'referenceName=1&start=1,2,3&end=4,5,6', /start takes one or two positions/],
    ['one start and two ends', 'referenceName=1&start=1&end=4,5', /start and end take one value each/],
    ['a single start without alternateBases', 'referenceName=1&start=100', /alternateBases is required/],
    ['bases that are no bases', 'referenceName=1&start=100&alternateBases=XYZ', /alternateBases must be bases/],
    ['lengths the wrong way round', 'variantMinLength=10&variantMaxLength=5', /variantMinLength \(10\) is greater than variantMaxLength \(5\)/],
    ['an unknown parameter', 'referenceName=1&colour=red', /unknown parameter 'colour'/],
    ['geneId with a position', 'geneId=BRCA1&referenceName=1', /geneId takes the place of referenceName/],
    ['a schema this beacon does not write', 'referenceName=1&requestedSchema=beacon-variant-v9', /requestedSchemas: genomicVariant records are written as/],
    ['an unsupported parameter', 'genomicAlleleShortForm=NM_004006.2:c.4375C%3ET', /genomicAlleleShortForm is not supported/],
  ];
  for (const [what, queryString, message] of cases) {
    it(what, async () => {
      const { status, body } = await f.beacon.get(`/beacon/g_variants?${queryString}`);
      assert.equal(status, 400, JSON.stringify(body));
      assert.match(body.error.errorMessage, message);
    });
  }

  it('the same mistakes in a POST body, and a malformed one', async () => {
    for (const [g_variant, message] of [
      [{ start: [100], alternateBases: 'A' }, /referenceName is required/],
      [{ referenceName: '1', start: [200, 100], end: [300, 400] }, /inverted/],
      [{ referenceName: '1', start: ['100'], alternateBases: 'A' }, /start must hold non-negative integers/],
      [{ referenceName: 7 }, /referenceName must be a string/],
      [{ colour: 'red' }, /unknown parameter 'requestParameters.g_variant.colour'/],
    ] as const) {
      const { status, body } = await f.beacon.post('/beacon/g_variants', { meta: { apiVersion: 'v2.0' }, query: { requestParameters: { g_variant: g_variant } } });
      assert.equal(status, 400);
      assert.match(body.error.errorMessage, message);
    }
  });

  it('an id that names no variant is a 404', async () => {
    for (const id of ['nope', idOf('synthetic', 'bv', 'synthetic', 'c1', '0', '0000000000000000', '1'), idOf('missing', 'bv', 'x', 'c1', '0', 'ab', '1')]) {
      const { status, body } = await f.beacon.get(`/beacon/g_variants/${id}`);
      assert.equal(status, 404);
      assert.match(body.error.errorMessage, /no genomic variant/);
    }
  });
});

describe('beacon g_variants: a damaged file', () => {
  it('is a 503 in the error form naming the set, never an answer with less', async () => {
    const { location, registry } = await newRegistry(f.dir);
    await loadReferenceSet(registry, path.join(f.dir, 'synthetic.fa'), { name: 'synthetic' });
    await addDataset(registry, 'broken', undefined, undefined, 'record');
    const lines = ['##fileformat=VCFv4.2', '##contig=<ID=c1,length=1000>', '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO'];
    for (let pos = 1; pos <= 1000; pos++) lines.push(`c1\t${pos}\t.\tA\tG\t.\tPASS\tDP=${pos * 7919}`);
    const vcf = bgzippedVcf(f.dir, 'broken.vcf.gz', lines.join('\n') + '\n');
    await loadVariantSet(registry, 'broken', [vcf], { referenceset: 'synthetic' });
    // Bytes in the middle of the compressed records changed: inflating them fails.
    const bytes = fs.readFileSync(vcf);
    bytes.fill(0x55, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 64);
    fs.writeFileSync(vcf, bytes);
    const server = await startTestServer(location);
    const { status, body } = await beaconClient(server.url).get('/beacon/g_variants?referenceName=c1&start=0&end=1000&requestedGranularity=count');
    assert.equal(status, 503, JSON.stringify(body));
    assert.match(body.error.errorMessage, /variant set 'broken'/);
  });
});

describe('beacon g_variants: frequency fields (CLI)', () => {
  it('set-beacon-frequencies takes FIELD=POPULATION for Float Number=A fields and refuses others in one line', async () => {
    const { location, registry } = await newRegistry(f.dir);
    await loadReferenceSet(registry, path.join(f.dir, 'compliance', 'ref_brca1.fa'), { name: 'hg37' });
    await addDataset(registry, 'compliance');
    await loadVariantSet(registry, 'compliance', [f.vcfs.compliance], { referenceset: 'hg37', name: 'brca1' });
    const ok = runCli('repo', 'set-beacon-frequencies', location, 'compliance', 'brca1', 'AF=All', 'EUR_AF=European', '--source', '1000 Genomes', '--source-reference', 'https://www.internationalgenome.org');
    assert.equal(ok.code, 0, ok.stderr);
    const listed = JSON.parse(runCli('repo', 'list', location, '--json').stdout).variant_set_beacon_frequencies;
    assert.deepEqual(
      listed.map((r: any) => [r.dataset, r.info_field, r.population]),
      [['compliance', 'AF', 'All'], ['compliance', 'EUR_AF', 'European']],
    );
    for (const field of ['AC=Counts', 'NOPE=x', 'AF']) {
      const r = runCli('repo', 'set-beacon-frequencies', location, 'compliance', 'brca1', field, '--source', 's', '--source-reference', 'https://x');
      assert.notEqual(r.code, 0, field);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    assert.equal(runCli('repo', 'remove-beacon-frequencies', location, 'compliance', 'brca1').code, 0);
  });
});

describe('beacon g_variants: handovers', () => {
  it('each record hands over to the htsget ticket of its region and its 0.6.0a10 record, both served', async () => {
    const { body } = await f.beacon.post('/beacon/g_variants', {
      meta: { apiVersion: 'v2.0' },
      query: { requestParameters: { datasetIds: ['synthetic', 'counted'], g_variant: { referenceName: 'c1', start: [9], end: [20] } } },
    });
    const records = body.response.resultSets.find((s: any) => s.id === 'synthetic').results;
    assert.ok(records.length >= 3);
    assert.equal(body.beaconHandovers.length, 2 * records.length);
    for (const record of records) {
      const mine = body.beaconHandovers.filter((h: any) => h.note.includes(record.variantInternalId));
      const ticket = mine.find((h: any) => h.handoverType.id === 'EDAM:3016');
      const ga4gh = mine.find((h: any) => h.handoverType.id === 'CUSTOM:ga4gh-0.6.0a10-variant');
      const { start, end } = record.variation.location.interval;
      assert.ok(ticket.url.startsWith(`${f.server.url}/htsget/variants/`) && ticket.url.endsWith(`&start=${start.value}&end=${end.value}`), ticket.url);
      // bcftools follows the ticket as it follows any htsget URL, and finds the record's line in it.
      const lines = (await runAsync('bcftools', ['view', '-H', ticket.url])).stdout.split('\n').filter(Boolean);
      assert.ok(lines.some((l) => Number(l.split('\t')[1]) === start.value + 1), lines.join('\n'));
      const variant = (await (await fetch(ga4gh.url)).json()) as any;
      assert.equal(Number(variant.start), start.value);
      assert.ok(variant.alternateBases.includes(record.variation.alternateBases) || record.variation.alternateBases === 'N');
    }
  });

  it('no handovers for datasets granted less than records', async () => {
    const { body } = await f.beacon.post('/beacon/g_variants', {
      meta: { apiVersion: 'v2.0' },
      query: { requestParameters: { datasetIds: ['counted'], g_variant: { referenceName: 'c1', start: [0], end: [1000] } } },
    });
    assert.equal(body.beaconHandovers, undefined);
  });
});
