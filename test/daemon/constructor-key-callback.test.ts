/**
 * An authenticated DeviceUsage callback with `"constructor": 1` beside the path its filter reads (issue 15,
 * point 3) was answered `stored`, marked processed, and started no run: the filter failed on the key, and the
 * failure read as "not selected". Such a key is plain data: the callback starts its run, at every level.
 *
 * The daemon is the built CLI (`npm run build` first) in a child process, on loopback; the emulator runs here.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, runsIn, type DaemonProcess } from '../helpers/daemon.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'constructor-key');
const USER = 'constructor-key-listener';
const PASSWORD = 'constructor-key-password-8Hw';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A DeviceUsage callback body with `"<key>": 1` at `level` of the path the filter reads (0: none). */
function usage(requestId: string, key: string, level: number): string {
  const extra = `"${key}": 1`;
  const at = (l: number) => (level === l ? `${extra}, ` : '');
  return (
    `{${at(1)}"username": "${USER}", "password": "${PASSWORD}", "requestId": "${requestId}", ` +
    `"deviceResponse": {${at(2)}"alertServiceResponse": {${at(3)}"triggerName": "overuse-demo", ` +
    `"accountName": "0000123456-00001", "payAsYouGo": {"deviceIds": [{"id": "490154203237518", "kind": "imei"}]}}}}`
  );
}

describe('fleetbook serve: a callback with a "constructor" key starts its run', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  let daemon: DaemonProcess;

  before(async () => {
    world = await DaemonWorld.create('constructor-key', { user: USER, password: PASSWORD });
  });

  after(async () => {
    await world?.close();
  });

  it('stores each callback and starts one run of the playbook whose filter reads beside the key', async () => {
    const state = world.state();
    daemon = await world.start('constructor-key daemon', FIXTURES, { env: { FLEETBOOK_LOG_LEVEL: 'warn' } });
    const sent: string[] = [];
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])
      for (const level of [1, 2, 3]) {
        const id = `${key}-${level}-${process.pid}`;
        const res = await fetch(`${daemon.url}/callbacks/DeviceUsage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: usage(id, key, level),
        });
        expect(res.status, id).to.equal(200);
        expect(((await res.json()) as { status?: string }).status, id).to.equal('stored');
        sent.push(id);
      }

    const deadline = Date.now() + 20_000;
    let runs = runsIn(state, 'overuse-filter');
    while (runs.filter((r) => r.status === 'succeeded').length < sent.length) {
      if (Date.now() > deadline)
        throw new Error(`runs: ${JSON.stringify(runs)}\nlog:\n${daemon.stderr.slice(-3000)}`);
      await sleep(50);
      runs = runsIn(state, 'overuse-filter');
    }
    expect(runs.map((r) => r.requestId).sort()).to.deep.equal([...sent].sort());
  });
});
