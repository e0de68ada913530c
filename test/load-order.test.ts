/**
 * The order of loading does not matter: annotation effects and feature types get the terms of an
 * ontology added after them, in every registered ontology, in registries made by an older version
 * too; read groups and call sets are linked to the biosample their sample names, registered before
 * or after them. Everything is registered through the real CLI and read back from a real server;
 * expected terms come from the OBO text, effect and type names from the VCF and GFF3 text, and sample
 * names from the BAM headers as `samtools view -H` prints them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { oboSubclasses, readGffLines } from './annotation-fixture.js';
import { backends, type Backend } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry as openNewRegistry, runCliAsync, startTestServer, tempDir, tool, type TestServer } from './helpers.js';

const dir = tempDir();
const V = 'ga4gh-server/datasets/dataset1/variants';
const files = {
  obo: copyFixture('compliance/so-xp-simple.obo', dir),
  ncbi37: path.join(copyFixture('ga4gh-server/referenceSets', dir), 'NCBI37.fa.gz'),
  brca1Fasta: copyFixture('compliance/ref_brca1.fa', dir),
  gff3: copyFixture('compliance/brca1_gencodev19.gff3', dir),
  or4f: copyFixture(`${V}/OR4F_annotation`, dir),
  wash7p: copyFixture(`${V}/WASH7P_annotation`, dir),
  vcf: copyFixture('compliance/brca1_1kgPhase3_variants.vcf', dir),
  bam96: copyFixture('compliance/brca1_HG00096.bam', dir),
  bam99: copyFixture('compliance/brca1_HG00099.bam', dir),
  biosample96: copyFixture('compliance/biosample_HG00096.json', dir),
  biosample99: copyFixture('compliance/biosample_HG00099.json', dir),
};
for (const bam of [files.bam96, files.bam99]) copyFixture(`compliance/${path.basename(bam)}.bai`, dir);
/** Each read group's sample name (`@RG ... SM:`), by read group id. */
const samplesOf = (bam: string) =>
  new Map(
    tool('samtools', 'view', '-H', bam)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('@RG\t'))
      .map((l) => [/\tID:([^\t]+)/.exec(l)![1], /\tSM:([^\t]+)/.exec(l)![1]] as const),
  );
const samples = { bam96: samplesOf(files.bam96), bam99: samplesOf(files.bam99) };
assert.deepEqual([...new Set(samples.bam96.values())], ['HG00096']);
assert.deepEqual([...new Set(samples.bam99.values())], ['HG00099']);
const so = oboSubclasses(files.obo);
const gffLines = readGffLines(files.gff3);

/** The effect names of each record of a SnpEff VCF, by the `Annotation` column its header lists. */
function effectNamesOf(folder: string): string[][][] {
  const vcf = path.join(folder, fs.readdirSync(folder).find((f) => f.endsWith('.vcf.gz'))!);
  const lines = zlib.gunzipSync(fs.readFileSync(vcf)).toString('utf8').split('\n').filter(Boolean);
  const description = lines.find((l) => l.startsWith('##INFO=<ID=ANN,'))!;
  const column = description.split("'")[1].split('|').map((c) => c.trim()).indexOf('Annotation');
  return lines
    .filter((l) => !l.startsWith('#'))
    .map((l) => {
      const ann = l.split('\t')[7].split(';').find((i) => i.startsWith('ANN='))!;
      return ann.slice(4).split(',').map((entry) => entry.split('|')[column].split('&'));
    });
}
const effects = { or4f: effectNamesOf(files.or4f), wash7p: effectNamesOf(files.wash7p) };

/**
 * A second ontology: a term for the one WASH7P effect name the Sequence Ontology file lacks, and a
 * term named like an SO term (`exon`) that must not take its place.
 */
const OTHER_EXON = 'OTHER:0000001';
const OTHER_NON_CODING = 'OTHER:0000002';
const otherObo = path.join(dir, 'other.obo');
fs.writeFileSync(
  otherObo,
  `format-version: 1.2\n\n[Term]\nid: ${OTHER_EXON}\nname: exon\n\n[Term]\nid: ${OTHER_NON_CODING}\nname: non_coding_exon_variant\n`,
);
const soNames = new Set(so.byName.keys());
assert.deepEqual([...new Set(effects.wash7p.flat(2))].filter((n) => !soNames.has(n)), ['non_coding_exon_variant'], 'the one name SO lacks');
assert.deepEqual([...new Set(effects.or4f.flat(2))].filter((n) => !soNames.has(n)), [], 'SO knows every OR4F effect');

const ok = async (...args: string[]) => {
  const r = await runCliAsync(...args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r;
};

/** A registry with a dataset and the two reference sets the files need (what is under test is registered through the CLI). */
async function newRegistry(backend: Backend): Promise<string> {
  const { location, registry } = await openNewRegistry(await backend.newLocation(dir));
  await addDataset(registry, 'ds');
  await loadReferenceSet(registry, files.ncbi37, {});
  await loadReferenceSet(registry, files.brca1Fasta, { name: 'hg37' });
  return location;
}
const addVcf = (location: string, folder: string) => ok('repo', 'add-variantset', location, 'ds', folder, '--referenceset', 'NCBI37', '--allow-missing-contigs');
const addGff3 = (location: string) => ok('repo', 'add-featureset', location, 'ds', files.gff3, '--referenceset', 'hg37', '--name', 'brca1');

/** Every annotation of a set on reference 1, optionally filtered by effects. */
const annotations = async (server: TestServer, set: string, filter?: object[]) =>
  (await collectPages(server, '/variantannotations/search', { variantAnnotationSetId: idOf('ds', 'vas', set), referenceName: '1', effects: filter, pageSize: 40 }, 'variantAnnotations')).records;
/** Every feature of the GFF3's set, optionally of some types. */
const features = async (server: TestServer, featureTypes?: string[]) =>
  (await collectPages(server, '/features/search', { featureSetId: idOf('ds', 'fs', 'brca1'), referenceName: 'ref_brca1', start: 0, end: 200_000, featureTypes, pageSize: 300 }, 'features')).records;

/** Each annotation's effects as [termId or '', name] pairs, entry by entry. */
const servedEffects = (records: any[]) => records.map((a) => a.transcriptEffects.map((t: any) => t.effects.map((e: any) => [e.termId ?? '', e.term])));
/** What the data says they are once the ontologies are in: `termOf` gives a name's id. */
const expectedEffects = (names: string[][][], termOf: (name: string) => string) => names.map((record) => record.map((entry) => entry.map((n) => [termOf(n), n])));
const bySo = (name: string) => so.byName.get(name)!;

/**
 * The same registered in both orders: `piece` then `data` in `first`; `data` alone in `later`, whose
 * server runs throughout and keeps nothing from the registry (cache time 0), so the test registers
 * the missing piece there while it serves.
 */
async function bothOrders(backend: Backend, piece: (location: string) => Promise<unknown>, data: (location: string) => Promise<unknown>) {
  const first = await newRegistry(backend);
  await piece(first);
  await data(first);
  const later = await newRegistry(backend);
  await data(later);
  return { first, later, server: await startTestServer(later, { registryCacheMs: 0 }) };
}

/**
 * What `repo list --json` says is unresolved, set by set ([set, what, names]), and the lines of
 * `repo check` and of the human `repo list` that name a set (`repo check` succeeds all the same).
 */
async function unresolvedIn(location: string) {
  const [json, check, list] = await Promise.all([ok('repo', 'list', location, '--json'), ok('repo', 'check', location), ok('repo', 'list', location)]);
  const named = (text: string, prefix: string) => (set: string) => text.split('\n').filter((l) => l.startsWith(prefix + set));
  return {
    listed: (JSON.parse(json.stdout).unresolved as any[]).map((u) => [u.set, u.what, u.names]),
    checkLines: named(check.stdout, 'unresolved: '),
    listLines: named(list.stdout, '  '),
  };
}
const unresolvedListed = async (location: string) => (JSON.parse((await ok('repo', 'list', location, '--json')).stdout).unresolved as any[]).map((u) => [u.set, u.what, u.names]);

for (const backend of backends) {
  describe(`the order of loading (${backend.name})`, { skip: backend.skip }, () => {
    it('matches annotation effects and feature types to the terms of an ontology added after them, when the query runs', async () => {
      const addSo = (location: string) => ok('repo', 'add-ontology', location, files.obo, '--name', 'so');
      const { first, later, server } = await bothOrders(backend, addSo, async (location) => {
        await addVcf(location, files.or4f);
        await addGff3(location);
      });

      // Before the ontology: names only, and term filters find nothing.
      assert.deepEqual(servedEffects(await annotations(server, 'OR4F_annotation')), expectedEffects(effects.or4f, () => ''));
      assert.ok((await features(server)).every((f) => f.featureType.termId === undefined));
      const intergenic = bySo('intergenic_region');
      assert.deepEqual(await annotations(server, 'OR4F_annotation', [{ termId: intergenic }]), []);
      assert.deepEqual(await features(server, [bySo('exon')]), []);
      // repo list and repo check say so: every type of the GFF3, and the annotation set as a whole
      // (its effect names are in the VCF, read on each request).
      const types = [...new Set(gffLines.map((l) => l.type))].sort();
      const annotationSet = "variant annotation set 'OR4F_annotation' of dataset 'ds'";
      const featureSet = "feature set 'brca1' of dataset 'ds'";
      const before = await unresolvedIn(later);
      assert.deepEqual(before.listed, [
        [annotationSet, 'effects without ontology terms', []],
        [featureSet, 'feature types without an ontology term', types],
      ]);
      for (const set of [annotationSet, featureSet]) {
        assert.equal(before.listLines(set).length, 1, set);
        assert.equal(before.checkLines(set).length, 1, set);
        assert.match(before.checkLines(set)[0], /no ontology is registered; add one \(the Sequence Ontology\) with: ga4gh repo add-ontology$/);
      }
      assert.match(before.checkLines(featureSet)[0], new RegExp(`: feature types without an ontology term: ${types.join(', ')};`));
      assert.deepEqual(await unresolvedListed(first), []);

      await addSo(later);
      const after = await unresolvedIn(later);
      assert.deepEqual(after.listed, []);
      for (const set of [annotationSet, featureSet]) assert.deepEqual([after.checkLines(set), after.listLines(set)], [[], []]);
      const reference = await startTestServer(first);
      for (const served of [server, reference]) {
        const all = await annotations(served, 'OR4F_annotation');
        assert.deepEqual(servedEffects(all), expectedEffects(effects.or4f, bySo));
        // The effects filter by term id, with its subclasses.
        const expected = effects.or4f.filter((record) => record.some((entry) => entry.some((n) => so.below(intergenic).has(bySo(n)))));
        assert.ok(expected.length > 0 && expected.length < effects.or4f.length);
        assert.equal((await annotations(served, 'OR4F_annotation', [{ termId: intergenic }])).length, expected.length);

        const typed = await features(served);
        assert.equal(typed.length, new Set(gffLines.map((l) => l.attrs.ID[0])).size);
        for (const f of typed) assert.deepEqual(f.featureType, { termId: bySo(f.featureType.term), term: f.featureType.term });
        // featureTypes by id and by name, widened to subclasses: transcript_region holds exons, UTRs, CDS, ...
        const region = so.below(bySo('transcript_region'));
        const ids = (lines: typeof gffLines) => new Set(lines.map((l) => l.attrs.ID[0]));
        assert.equal((await features(served, ['transcript_region'])).length, ids(gffLines.filter((l) => region.has(bySo(l.type)))).size);
        assert.equal((await features(served, [bySo('exon')])).length, ids(gffLines.filter((l) => l.type === 'exon')).size);
      }
      // Both orders serve the same records.
      assert.deepEqual(await annotations(server, 'OR4F_annotation'), await annotations(reference, 'OR4F_annotation'));
      assert.deepEqual(await features(server), await features(reference));
      assert.deepEqual(
        (await server.get(`/variantannotationsets/${idOf('ds', 'vas', 'OR4F_annotation')}`)).json,
        (await reference.get(`/variantannotationsets/${idOf('ds', 'vas', 'OR4F_annotation')}`)).json,
      );
    });

    it('matches in every registered ontology, the first registered that knows a name giving its term', async () => {
      const location = await newRegistry(backend);
      await addVcf(location, files.wash7p);
      await addGff3(location);
      await ok('repo', 'add-ontology', location, files.obo, '--name', 'so');
      await ok('repo', 'add-ontology', location, otherObo, '--name', 'aaa-other');
      // Loaded after both: no longer refused, and matched the same way.
      const after = await ok('repo', 'add-variantset', location, 'ds', files.wash7p, '--referenceset', 'NCBI37', '--allow-missing-contigs', '--name', 'after');
      assert.match(after.stdout, /note: effects are matched in every registered ontology \(aaa-other, so\)/);
      const server = await startTestServer(location);
      const termOf = (name: string) => (name === 'non_coding_exon_variant' ? OTHER_NON_CODING : bySo(name));
      for (const set of ['WASH7P_annotation', 'after']) {
        assert.deepEqual(servedEffects(await annotations(server, set)), expectedEffects(effects.wash7p, termOf), set);
        const expected = effects.wash7p.filter((record) => record.some((entry) => entry.includes('non_coding_exon_variant')));
        assert.equal((await annotations(server, set, [{ termId: OTHER_NON_CODING }])).length, expected.length);
        assert.deepEqual((await server.get(`/variantannotationsets/${idOf('ds', 'vas', set)}`)).json.attributes.attr.ontology, {
          values: [{ stringValue: 'so' }, { stringValue: 'aaa-other' }],
        });
      }
      // `exon` is a term of both: the Sequence Ontology, registered first, keeps it.
      const exons = await features(server, ['exon']);
      assert.ok(exons.length > 0);
      for (const f of exons) assert.deepEqual(f.featureType, { termId: bySo('exon'), term: 'exon' });
      assert.deepEqual(await features(server, [OTHER_EXON]), []);
    });

    it('names the effects no term matches in repo check --deep, and only there', async () => {
      const location = await newRegistry(backend);
      await addVcf(location, files.wash7p);
      // Two ontologies of the file's effect names: the first half in one, the rest in the other.
      const names = [...new Set(effects.wash7p.flat(2))].sort();
      const half = Math.ceil(names.length / 2);
      const oboOf = (name: string, terms: string[]) => {
        const file = path.join(dir, `${name}.obo`);
        fs.writeFileSync(file, 'format-version: 1.2\n' + terms.map((term) => `\n[Term]\nid: TEST:${names.indexOf(term)}\nname: ${term}\n`).join(''));
        return file;
      };
      const firstHalf = oboOf('first-half', names.slice(0, half));
      const secondHalf = oboOf('second-half', names.slice(half));
      const set = (name: string) => `variant annotation set '${name}' of dataset 'ds'`;
      const deepLines = async () => (await ok('repo', 'check', location, '--deep')).stdout.split('\n').filter((l) => l.startsWith('unresolved: '));
      const line = (setName: string, missing: string[], fix: string) => `unresolved: ${set(setName)}: effects without ontology terms: ${missing.join(', ')}; ${fix}`;

      assert.deepEqual(await deepLines(), [line('WASH7P_annotation', names, 'no ontology is registered; add one (the Sequence Ontology) with: ga4gh repo add-ontology')]);
      await ok('repo', 'add-ontology', location, firstHalf, '--name', 'first-half');
      // A set that keeps its own ontology is matched in that one only.
      await ok('repo', 'add-variantset', location, 'ds', files.wash7p, '--referenceset', 'NCBI37', '--allow-missing-contigs', '--name', 'own', '--ontology', 'first-half');
      const missing = names.slice(half);
      assert.ok(missing.length > 0 && half > 0);
      assert.deepEqual(await deepLines(), [
        line('WASH7P_annotation', missing, 'no registered ontology has them; add one that does with: ga4gh repo add-ontology'),
        line('own', missing, "its ontology 'first-half' has no such terms"),
      ]);
      // Not without --deep, nor in repo list: they read no records.
      const plain = await unresolvedIn(location);
      assert.deepEqual(plain.listed, []);
      for (const name of ['WASH7P_annotation', 'own']) assert.deepEqual([plain.checkLines(set(name)), plain.listLines(set(name))], [[], []]);

      await ok('repo', 'add-ontology', location, secondHalf, '--name', 'second-half');
      assert.deepEqual(await deepLines(), [line('own', missing, "its ontology 'first-half' has no such terms")]);
    });

    it('matches the feature types of a registry made by an older version once it is migrated', async () => {
      const location = await newRegistry(backend);
      await addGff3(location);
      // As the version before the list of each set's type names without a term left it.
      const undo = ['ALTER TABLE feature_set DROP COLUMN unmatched_types', 'DELETE FROM ga4gh_schema_version WHERE version = 34'];
      if (backend.name === 'sqlite') {
        const db = new BetterSqlite3(location);
        for (const statement of undo) db.exec(statement);
        db.close();
      } else {
        const client = new pg.Client({ connectionString: location });
        await client.connect();
        for (const statement of undo) await client.query(statement);
        await client.end();
      }
      const refused = await runCliAsync('serve', location, '--port', '0');
      assert.match(refused.stderr, /needs 1 schema migration.*repo migrate/);
      assert.match((await ok('repo', 'migrate', location)).stdout, /applied 34 feature types without a term/);
      // The type names were read from the stored features: the list names them all.
      assert.deepEqual(await unresolvedListed(location), [["feature set 'brca1' of dataset 'ds'", 'feature types without an ontology term', [...new Set(gffLines.map((l) => l.type))].sort()]]);
      await ok('repo', 'add-ontology', location, files.obo, '--name', 'so');
      assert.deepEqual(await unresolvedListed(location), []);
      const server = await startTestServer(location);
      const exons = await features(server, ['exon']);
      assert.equal(exons.length, new Set(gffLines.filter((l) => l.type === 'exon').map((l) => l.attrs.ID[0])).size);
      for (const f of await features(server)) assert.equal(f.featureType.termId, bySo(f.featureType.term));
    });

    it('links read groups and call sets to the biosample their sample names, registered before or after them; --biosample-id wins', async () => {
      const addBam = (location: string, bam: string, ...extra: string[]) => ok('repo', 'add-readgroupset', location, 'ds', bam, '--referenceset', 'hg37', ...extra);
      const addVariants = (location: string) => ok('repo', 'add-variantset', location, 'ds', files.vcf, '--referenceset', 'hg37', '--name', 'calls');
      const addBiosample96 = (location: string) => ok('repo', 'add-biosample', location, 'ds', files.biosample96);
      const { first, later, server } = await bothOrders(backend, addBiosample96, async (location) => {
        await addBam(location, files.bam96);
        await addVariants(location);
      });
      const setOf = async (served: TestServer, name: string) => (await served.get(`/readgroupsets/${idOf('ds', 'rgs', name)}`)).json;
      const setsOfBiosample = async (served: TestServer, biosample: string) =>
        (await served.post('/readgroupsets/search', { datasetId: idOf('ds'), biosampleId: idOf('ds', 'bs', biosample) })).json.readGroupSets.map((s: any) => s.name);
      const callSets = async (served: TestServer, biosample?: string) =>
        (await served.post('/callsets/search', { variantSetId: idOf('ds', 'vs', 'calls'), biosampleId: biosample && idOf('ds', 'bs', biosample) })).json.callSets;

      assert.ok((await setOf(server, 'brca1_HG00096')).readGroups.every((g: any) => g.biosampleId === undefined));
      assert.deepEqual(await setsOfBiosample(server, 'HG00096'), []);
      assert.deepEqual(await callSets(server, 'HG00096'), []);
      // repo list and repo check name the sample names no biosample has.
      const readGroupSet = "read group set 'brca1_HG00096' of dataset 'ds'";
      const variantSet = "variant set 'calls' of dataset 'ds'";
      const vcfSamples = fs.readFileSync(files.vcf, 'utf8').split('\n').find((l) => l.startsWith('#CHROM'))!.split('\t').slice(9);
      const unlinked = (...names: string[]) => [
        [variantSet, 'call set samples that name no biosample', vcfSamples.filter((n) => !names.includes(n))],
        ...(names.includes('HG00096') ? [] : [[readGroupSet, 'read group samples (@RG SM) that name no biosample', [...new Set(samples.bam96.values())]]]),
      ];
      const before = await unresolvedIn(later);
      assert.deepEqual(before.listed, unlinked());
      for (const set of [readGroupSet, variantSet]) {
        assert.equal(before.listLines(set).length, 1, set);
        assert.equal(before.checkLines(set).length, 1, set);
        assert.match(before.checkLines(set)[0], /HG00096.*; add biosamples of these names to dataset 'ds' with: ga4gh repo add-biosample/);
      }
      await addBiosample96(later);
      const after = await unresolvedIn(later);
      assert.deepEqual(after.listed, unlinked('HG00096'));
      assert.deepEqual([after.checkLines(readGroupSet), after.listLines(readGroupSet)], [[], []]);

      const reference = await startTestServer(first);
      for (const served of [server, reference]) {
        const set = await setOf(served, 'brca1_HG00096');
        assert.deepEqual(set.readGroups.map((g: any) => [g.name, g.sampleName, g.biosampleId]), [...samples.bam96].map(([id, sm]) => [id, sm, idOf('ds', 'bs', sm)]));
        for (const group of set.readGroups) assert.deepEqual((await served.get(`/readgroups/${group.id}`)).json, group);
        assert.deepEqual(await setsOfBiosample(served, 'HG00096'), ['brca1_HG00096']);
        assert.deepEqual((await callSets(served, 'HG00096')).map((c: any) => [c.name, c.biosampleId]), [['HG00096', idOf('ds', 'bs', 'HG00096')]]);
      }
      // The same records but for the registration times.
      const untimed = (set: any) => ({ ...set, readGroups: set.readGroups.map((g: any) => ({ ...g, created: undefined, updated: undefined })) });
      assert.deepEqual(untimed(await setOf(server, 'brca1_HG00096')), untimed(await setOf(reference, 'brca1_HG00096')));
      assert.deepEqual(await callSets(server), await callSets(reference));

      // --biosample-id names the biosample of every read group of the set, whatever their SM says.
      await ok('repo', 'add-biosample', later, 'ds', files.biosample99);
      await addBam(later, files.bam99, '--biosample-id', 'HG00096');
      const chosen = await setOf(server, 'brca1_HG00099');
      assert.deepEqual(chosen.readGroups.map((g: any) => [g.sampleName, g.biosampleId]), [...samples.bam99.values()].map((sm) => [sm, idOf('ds', 'bs', 'HG00096')]));
      assert.deepEqual(await setsOfBiosample(server, 'HG00096'), ['brca1_HG00096', 'brca1_HG00099']);
      assert.deepEqual(await setsOfBiosample(server, 'HG00099'), []);
      assert.deepEqual(await unresolvedListed(later), unlinked('HG00096', 'HG00099'), 'a set with --biosample-id is never unresolved');
    });
  });
}
