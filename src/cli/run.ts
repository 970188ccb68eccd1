/** `fleetbook run PLAYBOOK`, `fleetbook runs`, `fleetbook emulator`. */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { createClient } from '../api/client.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { formatText } from '../playbook/diagnostics.js';
import { loadPlaybook } from '../playbook/load.js';
import { coerceInputs, runPlaybook, type Progress } from '../runner/runner.js';
import { SqliteStore } from '../store/sqlite.js';
import type { RunSummary } from '../store/store.js';
import { registerSecret } from '../util/secrets.js';
import { connect } from './connect.js';

export interface RunFlags {
  input?: string[];
  dryRun?: boolean;
  json?: boolean;
}

/** `--input k=v` pairs. */
export function parseInputs(pairs: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`--input takes key=value, got ${JSON.stringify(p)}`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

/** Secrets for `${{ secrets.X }}`: the variables FLEETBOOK_SECRET_X. */
export function secretsFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('FLEETBOOK_SECRET_') && v !== undefined) {
      out[k.slice('FLEETBOOK_SECRET_'.length)] = v;
      registerSecret(v);
    }
  }
  return out;
}

/** `${{ env.X }}`: the environment, without fleetbook's own variables and anything named like a secret. */
export function envForExpressions(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k.startsWith('FLEETBOOK_') || /pass|secret|token|key|credential/i.test(k))
      continue;
    out[k] = v;
  }
  return out;
}

export async function runCommand(file: string, flags: RunFlags): Promise<number> {
  const source = readFileSync(file, 'utf8');
  const loaded = loadPlaybook(source, file);
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (!loaded.playbook || errors.length) {
    for (const d of loaded.diagnostics) process.stderr.write(`${formatText(d, source)}\n`);
    return 2;
  }
  const pb = loaded.playbook;
  let inputs: Record<string, unknown>;
  try {
    inputs = coerceInputs(pb, parseInputs(flags.input));
  } catch (e) {
    process.stderr.write(`fleetbook: ${(e as Error).message}\n`);
    return 2;
  }
  const config = loadConfig();
  const tty = Boolean(process.stderr.isTTY) && !flags.json;
  const logger = createLogger({ level: tty ? 'warn' : config.logLevel });
  const target = await connect(config, logger);
  const client = createClient({ ...target.options, logger });
  const store = new SqliteStore(config.state);
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          format: ' {bar} {value}/{total} devices | {calls} calls | {errors} errors | {step}',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(0, 0, { calls: 0, errors: 0, step: '' });
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error('cancelled by signal'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let summary: RunSummary;
  try {
    summary = await runPlaybook(pb, {
      client,
      store,
      logger,
      inputs,
      dryRun: Boolean(flags.dryRun),
      trigger: { type: 'manual', by: 'cli' },
      secrets: secretsFromEnv(process.env),
      env: envForExpressions(process.env),
      signal: controller.signal,
      ...(target.emulatorUrl ? { pollIntervalMs: 250 } : {}),
      ...(bar
        ? {
            onProgress: (p: Progress) => {
              bar.setTotal(Math.max(p.devicesTotal, 1));
              bar.update(p.devicesDone, { calls: p.calls, errors: p.errors, step: p.step });
            },
          }
        : {}),
    });
  } finally {
    bar?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    store.close();
    await client.close();
    await target.close();
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else process.stdout.write(formatSummary(summary));
  return summary.status === 'succeeded' ? 0 : 1;
}

/** Something to write text to; a promise means "wait for it before writing more". */
type Write = (s: string) => Promise<void> | undefined;

/**
 * Writes to stdout in chunks of about 64 KB, not a write per line, and waits for stdout to drain when it is
 * full: without that, a slow reader (a pipe, a terminal) would leave the whole output queued in memory.
 */
function bufferedStdout(): { write: Write; flush: () => Promise<void> | undefined } {
  let chunk = '';
  const flush = () => {
    const full = chunk !== '' && !process.stdout.write(chunk);
    chunk = '';
    return full ? once(process.stdout, 'drain').then(() => undefined) : undefined;
  };
  return {
    write: (s) => {
      chunk += s;
      return chunk.length >= 65_536 ? flush() : undefined;
    },
    flush,
  };
}

/**
 * `{ ...head, [key]: rows }` exactly as `JSON.stringify(value, null, 2)` writes it, written as the rows come,
 * so that a run of millions of devices never becomes one string.
 */
export async function writeJsonWithRows(
  write: Write,
  head: object,
  key: string,
  rows: Iterable<unknown>,
): Promise<void> {
  const members = JSON.stringify(head, null, 2);
  // `{}`, or `{\n  ...\n}` whose closing line gives way to the array.
  await write(members === '{}' ? '{' : `${members.slice(0, -2)},`);
  await write(`\n  ${JSON.stringify(key)}: [`);
  let first = true;
  for (const row of rows) {
    await write(`${first ? '' : ','}\n    ${JSON.stringify(row, null, 2).replaceAll('\n', '\n    ')}`);
    first = false;
  }
  await write(first ? ']\n}\n' : '\n  ]\n}\n');
}

export function formatSummary(s: RunSummary): string {
  const lines = [`run ${s.runId} of ${s.playbook}: ${s.status}${s.dryRun ? ' (dry run)' : ''}`];
  if (s.error) lines.push(`  error: ${s.error}`);
  for (const st of s.steps) {
    const d = st.devices;
    const devices = d.total
      ? ` devices ${d.total}: ${d.succeeded} succeeded, ${d.failed} failed, ${d.skipped} skipped`
      : '';
    lines.push(
      `  ${st.id.padEnd(24)} ${st.status.padEnd(9)} calls ${st.calls}${devices}${st.error ? ` (${st.error})` : ''}`,
    );
    for (const [type, n] of Object.entries(d.byError)) lines.push(`  ${''.padEnd(24)}   ${n} × ${type}`);
  }
  for (const p of s.planned ?? [])
    lines.push(`  would call ${p.action} ${p.calls} time(s) for ${p.devices} device(s) (step ${p.step})`);
  return `${lines.join('\n')}\n`;
}

export async function runsCommand(
  sub: string | undefined,
  id: string | undefined,
  flags: { json?: boolean; devices?: boolean },
): Promise<number> {
  const store = new SqliteStore(loadConfig().state);
  try {
    if (sub === undefined || sub === 'list') {
      const runs = store.listRuns({ limit: 50 });
      if (flags.json)
        process.stdout.write(
          `${JSON.stringify(
            runs.map(({ summary: _s, ...r }) => r),
            null,
            2,
          )}\n`,
        );
      else
        for (const r of runs)
          process.stdout.write(`${r.id}  ${r.startedAt}  ${r.status.padEnd(9)}  ${r.playbook}\n`);
      return 0;
    }
    if (sub === 'show' && id) {
      const run = store.getRun(id);
      if (!run) {
        process.stderr.write(`fleetbook: no run ${id}\n`);
        return 1;
      }
      const head = run.summary ?? run;
      // Device results are streamed from the store and written as they come: a run may have millions.
      const out = bufferedStdout();
      if (flags.json) {
        if (flags.devices)
          await writeJsonWithRows(out.write, head, 'deviceResults', store.eachDeviceResult(id));
        else await out.write(`${JSON.stringify(head, null, 2)}\n`);
      } else {
        await out.write(run.summary ? formatSummary(run.summary) : `run ${run.id}: ${run.status}\n`);
        if (flags.devices) {
          for (const d of store.eachDeviceResult(id))
            await out.write(
              `  ${d.step.padEnd(16)} ${d.deviceId.padEnd(22)} ${d.outcome.padEnd(9)} ${d.errorType ?? ''}\n`,
            );
        }
      }
      await out.flush();
      return 0;
    }
    process.stderr.write('fleetbook: usage: fleetbook runs [list | show ID [--devices]] [--json]\n');
    return 2;
  } finally {
    store.close();
  }
}

/** The flags of `fleetbook emulator`, as commander parses them. */
export interface EmulatorFlags {
  port: string;
  host: string;
  seed?: string;
  accounts?: string;
  devicesPerAccount?: string;
  timeScale?: string;
}

export async function emulatorCommand(flags: EmulatorFlags): Promise<number> {
  const { startEmulator } = await import('../emulator/index.js');
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const emu = await startEmulator({
    port: Number(flags.port),
    host: flags.host,
    ...(flags.seed !== undefined
      ? { seed: /^[0-9]+$/.test(flags.seed) ? Number(flags.seed) : flags.seed }
      : {}),
    ...(flags.accounts !== undefined ? { accounts: num(flags.accounts) as number } : {}),
    ...(flags.devicesPerAccount !== undefined
      ? { devicesPerAccount: num(flags.devicesPerAccount) as number }
      : {}),
    ...(flags.timeScale !== undefined ? { timeScale: num(flags.timeScale) as number } : {}),
    logger: createLogger({ level: process.env.FLEETBOOK_LOG_LEVEL ?? 'info' }),
  });
  process.stdout.write(`${emu.banner()}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emu.close();
  return 0;
}
