/**
 * Ontologies: `repo add-ontology` / `remove-ontology` on both registry backends, and the in-memory
 * lookups other areas use (names, exact synonyms, subclasses). Expected terms and links are read from
 * the OBO text here, independently of the loader.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { OntologyCache } from '../src/areas/ontologies/cache.js';
import { readOntology } from '../src/areas/ontologies/store.js';
import { backends } from './backends.js';
import { copyFixture, newRegistry, runCli, tempDir } from './helpers.js';

const dir = tempDir();
const obo = copyFixture('compliance/so-xp-simple.obo', dir);

/** The [Term] stanzas of the file, split by hand: id, name and is_a lines. */
const stanzas = fs
  .readFileSync(obo, 'utf8')
  .split(/\n(?=\[)/)
  .filter((s) => s.startsWith('[Term]'))
  .map((s) => ({
    id: /^id: (.*)$/m.exec(s)![1].trim(),
    name: /^name: (.*)$/m.exec(s)![1].trim(),
    parents: [...s.matchAll(/^is_a: (\S+)/gm)].map((m) => m[1]),
  }));

function refused(result: { code: number; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, pattern);
}

for (const backend of backends) {
  describe(`ontologies on ${backend.name}`, { skip: backend.skip }, () => {
    it('loads every term of an OBO file and answers names, ids and subclasses', async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      const r = runCli('repo', 'add-ontology', location, obo);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), `added ontology 'so-xp-simple' with ${stanzas.length} terms`);

      const so = await readOntology(registry, 'so-xp-simple');
      assert.ok(so);
      assert.equal(so.size, stanzas.length);
      const gene = stanzas.find((s) => s.name === 'gene')!;
      assert.deepEqual(so.termByName('gene'), { id: gene.id, name: 'gene' });
      assert.deepEqual(so.termByName('GENE'), { id: gene.id, name: 'gene' });
      assert.deepEqual(so.resolve(gene.id), { id: gene.id, name: 'gene' });
      assert.equal(so.resolve('no such term'), undefined);

      // Subclasses of transcript, by walking is_a links of the text.
      const transcript = stanzas.find((s) => s.name === 'transcript')!.id;
      const expected = new Set([transcript]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const s of stanzas) {
          if (!expected.has(s.id) && s.parents.some((p) => expected.has(p))) {
            expected.add(s.id);
            grew = true;
          }
        }
      }
      assert.ok(expected.size > 10);
      assert.deepEqual(new Set(so.withSubclasses(transcript)), expected);
      const mRNA = stanzas.find((s) => s.name === 'mRNA')!.id;
      assert.ok(so.isA(mRNA, transcript));
      assert.ok(!so.isA(transcript, mRNA));

      const list = runCli('repo', 'list', location);
      assert.match(list.stdout, new RegExp(`so-xp-simple\\s+${stanzas.length}\\s+so-xp/releases/2015-11-24/so-xp.owl`));
    });

    it('refuses a duplicate name, a file that is not OBO and a missing file, leaving the registry as it was', async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      assert.equal(runCli('repo', 'add-ontology', location, obo, '--name', 'SO').code, 0);
      refused(runCli('repo', 'add-ontology', location, obo, '--name', 'SO'), /ontology 'SO' already exists/);
      const notObo = path.join(dir, 'not.obo');
      fs.writeFileSync(notObo, '>chr1\nACGT\n');
      refused(runCli('repo', 'add-ontology', location, notObo), /not\.obo line 1: not an OBO tag-value line/);
      refused(runCli('repo', 'add-ontology', location, path.join(dir, 'missing.obo')), /no such file: .*missing\.obo/);
      const count = async () => Number((await registry.db.selectFrom('ontology_term').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(await count(), stanzas.length);

      const removed = runCli('repo', 'remove-ontology', location, 'SO');
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(await count(), 0);
      refused(runCli('repo', 'remove-ontology', location, 'SO'), /no ontology 'SO'/);
    });

    it('refuses a name no ontology has, listing the names that are registered', async () => {
      const { location } = await newRegistry(await backend.newLocation(dir));
      assert.equal(runCli('repo', 'add-dataset', location, 'ds').code, 0);
      assert.equal(runCli('repo', 'add-referenceset', location, copyFixture('compliance/ref_brca1.fa', dir), '--name', 'hg37').code, 0);
      const gff3 = copyFixture('compliance/brca1_gencodev19.gff3', dir);
      const addFeatures = () => runCli('repo', 'add-featureset', location, 'ds', gff3, '--referenceset', 'hg37', '--ontology', 'so');
      refused(addFeatures(), /no ontology 'so' in .* \(none is registered\); add it with: ga4gh repo add-ontology .* OBO_FILE --name so$/m);
      // The file's name is the ontology's name: so-xp-simple.obo is 'so-xp-simple', not 'so'.
      assert.equal(runCli('repo', 'add-ontology', location, obo).code, 0);
      refused(addFeatures(), /no ontology 'so' in .* \(registered: so-xp-simple\); add it with: ga4gh repo add-ontology .* OBO_FILE --name so$/m);
      refused(runCli('repo', 'remove-ontology', location, 'so'), /no ontology 'so' in .* \(registered: so-xp-simple\)$/m);
      assert.equal(runCli('repo', 'add-ontology', location, obo, '--name', 'so').code, 0);
      const added = addFeatures();
      assert.equal(added.code, 0, added.stderr);
    });

    it('keeps an ontology in memory while it is unchanged, and reads it again once it is loaded again', async () => {
      const { location, registry } = await newRegistry(await backend.newLocation(dir));
      assert.equal(runCli('repo', 'add-ontology', location, obo).code, 0);
      // A registry cache time of 0: every get asks the registry when the ontology was loaded.
      const cache = new OntologyCache(registry, 0);
      const first = await cache.get('so-xp-simple');
      assert.ok(first);
      assert.equal(first.ontology.term(stanzas[0].id)?.name, stanzas[0].name);
      assert.equal((await cache.get('so-xp-simple'))?.ontology, first.ontology, 'the same parse while unchanged');
      // Loaded again from a file with one term fewer: the new one is read.
      const fewer = path.join(fs.mkdtempSync(path.join(dir, 'fewer-')), 'so-xp-simple.obo');
      fs.writeFileSync(fewer, fs.readFileSync(obo, 'utf8').replace(/\n\[Term\]\nid: [^\n]+\n[\s\S]*?(?=\n\[)/, ''));
      assert.equal(runCli('repo', 'remove-ontology', location, 'so-xp-simple').code, 0);
      assert.equal(await cache.get('so-xp-simple'), undefined, 'gone');
      assert.equal(runCli('repo', 'add-ontology', location, fewer).code, 0);
      const second = await cache.get('so-xp-simple');
      assert.ok(second);
      assert.notEqual(second.loadedAt, first.loadedAt);
      assert.equal(second.ontology.size, first.ontology.size - 1);
      await registry.close();
    });
  });
}
