/**
 * P1M, for information: P1's engine and raw sides without the emulator, each in-process against undici's
 * MockAgent (children/mocked.mjs). On two cores shared with the emulator, P1's figure mixes the engine's own
 * cost with its contention for the CPU; here nothing else runs, so the engine's extra CPU per cold run shows
 * alone, with far less noise. The sides alternate, one process per run, and the row gives the medians of the
 * pairs' differences.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median, quartiles } from './stats.js';
import type { BenchRow } from './types.js';

const run = promisify(execFile);
const PAIRS = 25;

interface Side {
  ms: number;
  cpuMs: number;
  devices: number;
  /** The same run, the fourth in the same process: its code compiled and optimised by then. */
  warm: { ms: number; cpuMs: number; devices: number };
}

async function side(mode: 'engine' | 'raw'): Promise<Side> {
  const { stdout } = await run(process.execPath, [join(import.meta.dirname, 'children', 'mocked.mjs'), mode]);
  return JSON.parse(stdout) as Side;
}

export async function benchMocked(): Promise<BenchRow[]> {
  const pairs: { engine: Side; raw: Side }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    if (i % 2 === 0) {
      const raw = await side('raw');
      pairs.push({ raw, engine: await side('engine') });
    } else {
      const engine = await side('engine');
      pairs.push({ engine, raw: await side('raw') });
    }
  }
  const of = (f: (p: { engine: Side; raw: Side }) => number) => median(pairs.map(f));
  const devices = pairs[0]?.raw.devices ?? 0;
  return [
    {
      id: 'P1M',
      measure: `P1 without the emulator (undici MockAgent, in-process), ${devices} devices, cold: engine ${of((p) => p.engine.ms).toFixed(0)} ms (CPU ${of((p) => p.engine.cpuMs).toFixed(0)} ms), raw ${of((p) => p.raw.ms).toFixed(0)} ms (CPU ${of((p) => p.raw.cpuMs).toFixed(0)} ms); the fourth run of each process, warm: engine CPU ${of((p) => p.engine.warm.cpuMs).toFixed(0)} ms, raw ${of((p) => p.raw.warm.cpuMs).toFixed(0)} ms, engine extra ${of((p) => p.engine.warm.cpuMs - p.raw.warm.cpuMs).toFixed(0)} ms (quartiles ${quartiles(pairs.map((p) => p.engine.warm.cpuMs - p.raw.warm.cpuMs))}); medians of ${PAIRS} pairs`,
      value: `engine extra: CPU ${of((p) => p.engine.cpuMs - p.raw.cpuMs).toFixed(0)} ms (quartiles ${quartiles(pairs.map((p) => p.engine.cpuMs - p.raw.cpuMs))}), wall ${of((p) => p.engine.ms - p.raw.ms).toFixed(0)} ms (engine/raw ${of((p) => p.engine.ms / p.raw.ms).toFixed(2)})`,
      target: 'engine extra CPU <= 20 ms',
      pass:
        of((p) => p.engine.cpuMs - p.raw.cpuMs) <= 20 &&
        pairs.every(
          (p) =>
            devices > 0 &&
            [p.engine.devices, p.raw.devices, p.engine.warm.devices, p.raw.warm.devices].every(
              (n) => n === devices,
            ),
        ),
    },
  ];
}
