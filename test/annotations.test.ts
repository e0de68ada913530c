/**
 * Variant annotations over HTTP, from the reference server's and the compliance set's annotated VCFs
 * (VEP 77 `CSQ`, VEP 82 written as `ANN`, SnpEff `ANN`). Expected annotations are read here from the
 * INFO text, with the entry columns taken from each header's own Description, and effect terms from
 * the OBO file read here too.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { readOboTerms } from '../src/areas/ontologies/obo.js';
import { addOntology, removeOntology } from '../src/areas/ontologies/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import type { Registry } from '../src/registry/registry.js';
import { backends } from './backends.js';
import { bgzippedVcf, collectPages, copyFixture, idOf, newRegistry, registryBefore, servedAfterMigrating, startTestServer, tempDir, TESTDATA, type TestServer } from './helpers.js';

const dir = tempDir();
const V = 'ga4gh-server/datasets/dataset1/variants';
const sets = {
  vep77: { file: copyFixture(`${V}/1kg.3.annotations`, dir), vcf: 'chr1.edit.vcf.gz', field: 'CSQ', software: 'VEP v77' },
  vep77b: { file: copyFixture(`${V}/1kg.17.ann.edit`, dir), vcf: '1kg.17.ann.edit.vcf.gz', field: 'CSQ', software: 'VEP v77' },
  vep82: { file: copyFixture(`${V}/1KG_GRCh37_VEP_edit`, dir), vcf: '1KG_GRCh37_VEP_edit.vcf.gz', field: 'ANN', software: 'VEP v82' },
  snpEffOr4f: { file: copyFixture(`${V}/OR4F_annotation`, dir), vcf: 'OR4F_annotation.vcf.gz', field: 'ANN', software: 'SnpEff' },
  snpEffWash: { file: copyFixture(`${V}/WASH7P_annotation`, dir), vcf: 'WASH7P_annotation.vcf.gz', field: 'ANN', software: 'SnpEff' },
  brca1Or4f: { file: copyFixture('compliance/brca1_OR4F_annotation.vcf', dir), vcf: '', field: 'ANN', software: 'SnpEff' },
  brca1Wash: { file: copyFixture('compliance/brca1_WASH7P_annotation.vcf', dir), vcf: '', field: 'ANN', software: 'SnpEff' },
};
type SetName = keyof typeof sets;
const obo = path.join(TESTDATA, 'compliance/so-xp-simple.obo');
const ncbi37 = copyFixture('ga4gh-server/referenceSets', dir);

// ---------------------------------------------------------------------------------------------------
// The data, read independently of the server's code

interface OboEntry {
  id: string;
  name: string;
  parents: string[];
  obsolete: boolean;
  synonyms: string[];
}
// Names of current terms first, then exact synonyms (a name may be both).
const oboTerms: OboEntry[] = fs
  .readFileSync(obo, 'utf8')
  .split(/\n\[/)
  .filter((stanza) => stanza.startsWith('Term]'))
  .map((stanza) => ({
    id: /^id: (\S+)/m.exec(stanza)![1],
    name: /^name: (.*)$/m.exec(stanza)?.[1].trim() ?? '',
    parents: [...stanza.matchAll(/^is_a: (\S+)/gm)].map((m) => m[1]),
    obsolete: /^is_obsolete: true/m.test(stanza),
    synonyms: [...stanza.matchAll(/^synonym: "([^"]*)" EXACT/gm)].map((m) => m[1]),
  }))
  .sort((a, b) => Number(a.obsolete) - Number(b.obsolete));
const termByName = new Map<string, OboEntry>();
for (const t of oboTerms) if (!termByName.has(t.name.toLowerCase())) termByName.set(t.name.toLowerCase(), t);
for (const t of oboTerms) {
  for (const s of t.synonyms) if (!termByName.has(s.toLowerCase())) termByName.set(s.toLowerCase(), t);
}
/** A term and every term below it by is_a. */
function subclassesOf(id: string): Set<string> {
  const found = new Set([id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const t of oboTerms) if (!found.has(t.id) && t.parents.some((p) => found.has(p))) found.add(t.id), (grew = true);
  }
  return found;
}

interface VcfRecord {
  chrom: string;
  pos: number;
  ref: string;
  alt: string;
  entries: string[][];
  hgvsG?: string[];
}

function readVcf(file: string, field: string): { header: string[]; columns: string[]; records: VcfRecord[] } {
  const raw = fs.readFileSync(file);
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
  const lines = text.split('\n').filter(Boolean);
  const header = lines.filter((l) => l.startsWith('##'));
  const description = /Description="(.*)">$/.exec(header.find((l) => l.startsWith(`##INFO=<ID=${field},`))!)![1];
  const list = description.includes('Format: ') ? description.split('Format: ')[1] : description.split("'")[1];
  const columns = list.split('|').map((c) => c.trim());
  const records = lines
    .filter((l) => !l.startsWith('#'))
    .map((line) => {
      const [chrom, pos, , ref, alt, , , info] = line.split('\t');
      const items = info.split(';');
      const value = items.find((i) => i.startsWith(`${field}=`))?.slice(field.length + 1);
      const hgvsG = items.find((i) => i.startsWith('HGVS.g='))?.slice(7).split(',');
      return { chrom, pos: Number(pos), ref, alt, entries: value ? value.split(',').map((e) => e.split('|')) : [], hgvsG };
    });
  return { header, columns, records };
}

/** The values of a header's `##key=value` lines, by key. */
const headerValues = (header: string[]) => (key: string) => header.filter((l) => l.startsWith(`##${key}=`)).map((l) => l.slice(key.length + 3));

const vcfOf = (name: SetName) => (sets[name].vcf ? path.join(sets[name].file, sets[name].vcf) : sets[name].file);
const data = Object.fromEntries(Object.keys(sets).map((n) => [n, readVcf(vcfOf(n as SetName), sets[n as SetName].field)])) as Record<
  SetName,
  ReturnType<typeof readVcf>
>;
const setNameOf = (name: SetName) => (sets[name].vcf ? path.basename(sets[name].file) : path.basename(sets[name].file, '.vcf'));
const digestOf = (ref: string, alt: string) => createHash('sha1').update(ref + '\t' + alt).digest('hex').slice(0, 16);
const vasId = (name: SetName) => idOf('ds', 'vas', setNameOf(name));

/** What a served effect must say of an entry, by the header's column names. */
function checkEffect(effect: any, cells: string[], columns: string[], record: VcfRecord, where: string) {
  const col = (...names: string[]) => {
    const i = columns.findIndex((c) => names.includes(c));
    return i === -1 || cells[i] === '' ? undefined : cells[i];
  };
  assert.equal(effect.alternateBases, col('Allele'), where);
  assert.equal(effect.featureId, col('Feature', 'Feature_ID'), where);
  const names = (col('Consequence', 'Annotation') ?? '').split('&').filter(Boolean);
  assert.deepEqual(
    effect.effects,
    names.map((n) => {
      const t = termByName.get(n.toLowerCase());
      return t ? { termId: t.id, term: t.name } : { term: n };
    }),
    where,
  );
  const alts = record.alt.split(',');
  const allele = col('Allele');
  const genomic = record.hgvsG && (record.hgvsG.length === alts.length ? record.hgvsG[alts.indexOf(allele!)] : record.hgvsG[0]);
  const hgvs = { genomic: genomic || undefined, transcript: col('HGVSc', 'HGVS.c'), protein: col('HGVSp', 'HGVS.p') };
  assert.deepEqual(effect.hgvsAnnotation, hgvs.genomic || hgvs.transcript || hgvs.protein ? JSON.parse(JSON.stringify(hgvs)) : undefined, where);
  // Positions are 1-based in the file (SnpEff adds "/length"), 0-based with an exclusive end when served.
  const cds = col('CDS_position', 'CDS.pos / CDS.length');
  if (cds && /^\d+(\/\d+)?$/.test(cds)) {
    const n = Number(cds.split('/')[0]);
    assert.equal(effect.cdsLocation.start, n - 1, where);
    assert.equal(effect.cdsLocation.end, n, where);
  }
  const codons = col('Codons');
  if (codons) assert.deepEqual([effect.cdsLocation.referenceSequence, effect.cdsLocation.alternateSequence], codons.split('/'), where);
  const results = [];
  for (const [id, text] of [['SIFT', col('SIFT')], ['PolyPhen', col('PolyPhen')]]) {
    if (!text) continue;
    const m = /^(\w+)\(([\d.]+)\)$/.exec(text)!;
    results.push({ analysisId: id, result: m[1], score: Math.round(Number(m[2]) * 1000) });
  }
  assert.deepEqual(effect.analysisResults, results.length ? results : undefined, where);
  const consumed = new Set(['Allele', 'Feature', 'Feature_ID', 'Consequence', 'Annotation', 'HGVSc', 'HGVS.c', 'HGVSp', 'HGVS.p', 'cDNA_position',
    'cDNA.pos / cDNA.length', 'CDS_position', 'CDS.pos / CDS.length', 'Protein_position', 'AA.pos / AA.length', 'Codons', 'Amino_acids', 'SIFT', 'PolyPhen']);
  const attr: Record<string, unknown> = {};
  columns.forEach((c, i) => {
    if (!consumed.has(c) && cells[i]) attr[c] = { values: [{ stringValue: cells[i] }] };
  });
  assert.deepEqual(effect.attributes, Object.keys(attr).length ? { attr } : undefined, where);
}

// ---------------------------------------------------------------------------------------------------

for (const backend of backends) {
describe(`on ${backend.name}`, { skip: backend.skip }, () => {
  let server: TestServer;
  let registry: Registry;
  let damaged: string;

  before(async () => {
    const opened = await newRegistry(await backend.newLocation(dir));
    registry = opened.registry;
    await addDataset(registry, 'ds');
    await loadReferenceSet(registry, path.join(ncbi37, 'NCBI37.fa.gz'), {});
    // The first set is registered before any ontology: its effects are matched to terms when served.
    await loadVariantSet(registry, 'ds', [sets.vep77b.file], { referenceset: 'NCBI37', allowMissingContigs: true });
    const header: Record<string, string> = {};
    await addOntology(registry, 'so', obo, readOboTerms(obo, header), header);
    for (const name of Object.keys(sets) as SetName[]) {
      if (name === 'vep77b') continue;
      await loadVariantSet(registry, 'ds', [sets[name].file], { referenceset: 'NCBI37', allowMissingContigs: true });
    }
    await loadVariantSet(registry, 'ds', [sets.vep82.file], { referenceset: 'NCBI37', allowMissingContigs: true, name: 'plain', annotations: false });
    const broken = path.join(fs.mkdtempSync(path.join(dir, 'broken-')), 'broken.vcf.gz');
    fs.copyFileSync(vcfOf('snpEffOr4f'), broken);
    fs.copyFileSync(vcfOf('snpEffOr4f') + '.tbi', broken + '.tbi');
    await loadVariantSet(registry, 'ds', [broken], { referenceset: 'NCBI37' });
    damaged = broken;
    server = await startTestServer(opened.location);
  });

  const search = (body: Record<string, unknown>) => server.post('/variantannotations/search', body);

  describe('variant annotation sets', () => {
    it('registers one set beside each annotated variant set, with the analysis from its header; get equals search', async () => {
      for (const name of Object.keys(sets) as SetName[]) {
        const res = await server.post('/variantannotationsets/search', { variantSetId: idOf('ds', 'vs', setNameOf(name)) });
        assert.equal(res.status, 200, res.text);
        const [set] = res.json.variantAnnotationSets;
        assert.equal(res.json.variantAnnotationSets.length, 1);
        assert.equal(set.id, vasId(name));
        assert.equal(set.name, setNameOf(name));
        assert.equal(set.variantSetId, idOf('ds', 'vs', setNameOf(name)));
        assert.equal(set.analysis.id, set.id);
        assert.ok(set.analysis.software[0].startsWith(sets[name].software), set.analysis.software[0]);
        const created = data[name].header.find((l) => l.startsWith('##created='))?.slice(10) ??
          data[name].header.find((l) => l.startsWith('##fileDate='))!.slice(11).replace(/^(\d{4})(\d\d)(\d\d)$/, '$1-$2-$3');
        assert.equal(set.analysis.created, `${created}T00:00:00Z`);
        // The header's own name, description and software lines, as the reference server read them.
        const lines = headerValues(data[name].header);
        assert.equal(set.analysis.name, lines('name')[0] ?? setNameOf(name));
        assert.equal(set.analysis.description, lines('description')[0]);
        if (lines('software').length) assert.deepEqual(set.analysis.software, lines('software'));
        assert.deepEqual((await server.get(`/variantannotationsets/${set.id}`)).json, set);
      }
      const snpEff = (await server.get(`/variantannotationsets/${vasId('snpEffOr4f')}`)).json;
      const cmd = data.snpEffOr4f.header.find((l) => l.startsWith('##SnpEffCmd='))!.slice('##SnpEffCmd='.length);
      assert.deepEqual(snpEff.analysis.attributes.attr.SnpEffCmd, { values: [{ stringValue: JSON.parse(cmd) }] });
      const vep = (await server.get(`/variantannotationsets/${vasId('vep82')}`)).json;
      assert.equal(vep.analysis.attributes.attr.sift.values[0].stringValue, 'sift5.2.2');
      assert.equal(vep.analysis.attributes.attr.gencode.values[0].stringValue, 'GENCODE 19');
    });

    it('migrates the analysis of sets registered before to what their header gives a load now', async () => {
      // A registry as the migrations before 'variant annotation analysis from the header' left it, with
      // the compliance VCFs bgzipped and indexed by bgzip and tabix, and each set's analysis as the loader
      // wrote it then: named after the set, software from the annotator's line, the date as written.
      const location = await backend.newLocation(dir);
      const old = await registryBefore(location, 'variant annotation analysis from the header');
      await addDataset(old.registry, 'ds');
      await loadReferenceSet(old.registry, path.join(ncbi37, 'NCBI37.fa.gz'), {});
      const names = ['brca1Or4f', 'brca1Wash'] as const;
      for (const name of names) {
        const vcf = bgzippedVcf(dir, `${setNameOf(name)}.vcf.gz`, fs.readFileSync(sets[name].file, 'utf8'));
        await loadVariantSet(old.registry, 'ds', [vcf], { referenceset: 'NCBI37', allowMissingContigs: true });
        const lines = headerValues(data[name].header);
        const analysis = { name: setNameOf(name), created: lines('created')[0], type: 'variant annotation', software: [`SnpEff ${JSON.parse(lines('SnpEffVersion')[0])}`] };
        await old.registry.db.updateTable('variant_annotation_set').set({ analysis: JSON.stringify(analysis) }).where('name', '=', setNameOf(name)).execute();
      }
      await old.registry.close();
      const migrated = await servedAfterMigrating(location, ['variant annotation analysis from the header']);
      for (const name of names) {
        const set = (await migrated.get(`/variantannotationsets/${vasId(name)}`)).json;
        const lines = headerValues(data[name].header);
        assert.deepEqual(
          [set.analysis.name, set.analysis.description, set.analysis.created, set.analysis.software],
          [lines('name')[0], lines('description')[0], `${lines('created')[0]}T00:00:00Z`, lines('software')],
        );
        assert.deepEqual(set.analysis, (await server.get(`/variantannotationsets/${vasId(name)}`)).json.analysis, 'as a load now gives it');
      }
    });

    it('registers none with --no-annotations; unknown ids are 404', async () => {
      const res = await server.post('/variantannotationsets/search', { variantSetId: idOf('ds', 'vs', 'plain') });
      assert.deepEqual(res.json, { variantAnnotationSets: [] });
      assert.equal((await server.post('/variantannotationsets/search', { variantSetId: idOf('ds', 'vs', 'nope') })).status, 404);
      assert.equal((await server.get(`/variantannotationsets/${idOf('ds', 'vas', 'plain')}`)).status, 404);
      assert.equal((await server.get(`/variantannotationsets/${idOf('ds', 'vs', 'plain')}`)).status, 404);
      assert.equal((await server.post('/variantannotationsets/search', {})).status, 400);
    });

    it('refuses to remove an ontology while a set uses it', async () => {
      await assert.rejects(removeOntology(registry, 'so'), /used by registered sets/);
    });
  });

  describe('variant annotations', () => {
    it('serves one annotation per VCF record, each entry a transcript effect, matching the INFO text', async () => {
      for (const name of Object.keys(sets) as SetName[]) {
        const { records: expected, columns } = data[name];
        const served: any[] = [];
        for (const chrom of [...new Set(expected.map((r) => r.chrom))]) {
          served.push(...(await collectPages(server, '/variantannotations/search', { variantAnnotationSetId: vasId(name), referenceName: chrom, pageSize: 50 }, 'variantAnnotations')).records);
        }
        assert.equal(served.length, expected.length, name);
        expected.forEach((record, i) => {
          const annotation = served[i];
          const where = `${name} ${record.chrom}:${record.pos}`;
          const key = [record.chrom, String(record.pos - 1), digestOf(record.ref, record.alt)];
          assert.equal(annotation.id, idOf('ds', 'vas', setNameOf(name), ...key), where);
          assert.equal(annotation.variantId, idOf('ds', 'vs', setNameOf(name), ...key), where);
          assert.equal(annotation.variantAnnotationSetId, vasId(name));
          assert.equal((annotation.transcriptEffects ?? []).length, record.entries.length, where);
          // vep77b was registered before the ontology: its effects are matched to terms all the same.
          record.entries.forEach((cells, j) => checkEffect(annotation.transcriptEffects[j], cells, columns, record, `${where} entry ${j}`));
          const ids = (annotation.transcriptEffects ?? []).map((e: any) => e.id);
          assert.equal(new Set(ids).size, ids.length, where);
        });
      }
    });

    it("gives each annotation the id of its variant, which GET /variants/{id} resolves", async () => {
      const res = await search({ variantAnnotationSetId: vasId('brca1Or4f'), referenceName: '1', pageSize: 5 });
      for (const annotation of res.json.variantAnnotations) {
        const variant = await server.get(`/variants/${annotation.variantId}`);
        assert.equal(variant.status, 200, variant.text);
        assert.equal(variant.json.id, annotation.variantId);
      }
    });

    it('filters by region, overlapping [start, end)', async () => {
      const { records } = data.snpEffWash;
      const start = records[10].pos - 1;
      const end = records[20].pos;
      const expected = records.filter((r) => r.pos - 1 < end && r.pos - 1 + r.ref.length > start);
      const { records: served } = await collectPages(server, '/variantannotations/search', { variantAnnotationSetId: vasId('snpEffWash'), referenceName: '1', start, end, pageSize: 4 }, 'variantAnnotations');
      assert.deepEqual(served.map((a) => a.variantId), expected.map((r) => idOf('ds', 'vs', setNameOf('snpEffWash'), r.chrom, String(r.pos - 1), digestOf(r.ref, r.alt))));
      const byId = await search({ variantAnnotationSetId: vasId('snpEffWash'), referenceId: idOf('NCBI37', '1'), start, end });
      assert.deepEqual(byId.json.variantAnnotations.map((a: any) => a.id), served.map((a) => a.id));
    });

    it('filters by effect term id, with its subclasses, returning only the matching transcript effects', async () => {
      const { records, columns } = data.vep77;
      const consequence = columns.indexOf('Consequence');
      for (const termId of ['SO:0001583', 'SO:0001580']) { // missense_variant; coding_sequence_variant (above missense and synonymous)
        const accepted = subclassesOf(termId);
        const matches = (cells: string[]) => cells[consequence].split('&').some((n) => accepted.has(termByName.get(n.toLowerCase())?.id ?? ''));
        const expected = records.filter((r) => r.entries.some(matches));
        assert.ok(expected.length > 0);
        const { records: served } = await collectPages(server, '/variantannotations/search', { variantAnnotationSetId: vasId('vep77'), referenceName: '1', effects: [{ termId }], pageSize: 3 }, 'variantAnnotations');
        assert.equal(served.length, expected.length, termId);
        served.forEach((annotation, i) => {
          const kept = expected[i].entries.filter(matches);
          assert.equal(annotation.transcriptEffects.length, kept.length);
          annotation.transcriptEffects.forEach((effect: any, j: number) => checkEffect(effect, kept[j], columns, expected[i], `${termId} ${i}`));
        });
      }
      // A term given by name is looked up in the ontology; a term nothing has gives an empty page.
      const byName = await search({ variantAnnotationSetId: vasId('vep77'), referenceName: '1', effects: [{ term: 'missense_variant' }] });
      const byId = await search({ variantAnnotationSetId: vasId('vep77'), referenceName: '1', effects: [{ termId: 'SO:0001583' }] });
      assert.deepEqual(byName.json, byId.json);
      assert.deepEqual((await search({ variantAnnotationSetId: vasId('vep77'), referenceName: '1', effects: [{ termId: 'SO:0000000' }] })).json, { variantAnnotations: [] });
    });

    it('pages one annotation at a time with look-ahead, and answers snake_case in snake_case', async () => {
      const count = data.brca1Wash.records.length;
      const { records, pages } = await collectPages(server, '/variantannotations/search', { variantAnnotationSetId: vasId('brca1Wash'), referenceName: '1', pageSize: 1 }, 'variantAnnotations');
      assert.equal(records.length, count);
      assert.equal(pages, count);
      const snake = await search({ variant_annotation_set_id: vasId('brca1Wash'), reference_name: '1', page_size: 1 });
      assert.ok(snake.json.variant_annotations[0].transcript_effects[0].feature_id);
      assert.ok(snake.json.next_page_token);
    });

    it('refuses bad requests naming the field, and answers 503 naming the set when its file is damaged', async () => {
      const set = vasId('snpEffWash');
      const bad = async (body: Record<string, unknown>, status: number, message: RegExp) => {
        const res = await search(body);
        assert.equal(res.status, status, res.text);
        assert.match(res.json.message, message);
      };
      await bad({ variantAnnotationSetId: set }, 400, /referenceName' or 'referenceId/);
      await bad({ variantAnnotationSetId: set, referenceName: '1', start: -1 }, 400, /start/);
      await bad({ variantAnnotationSetId: set, referenceName: '1', start: 10, end: 5 }, 400, /end/);
      await bad({ variantAnnotationSetId: set, referenceName: '1', effects: [{}] }, 400, /effects\[0\]/);
      await bad({ variantAnnotationSetId: set, referenceName: '1', effects: [{ termid: 'x' }] }, 400, /termid/);
      await bad({ variantAnnotationSetId: set, referenceName: '2', referenceId: idOf('NCBI37', '1') }, 400, /different references/);
      await bad({ variantAnnotationSetId: idOf('ds', 'vas', 'nope'), referenceName: '1' }, 404, /variant annotation set/);
      await bad({ variantAnnotationSetId: set, referenceName: '1', pageToken: 'abc' }, 400, /pageToken/);
      assert.deepEqual((await search({ variantAnnotationSetId: set, referenceName: 'nope' })).json, { variantAnnotations: [] });
      const bytes = fs.readFileSync(damaged);
      bytes.fill(0x55, 100, bytes.length - 100);
      fs.writeFileSync(damaged, bytes);
      const res = await search({ variantAnnotationSetId: idOf('ds', 'vas', 'broken'), referenceName: '1' });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.errorCode, 22);
      assert.match(res.json.message, /variant annotation set 'broken'/);
    });
  });
});
}
