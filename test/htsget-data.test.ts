/**
 * The data endpoint htsget tickets point at: files registered by http:// URL (a range server on
 * loopback) served through it as samtools and bcftools read the same files on disk; byte ranges as
 * HTTP says; and signed URLs: any replica with the same key (--signing-key, or GA4GH_SIGNING_KEY)
 * serves a ticket's URLs, while an expired, altered or unsigned URL, or one of another key, is 403.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { addDataset } from '../src/areas/datasets/store.js';
import { loadReadGroupSet } from '../src/areas/reads/loader.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import { newRegistry, runCliAsync, startServeProcess, startServeProcessWith, tempDir, TESTDATA, type ServeProcess } from './helpers.js';
import { addHeaderReferenceSet, request, ticketBytes, tools } from './htsget-fixture.js';
import { startRangeServer, type RangeServer } from './range-server.js';

const dir = tempDir('ga4gh-htsget-data-');
const t = tools(dir);
const H = path.join(TESTDATA, 'htsget');
const BAM = path.join(H, 'htsnexus_test_NA12878.bam');
const CRAM = path.join(H, 'htsnexus_test_NA12878.cram');
const VCF = path.join(H, 'sample1-bcbio-cancer.vcf.gz');
const BCF = path.join(H, 'sample1-bcbio-cancer.bcf');
const KEY = 'a signing key that replicas share, long enough';

let location: string;
let remote: RangeServer;
/** Two replicas with one key, one lasting a second, and a server with another key. */
let server: ServeProcess;
let replica: ServeProcess;
let shortLived: ServeProcess;
let otherKey: ServeProcess;

before(async () => {
  const made = await newRegistry(dir);
  location = made.location;
  const served = path.join(dir, 'served');
  fs.mkdirSync(served);
  for (const f of fs.readdirSync(H)) fs.copyFileSync(path.join(H, f), path.join(served, f));
  remote = await startRangeServer(served);
  await addDataset(made.registry, 'ds');
  await addHeaderReferenceSet(location, 'hs37d5', BAM);
  await addHeaderReferenceSet(location, 'hg19', VCF);
  const at = (file: string) => `${remote.url}/${path.basename(file)}`;
  await loadReadGroupSet(made.registry, 'ds', at(BAM), { referenceset: 'hs37d5', alternate: at(CRAM) });
  await loadVariantSet(made.registry, 'ds', [at(VCF)], { referenceset: 'hg19', alternate: [at(BCF)] });
  [server, replica, shortLived, otherKey] = await Promise.all([
    startServeProcess(location, '--signing-key', KEY),
    startServeProcessWith({ ...process.env, GA4GH_SIGNING_KEY: KEY }, location),
    startServeProcess(location, '--signing-key', KEY, '--signed-url-seconds', '1'),
    startServeProcess(location, '--signing-key', `another ${KEY}`),
  ]);
});

const ticketOf = async (on: ServeProcess, pathAndQuery: string) => {
  const res = await request(`${on.url}/htsget/${pathAndQuery}`);
  assert.equal(res.status, 200, res.body.toString());
  return res.json;
};

/** The first URL of a ticket that goes to the data endpoint, with its headers. */
const dataUrlOf = (ticket: any): { url: string; headers: Record<string, string> } => ticket.htsget.urls.find((u: any) => !u.url.startsWith('data:'));

describe('files registered by http(s) URL, served through the data endpoint', () => {
  // The range server runs in this process: the tools that read through it are run without blocking it.
  it('BAM and its CRAM alternate: samtools prints the records of the files on disk, whole and by region', async () => {
    const base = `${server.url}/htsget/reads/ds/htsnexus_test_NA12878`;
    for (const [format, local] of [['BAM', BAM], ['CRAM', CRAM]]) {
      assert.equal(await t.output('samtools', 'view', '--no-PG', '-h', `${base}?format=${format}`), t.run('samtools', 'view', '--no-PG', '-h', local), format);
      assert.equal(await t.output('samtools', 'view', '--no-PG', `${base}?format=${format}&referenceName=*`), t.run('samtools', 'view', '--no-PG', local, '*'), format);
    }
    assert.ok(remote.log.some((line) => line.includes('htsnexus_test_NA12878.bam') && /bytes=\d+-\d+/.test(line)), 'the server read the remote file by range');
  });

  it('VCF and its BCF alternate: bcftools prints the records of the files on disk', async () => {
    const base = `${server.url}/htsget/variants/sample1-bcbio-cancer`;
    assert.equal(await t.output('bcftools', 'view', '--no-version', base), t.run('bcftools', 'view', '--no-version', VCF));
    assert.equal(await t.output('bcftools', 'view', '--no-version', `${base}?format=BCF`), t.run('bcftools', 'view', '--no-version', BCF));
    assert.equal(await t.output('bcftools', 'view', '--no-version', '-H', `${base}?referenceName=chr22`), t.run('bcftools', 'view', '--no-version', '-H', VCF, '-r', 'chr22'));
  });

  it('a ticket handed to another client works without anything but its URLs and headers', async () => {
    const ticket = await ticketOf(server, 'reads/htsnexus_test_NA12878?referenceName=20&start=6000000&end=6001000');
    const bytes = await ticketBytes(ticket);
    assert.equal(bytes.subarray(0, 2).toString('hex'), '1f8b');
    const file = path.join(dir, 'handed.bam');
    fs.writeFileSync(file, bytes);
    t.run('samtools', 'index', file);
    assert.equal(t.run('samtools', 'view', '--no-PG', file, '20:6000001-6001000'), t.run('samtools', 'view', '--no-PG', BAM, '20:6000001-6001000'));
  });
});

describe('byte ranges of the data endpoint', () => {
  const size = fs.statSync(BAM).size;
  const whole = fs.readFileSync(BAM);

  it('a Range is answered 206 with its Content-Range; none, 200 with the whole file; HEAD, the headers alone', async () => {
    const { url } = dataUrlOf(await ticketOf(server, 'reads/htsnexus_test_NA12878'));
    const part = await request(url, { headers: { Range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 100-199/${size}`);
    assert.deepEqual(part.body, whole.subarray(100, 200));
    const open = await request(url, { headers: { Range: `bytes=${size - 10}-` } });
    assert.deepEqual([open.status, open.body], [206, whole.subarray(size - 10)]);
    const suffix = await request(url, { headers: { Range: 'bytes=-28' } });
    assert.deepEqual([suffix.status, suffix.body.toString('hex')], [206, '1f8b08040000000000ff0600424302001b0003000000000000000000']);
    const all = await request(url);
    assert.equal(all.status, 200);
    assert.ok(all.body.equals(whole));
    const head = await request(url, { method: 'HEAD', headers: { Range: 'bytes=0-9' } });
    assert.deepEqual([head.status, head.headers['content-length'], head.body.length], [206, '10', 0]);
  });

  it('a range outside the file, several ranges, or no bytes= form: 416 InvalidRange', async () => {
    const { url } = dataUrlOf(await ticketOf(server, 'reads/htsnexus_test_NA12878'));
    for (const range of [`bytes=${size}-`, 'bytes=0-1,5-6', 'lines=1-2', 'bytes=9-3']) {
      const res = await request(url, { headers: { Range: range } });
      assert.equal(res.status, 416, range);
      assert.equal(res.json.htsget.error, 'InvalidRange', range);
    }
  });
});

describe('signed data URLs', () => {
  it('a replica with the same key (given by GA4GH_SIGNING_KEY) serves the ticket of another', async () => {
    const ticket = await ticketOf(server, 'reads/htsnexus_test_NA12878?referenceName=11');
    const { url, headers } = dataUrlOf(ticket);
    const onReplica = url.replace(server.url, replica.url);
    const res = await request(onReplica, { headers });
    assert.equal(res.status, 206);
    assert.deepEqual(res.body, (await request(url, { headers })).body);
  });

  const denied = async (url: string, headers: Record<string, string>, message: RegExp) => {
    const res = await request(url, { headers });
    assert.equal(res.status, 403, url);
    assert.deepEqual(res.json, { htsget: { error: 'PermissionDenied', message: res.json.htsget.message } });
    assert.match(res.json.htsget.message, message);
  };

  it('an altered URL, one without its signature, and one signed with another key: 403 PermissionDenied', async () => {
    const { url, headers } = dataUrlOf(await ticketOf(server, 'reads/htsnexus_test_NA12878'));
    const parsed = new URL(url);
    const signature = parsed.searchParams.get('signature')!;
    const altered = (change: (u: URL) => void) => {
      const u = new URL(url);
      change(u);
      return u.toString();
    };
    const flipped = signature[0] === 'A' ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    await denied(altered((u) => u.searchParams.set('signature', flipped)), headers, /does not match/);
    await denied(altered((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))), headers, /does not match/);
    await denied(altered((u) => (u.pathname = u.pathname.replace('/BAM/0', '/CRAM/0'))), headers, /does not match/);
    await denied(altered((u) => (u.search = '')), headers, /not signed/);
    await denied(url.replace(server.url, otherKey.url), headers, /does not match/);
  });

  it('an expired URL: 403 PermissionDenied saying when it expired', async () => {
    const { url, headers } = dataUrlOf(await ticketOf(shortLived, 'reads/htsnexus_test_NA12878?referenceName=11'));
    const expires = Number(new URL(url).searchParams.get('expires'));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expires * 1000 - Date.now()) + 200));
    await denied(url, headers, /expired at/);
  });

  it('serve refuses a signing key too short to keep URLs from being forged', async () => {
    const r = await runCliAsync('serve', location, '--port', '0', '--signing-key', 'short');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^ga4gh: --signing-key must be at least 32 characters long\n$/);
  });
});
