/**
 * The emulator for the P3 and P4 benchmarks, in a process of its own so that its CPU time is read apart from
 * the daemon's and the load generator's. Plain JavaScript on the built modules of dist/, run by plain node.
 * Forked with an IPC channel: the options come as the argument (JSON), `{ baseUrl, defaults }` goes back once
 * it listens, and it closes when the channel does.
 *
 *   emulator.mjs '{"timeScale":0,"accounts":1,"devicesPerAccount":8000,"seed":7}'
 */
import { startEmulator } from '../../dist/emulator/index.js';

const emu = await startEmulator(JSON.parse(process.argv[2] ?? '{}'));
process.send?.({ baseUrl: emu.baseUrl, defaults: emu.defaults });
process.once('disconnect', () => void emu.close().then(() => process.exit(0)));
