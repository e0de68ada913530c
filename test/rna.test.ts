/**
 * The RNA area over HTTP, against a real registry file loaded from the reference server's RNA files and
 * small salmon and RSEM tables in testdata/rna. Expected rows are read here from the file text, with the
 * column mapping written out below (independently of the loader's format table).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { allMigrations } from '../src/areas/index.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { insertBiosample } from '../src/areas/biometadata/store.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet, getQuantification, listExpressionRows, rowsAboveEstimate, thresholdPlan } from '../src/areas/rna/store.js';
import { migrate } from '../src/registry/migrations.js';
import { migrateRegistry, type Registry } from '../src/registry/registry.js';
import { backends } from './backends.js';
import { atEnd, collectPages, copyFixture, idOf, newRegistry, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';

interface Expected {
  name: string;
  expression: number;
  rawReadCount?: number;
  confIntervalLow?: number;
  confIntervalHigh?: number;
  attributes?: Record<string, string>;
}

/** Reads a tab-separated table: the named columns of each data row, as the fields they fill. */
function readTable(
  file: string,
  columns: { expression: string; rawReadCount?: string; low?: string; high?: string; attributes?: string[] },
): Expected[] {
  const raw = fs.readFileSync(file);
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
  const [header, ...lines] = text.split('\n').filter((l) => l.trim() !== '');
  const names = header.split('\t');
  const col = (cells: string[], name: string) => cells[names.indexOf(name)];
  return lines.map((line) => {
    const cells = line.split('\t');
    const row: Expected = { name: cells[0], expression: Number(col(cells, columns.expression)) };
    if (columns.rawReadCount) row.rawReadCount = Number(col(cells, columns.rawReadCount));
    if (columns.low) row.confIntervalLow = Number(col(cells, columns.low));
    if (columns.high) row.confIntervalHigh = Number(col(cells, columns.high));
    if (columns.attributes) {
      const kept = Object.fromEntries(columns.attributes.map((c) => [c, col(cells, c)]).filter(([, v]) => v !== '-'));
      if (Object.keys(kept).length) row.attributes = kept;
    }
    return row;
  });
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const dir = tempDir();
const sampleDir = path.join(dir, 'sampleA');
fs.mkdirSync(sampleDir);
const files = {
  kallisto: copyFixture('ga4gh-server/abundance.trimmed.txt', dir),
  cufflinks: copyFixture('ga4gh-server/cufflinks.txt', dir),
  brca1: copyFixture('compliance/rna_brca1.tsv', dir),
  salmon: copyFixture('rna/quant.sf', sampleDir),
  isoforms: copyFixture('rna/sample1.isoforms.results', dir),
};
const salmonGz = path.join(dir, 'salmon.sf.gz');
fs.writeFileSync(salmonGz, zlib.gzipSync(fs.readFileSync(files.salmon)));

// A generated table big enough for every plan of the threshold search (see listExpressionRows).
const BIG = 30000;
const bigFile = path.join(dir, 'big.abundance.tsv');
fs.writeFileSync(
  bigFile,
  'target_id\tlength\teff_length\test_counts\ttpm\n' +
    Array.from({ length: BIG }, (_, i) => {
      const tpm = i % 3 === 0 ? 0 : ((i * 7919) % 10007) / 10; // a third zero, the rest 0.1 .. 1000.6
      return `T${String((i * 104729) % BIG).padStart(6, '0')}\t1000\t800\t${(tpm * 2).toFixed(1)}\t${tpm}`;
    }).join('\n') +
    '\n',
);

const expected = {
  kallisto: readTable(files.kallisto, { expression: 'tpm', rawReadCount: 'est_counts' }),
  cufflinks: readTable(files.cufflinks, {
    expression: 'FPKM',
    low: 'FPKM_conf_lo',
    high: 'FPKM_conf_hi',
    attributes: ['FPKM_status', 'gene_short_name', 'locus'],
  }),
  brca1: readTable(files.brca1, { expression: 'TPM', rawReadCount: 'expected_count', low: 'TPM_ci_lower_bound', high: 'TPM_ci_upper_bound' }),
  brca1Fpkm: readTable(files.brca1, { expression: 'FPKM', rawReadCount: 'expected_count', low: 'FPKM_ci_lower_bound', high: 'FPKM_ci_upper_bound' }),
  salmon: readTable(files.salmon, { expression: 'TPM', rawReadCount: 'NumReads' }),
  isoforms: readTable(files.isoforms, { expression: 'TPM', rawReadCount: 'expected_count' }),
  big: readTable(bigFile, { expression: 'tpm', rawReadCount: 'est_counts' }),
};

const setId = idOf('ds1', 'set1');
const quantId = (name: string) => idOf('ds1', 'set1', name);
for (const backend of backends) {
describe(`on ${backend.name}`, { skip: backend.skip }, () => {
  let server: TestServer;
  let smallPages: TestServer;
  let registry: Registry;

  before(async () => {
    const opened = await newRegistry(await backend.newLocation(dir));
    const location = opened.location;
    registry = opened.registry;
    await addDataset(registry, 'ds1');
    await addDataset(registry, 'ds2');
    await addQuantificationSet(registry, 'ds1', 'set1', 'the test set');
    await addQuantificationSet(registry, 'ds1', 'set0');
    await addQuantificationSet(registry, 'ds2', 'other');
    // --biosample-id names a biosample of the quantification's dataset.
    for (const [dataset, name] of [['ds1', 'BS1'], ['ds1', 'BS2'], ['ds2', 'BS1']]) {
      await insertBiosample(registry, { dataset_name: dataset, name, individual_name: null, fields: '{}' });
    }
    await assert.rejects(loadQuantification(registry, 'ds1', 'set1', files.kallisto, { biosampleId: 'BS3' }), /no biosample 'BS3' in dataset 'ds1'/);
    await loadQuantification(registry, 'ds1', 'set1', files.kallisto, {
      name: 'kallisto',
      biosampleId: 'BS1',
      description: 'kallisto test output',
      programs: ['kallisto:0.43.1'],
      featureSetIds: ['fs1', 'fs2'],
      readGroupIds: ['rg1'],
    });
    await loadQuantification(registry, 'ds1', 'set1', files.cufflinks, { name: 'cufflinks', biosampleId: 'BS2' });
    await loadQuantification(registry, 'ds1', 'set1', files.brca1, { name: 'brca1', format: 'rsem', biosampleId: 'BS1' });
    await loadQuantification(registry, 'ds1', 'set1', files.brca1, { name: 'brca1Fpkm', units: 'FPKM' });
    await loadQuantification(registry, 'ds1', 'set1', files.salmon, {}); // named after its folder: sampleA
    await loadQuantification(registry, 'ds1', 'set1', files.isoforms, { programs: ['RSEM:1.3.3', 'STAR:2.7.10a'] }); // sample1
    await loadQuantification(registry, 'ds1', 'set1', salmonGz, { name: 'salmonGz', format: 'salmon' });
    await loadQuantification(registry, 'ds1', 'set1', bigFile, { name: 'big' });
    server = await startTestServer(location);
    smallPages = await startTestServer(location, { paging: { defaultPageSize: 100, maxPageSize: 7, pageByteBudget: 1 << 20 } });
  });

  /** Every level of a quantification above a threshold, all pages. */
  async function levels(quantification: string, request: Record<string, unknown> = {}, on = server) {
    return (await collectPages(on, '/expressionlevels/search', { rnaQuantificationId: quantId(quantification), ...request }, 'expressionLevels'))
      .records;
  }

  function assertLevels(actual: any[], rows: Expected[], quantification: string, units: 'TPM' | 'FPKM') {
    assert.deepEqual(
      actual,
      [...rows].sort(byName).map((r) => ({
        id: idOf('ds1', 'set1', quantification, r.name),
        name: r.name,
        rnaQuantificationId: quantId(quantification),
        ...(r.rawReadCount !== undefined ? { rawReadCount: r.rawReadCount } : {}),
        expression: r.expression,
        isNormalized: true,
        units,
        ...(r.confIntervalLow !== undefined ? { confIntervalLow: r.confIntervalLow, confIntervalHigh: r.confIntervalHigh } : {}),
        ...(r.attributes
          ? { attributes: { attr: Object.fromEntries(Object.entries(r.attributes).map(([k, v]) => [k, { values: [{ stringValue: v }] }])) } }
          : {}),
      })),
    );
  }

  describe('RNA quantification sets', () => {
    it('lists the sets of a dataset by name, and a get equals the search result', async () => {
      const res = await server.post('/rnaquantificationsets/search', { datasetId: idOf('ds1') });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.json.rnaQuantificationSets.map((s: any) => s.name),
        ['set0', 'set1'],
      );
      const set1 = res.json.rnaQuantificationSets[1];
      assert.deepEqual(set1, {
        id: setId,
        datasetId: idOf('ds1'),
        name: 'set1',
        attributes: { attr: { description: { values: [{ stringValue: 'the test set' }] } } },
      });
      assert.deepEqual((await server.get(`/rnaquantificationsets/${setId}`)).json, set1);
      assert.deepEqual(res.json.rnaQuantificationSets[0], { id: idOf('ds1', 'set0'), datasetId: idOf('ds1'), name: 'set0' });
    });

    it('pages through every set of every dataset when no datasetId is given', async () => {
      const { records, pages } = await collectPages(server, '/rnaquantificationsets/search', { pageSize: 1 }, 'rnaQuantificationSets');
      assert.deepEqual(
        records.map((s) => s.id),
        [idOf('ds1', 'set0'), idOf('ds1', 'set1'), idOf('ds2', 'other')],
      );
      assert.equal(pages, 3);
    });

    it('answers 404 for an unknown dataset or set, and for an id of another kind', async () => {
      assert.equal((await server.post('/rnaquantificationsets/search', { datasetId: idOf('nope') })).status, 404);
      assert.equal((await server.get(`/rnaquantificationsets/${idOf('ds1', 'nope')}`)).status, 404);
      assert.equal((await server.get(`/rnaquantificationsets/${idOf('ds1')}`)).status, 404);
      assert.equal((await server.get('/rnaquantificationsets/%%%')).status, 404);
    });
  });

  describe('RNA quantifications', () => {
    it('requires rnaQuantificationSetId', async () => {
      const res = await server.post('/rnaquantifications/search', {});
      assert.equal(res.status, 400);
      assert.match(res.json.message, /rnaQuantificationSetId/);
    });

    it('lists the quantifications of a set by name with every field given at load', async () => {
      const { records } = await collectPages(server, '/rnaquantifications/search', { rnaQuantificationSetId: setId, pageSize: 2 }, 'rnaQuantifications');
      assert.deepEqual(
        records.map((q) => q.name),
        ['big', 'brca1', 'brca1Fpkm', 'cufflinks', 'kallisto', 'salmonGz', 'sample1', 'sampleA'],
      );
      const kallisto = records.find((q) => q.name === 'kallisto');
      assert.deepEqual(kallisto, {
        id: quantId('kallisto'),
        name: 'kallisto',
        biosampleId: idOf('ds1', 'bs', 'BS1'),
        description: 'kallisto test output',
        readGroupIds: ['rg1'],
        programs: [{ name: 'kallisto', version: '0.43.1' }],
        featureSetIds: ['fs1', 'fs2'],
        rnaQuantificationSetId: setId,
        attributes: { attr: { format: { values: [{ stringValue: 'kallisto' }] } } },
      });
      assert.deepEqual((await server.get(`/rnaquantifications/${quantId('kallisto')}`)).json, kallisto);
      // Without --program, the program is the one the format names; several --program keep their order.
      assert.deepEqual(records.find((q) => q.name === 'cufflinks').programs, [{ name: 'Cufflinks' }]);
      assert.deepEqual(records.find((q) => q.name === 'sample1').programs, [
        { name: 'RSEM', version: '1.3.3' },
        { name: 'STAR', version: '2.7.10a' },
      ]);
      assert.equal(records.find((q) => q.name === 'cufflinks').description, undefined);
    });

    it('filters by biosampleId, exactly', async () => {
      const names = async (biosampleId: string) =>
        (await server.post('/rnaquantifications/search', { rnaQuantificationSetId: setId, biosampleId })).json.rnaQuantifications.map((q: any) => q.name);
      assert.deepEqual(await names(idOf('ds1', 'bs', 'BS1')), ['brca1', 'kallisto']);
      assert.deepEqual(await names(idOf('ds1', 'bs', 'BS2')), ['cufflinks']);
      assert.deepEqual(await names(idOf('ds1', 'bs', 'bs1')), []);
      assert.deepEqual(await names(idOf('ds2', 'bs', 'BS1')), []); // a biosample of another dataset
      assert.equal((await server.post('/rnaquantifications/search', { rnaQuantificationSetId: setId, biosampleId: 'BS1' })).status, 404);
    });

    it('answers 404 for an unknown set or quantification', async () => {
      assert.equal((await server.post('/rnaquantifications/search', { rnaQuantificationSetId: idOf('ds1', 'nope') })).status, 404);
      assert.equal((await server.get(`/rnaquantifications/${quantId('nope')}`)).status, 404);
      assert.equal((await server.get(`/rnaquantifications/${setId}`)).status, 404);
    });
  });

  describe('expression levels', () => {
    it('serves every row of each format with the fields its source has (threshold below every value)', async () => {
      assertLevels(await levels('kallisto', { threshold: -1 }), expected.kallisto, 'kallisto', 'TPM');
      assertLevels(await levels('cufflinks', { threshold: -1 }), expected.cufflinks, 'cufflinks', 'FPKM');
      assertLevels(await levels('brca1', { threshold: -1 }), expected.brca1, 'brca1', 'TPM');
      assertLevels(await levels('brca1Fpkm', { threshold: -1 }), expected.brca1Fpkm, 'brca1Fpkm', 'FPKM');
      assertLevels(await levels('sampleA', { threshold: -1 }), expected.salmon, 'sampleA', 'TPM');
      assertLevels(await levels('salmonGz', { threshold: -1 }), expected.salmon, 'salmonGz', 'TPM');
      assertLevels(await levels('sample1', { threshold: -1 }), expected.isoforms, 'sample1', 'TPM');
    });

    it('keeps only expression strictly above the threshold, 0.0 by default', async () => {
      for (const [quantification, rows] of [
        ['kallisto', expected.kallisto],
        ['cufflinks', expected.cufflinks],
        ['sampleA', expected.salmon],
      ] as const) {
        const above = (t: number) => rows.filter((r) => r.expression > t).map((r) => r.name).sort();
        const got = async (request: Record<string, unknown>) => (await levels(quantification, request)).map((l) => l.name);
        assert.ok(rows.some((r) => r.expression === 0), `${quantification} has zero rows`);
        assert.deepEqual(await got({}), above(0));
        assert.deepEqual(await got({ threshold: 0 }), above(0));
        // A value equal to the threshold is excluded; just below it, included.
        for (const value of new Set(rows.map((r) => r.expression).filter((v) => v > 0))) {
          assert.deepEqual(await got({ threshold: value }), above(value), `${quantification} threshold ${value}`);
          assert.ok((await got({ threshold: value - 1e-9 })).length > above(value).length);
        }
      }
    });

    it('chooses rows correctly in every plan of the threshold search, first pages and deep pages by token (30,000 generated rows)', async () => {
      const stats = (await getQuantification(registry, 'ds1', 'set1', 'big'))!;
      const values = expected.big.map((r) => r.expression).sort((a, b) => a - b);
      const above = (threshold: number) => expected.big.filter((r) => r.expression > threshold).sort(byName);
      // Few rows pass (value index), many pass (name order), near where the plans meet, about half, none, all.
      const plans = new Set<string>();
      for (const threshold of [values[BIG - 150], values[BIG - 5], values[BIG - 1200], values[BIG - 1700], 500, 0, 1000.6, -1, values[BIG - 25000]]) {
        plans.add(thresholdPlan(stats, threshold, 101));
        const want = above(threshold);
        const first = await server.post('/expressionlevels/search', { rnaQuantificationId: quantId('big'), threshold, pageSize: 100 });
        assert.deepEqual(first.json.expressionLevels.map((l: any) => l.name), want.slice(0, 100).map((r) => r.name), `threshold ${threshold}`);
        assert.equal(first.json.nextPageToken !== undefined, want.length > 100);
      }
      assert.deepEqual([...plans].sort(), ['name order', 'value index']);
      // Deep pages follow the tokens without loss or repetition, in each plan.
      const deepPlans = new Set<string>();
      for (const [threshold, pageSize] of [
        [values[BIG - 400], 37],
        [values[BIG - 3000], 61],
      ]) {
        deepPlans.add(thresholdPlan(stats, threshold, pageSize + 1));
        const all = await levels('big', { threshold, pageSize });
        assert.deepEqual(
          all.map((l) => [l.name, l.expression, l.rawReadCount]),
          above(threshold).map((r) => [r.name, r.expression, r.rawReadCount]),
          `threshold ${threshold}, pages of ${pageSize}`,
        );
      }
      assert.deepEqual([...deepPlans].sort(), ['name order', 'value index']);
    });

    it('keeps the expression at ranks about √2 apart, from which the rows above any threshold are estimated', async () => {
      const stats = (await getQuantification(registry, 'ds1', 'set1', 'big'))!;
      const highestFirst = expected.big.map((r) => r.expression).sort((a, b) => b - a);
      const ranks = JSON.parse(stats.expression_ranks) as Array<[number, number]>;
      assert.equal(ranks[0][0], 1);
      assert.equal(ranks.at(-1)![0], BIG);
      ranks.forEach(([rank, expression], i) => {
        assert.equal(expression, highestFirst[rank - 1], `rank ${rank}`);
        if (i > 0) assert.ok(rank > ranks[i - 1][0] && rank <= Math.round(ranks[i - 1][0] * 1.5) + 1, `rank ${rank} after ${ranks[i - 1][0]}`);
      });
      for (const threshold of [-1, 0, 0.1, 1, 50, 500, 900, 999, 1000.5, 1000.6, 2000]) {
        const passing = highestFirst.filter((v) => v > threshold).length;
        const estimate = rowsAboveEstimate(ranks, threshold);
        if (passing === 0) assert.equal(estimate, 0, `threshold ${threshold}`);
        else assert.ok(estimate >= passing / 1.5 && estimate <= passing * 1.5, `threshold ${threshold}: ${estimate} for ${passing}`);
      }
    });

    it('filters by names: exact match against any, a single string as a one-element list', async () => {
      const rows = [...expected.cufflinks].sort(byName);
      const some = [rows[0].name, rows[5].name, rows[rows.length - 1].name];
      const got = async (request: Record<string, unknown>) => (await levels('cufflinks', request)).map((l) => l.name);
      assert.deepEqual(await got({ names: some, threshold: -1 }), [...some].sort());
      assert.deepEqual(await got({ names: some[1], threshold: -1 }), [some[1]]);
      assert.deepEqual(await got({ names: [some[1].toLowerCase(), some[1].slice(0, -1), 'nothing'], threshold: -1 }), []);
      assert.deepEqual(await got({ names: [], threshold: -1 }), rows.map((r) => r.name));
      // With the default threshold the zero rows drop out of the names too.
      const mixed = rows.slice(0, 12);
      assert.deepEqual(await got({ names: mixed.map((r) => r.name) }), mixed.filter((r) => r.expression > 0).map((r) => r.name));
    });

    it('pages with pageSize 1 through a whole quantification, the token vanishing after the last row', async () => {
      const all = await levels('cufflinks', { threshold: -1 });
      const { records, pages } = await collectPages(
        server,
        '/expressionlevels/search',
        { rnaQuantificationId: quantId('cufflinks'), threshold: -1, pageSize: 1 },
        'expressionLevels',
      );
      assert.equal(pages, expected.cufflinks.length);
      assert.deepEqual(records, all);
      // Clamped page size on another server: same records.
      assert.deepEqual(await levels('cufflinks', { threshold: -1, pageSize: 50 }, smallPages), all);
    });

    it('gets a level by id inside its own quantification only, equal to the search result', async () => {
      // sampleA (salmon) and sample1 (RSEM) share transcript names with different values.
      const shared = expected.isoforms.map((r) => r.name).filter((n) => expected.salmon.some((s) => s.name === n));
      assert.ok(shared.length >= 5);
      const salmon = await levels('sampleA', { threshold: -1 });
      const rsem = await levels('sample1', { threshold: -1 });
      for (const name of shared) {
        for (const [quantification, list, rows] of [
          ['sampleA', salmon, expected.salmon],
          ['sample1', rsem, expected.isoforms],
        ] as const) {
          const res = await server.get(`/expressionlevels/${idOf('ds1', 'set1', quantification, name)}`);
          assert.equal(res.status, 200);
          assert.deepEqual(res.json, list.find((l) => l.name === name));
          assert.equal(res.json.expression, rows.find((r) => r.name === name)!.expression);
          assert.equal(res.json.rnaQuantificationId, quantId(quantification));
        }
      }
      assert.equal((await server.get(`/expressionlevels/${idOf('ds1', 'set1', 'sampleA', 'ENSG00000000000')}`)).status, 404);
      assert.equal((await server.get(`/expressionlevels/${idOf('ds1', 'set1', 'nope', shared[0])}`)).status, 404);
      assert.equal((await server.get(`/expressionlevels/${quantId('sampleA')}`)).status, 404);
      // A zero row is found by id although the default search leaves it out.
      const zero = expected.salmon.find((r) => r.expression === 0)!;
      assert.equal((await server.get(`/expressionlevels/${idOf('ds1', 'set1', 'sampleA', zero.name)}`)).json.expression, 0);
    });

    it('answers in snake_case to a snake_case request', async () => {
      const res = await server.post('/expressionlevels/search', { rna_quantification_id: quantId('brca1'), page_size: 1 });
      assert.equal(res.status, 200);
      const [level] = res.json.expression_levels;
      assert.deepEqual(Object.keys(level), [
        'id',
        'name',
        'rna_quantification_id',
        'raw_read_count',
        'expression',
        'is_normalized',
        'units',
        'conf_interval_low',
        'conf_interval_high',
      ]);
      assert.equal(typeof res.json.next_page_token, 'string');
    });

    it('refuses bad requests with 400 naming the field, unknown quantifications with 404', async () => {
      const search = (body: unknown) => server.post('/expressionlevels/search', body);
      let res = await search({});
      assert.equal(res.status, 400);
      assert.match(res.json.message, /rnaQuantificationId/);
      res = await search({ rnaQuantificationId: quantId('kallisto'), threshold: 'high' });
      assert.equal(res.status, 400);
      assert.match(res.json.message, /threshold/);
      res = await search({ rnaQuantificationId: quantId('kallisto'), names: [1] });
      assert.equal(res.status, 400);
      assert.match(res.json.message, /names/);
      res = await search({ rnaQuantificationId: quantId('kallisto'), threshold: 'NaN' });
      assert.equal(res.status, 400);
      assert.match(res.json.message, /threshold/);
      assert.equal((await search({ rnaQuantificationId: quantId('nope') })).status, 404);
      assert.equal((await search({ rnaQuantificationId: setId })).status, 404);
      // A token of one query is refused by another.
      const first = await search({ rnaQuantificationId: quantId('cufflinks'), pageSize: 1 });
      res = await search({ rnaQuantificationId: quantId('cufflinks'), pageSize: 1, threshold: 1, pageToken: first.json.nextPageToken });
      assert.equal(res.status, 400);
      assert.match(res.json.message, /pageToken/);
      res = await search({ rnaQuantificationId: quantId('kallisto'), pageSize: 1, pageToken: first.json.nextPageToken });
      assert.equal(res.status, 400);
    });
  });
});
}

describe('loading', () => {
  it('reads the reference server\'s RSEM genes sample with TPM, and refuses its FPKM column, which holds text', async () => {
    const { registry } = await newRegistry(tempDir(), 'second.sqlite');
    await addDataset(registry, 'd');
    await addQuantificationSet(registry, 'd', 's');
    const file = path.join(TESTDATA, 'ga4gh-server/datasets/dataset1/rnaQuant/rsem_test_data.tsv');
    const rows = readTable(file, { expression: 'TPM', rawReadCount: 'expected_count', low: 'TPM_ci_lower_bound', high: 'TPM_ci_upper_bound' });
    assert.deepEqual(await loadQuantification(registry, 'd', 's', file), { name: 'rsem_test_data', format: 'rsem', units: 'TPM', rows: rows.length });
    const q = (await getQuantification(registry, 'd', 's', 'rsem_test_data'))!;
    const stored = await listExpressionRows(registry, { quantification: q, limit: 10 });
    assert.deepEqual(
      stored.map((r) => ({ name: r.name, expression: r.expression, rawReadCount: r.raw_read_count, confIntervalLow: r.conf_interval_low, confIntervalHigh: r.conf_interval_high })),
      [...rows].sort(byName),
    );
    await assert.rejects(loadQuantification(registry, 'd', 's', file, { name: 'x', units: 'FPKM' }), { message: new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 2: column 'FPKM' is not a number: 'FPKM'`) });
  });

  it('migrates a registry made before the rank ladder: ranks filled in from the stored rows, every plan answering', async () => {
    // A registry as the migrations before 'rna threshold plans' left it, holding the generated table.
    const location = path.join(tempDir(), 'old.sqlite');
    const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(location) }) });
    await migrate(old, allMigrations().filter((m) => m.name !== 'rna threshold plans'), 'sqlite');
    const now = new Date().toISOString();
    await old.insertInto('dataset').values({ name: 'd', description: null, created_at: now }).execute();
    await old.insertInto('rna_quantification_set').values({ dataset_name: 'd', name: 's', description: null, created_at: now }).execute();
    await old
      .insertInto('rna_quantification')
      .values({ id: 1, dataset_name: 'd', set_name: 's', name: 'big', description: null, biosample_id: null, format: 'kallisto', units: 'TPM',
        fields: '["rawReadCount"]', programs: '[]', feature_set_ids: '[]', read_group_ids: '[]', row_count: BIG, source: bigFile, created_at: now })
      .execute();
    for (let i = 0; i < BIG; i += 100) {
      await old
        .insertInto('rna_expression')
        .values(expected.big.slice(i, i + 100).map((r) => ({ quantification_id: 1, name: r.name, expression: r.expression, raw_read_count: r.rawReadCount })))
        .execute();
    }
    await old.destroy();

    const { registry, applied } = await migrateRegistry(location, allMigrations());
    atEnd(() => registry.close());
    assert.deepEqual(applied.map((m) => m.name), ['rna threshold plans']);
    const stats = (await getQuantification(registry, 'd', 's', 'big'))!;
    const highestFirst = expected.big.map((r) => r.expression).sort((a, b) => b - a);
    const ranks = JSON.parse(stats.expression_ranks) as Array<[number, number]>;
    assert.deepEqual(ranks.map(([rank]) => rank).slice(0, 8), [1, 2, 3, 4, 6, 8, 11, 16]);
    assert.deepEqual(ranks.map(([, expression]) => expression), ranks.map(([rank]) => highestFirst[rank - 1]));
    const plans = new Set<string>();
    for (const threshold of [highestFirst[20], highestFirst[5000], 0]) {
      plans.add(thresholdPlan(stats, threshold, 11));
      const want = expected.big.filter((r) => r.expression > threshold).sort(byName);
      const after = want[Math.floor(want.length / 2)].name;
      const page = await listExpressionRows(registry, { quantification: stats, above: threshold, after, limit: 11 });
      assert.deepEqual(page.map((r) => r.name), want.filter((r) => r.name > after).slice(0, 11).map((r) => r.name), `threshold ${threshold}`);
    }
    assert.deepEqual([...plans].sort(), ['name order', 'value index']);
  });

  it('refuses a feature name that appears twice, naming both lines', async () => {
    const { registry } = await newRegistry(tempDir(), 'third.sqlite');
    await addDataset(registry, 'd');
    await addQuantificationSet(registry, 'd', 's');
    const lines = fs.readFileSync(files.kallisto, 'utf8').split('\n').filter(Boolean);
    const doubled = path.join(tempDir(), 'abundance.tsv');
    fs.writeFileSync(doubled, [...lines, lines[3], lines[2]].join('\n') + '\n');
    await assert.rejects(
      loadQuantification(registry, 'd', 's', doubled),
      { message: `${doubled}: line ${lines.length + 1}: feature '${lines[3].split('\t')[0]}' appears again (first on line 4); names must be unique` },
    );
  });
});
