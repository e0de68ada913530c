/**
 * refget 2 under /refget, over a real registry and server: the refget compliance sequences (yeast I and
 * VI, phiX NC_001422.1, circular) registered with the real CLI, every id form, ranges, circular wraps,
 * media types, metadata and service-info. Digests are those of testdata/refget/checksums.json, bases
 * and lengths are read from the FASTA files here; samtools decodes a CRAM through REF_PATH pointed at
 * the server, with no local reference.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { copyFixture, runCli, runCliAsync, startTestServer, tempDir, TESTDATA, tool, type TestServer } from './helpers.js';

const run = promisify(execFile);

/** The sequence of a one-record FASTA, upper-cased, read the simple way. */
const basesOf = (file: string) =>
  fs
    .readFileSync(file, 'latin1')
    .split('\n')
    .filter((line) => !line.startsWith('>'))
    .join('')
    .replace(/\s/g, '')
    .toUpperCase();

interface Expected {
  name: string;
  bases: string;
  md5: string;
  trunc512: string;
  ga4gh: string;
  accession: string;
}

const checksums = JSON.parse(fs.readFileSync(path.join(TESTDATA, 'refget/checksums.json'), 'utf8'));
const names = { I: 'I', VI: 'VI', NC: 'NC_001422.1' } as const;
const sequences: Record<keyof typeof names, Expected> = Object.fromEntries(
  (Object.keys(names) as Array<keyof typeof names>).map((key) => [
    key,
    {
      name: names[key],
      bases: basesOf(path.join(TESTDATA, `refget/${key}.faa`)),
      md5: checksums[key].md5,
      trunc512: checksums[key].sha512,
      ga4gh: checksums[key].ga4gh.replace(/^ga4gh:/, ''),
      accession: checksums[key].insdc.replace(/^insdc:/, ''),
    },
  ]),
) as Record<keyof typeof names, Expected>;
const { I, NC } = sequences;

const dir = tempDir();
const registry = path.join(dir, 'registry.sqlite');
const brca1Fasta = copyFixture('compliance/ref_brca1.fa', dir);
const brca1Cram = path.join(TESTDATA, 'compliance/brca1_HG00096.cram');
let server: TestServer;

/** A GET on its own connection, with `headers`. */
async function get(pathAndQuery: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(server.url + pathAndQuery, { method, headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const cli = (...args: string[]) => {
  const r = runCli(...args);
  assert.equal(r.code, 0, r.stderr);
  return r;
};

before(async () => {
  // One reference set of the three sequences, as the demo registers them.
  const fasta = path.join(dir, 'refget.fa');
  fs.writeFileSync(fasta, ['I', 'VI', 'NC'].map((f) => fs.readFileSync(path.join(TESTDATA, `refget/${f}.faa`), 'latin1')).join(''));
  const accessions = path.join(dir, 'refget.accessions');
  fs.writeFileSync(accessions, Object.values(sequences).map((s) => `${s.name} ${s.accession}\n`).join(''));
  cli('repo', 'init', registry);
  cli('repo', 'add-referenceset', registry, fasta, '--reference-accessions', accessions, '--circular', NC.name);
  cli('repo', 'add-referenceset', registry, brca1Fasta, '--name', 'hg37');
  server = await startTestServer(registry);
});

describe('refget sequences', () => {
  it('answers every id form with the whole sequence, in the refget 2 media type', async () => {
    for (const s of Object.values(sequences)) {
      const ids = [
        s.md5,
        s.md5.toUpperCase(),
        `md5:${s.md5}`,
        s.ga4gh,
        `ga4gh:${s.ga4gh}`,
        s.trunc512,
        s.trunc512.toUpperCase(),
        `trunc512:${s.trunc512}`,
        `insdc:${s.accession}`,
        s.accession,
      ];
      for (const id of ids) {
        const res = await get(`/refget/sequence/${encodeURIComponent(id)}`);
        assert.equal(res.status, 200, `${id}: ${res.text.slice(0, 200)}`);
        assert.equal(res.headers.get('content-type'), 'text/vnd.ga4gh.refget.v2.0.0+plain; charset=us-ascii', id);
        assert.equal(res.headers.get('content-length'), String(s.bases.length), id);
        assert.ok(res.text === s.bases, `${id}: the bases differ from the FASTA's`);
      }
    }
  });

  it('answers 404 for ids that name no sequence', async () => {
    for (const id of ['some1111garbage1111ID', 'a'.repeat(32), `SQ.${'A'.repeat(32)}`, 'insdc:NC_000001.11', 'refseq:NC_001422.1', 'md5:SQ.x']) {
      const res = await get(`/refget/sequence/${encodeURIComponent(id)}`, { accept: 'text/embl' });
      assert.equal(res.status, 404, id);
      assert.deepEqual(JSON.parse(res.text), { error: 'Not Found', message: `no sequence with id '${id}'` });
      assert.equal((await get(`/refget/sequence/${encodeURIComponent(id)}/metadata`)).status, 404, id);
    }
  });

  it('serves start/end ranges with 200, as the compliance suite asks them', async () => {
    const length = I.bases.length;
    const cases: Array<[string, number, number]> = [
      ['start=10&end=10', 10, 10],
      ['start=10&end=20', 10, 20],
      ['start=10&end=11', 10, 11],
      [`start=${length - 10}`, length - 10, length],
      ['end=5', 0, 5],
      [`start=${length - 1}&end=${length}`, length - 1, length],
      ['start=0', 0, length],
      [`end=${length}`, 0, length],
      [`start=1&end=${length}`, 1, length],
      ['end=0', 0, 0],
    ];
    for (const [query, start, end] of cases) {
      const res = await get(`/refget/sequence/${I.md5}?${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.text, I.bases.slice(start, end), query);
      assert.equal(res.headers.get('content-length'), String(end - start), query);
    }
  });

  it('serves one Range header with 206 and its Content-Range, a last byte past the end read as the end', async () => {
    const length = I.bases.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=10-19', 10, 19],
      [`bytes=10-${length - 1}`, 10, length - 1],
      ['bytes=10-999999', 10, length - 1],
      ['bytes=0-0', 0, 0],
      [`bytes=${length - 1}-${length - 1}`, length - 1, length - 1],
    ];
    for (const [range, first, last] of cases) {
      const res = await get(`/refget/sequence/${I.md5}`, { range });
      assert.equal(res.status, 206, range);
      assert.equal(res.text, I.bases.slice(first, last + 1), range);
      assert.equal(res.headers.get('content-range'), `bytes ${first}-${last}/${length}`, range);
    }
  });

  it('wraps the origin of a circular sequence when start is after end, and refuses it for a linear one', async () => {
    const length = NC.bases.length;
    for (const [start, end] of [
      [length - 12, 5],
      [length - 12, 0],
      [length - 6, 25],
    ]) {
      const res = await get(`/refget/sequence/${NC.md5}?start=${start}&end=${end}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, NC.bases.slice(start) + NC.bases.slice(0, end));
    }
    const linear = await get(`/refget/sequence/${I.md5}?start=220218&end=671`);
    assert.equal(linear.status, 416);
    assert.match(JSON.parse(linear.text).message, /not circular/);
    // A range across the origin is for start and end only, circular or not.
    assert.equal((await get(`/refget/sequence/${NC.md5}`, { range: `bytes=${length - 100}-56` })).status, 416);
  });

  it('answers bad ranges with 400 or 416, naming the parameter or header', async () => {
    const length = NC.bases.length;
    const queries: Array<[string, number, RegExp]> = [
      ['start=abc&end=20', 400, /'start'/],
      ['start=-10&end=-29', 400, /'start'/],
      ['start=0&end=abc', 400, /'end'/],
      ['start=1&start=2', 400, /'start' is given 2 times/],
      [`start=67&end=${length + 1}`, 416, /'end'/],
      [`start=${length}&end=${length}`, 416, /'start'/],
      [`start=${length}&end=5`, 416, /'start'/],
    ];
    for (const [query, status, message] of queries) {
      const res = await get(`/refget/sequence/${NC.md5}?${query}`);
      assert.equal(res.status, status, query);
      assert.match(JSON.parse(res.text).message, message, query);
    }
    const ranges: Array<[string, number]> = [
      ['units=20-30', 400],
      ['bytes=ab-19', 400],
      ['bytes=-10--19', 400],
      ['bytes=10--19', 400],
      ['bytes=-10-', 400],
      ['bytes==10-19', 400],
      ['bytes=0-1,5-6', 400],
      ['bytes=5200-19', 416],
      ['bytes=59-50', 416],
      [`bytes=${length}-${length + 1}`, 400],
      ['bytes=9999-99999', 400],
    ];
    for (const [range, status] of ranges) {
      const res = await get(`/refget/sequence/${NC.md5}`, { range });
      assert.equal(res.status, status, range);
      assert.match(JSON.parse(res.text).message, /header 'Range'/, range);
    }
    const both = await get(`/refget/sequence/${NC.md5}?start=0&end=10`, { range: 'bytes=0-9' });
    assert.equal(both.status, 400);
    assert.match(JSON.parse(both.text).message, /either header 'Range' or query parameters 'start' and 'end'/);
  });

  it('negotiates the media type: refget 1 and 2 types, text/plain, */*, q-values; anything else is 406', async () => {
    const url = `/refget/sequence/${I.md5}?start=0&end=10`;
    const answered: Array<[string, string]> = [
      ['*/*', 'text/vnd.ga4gh.refget.v2.0.0+plain'],
      ['text/plain', 'text/vnd.ga4gh.refget.v2.0.0+plain'],
      ['text/*', 'text/vnd.ga4gh.refget.v2.0.0+plain'],
      ['text/vnd.ga4gh.refget.v2.0.0+plain; charset=us-ascii', 'text/vnd.ga4gh.refget.v2.0.0+plain'],
      ['text/vnd.ga4gh.refget.v1.0.0+plain', 'text/vnd.ga4gh.refget.v1.0.0+plain'],
      ['text/embl, text/vnd.ga4gh.refget.v1.0.0+plain;q=0.5', 'text/vnd.ga4gh.refget.v1.0.0+plain'],
      ['text/plain;q=0.2, text/vnd.ga4gh.refget.v1.0.0+plain;q=0.9', 'text/vnd.ga4gh.refget.v1.0.0+plain'],
    ];
    for (const [accept, type] of answered) {
      const res = await get(url, { accept });
      assert.equal(res.status, 200, accept);
      assert.equal(res.headers.get('content-type'), `${type}; charset=us-ascii`, accept);
      assert.equal(res.text, I.bases.slice(0, 10), accept);
    }
    for (const accept of ['text/embl', 'application/json', 'text/plain;q=0, */*;q=0']) {
      const res = await get(url, { accept });
      assert.equal(res.status, 406, accept);
      assert.equal(JSON.parse(res.text).error, 'Not Acceptable');
    }
    assert.equal((await get(`/refget/sequence/${I.md5}/metadata`, { accept: 'text/plain' })).status, 406);
    assert.equal((await get('/refget/sequence/service-info', { accept: 'text/plain' })).status, 406);
  });

  it('answers HEAD with the headers of the GET and no body', async () => {
    const res = await get(`/refget/sequence/${NC.md5}`, {}, 'HEAD');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(NC.bases.length));
    assert.equal(res.text, '');
  });
});

describe('refget metadata and service-info', () => {
  it('gives each sequence its digests, its length and its accession as an insdc alias, by any id', async () => {
    for (const s of Object.values(sequences)) {
      for (const id of [s.md5, s.ga4gh, `insdc:${s.accession}`]) {
        const res = await get(`/refget/sequence/${encodeURIComponent(id)}/metadata`);
        assert.equal(res.status, 200, id);
        assert.equal(res.headers.get('content-type'), 'application/vnd.ga4gh.refget.v2.0.0+json; charset=us-ascii');
        assert.deepEqual(JSON.parse(res.text), {
          metadata: {
            id: s.md5,
            md5: s.md5,
            ga4gh: s.ga4gh,
            trunc512: s.trunc512,
            length: s.bases.length,
            aliases: [{ alias: s.accession, naming_authority: 'insdc' }],
          },
        });
      }
    }
  });

  it('describes the service: service-info 1.0 with the refget capabilities', async () => {
    for (const accept of [undefined, 'application/json', 'application/vnd.ga4gh.refget.v2.0.0+json']) {
      const res = await get('/refget/sequence/service-info', accept ? { accept } : {});
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/vnd.ga4gh.refget.v2.0.0+json; charset=us-ascii');
      const info = JSON.parse(res.text);
      assert.deepEqual(info.type, { group: 'org.ga4gh', artifact: 'refget', version: '2.0.0' });
      for (const field of ['id', 'name', 'version']) assert.equal(typeof info[field], 'string', field);
      assert.equal(typeof info.organization.name, 'string');
      assert.equal(typeof info.organization.url, 'string');
      assert.deepEqual(info.refget, { circular_supported: true, subsequence_limit: null, algorithms: ['md5', 'ga4gh', 'trunc512'], identifier_types: ['insdc'] });
    }
  });

  it('leaves the 0.6.0a10 routes as they were: the reference of a refget sequence, and no refget path in the API document', async () => {
    const res = await server.post('/references/search', { md5checksum: NC.md5 });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.json.references.map((r: any) => [r.name, r.length, r.sourceAccessions]),
      [[NC.name, NC.bases.length, [NC.accession]]],
    );
    const document = (await server.get('/openapi.json')).json;
    assert.deepEqual(Object.keys(document.paths).filter((p) => p.includes('refget')), []);
  });
});

describe('CRAM decoding through refget', () => {
  it('lets samtools decode a CRAM with REF_PATH pointed at /refget and no local reference', async () => {
    const cache = tempDir('ga4gh-refcache-');
    const md5 = /M5:([0-9a-f]{32})/.exec(tool('samtools', 'view', '-H', brca1Cram).toString())![1];
    // The CRAM's header names a reference file (UR) that does not exist: only REF_PATH can give the bases.
    const ur = /UR:(\S+)/.exec(tool('samtools', 'view', '-H', brca1Cram).toString())?.[1];
    assert.ok(ur === undefined || !fs.existsSync(ur.replace(/^file:\/\//, '')), ur);
    const env = { ...process.env, REF_PATH: `${server.url}/refget/sequence/%s`, REF_CACHE: path.join(cache, '%s') };
    const { stdout } = await run('samtools', ['view', brca1Cram], { env, maxBuffer: 64 * 1024 * 1024 });
    const expected = (await run('samtools', ['view', '-T', brca1Fasta, brca1Cram], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    assert.ok(stdout.length > 0 && stdout === expected, 'samtools printed other records through refget than with the FASTA');
    // htslib kept what the server sent: the reference's bases, as the FASTA holds them.
    assert.equal(fs.readFileSync(path.join(cache, md5), 'latin1'), basesOf(brca1Fasta));
  });
});

describe('repo migrate', () => {
  it('computes the digests of the references of a registry made before there were any, reading the FASTA files', async () => {
    const old = path.join(dir, 'old.sqlite');
    const folder = path.join(dir, 'old');
    fs.mkdirSync(folder);
    const fasta = path.join(folder, 'refget.fa');
    const gone = path.join(folder, 'gone.fa');
    fs.copyFileSync(path.join(dir, 'refget.fa'), fasta);
    fs.copyFileSync(path.join(TESTDATA, 'refget/I.faa'), gone);
    for (const args of [['init', old], ['add-referenceset', old, fasta, '--name', 'yeast'], ['add-referenceset', old, gone]]) {
      const r = await runCliAsync('repo', ...args);
      assert.equal(r.code, 0, r.stderr);
    }
    fs.rmSync(gone);
    // Undo the digests' migration, as if the registry came from the version before.
    const db = new BetterSqlite3(old);
    db.exec(`DROP INDEX reference_sha512t24u; ALTER TABLE reference DROP COLUMN sha512t24u; ALTER TABLE reference DROP COLUMN circular;
      ALTER TABLE reference_set DROP COLUMN dictionary_path; DELETE FROM ga4gh_schema_version WHERE version = 8;`);
    db.close();

    const migrated = await runCliAsync('repo', 'migrate', old);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied 8 refget digests/);
    // A FASTA that is gone leaves its references without digests, and says so; the registry is migrated all the same.
    assert.match(migrated.stdout, /warning: reference set 'gone': no refget digests, its FASTA cannot be read/);

    const migratedServer = await startTestServer(old);
    for (const s of Object.values(sequences)) {
      const res = await fetch(`${migratedServer.url}/refget/sequence/${s.ga4gh}/metadata`);
      assert.equal(res.status, 200, s.name);
      const { metadata } = await res.json();
      assert.deepEqual([metadata.md5, metadata.ga4gh, metadata.trunc512], [s.md5, s.ga4gh, s.trunc512]);
    }
    // Its bases come from the set whose FASTA is there.
    const bases = await fetch(`${migratedServer.url}/refget/sequence/${I.md5}?start=0&end=20`);
    assert.equal(await bases.text(), I.bases.slice(0, 20));
    await migratedServer.close();
  });
});
