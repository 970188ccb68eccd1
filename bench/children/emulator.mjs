/**
 * The emulator for the daemon benchmarks, in a process of its own so that its CPU time is read apart from the
 * daemons' and the load generator's. Plain JavaScript on the built modules of dist/, run by plain node.
 * Forked with an IPC channel: the options come as the argument (JSON), `{ baseUrl, defaults }` goes back once
 * it listens, and it closes when the channel does.
 *
 * With `"stamp": true`, it keeps every API request it receives: when it was read (`at`, performance.now(), ms)
 * and the earliest it can have arrived (`since`: a request that came while this process was stalled, its CPU
 * taken by the others on a small machine, is read when the stall ends; `since` is the tick of a millisecond
 * timer in the turn of the event loop before the one that read it), its area (`/api/m2m/...`: `m2m`) and the
 * status it was answered (0 while it is not). The message `arrivals` is answered with those kept since the last
 * one.
 *
 *   emulator.mjs '{"timeScale":0,"accounts":1,"devicesPerAccount":8000,"seed":7}'
 */
import { subscribe } from 'node:diagnostics_channel';
import { setInterval } from 'node:timers';
import { startEmulator } from '../../dist/emulator/index.js';

const { stamp, ...options } = JSON.parse(process.argv[2] ?? '{}');
let kept = [];
if (stamp) {
  const arrived = new WeakMap();
  let latest = performance.now();
  let before = latest;
  setInterval(() => {
    before = latest;
    latest = performance.now();
  }, 1).unref();
  subscribe('http.server.request.start', ({ request }) => {
    const area = /^\/api\/([^/]+)\//.exec(request.url ?? '')?.[1];
    if (!area) return;
    const a = { since: before, at: performance.now(), area, status: 0 };
    kept.push(a);
    arrived.set(request, a);
  });
  subscribe('http.server.response.finish', ({ request, response }) => {
    const a = arrived.get(request);
    if (a) a.status = response.statusCode;
  });
}
const emu = await startEmulator(options);
process.on('message', (m) => {
  if (m !== 'arrivals') return;
  process.send?.(kept);
  kept = [];
});
process.send?.({ baseUrl: emu.baseUrl, defaults: emu.defaults });
process.once('disconnect', () => void emu.close().then(() => process.exit(0)));
