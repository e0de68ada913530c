/**
 * Phenotype association sets over HTTP and the CLI, on both registry backends, loaded from the
 * reference server's and the compliance suite's CGD Turtle file. Expected values are read here from
 * the Turtle with n3's parser used directly (not the loader): which associations a feature has,
 * which have the environment labelled imatinib, which phenotypes carry a quality, and so on.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { Parser } from 'n3';
import { loadPhenotypeSet, unloadPhenotypeSet } from '../src/areas/phenotypes/loader.js';
import { backends } from './backends.js';
import { collectPages, copyFixture, idOf, newRegistry, registryBefore, runCli, runCliAsync, servedAfterMigrating, startTestServer, tempDir, type TestServer } from './helpers.js';
import { UserError } from '../src/user-error.js';
import { readOboTerms } from '../src/areas/ontologies/obo.js';
import { addOntology, removeOntology } from '../src/areas/ontologies/store.js';
import type { Registry } from '../src/registry/registry.js';

const dir = tempDir();
const cgdFolder = copyFixture('compliance/cgd', dir);
const cgdFile = copyFixture('ga4gh-server/datasets/dataset1/phenotypes/cgd/cgd-test.ttl', dir);
const termsObo = copyFixture('phenotypes/g2p-terms.obo', dir);

// ---------------------------------------------------------------------------------------------------
// The Turtle, read independently

const OBO = 'http://purl.obolibrary.org/obo/';
const TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';
const quads = new Parser().parse(fs.readFileSync(path.join(cgdFolder, 'cgd-test.ttl'), 'utf8'));
const values = (s: string, p: string) => [...new Set(quads.filter((q) => q.subject.value === s && q.predicate.value === p).map((q) => q.object.value))];
const one = (s: string, p: string) => values(s, p)[0];
const byteOrder = (a: string, b: string) => (Buffer.compare(Buffer.from(a), Buffer.from(b)));
const sorted = (list: Iterable<string>) => [...new Set(list)].sort(byteOrder);
/** OBO PURL -> CURIE, as the server writes term ids. */
const curie = (iri: string) => iri.replace(/^http:\/\/purl\.obolibrary\.org\/obo\/([A-Za-z]+)_/, '$1:');

const associationIds = sorted(quads.filter((q) => q.predicate.value === TYPE && q.object.value === 'http://purl.org/oban/association').map((q) => q.subject.value));
const subjectOf = (a: string) => one(a, 'http://purl.org/oban/association_has_subject');
const objectOf = (a: string) => one(a, 'http://purl.org/oban/association_has_object');
const environmentsOf = (a: string) => values(a, OBO + 'RO_has_environment');
const phenotypeIds = sorted(associationIds.map(objectOf));
const featureKeys = sorted(associationIds.map(subjectOf));
const qualitiesOf = (p: string) => values(p, OBO + 'BFO_0000159');

const DATASET = 'dataset1';
const SET = 'cgd';
const setId = idOf(DATASET, 'pas', SET);
const featureId = (key: string) => idOf(DATASET, 'fs', SET, key);

function refused(result: { code: number; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, pattern);
}

for (const backend of backends) {
  describe(`phenotype association sets on ${backend.name}`, { skip: backend.skip }, () => {
    let server: TestServer;
    let location: string;
    let registry: Registry;
    const search = (p: string, body: unknown) => server.post(p, body);
    const phenotypes = async (criteria: Record<string, unknown>) =>
      (await collectPages(server, '/phenotypes/search', { phenotypeAssociationSetId: setId, pageSize: 3, ...criteria }, 'phenotypes')).records;
    const associations = async (criteria: Record<string, unknown>) =>
      (await collectPages(server, '/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, pageSize: 4, ...criteria }, 'associations')).records;

    before(async () => {
      ({ location, registry } = await newRegistry(await backend.newLocation(dir)));
      assert.equal(runCli('repo', 'add-dataset', location, DATASET).code, 0);
      const r = runCli('repo', 'add-phenotypeassociationset', location, DATASET, cgdFolder);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout.trim(),
        `added phenotype association set '${SET}' to dataset '${DATASET}': ${associationIds.length} association(s), ${phenotypeIds.length} phenotype(s), ${featureKeys.length} feature(s)`,
      );
      server = await startTestServer(location);
    });

    it('lists the set in its dataset, in both naming forms, with an int64 page size given as a string', async () => {
      const res = await search('/phenotypeassociationsets/search', { datasetId: idOf(DATASET), pageSize: '10' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.phenotypeAssociationSets, [
        { id: setId, name: SET, datasetId: idOf(DATASET), info: { version: [one('http://data.monarchinitiative.org/ttl/cgd.ttl', 'http://www.w3.org/2002/07/owl#versionInfo')] } },
      ]);
      const snake = await search('/phenotypeassociationsets/search', { dataset_id: idOf(DATASET), page_size: 1 });
      assert.deepEqual(Object.keys(snake.json), ['phenotype_association_sets']);
      assert.equal(snake.json.phenotype_association_sets[0].dataset_id, idOf(DATASET));
      assert.equal((await search('/phenotypeassociationsets/search', { datasetId: idOf('nope') })).status, 404);
      const list = await runCliAsync('repo', 'list', location);
      assert.match(list.stdout, new RegExp(`${DATASET}\\s+${SET}\\s+${associationIds.length}\\s+${phenotypeIds.length}\\s+${featureKeys.length}`));
    });

    it('serves every phenotype named by an association, with its type, qualifiers and label, paged', async () => {
      const all = await phenotypes({});
      assert.deepEqual(all.map((p) => p.id), phenotypeIds);
      for (const p of all) {
        assert.equal(p.description, one(p.id, LABEL));
        assert.equal(p.type.termId, curie(one(p.id, TYPE)));
        const expected = qualitiesOf(p.id).filter((q) => !q.startsWith(OBO + 'HP_'));
        assert.deepEqual((p.qualifier ?? []).map((q: any) => q.termId).sort(), expected.map((q) => curie(q).replace('http://ohsu.edu/cgd/', 'CGD:')).sort());
      }
      // The HP quality is the age of onset.
      const withOnset = phenotypeIds.filter((p) => qualitiesOf(p).some((q) => q.startsWith(OBO + 'HP_')));
      assert.equal(withOnset.length, 1);
      assert.deepEqual(all.find((p) => p.id === withOnset[0]).ageOfOnset, { termId: curie(qualitiesOf(withOnset[0]).find((q) => q.startsWith(OBO + 'HP_'))!) });
      assert.deepEqual((await phenotypes({ ageOfOnset: { termId: 'HP:0003581' } })).map((p) => p.id), withOnset);
    });

    it('filters phenotypes by id, type, qualifiers (OR) and description pattern', async () => {
      assert.deepEqual((await phenotypes({ id: phenotypeIds[2] })).map((p) => p.id), [phenotypeIds[2]]);
      assert.deepEqual(await phenotypes({ id: 'no-such-phenotype' }), []);
      const omim = phenotypeIds.filter((p) => one(p, TYPE) === OBO + 'OMIM_606764');
      assert.ok(omim.length > 1);
      assert.deepEqual((await phenotypes({ type: { termId: 'OMIM:606764' } })).map((p) => p.id), omim);
      assert.deepEqual((await phenotypes({ type: { termId: OBO + 'OMIM_606764' } })).map((p) => p.id), omim, 'the full IRI works too');
      const qualified = phenotypeIds.filter((p) => qualitiesOf(p).some((q) => q === OBO + 'PATO_0000396' || q === 'http://ohsu.edu/cgd/resistance'));
      assert.ok(qualified.length >= 2);
      assert.deepEqual((await phenotypes({ qualifiers: [{ termId: 'PATO:0000396' }, { termId: 'CGD:resistance' }] })).map((p) => p.id), qualified);
      const sensitivity = phenotypeIds.filter((p) => /sensitivity/.test(one(p, LABEL)));
      assert.equal(sensitivity.length, 7);
      assert.deepEqual((await phenotypes({ description: '.*sensitivity.*' })).map((p) => p.id), sensitivity);
      const anchored = phenotypeIds.filter((p) => /^(GIST|Thymic) with (response|resistance)/.test(one(p, LABEL)));
      assert.deepEqual((await phenotypes({ description: '^(GIST|Thymic) with (response|resistance)' })).map((p) => p.id), anchored);
      // Criteria of different kinds combine with AND.
      assert.deepEqual(
        (await phenotypes({ type: { termId: 'OMIM:606764' }, description: 'decreased' })).map((p) => p.id),
        omim.filter((p) => one(p, LABEL).includes('decreased')),
      );
    });

    it('answers hostile and malformed description patterns quickly, without stalling other requests', async () => {
      const started = Date.now();
      // Nested repetition that fails at the end: JavaScript's own engine takes ~10 s on the first 32
      // characters of one of these labels (measured while writing this test) and doubles with each
      // further letter; here the text is read once.
      const [hostile, info] = await Promise.all([
        search('/phenotypes/search', { phenotypeAssociationSetId: setId, description: '^(\\w+\\s?)*!' }),
        server.get('/info'),
      ]);
      assert.equal(info.status, 200);
      assert.equal(hostile.status, 200, hostile.text);
      assert.deepEqual(hostile.json.phenotypes.map((p: any) => p.id), phenotypeIds.filter((p) => /^[\w\s]*!/.test(one(p, LABEL))));
      const counted = await search('/phenotypes/search', { phenotypeAssociationSetId: setId, description: '(.*a){4}' });
      assert.equal(counted.status, 200);
      assert.deepEqual(counted.json.phenotypes.map((p: any) => p.id), phenotypeIds.filter((p) => [...one(p, LABEL)].filter((c) => c === 'a').length >= 4));
      assert.ok(counted.json.phenotypes.length > 0);
      assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
      for (const bad of ['(unclosed', 'a**', '\\p{L}', '(?=look)', 'x'.repeat(257), '(a{100}){100}']) {
        const res = await search('/phenotypes/search', { phenotypeAssociationSetId: setId, description: bad });
        assert.equal(res.status, 400, bad);
        assert.match(res.json.message, /field 'description' is not a supported pattern/);
      }
      const evidence = await search('/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, evidence: [{ description: '([a-z' }] });
      assert.equal(evidence.status, 400);
      assert.match(evidence.json.message, /evidence\[0\]\.description/);
    });

    it('serves associations with their feature ids, phenotype, evidence and environments', async () => {
      const all = await associations({});
      assert.deepEqual(all.map((a) => a.id), associationIds);
      for (const a of all) {
        assert.equal(a.phenotypeAssociationSetId, setId);
        assert.deepEqual(a.featureIds, [featureId(subjectOf(a.id))]);
        assert.equal(a.phenotype.id, objectOf(a.id));
        assert.deepEqual(a.evidence.map((e: any) => e.evidenceType.termId), values(a.id, OBO + 'RO_0002558').map(curie));
        assert.deepEqual(a.evidence[0].info.source.sort(), values(a.id, 'http://purl.org/dc/elements/1.1/source').sort());
        assert.deepEqual(
          a.environmentalContexts.map((c: any) => [c.id, c.description]),
          environmentsOf(a.id).map((e) => [e, one(e, LABEL)]),
        );
        // Described by the phenotype's quality (the first that is no age of onset), as the reference
        // server wrote it: CGD's qualities carry no label, so the last part of the IRI.
        const quality = qualitiesOf(objectOf(a.id)).find((q) => !q.startsWith(OBO + 'HP_'))!;
        assert.deepEqual(a.evidence.map((e: any) => e.description), a.evidence.map(() => one(quality, LABEL) ?? quality.replace(/^.*[/#]/, '')));
      }
      assert.ok(all.some((a) => a.evidence[0].description === 'decreased_sensitivity'));
    });

    it('describes the evidence of sets loaded before, as a load now does', async () => {
      // A registry as the migrations before 'evidence described by the phenotype quality' left it, its
      // association records as the loader wrote them then: evidence without description.
      const oldLocation = await backend.newLocation(dir);
      const old = await registryBefore(oldLocation, 'evidence described by the phenotype quality');
      const { addDataset } = await import('../src/areas/datasets/store.js');
      await addDataset(old.registry, DATASET);
      await loadPhenotypeSet(old.registry, DATASET, cgdFolder);
      for (const row of await old.registry.db.selectFrom('phenotype_association').select(['id', 'record']).execute()) {
        const record = JSON.parse(row.record);
        record.evidence = record.evidence.map(({ description, ...rest }: Record<string, unknown>) => rest);
        await old.registry.db.updateTable('phenotype_association').set({ record: JSON.stringify(record) }).where('id', '=', row.id).execute();
      }
      await old.registry.close();
      const migrated = await servedAfterMigrating(oldLocation, ['evidence described by the phenotype quality']);
      const served = (await collectPages(migrated, '/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, pageSize: 100 }, 'associations')).records;
      assert.deepEqual(served, await associations({}));
      assert.ok(served.some((a) => a.evidence[0].description === 'decreased_sensitivity'));
    });

    it('serves the features its associations name as a feature set of the dataset, resolving their ids', async () => {
      const featureSetId = idOf(DATASET, 'fs', SET);
      const sets = (await search('/featuresets/search', { datasetId: idOf(DATASET) })).json.featureSets;
      assert.deepEqual(sets.map((s: any) => s.id), [featureSetId]);
      const listed = (await collectPages(server, '/features/search', { featureSetId, pageSize: 5 }, 'features')).records;
      assert.deepEqual(listed.map((f) => f.id).sort(byteOrder), featureKeys.map(featureId).sort(byteOrder));
      for (const a of await associations({})) {
        for (const id of a.featureIds) {
          const got = await server.get(`/features/${id}`);
          assert.equal(got.status, 200, got.text);
          assert.equal(got.json.featureSetId, featureSetId);
          assert.equal(got.json.name, values(subjectOf(a.id), LABEL)[0]);
          assert.deepEqual(got.json, listed.find((f) => f.id === id));
        }
      }
      // Found by name, as a feature of a GFF3 set is.
      const named = featureKeys.find((k) => values(k, LABEL).length)!;
      const byName = (await search('/features/search', { featureSetId, name: values(named, LABEL)[0] })).json.features;
      assert.deepEqual(byName.map((f: any) => f.id), [featureId(named)]);
    });

    it('filters associations by feature, phenotype and evidence, combined with AND', async () => {
      const feature = 'http://ohsu.edu/cgd/27d2169c';
      const ofFeature = associationIds.filter((a) => subjectOf(a) === feature);
      assert.ok(ofFeature.length >= 1);
      assert.deepEqual((await associations({ featureIds: [featureId(feature)] })).map((a) => a.id), ofFeature);
      assert.deepEqual(await associations({ featureIds: [idOf(DATASET, 'fs', 'other-set', feature)] }), []);
      // Ids that name no feature of this server (a foreign IRI, text that does not decode, an id of
      // another kind) match nothing, as GA4GHclient's own test expects, and leave the others in force.
      const cosmic = 'http://cancer.sanger.ac.uk/cosmic/gene/overview?ln=ERBB2';
      for (const foreign of [cosmic, 'not-an-id', idOf(DATASET, 'vs', SET), '']) {
        const res = await search('/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, featureIds: [foreign] });
        assert.equal(res.status, 200, `${foreign}: ${res.text}`);
        assert.deepEqual(res.json.associations, [], foreign);
      }
      assert.deepEqual((await associations({ featureIds: [cosmic, featureId(feature)] })).map((a) => a.id), ofFeature);

      const phenotype = 'http://ohsu.edu/cgd/87795e43';
      const ofPhenotype = associationIds.filter((a) => objectOf(a) === phenotype);
      assert.ok(ofPhenotype.length > 1);
      assert.deepEqual((await associations({ phenotypeIds: [phenotype] })).map((a) => a.id), ofPhenotype);

      const imatinib = associationIds.filter((a) => environmentsOf(a).some((e) => one(e, LABEL) === 'imatinib'));
      assert.ok(imatinib.length >= 1 && imatinib.length < associationIds.length);
      assert.deepEqual((await associations({ evidence: [{ description: 'imatinib' }] })).map((a) => a.id), imatinib);
      const drug = environmentsOf(imatinib[0])[0].replace('http://www.drugbank.ca/drugs/', '');
      assert.deepEqual(
        (await associations({ evidence: [{ externalIdentifiers: [{ database: 'DrugBank', identifier: drug }] }] })).map((a) => a.id),
        imatinib,
      );
      const sunitinibOrImatinib = associationIds.filter((a) => environmentsOf(a).some((e) => ['imatinib', 'sunitinib'].includes(one(e, LABEL))));
      assert.deepEqual((await associations({ evidence: [{ description: '^imatinib$' }, { description: 'sunitinib' }] })).map((a) => a.id), sunitinibOrImatinib);
      assert.deepEqual((await associations({ evidence: [{ evidenceType: { termId: 'ECO:0000033' } }] })).length, associationIds.length);
      assert.deepEqual(await associations({ evidence: [{ evidenceType: { termId: 'ECO:0000204' } }] }), [], 'no ontology: no subclasses');

      // AND across kinds: the feature's associations that also have this phenotype.
      assert.deepEqual(
        (await associations({ featureIds: [featureId(feature)], phenotypeIds: [phenotype] })).map((a) => a.id),
        ofFeature.filter((a) => objectOf(a) === phenotype),
      );
      assert.deepEqual(
        (await associations({ phenotypeIds: [phenotype], evidence: [{ description: 'imatinib' }] })).map((a) => a.id),
        ofPhenotype.filter((a) => imatinib.includes(a)),
      );
      // The field is spelled evidenceType in both forms; evidence_type is not a field of EvidenceQuery.
      const snake = await search('/featurephenotypeassociations/search', {
        phenotype_association_set_id: setId,
        evidence: [{ evidenceType: { term_id: 'ECO:0000033' } }],
        page_size: 1,
      });
      assert.equal(snake.status, 200, snake.text);
      assert.ok(snake.json.next_page_token);
      assert.equal(snake.json.associations[0].phenotype_association_set_id, setId);
      const wrong = await search('/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, evidence: [{ evidence_type: { termId: 'x' } }] });
      assert.equal(wrong.status, 400);
    });

    it('pages with stateless tokens bound to their query, and answers a missing or unknown set with 404', async () => {
      const { records, pages } = await collectPages(server, '/featurephenotypeassociations/search', { phenotypeAssociationSetId: setId, pageSize: 1 }, 'associations');
      assert.equal(pages, associationIds.length);
      assert.deepEqual(records.map((a) => a.id), associationIds);
      const first = await search('/phenotypes/search', { phenotypeAssociationSetId: setId, pageSize: 2 });
      const token = first.json.nextPageToken;
      const again = await search('/phenotypes/search', { phenotypeAssociationSetId: setId, pageSize: 5, pageToken: token });
      assert.equal(again.json.phenotypes[0].id, phenotypeIds[2]);
      const other = await search('/phenotypes/search', { phenotypeAssociationSetId: setId, description: 'x', pageToken: token });
      assert.equal(other.status, 400);
      assert.equal((await search('/phenotypes/search', {})).status, 404);
      assert.equal((await search('/featurephenotypeassociations/search', {})).status, 404);
      assert.equal((await search('/phenotypes/search', { phenotypeAssociationSetId: idOf(DATASET, 'pas', 'nope') })).status, 404);
      assert.equal((await search('/phenotypes/search', { phenotypeAssociationSetId: idOf(DATASET, 'vs', SET) })).status, 404);
      assert.equal((await search('/phenotypes/search', { phenotypeAssociationSetId: setId, pageSize: -1 })).status, 400);
    });

    it('refuses a file that is not Turtle, an unknown dataset or ontology, a duplicate name and a missing path, leaving the registry as it was', async () => {
      const rows = async () =>
        Promise.all(
          (['phenotype_association_set', 'phenotype', 'phenotype_association', 'phenotype_term_label', 'feature_set', 'feature'] as const).map(async (table) =>
            Number((await registry.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n),
          ),
        );
      const before = await rows();
      const notTurtle = path.join(dir, 'not.ttl');
      fs.writeFileSync(notTurtle, '>chr1\nACGT\n');
      refused(await runCliAsync('repo', 'add-phenotypeassociationset', location, DATASET, notTurtle, '--name', 'x'), /not\.ttl: not valid Turtle: .*line 1/);
      refused(await runCliAsync('repo', 'add-phenotypeassociationset', location, DATASET, cgdFolder), /phenotype association set 'cgd' already exists/);
      // The other refusals through the loader itself (each CLI run costs seconds here).
      const noAssociations = path.join(dir, 'empty.ttl');
      fs.writeFileSync(noAssociations, '<http://a> <http://b> "c" .\n');
      const emptyFolder = path.join(dir, 'no-turtle');
      fs.mkdirSync(emptyFolder, { recursive: true });
      {
        const refusals: Array<[string, string, Record<string, unknown>, RegExp]> = [
          [DATASET, noAssociations, {}, /no OBAN associations/],
          ['nodataset', cgdFile, {}, /no dataset 'nodataset'/],
          [DATASET, path.join(dir, 'missing.ttl'), {}, /no such file or folder/],
          [DATASET, cgdFile, { ontologies: ['nope'] }, /no ontology 'nope'/],
          [DATASET, emptyFolder, {}, /no \.ttl files/],
        ];
        for (const [dataset, file, options, message] of refusals) {
          await assert.rejects(loadPhenotypeSet(registry, dataset, file, options), (e: Error) => e instanceof UserError && message.test(e.message));
        }
      }
      assert.deepEqual(await rows(), before);
      refused(await runCliAsync('repo', 'remove-phenotypeassociationset', location, DATASET, 'nope'), /no phenotype association set 'nope'/);
    });

    it('widens term queries to subclasses with the ontologies a set names, and labels terms from them', async () => {
      const header: Record<string, string> = {};
      await addOntology(registry, 'g2p-terms', termsObo, readOboTerms(termsObo, header), header);
      await loadPhenotypeSet(registry, DATASET, cgdFile, { name: 'with-terms', ontologies: ['g2p-terms'] });
      const withTerms = idOf(DATASET, 'pas', 'with-terms');
      const page = async (p: string, body: Record<string, unknown>, list: string) =>
        (await collectPages(server, p, { phenotypeAssociationSetId: withTerms, ...body }, list)).records;
      const papillary = phenotypeIds.filter((p) => one(p, TYPE) === OBO + 'DOID_3969');
      assert.ok(papillary.length > 0);
      // DOID:1781 is two is_a steps above DOID:3969 in the ontology file.
      assert.deepEqual((await page('/phenotypes/search', { type: { termId: 'DOID:1781' } }, 'phenotypes')).map((p) => p.id), papillary);
      assert.deepEqual((await page('/phenotypes/search', { type: { term: 'thyroid cancer' } }, 'phenotypes')).map((p) => p.id), papillary);
      assert.deepEqual(await phenotypes({ type: { termId: 'DOID:1781' } }), [], 'the set without ontologies has no subclasses');
      const onset = await page('/phenotypes/search', { ageOfOnset: { termId: 'HP:0003674' } }, 'phenotypes');
      assert.equal(onset.length, 1);
      assert.deepEqual(onset[0].ageOfOnset, { termId: 'HP:0003581', term: 'Adult onset' });
      const eco = await page('/featurephenotypeassociations/search', { evidence: [{ evidenceType: { termId: 'ECO:0000204' } }] }, 'associations');
      assert.equal(eco.length, associationIds.length);
      assert.equal(eco[0].evidence[0].evidenceType.term, 'author statement supported by traceable reference');
      await assert.rejects(removeOntology(registry, 'g2p-terms'), /used by registered sets/);
      await unloadPhenotypeSet(registry, DATASET, 'with-terms');
      assert.equal((await server.get(`/featuresets/${idOf(DATASET, 'fs', 'with-terms')}`)).status, 404);
      await removeOntology(registry, 'g2p-terms');
    });
  });
}

describe('the features the associations name', () => {
  it('are handed over with their labels, types and chromosome locations', async () => {
    const { registry } = await newRegistry(dir);
    const { addDataset } = await import('../src/areas/datasets/store.js');
    await addDataset(registry, DATASET);
    const loaded = await loadPhenotypeSet(registry, DATASET, cgdFile);
    assert.deepEqual(loaded.features.map((f) => f.key).sort(byteOrder), featureKeys);
    for (const f of loaded.features) {
      assert.equal(f.name, values(f.key, LABEL)[0]);
      assert.equal(f.featureType?.termId, curie(values(f.key, TYPE).find((t) => t.startsWith(OBO))!));
    }
    // COSM965 lies on chr10 at one FALDO position (1-based): a one-base feature, 0-based half-open.
    const cosmic = 'http://cancer.sanger.ac.uk/cosmic/mutation/overview?id=965';
    const region = values(cosmic, 'http://biohackathon.org/resource/faldo#location').find((r) => r.includes('chr10'))!;
    const begin = Number(one(one(region, 'http://biohackathon.org/resource/faldo#begin'), 'http://biohackathon.org/resource/faldo#position'));
    assert.deepEqual(loaded.features.find((f) => f.key === cosmic)!.location, { referenceName: 'chr10', start: begin - 1, end: begin, strand: undefined });
    // COSM736's chr4 region has six begins: not one location, so none is given.
    assert.equal(loaded.features.find((f) => f.key === 'http://cancer.sanger.ac.uk/cosmic/mutation/overview?id=736')!.location, undefined);
  });
});
