/**
 * Beacon individuals, biosamples and datasets, the lookups between entry types the map declares,
 * filters (ontology terms with and without their descendants, alphanumeric comparisons, scopes,
 * unknown and malformed ones) and /beacon/filtering_terms, over test/beacon-fixture.ts. Expected
 * records come from the registered JSON files; expected variants of a sample from bcftools on the
 * split VCF; every answer is validated against the Beacon schemas.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { beaconFixture, COMPLIANCE_BIOSAMPLES, query, type BeaconFixture } from './beacon-fixture.js';
import { idOf, TESTDATA } from './helpers.js';

let f: BeaconFixture;

const SAMPLES = ['HG00096', 'HG00099', 'HG00101'];
/** The compliance individuals as their files give them. */
const individuals = SAMPLES.map((s) => JSON.parse(fs.readFileSync(path.join(TESTDATA, `compliance/individual_${s}.json`), 'utf8')));
const individualId = (name: string) => idOf('compliance', 'ind', name);
const biosampleId = (name: string) => idOf('compliance', 'bs', name);

/** The records of dataset `compliance` an endpoint answers, by POST with `query`. */
async function recordsAt(pathName: string, extra: Record<string, unknown> = {}): Promise<{ records: any[]; body: any }> {
  const { status, body } = await f.beacon.post(pathName, { meta: { apiVersion: 'v2.0' }, query: { includeResultsetResponses: 'ALL', ...extra } });
  assert.equal(status, 200, JSON.stringify(body));
  const set = body.response?.resultSets?.find((s: any) => s.id === 'compliance');
  return { records: set?.results ?? [], body };
}

const namesOf = (records: any[]) => records.map((r) => r.info.name).sort();
const withFilters = async (pathName: string, filters: unknown[]) => namesOf((await recordsAt(pathName, { filters })).records);

/** The split compliance alleles a sample (by its column) carries, as bcftools finds them. */
const carriedBy = (column: number, include = 'N_ALT>=1') => query(f.split.compliance, '%POS\t%ALT\n', `GT[${column}]="alt" && ALT!="*" && ${include}`).length;

before(async () => {
  f = await beaconFixture();
});

describe('beacon individuals and biosamples', () => {
  it('individuals: ids, sex from the registered files, diseases from their biosamples', async () => {
    const { records } = await recordsAt('/beacon/individuals');
    assert.deepEqual(records.map((r) => r.id).sort(), SAMPLES.map(individualId).sort());
    for (const file of individuals) {
      const record = records.find((r) => r.info.name === file.name);
      assert.deepEqual(record.sex, { id: file.sex.termId, label: file.sex.term });
      const diseases = COMPLIANCE_BIOSAMPLES.filter((b) => b.individualId === file.name).map((b) => ({ diseaseCode: { id: b.disease.termId, label: b.disease.term } }));
      assert.deepEqual(record.diseases ?? [], diseases);
    }
  });

  it('biosamples: their individual, disease, origin, and unknown status where the registry has none', async () => {
    const { records } = await recordsAt('/beacon/biosamples');
    assert.deepEqual(records.map((r) => r.id).sort(), COMPLIANCE_BIOSAMPLES.map((b) => biosampleId(b.name)).sort());
    for (const b of COMPLIANCE_BIOSAMPLES) {
      const record = records.find((r) => r.id === biosampleId(b.name));
      assert.equal(record.individualId, individualId(b.individualId));
      assert.deepEqual(record.histologicalDiagnosis, { id: b.disease.termId, label: b.disease.term });
      assert.equal(record.sampleOriginType.id, b.attributes?.attr.sampleOriginType.values[0].stringValue ?? 'NCIT:C17998');
      assert.equal(record.biosampleStatus.id, 'NCIT:C17998');
    }
  });

  it('one by id, by GET; an id of nothing is a 404', async () => {
    const { body } = await f.beacon.get(`/beacon/individuals/${individualId('HG00099')}`);
    assert.deepEqual(body.response.resultSets[0].results.map((r: any) => r.info.name), ['HG00099']);
    for (const p of [`/beacon/individuals/${individualId('nobody')}`, '/beacon/individuals/nope', `/beacon/biosamples/${biosampleId('HG00101')}`]) {
      const missing = await f.beacon.get(p);
      assert.equal(missing.status, 404, p);
    }
  });
});

describe('beacon filters', () => {
  const sexOf = (termId: string) => individuals.filter((i) => i.sex.termId === termId).map((i) => i.name).sort();

  it('an ontology term: the records that carry it', async () => {
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'PATO:0020001' }]), sexOf('PATO:0020001'));
    const got = await f.beacon.get('/beacon/individuals?filters=PATO:0020002');
    assert.deepEqual(namesOf(got.body.response.resultSets[0].results), sexOf('PATO:0020002'));
  });

  it('includeDescendantTerms, by the ontology subclass relation: on by default, off when asked', async () => {
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'PATO:0020000' }]), SAMPLES);
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'PATO:0020000', includeDescendantTerms: false }]), []);
    // thyroid cancer > thyroid carcinoma > papillary thyroid carcinoma (testdata/phenotypes/g2p-terms.obo)
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'DOID:1781' }]), ['HG00096', 'HG00099']);
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'DOID:1781', includeDescendantTerms: false }]), ['HG00099']);
    assert.deepEqual(await withFilters('/beacon/biosamples', [{ id: 'DOID:3963' }]), ['HG00096']);
    assert.deepEqual(await withFilters('/beacon/biosamples', [{ id: 'UBERON:0000179' }]), ['HG00096']);
  });

  it('filters are ANDed; scope picks the entry type a filter tests', async () => {
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'PATO:0020001' }, { id: 'DOID:1781' }]), ['HG00096']);
    assert.deepEqual(await withFilters('/beacon/biosamples', [{ id: 'PATO:0020002', scope: 'individual' }]), ['HG00099']);
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'UBERON:0000178', scope: 'biosamples' }]), ['HG00096']);
    assert.deepEqual(await withFilters('/beacon/biosamples', [{ id: 'PATO:0020002', scope: 'biosample' }]), []);
  });

  it('alphanumeric filters on names, descriptions and attributes', async () => {
    const population = individuals.filter((i) => i.attributes.attr.Population.values[0].stringValue === 'GBR').map((i) => i.name).sort();
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'Population', operator: '=', value: 'GBR' }]), population);
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'Population', operator: '=', value: 'g%' }]), population);
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'Population', operator: '!', value: 'GBR' }]), SAMPLES.filter((s) => !population.includes(s)));
    const female = individuals.filter((i) => /female/.test(i.description)).map((i) => i.name).sort();
    assert.deepEqual(await withFilters('/beacon/individuals', [{ id: 'description', value: '%female%' }]), female);
    assert.deepEqual(await withFilters('/beacon/biosamples', [{ id: 'name', operator: '>=', value: '0' }]), []);
  });

  it('an unknown filter matches nothing and is reported in info.warnings, never ignored', async () => {
    const { records, body } = await recordsAt('/beacon/individuals', { filters: [{ id: 'XYZ:0000001' }, { id: 'Colour', operator: '=', value: 'red' }] });
    assert.deepEqual(records, []);
    assert.equal(body.responseSummary.exists, false);
    assert.deepEqual(body.info.warnings.unknownFilters, ['XYZ:0000001', 'Colour']);
    const variants = await f.beacon.get('/beacon/g_variants?datasetIds=compliance&referenceName=ref_brca1&filters=XYZ:0000001');
    assert.deepEqual(variants.body.info.warnings.unknownFilters, ['XYZ:0000001']);
    assert.equal(variants.body.responseSummary.exists, false);
  });

  it('a malformed filter is a 400 naming it', async () => {
    for (const [filters, message] of [
      [[{ operator: '=', value: 'x' }], /filters\[0\]\.id must be a string/],
      [[{ id: 'x', operator: '~', value: 'y' }], /filters\[0\]\.operator must be one of/],
      [[{ id: 'x', operator: '=' }], /filters\[0\]\.value is required/],
      [[{ id: 'PATO:0020001' }, 7], /filters\[1\] must be a JSON object/],
      [[{ id: 'PATO:0020001', scope: 'runs' }], /filters\[0\]\.scope/],
      [[{ id: 'PATO:0020001', includeDescendantTerms: 'yes' }], /includeDescendantTerms must be true or false/],
      ['PATO:0020001', /filters must be a list/],
    ] as const) {
      const { status, body } = await f.beacon.post('/beacon/individuals', { meta: { apiVersion: 'v2.0' }, query: { filters } });
      assert.equal(status, 400, JSON.stringify(filters));
      assert.match(body.error.errorMessage, message);
    }
  });

  it('filters on g_variants: the variants the matching biosamples carry, and only their calls', async () => {
    const male = await recordsAt('/beacon/g_variants', { requestedGranularity: 'count', filters: [{ id: 'PATO:0020001' }], requestParameters: { datasetIds: ['compliance'] } });
    // HG00096 and HG00101 are male; HG00101's call set names no biosample.
    assert.equal(male.body.response.resultSets[0].resultsCount, carriedBy(0));
    const region = { referenceName: 'ref_brca1', start: [0], end: [200000] };
    const { records } = await recordsAt('/beacon/g_variants', { filters: [{ id: 'DOID:1781', includeDescendantTerms: false }], pagination: { limit: 0 }, requestParameters: { datasetIds: ['compliance'], g_variant: region } });
    assert.equal(records.length, carriedBy(1));
    for (const r of records) assert.deepEqual(r.caseLevelData.map((c: any) => c.biosampleId), [biosampleId('HG00099')]);
  });
});

describe('beacon lookups between entry types', () => {
  it('/individuals/{id}/g_variants and /biosamples/{id}/g_variants: what that individual carries', async () => {
    const individual = await recordsAt(`/beacon/individuals/${individualId('HG00096')}/g_variants`, { requestedGranularity: 'count' });
    assert.equal(individual.body.response.resultSets[0].resultsCount, carriedBy(0));
    const inRange = await recordsAt(`/beacon/biosamples/${biosampleId('HG00099')}/g_variants`, {
      requestedGranularity: 'count',
      requestParameters: { g_variant: { referenceName: 'ref_brca1', start: [40000], end: [80000] } },
    });
    assert.equal(inRange.body.response.resultSets[0].resultsCount, carriedBy(1, 'POS>40000 && POS<=80000'));
  });

  it('/g_variants/{id}/biosamples and /individuals: the carriers of a variant', async () => {
    const [line] = query(f.vcfs.compliance, '%POS\t%REF\t%ALT\n', 'GT[0]="alt" && GT[1]="ref" && N_ALT=1');
    const [pos, ref, alt] = line.split('\t');
    const { records } = await recordsAt('/beacon/g_variants', { requestParameters: { datasetIds: ['compliance'], g_variant: { referenceName: 'ref_brca1', start: [Number(pos) - 1], referenceBases: ref, alternateBases: alt } } });
    const id = records[0].variantInternalId;
    assert.deepEqual((await recordsAt(`/beacon/g_variants/${id}/biosamples`)).records.map((r) => r.id), [biosampleId('HG00096')]);
    assert.deepEqual((await recordsAt(`/beacon/g_variants/${id}/individuals`)).records.map((r) => r.id), [individualId('HG00096')]);
  });

  it('/individuals/{id}/biosamples, and the datasets lookups', async () => {
    assert.deepEqual((await recordsAt(`/beacon/individuals/${individualId('HG00099')}/biosamples`)).records.map((r) => r.id), [biosampleId('HG00099')]);
    assert.deepEqual(namesOf((await recordsAt('/beacon/datasets/compliance/individuals')).records), SAMPLES);
    const variants = await recordsAt('/beacon/datasets/compliance/g_variants', { requestedGranularity: 'count' });
    assert.deepEqual(variants.body.response.resultSets.map((s: any) => s.id), ['compliance']);
    assert.equal(variants.body.response.resultSets[0].resultsCount, query(f.split.compliance, '%POS\n', 'ALT!="*"').length);
  });
});

describe('beacon /filtering_terms', () => {
  it('lists the terms the records carry, with labels and scopes, the fields to compare, and the ontologies', async () => {
    const { body } = await f.beacon.get('/beacon/filtering_terms');
    const terms = new Map(body.response.filteringTerms.map((t: any) => [t.id, t]));
    for (const i of individuals) assert.deepEqual((terms.get(i.sex.termId) as any).scopes, ['individual']);
    for (const b of COMPLIANCE_BIOSAMPLES) assert.deepEqual(((terms.get(b.disease.termId) as any).scopes as string[]).sort(), ['biosample', 'individual']);
    assert.equal((terms.get('UBERON:0000178') as any).label, 'blood');
    assert.equal((terms.get('Population') as any).type, 'alphanumeric');
    assert.deepEqual(body.response.resources.map((r: any) => r.id).sort(), ['g2p-terms', 'sex-and-origin', 'so']);
    // Filters of either scope apply to each of these entry types, through the links between records.
    for (const entry of ['individuals', 'biosamples', 'g_variants']) {
      const each = await f.beacon.get(`/beacon/${entry}/filtering_terms`);
      assert.deepEqual(each.body.response.filteringTerms.map((t: any) => t.id).sort(), [...terms.keys()].sort());
    }
    assert.deepEqual((await f.beacon.get('/beacon/datasets/filtering_terms')).body.response.filteringTerms, []);
  });
});
