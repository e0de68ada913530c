/**
 * A PostgreSQL registry losing its connections while requests are in flight: real backends of this
 * test's own database are terminated with pg_terminate_backend (the server is shared: nothing else is
 * touched). Requests are held inside the database by a table lock first, so that every termination
 * hits a query that is running. Stopping and starting a database is done only on a private PostgreSQL
 * cluster the test creates in a temporary folder, never on the shared server.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import pg from 'pg';
import { addDataset } from '../src/areas/datasets/store.js';
import { backends } from './backends.js';
import { atEnd, newRegistry, startTestServer, tempDir, type HttpResult, type TestServer } from './helpers.js';

const postgres = backends.find((b) => b.name === 'postgres')!;

describe('a PostgreSQL registry whose connections are terminated', { skip: postgres.skip }, () => {
  let server: TestServer;
  let location: string;
  let admin: pg.Client;
  const names = ['alpha', 'beta', 'gamma'];

  before(async () => {
    location = await postgres.newLocation(tempDir());
    const { registry } = await newRegistry(location);
    for (const name of names) await addDataset(registry, name);
    // Every request reads the registry (no metadata cache), so every request can lose its connection.
    server = await startTestServer(location, { registryCacheMs: 0 });
    admin = new pg.Client({ connectionString: location });
    await admin.connect();
    atEnd(() => admin.end());
  });

  /** Holds the dataset table locked, so queries on it wait inside the database, until the returned release. */
  async function lockDatasets(): Promise<{ pid: number; release: () => Promise<void> }> {
    const locker = new pg.Client({ connectionString: location });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table dataset in access exclusive mode');
    const { rows } = await locker.query('select pg_backend_pid() as pid');
    return {
      pid: rows[0].pid,
      release: async () => {
        await locker.query('commit');
        await locker.end();
      },
    };
  }

  /** Waits until `count` backends of this database wait on the lock, then terminates every backend of it but the locker's and ours. */
  async function terminateWaiting(lockerPid: number, count: number): Promise<number> {
    const database = new URL(location).pathname.slice(1);
    for (let waited = 0; ; waited += 20) {
      const { rows } = await admin.query(
        `select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> $2 and pid <> pg_backend_pid() and state = 'active' and wait_event_type = 'Lock'`,
        [database, lockerPid],
      );
      if (rows[0].n >= count) break;
      if (waited > 10_000) throw new Error(`only ${rows[0].n} of ${count} requests reached the database`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { rows } = await admin.query(
      `select pg_terminate_backend(pid) as done from pg_stat_activity where datname = $1 and pid <> $2 and pid <> pg_backend_pid()`,
      [database, lockerPid],
    );
    return rows.filter((r) => r.done).length;
  }

  const search = () => server.post('/datasets/search', {});
  const assertAllDatasets = (res: HttpResult) => {
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.datasets.map((d: { name: string }) => d.name), names);
  };

  it('retries a query whose connection was terminated once, on a fresh connection, and answers', async () => {
    const lock = await lockDatasets();
    const inFlight = Array.from({ length: 6 }, search);
    assert.ok((await terminateWaiting(lock.pid, 6)) >= 6);
    // The retries wait on the lock again, on new connections; then the lock goes.
    await terminateWaitingCount(lock.pid, 6);
    await lock.release();
    for (const res of await Promise.all(inFlight)) assertAllDatasets(res);
  });

  it('answers 503 with Retry-After when the retry loses its connection too, and recovers by itself', async () => {
    const lock = await lockDatasets();
    const inFlight = Array.from({ length: 4 }, search);
    await terminateWaiting(lock.pid, 4); // the first attempts
    await terminateWaiting(lock.pid, 4); // the retries
    await lock.release();
    for (const res of await Promise.all(inFlight)) {
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.errorCode, 22);
      assert.match(res.json.message, /registry/);
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    // The server is still up, and the pool makes new connections as requests come.
    for (let i = 0; i < 5; i++) assertAllDatasets(await search());
  });

  /** Waits until `count` backends wait on the lock again (the retries), terminating none. */
  async function terminateWaitingCount(lockerPid: number, count: number): Promise<void> {
    const database = new URL(location).pathname.slice(1);
    for (let waited = 0; waited <= 10_000; waited += 20) {
      const { rows } = await admin.query(
        `select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> $2 and pid <> pg_backend_pid() and state = 'active' and wait_event_type = 'Lock'`,
        [database, lockerPid],
      );
      if (rows[0].n >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`the retries did not reach the database`);
  }
});

/** How to run PostgreSQL's own programs here (as the postgres user when this runs as root), or why not. */
function clusterRunner(): { run: (args: string[]) => string; owner?: string } | string {
  if (spawnSync('sh', ['-c', 'command -v initdb && command -v pg_ctl']).status !== 0) return 'initdb and pg_ctl are not installed';
  if (process.getuid?.() !== 0) return { run: (args) => execFileSync(args[0], args.slice(1), { encoding: 'utf8' }) };
  if (spawnSync('id', ['postgres']).status !== 0 || spawnSync('sh', ['-c', 'command -v runuser']).status !== 0) {
    return 'running as root without a postgres user to run a private cluster';
  }
  return { run: (args) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8' }), owner: 'postgres' };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

const runner = clusterRunner();

describe('a PostgreSQL registry whose database is stopped and started', { skip: typeof runner === 'string' ? runner : undefined }, () => {
  const { run, owner } = runner as Exclude<typeof runner, string>;
  let dataDir: string;
  let url: string;
  let server: TestServer;

  before(async () => {
    const dir = tempDir('ga4gh-pg-');
    dataDir = path.join(dir, 'data');
    if (owner) execFileSync('chown', [owner, dir]);
    const port = await freePort();
    run(['initdb', '-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const pgCtl = (action: 'start' | 'stop') =>
      run(action === 'start' ? ['pg_ctl', '-D', dataDir, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start'] : ['pg_ctl', '-D', dataDir, '-m', 'fast', '-w', 'stop']);
    pgCtl('start');
    atEnd(() => fs.existsSync(path.join(dataDir, 'postmaster.pid')) && pgCtl('stop'));
    stopDatabase = () => pgCtl('stop');
    startDatabase = () => pgCtl('start');
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const { registry } = await newRegistry(url);
    await addDataset(registry, 'alpha');
    server = await startTestServer(url, { registryCacheMs: 0 });
  });

  let stopDatabase: () => void;
  let startDatabase: () => void;

  it('answers 503 with Retry-After while the database is down, and serves again once it is back', async () => {
    assert.equal((await server.post('/datasets/search', {})).status, 200);
    stopDatabase();
    for (let i = 0; i < 3; i++) {
      const res = await server.post('/datasets/search', {});
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.errorCode, 22);
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    startDatabase();
    const res = await server.post('/datasets/search', {});
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.datasets.map((d: { name: string }) => d.name), ['alpha']);
  });
});
