/**
 * Individuals and biosamples, registered from the compliance data set's JSON files through the CLI, and
 * their links: call sets to the biosample named like their sample (in either load order), RNA
 * quantifications by --biosample-id, and the dataset's --attributes. Expected records are the files'
 * own fields, read here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { attributesFromJson } from '../src/cli/attributes.js';
import { addBiosampleFromFile, addIndividualFromFile } from '../src/areas/biometadata/loader.js';
import { removeBiosample, removeIndividual } from '../src/areas/biometadata/store.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet } from '../src/areas/rna/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import type { Registry } from '../src/registry/registry.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, runCliAsync, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';

const dir = tempDir();
const C = path.join(TESTDATA, 'compliance');
const samples = ['HG00096', 'HG00099', 'HG00101'];
/** The biosample files' own names (the one of HG00101's file is HG00100). */
const biosampleNames = samples.map((s) => JSON.parse(fs.readFileSync(path.join(C, `biosample_${s}.json`), 'utf8')).name as string);
const individualFile = (s: string) => path.join(C, `individual_${s}.json`);
const biosampleFile = (s: string) => path.join(C, `biosample_${s}.json`);
const fileJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
const vcf = copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir);
const fasta = copyFixture('compliance/ref_brca1.fa', dir);
const rna = copyFixture('compliance/rna_brca1.tsv', dir);

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
/** The same message with every field name in snake_case (attribute keys are user data and stay). */
function toSnake(value: any): any {
  if (Array.isArray(value)) return value.map(toSnake);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k === 'attr' ? k : snake(k), k === 'attr' ? Object.fromEntries(Object.entries(v as object).map(([a, b]) => [a, toSnake(b)])) : toSnake(v)]));
}

function writeJson(name: string, value: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

function ok(r: { code: number; stdout: string; stderr: string }): string {
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

function refused(r: { code: number; stdout: string; stderr: string }, message: RegExp) {
  assert.notEqual(r.code, 0, r.stdout);
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], message);
}

/** What a record served from a file must hold besides id, datasetId and name: the file's non-empty fields. */
function fieldsOfFile(json: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(json).filter(([k, v]) => !['id', 'datasetId', 'name', 'individualId'].includes(k) && v !== ''));
}

for (const backend of backends) {
describe(`on ${backend.name}`, { skip: backend.skip }, () => {
  let server: TestServer;
  let location: string;
  let registry: Registry;
  const ds = idOf('ds');

  before(async () => {
    const opened = await newRegistry(await backend.newLocation(dir));
    location = opened.location;
    registry = opened.registry;
    await addDataset(registry, 'ds', undefined, attributesFromJson('{"version": "0.3.0"}'));
    await addDataset(registry, 'other');
    await loadReferenceSet(registry, fasta, { name: 'hg37' });
    // Load order 1: the biosample before the variant set (HG00096). Load order 2: after it (HG00099, below).
    await addIndividualFromFile(registry, 'ds', individualFile('HG00096'));
    await addBiosampleFromFile(registry, 'ds', biosampleFile('HG00096'));
    await loadVariantSet(registry, 'ds', [vcf], { referenceset: 'hg37', name: 'brca1' });
    // HG00099 in snake_case, HG00101 in camelCase; biosamples name their individual by name and by id.
    await addIndividualFromFile(registry, 'ds', writeJson('ind99.json', toSnake(fileJson(individualFile('HG00099')))));
    await addIndividualFromFile(registry, 'ds', individualFile('HG00101'));
    await addBiosampleFromFile(registry, 'ds', writeJson('bs99.json', toSnake({ ...fileJson(biosampleFile('HG00099')), individualId: 'HG00099' })));
    await addBiosampleFromFile(registry, 'ds', writeJson('bs101.json', { ...fileJson(biosampleFile('HG00101')), individualId: idOf('ds', 'ind', 'HG00101') }));
    await addBiosampleFromFile(registry, 'other', biosampleFile('HG00096'));
    await addQuantificationSet(registry, 'ds', 'rna');
    await loadQuantification(registry, 'ds', 'rna', rna, { name: 'q96', biosampleId: 'HG00096' });
    await loadQuantification(registry, 'ds', 'rna', rna, { name: 'q99', biosampleId: 'HG00099' });
    server = await startTestServer(location);
  });

  it('serves the dataset with its --attributes', async () => {
    const res = await server.get(`/datasets/${ds}`);
    assert.deepEqual(res.json, { id: ds, name: 'ds', attributes: { attr: { version: { values: [{ stringValue: '0.3.0' }] } } } });
    const { records } = await collectPages(server, '/datasets/search', {}, 'datasets');
    assert.deepEqual(records.find((d) => d.name === 'ds'), res.json);
  });

  it('serves individuals with the fields of their files, in either naming form; get equals search', async () => {
    const { records, pages } = await collectPages(server, '/individuals/search', { datasetId: ds, pageSize: 1 }, 'individuals');
    assert.equal(pages, 3);
    assert.deepEqual(records.map((r) => r.name), samples);
    for (const record of records) {
      const file = fileJson(individualFile(record.name));
      const { id, datasetId, name, created, updated, ...rest } = record;
      assert.equal(id, idOf('ds', 'ind', file.name));
      assert.equal(datasetId, ds);
      assert.equal(name, file.name);
      assert.ok(created && updated, 'created and updated are set at registration when the file has none');
      assert.deepEqual(rest, fieldsOfFile(file));
      assert.deepEqual((await server.get(`/individuals/${id}`)).json, record);
    }
    const byName = await server.post('/individuals/search', { dataset_id: ds, name: 'HG00099' });
    assert.deepEqual(byName.json.individuals.map((r: any) => r.name), ['HG00099']);
    assert.ok(byName.json.individuals[0].sex.term_id, 'snake_case request, snake_case answer');
    const all = await collectPages(server, '/individuals/search', {}, 'individuals');
    assert.equal(all.records.length, 3);
  });

  it('serves biosamples with their individual; filters by name and individualId', async () => {
    const { records } = await collectPages(server, '/biosamples/search', { datasetId: ds, pageSize: 2 }, 'biosamples');
    assert.deepEqual(records.map((r) => r.name), biosampleNames);
    for (const record of records) {
      const file = fileJson(biosampleFile(samples[biosampleNames.indexOf(record.name)]));
      const { id, datasetId, name, individualId, ...rest } = record;
      assert.equal(id, idOf('ds', 'bs', file.name));
      assert.equal(datasetId, ds);
      const individual = { HG00096: undefined, HG00099: 'HG00099', HG00100: 'HG00101' }[name as string];
      assert.equal(individualId, individual && idOf('ds', 'ind', individual));
      assert.deepEqual(rest, fieldsOfFile(file));
      assert.deepEqual((await server.get(`/biosamples/${id}`)).json, record);
    }
    const byIndividual = await server.post('/biosamples/search', { individualId: idOf('ds', 'ind', 'HG00101') });
    assert.deepEqual(byIndividual.json.biosamples.map((r: any) => r.id), [idOf('ds', 'bs', biosampleNames[2])]);
    const byName = await server.post('/biosamples/search', { name: 'HG00096' });
    assert.deepEqual(byName.json.biosamples.map((r: any) => r.id), [idOf('ds', 'bs', 'HG00096'), idOf('other', 'bs', 'HG00096')]);
    const none = await server.post('/biosamples/search', { datasetId: idOf('other'), individualId: idOf('ds', 'ind', 'HG00101') });
    assert.deepEqual(none.json, { biosamples: [] });
    assert.equal((await server.get(`/biosamples/${idOf('ds', 'bs', 'nobody')}`)).status, 404);
    assert.equal((await server.get(`/individuals/${idOf('ds', 'bs', 'HG00096')}`)).status, 404);
    assert.equal((await server.post('/biosamples/search', { datasetId: idOf('nope') })).status, 404);
    assert.equal((await server.post('/biosamples/search', { individualID: 'x' })).status, 400);
  });

  it('links call sets to the biosample named like their sample, in both load orders; searches by biosampleId', async () => {
    const vs = idOf('ds', 'vs', 'brca1');
    const { records } = await collectPages(server, '/callsets/search', { variantSetId: vs }, 'callSets');
    const linked = records.filter((c) => c.biosampleId);
    // The sample HG00101 has no biosample of that name (its file names HG00100).
    assert.deepEqual(linked.map((c) => [c.name, c.biosampleId]), [['HG00096', idOf('ds', 'bs', 'HG00096')], ['HG00099', idOf('ds', 'bs', 'HG00099')]]);
    for (const c of linked) assert.deepEqual((await server.get(`/callsets/${c.id}`)).json, c);
    // As the compliance kit does: find the biosample by name, then its call sets.
    const [biosample] = (await server.post('/biosamples/search', { datasetId: ds, name: 'HG00099' })).json.biosamples;
    const bySample = await server.post('/callsets/search', { variantSetId: vs, biosampleId: biosample.id });
    assert.deepEqual(bySample.json.callSets.map((c: any) => c.name), ['HG00099']);
    const otherDataset = await server.post('/callsets/search', { variantSetId: vs, biosampleId: idOf('other', 'bs', 'HG00096') });
    assert.deepEqual(otherDataset.json, { callSets: [] });
  });

  it('links RNA quantifications by --biosample-id, and searches them by biosampleId', async () => {
    const set = idOf('ds', 'rna');
    const res = await server.post('/rnaquantifications/search', { rnaQuantificationSetId: set, biosampleId: idOf('ds', 'bs', 'HG00099') });
    assert.deepEqual(res.json.rnaQuantifications.map((q: any) => [q.name, q.biosampleId]), [['q99', idOf('ds', 'bs', 'HG00099')]]);
  });

  it('refuses bad files and unknown names, leaving the registry as it was', async () => {
    const rejects = (p: Promise<unknown>, message: RegExp) => assert.rejects(p, message);
    await rejects(addIndividualFromFile(registry, 'ds', individualFile('HG00096')), /individual 'HG00096' already exists in dataset 'ds'/);
    await rejects(addBiosampleFromFile(registry, 'ds', biosampleFile('HG00096')), /biosample 'HG00096' already exists/);
    await rejects(addBiosampleFromFile(registry, 'ds', writeJson('b1.json', { name: 'x', individualId: 'nobody' })), /individual 'nobody'.*not in dataset 'ds'/);
    await rejects(addBiosampleFromFile(registry, 'ds', writeJson('b2.json', { name: 'x', individualId: idOf('other', 'ind', 'HG00096') })), /individual of dataset 'other'/);
    await rejects(addIndividualFromFile(registry, 'ds', writeJson('i1.json', { name: 'x', gender: 'f' })), /unknown field 'gender' in Individual/);
    await rejects(addIndividualFromFile(registry, 'ds', writeJson('i2.json', { name: 'x', sex: { termId: 7 } })), /field 'sex.termId' must be a string/);
    await rejects(addIndividualFromFile(registry, 'ds', writeJson('i3.json', '{"name": "x",')), /i3.json is not valid JSON/);
    await rejects(addIndividualFromFile(registry, 'ds', writeJson('i4.json', { description: 'no name' })), /field 'name' is required/);
    await rejects(addIndividualFromFile(registry, 'nope', individualFile('HG00096')), /no dataset 'nope'/);
    await rejects(addIndividualFromFile(registry, 'ds', path.join(dir, 'missing.json')), /cannot read .*missing.json/);
    await rejects(loadQuantification(registry, 'ds', 'rna', rna, { name: 'q', biosampleId: 'nobody' }), /no biosample 'nobody' in dataset 'ds'/);
    await rejects(removeIndividual(registry, 'ds', 'HG00099'), /biosample\(s\) 'HG00099'; remove those first/);
    await rejects(removeBiosample(registry, 'ds', 'HG00099'), /RNA quantification\(s\) 'rna\/q99'/);
    await rejects(removeBiosample(registry, 'ds', 'nobody'), /no biosample 'nobody'/);
    assert.equal((await collectPages(server, '/individuals/search', {}, 'individuals')).records.length, 3);
    assert.equal((await collectPages(server, '/biosamples/search', {}, 'biosamples')).records.length, 4);
  });

  it('removes a biosample and an individual no longer used', async () => {
    await addIndividualFromFile(registry, 'ds', writeJson('lone.json', { name: 'lone' }));
    await addBiosampleFromFile(registry, 'ds', writeJson('late.json', { name: 'late', individual_id: 'lone' }));
    await removeBiosample(registry, 'ds', 'late');
    await removeIndividual(registry, 'ds', 'lone');
    assert.equal((await server.get(`/biosamples/${idOf('ds', 'bs', 'late')}`)).status, 404);
    assert.equal((await server.get(`/individuals/${idOf('ds', 'ind', 'lone')}`)).status, 404);
  });
});
}

describe('the commands', () => {
  it('add, list and remove individuals and biosamples; refusals are one line on stderr', async () => {
    const { location } = await newRegistry(dir);
    ok(await runCliAsync('repo', 'add-dataset', location, 'ds', '--attributes', '{"version": "0.3.0"}'));
    assert.match(ok(await runCliAsync('repo', 'add-individual', location, 'ds', individualFile('HG00099'))), /added individual 'HG00099' to dataset 'ds'/);
    const bs = writeJson('cli-bs.json', { ...fileJson(biosampleFile('HG00099')), individualId: 'HG00099' });
    assert.match(ok(await runCliAsync('repo', 'add-biosample', location, 'ds', bs)), /added biosample 'HG00099' to dataset 'ds' \(individual 'HG00099'\)/);
    refused(await runCliAsync('repo', 'add-biosample', location, 'ds', bs), /^ga4gh: .*biosample 'HG00099' already exists/);
    refused(await runCliAsync('repo', 'add-individual', location, 'ds', writeJson('cli-bad.json', { name: 'x', foo: 1 })), /unknown field 'foo' in Individual/);
    refused(await runCliAsync('repo', 'add-dataset', location, 'x', '--attributes', '{"a": '), /--attributes is not valid JSON/);
    const list = ok(await runCliAsync('repo', 'list', location));
    assert.match(list, /Individuals \(1\)/);
    assert.match(list, /Biosamples \(1\)/);
    refused(await runCliAsync('repo', 'remove-individual', location, 'ds', 'HG00099'), /biosample\(s\) 'HG00099'/);
    assert.match(ok(await runCliAsync('repo', 'remove-biosample', location, 'ds', 'HG00099')), /removed biosample 'HG00099' from dataset 'ds'/);
    assert.match(ok(await runCliAsync('repo', 'remove-individual', location, 'ds', 'HG00099')), /removed individual 'HG00099'/);
  });
});
