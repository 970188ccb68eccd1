/** `fleetbook call ACTION [--body JSON | --body-file F]`: one API operation, the response on stdout. */
import { ACTIONS, CATALOG } from '../api/catalog.js';
import { createClient, type ApiClient } from '../api/client.js';
import { loadConfig, stateOrigin } from '../config.js';
import { checkCredentials, connect, onEmbeddedEmulator, type Target } from '../connect.js';
import { FleetbookError, InputError, UnknownActionError } from '../errors.js';
import { createLogger, redactValue, silentLogger } from '../log.js';
import { openStore } from '../store/open.js';
import { readNamedFile } from './named-file.js';
import { EXIT_USAGE } from './exit-codes.js';

export interface CallFlags {
  body?: string;
  bodyFile?: string;
  apiUrl?: string;
  username?: string;
  clientId?: string;
  state?: string;
}

export function listActions(flags: { json?: boolean }): number {
  const rows = ACTIONS.map((a) => {
    const op = CATALOG[a];
    return { action: a, method: op.method, path: op.path, mutating: op.mutating, summary: op.summary };
  });
  if (flags.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else for (const r of rows) process.stdout.write(`${r.action.padEnd(34)} ${r.method.padEnd(6)} ${r.path}\n`);
  return 0;
}

export async function runCall(action: string, flags: CallFlags): Promise<number> {
  if (flags.body !== undefined && flags.bodyFile !== undefined)
    return usage('give --body or --body-file, not both');
  let input: unknown = {};
  const text =
    flags.bodyFile !== undefined
      ? await readNamedFile(flags.bodyFile, `--body-file ${flags.bodyFile}`)
      : flags.body;
  if (text !== undefined) {
    try {
      input = JSON.parse(text);
    } catch (e) {
      return usage(`the body is not valid JSON: ${(e as Error).message}`);
    }
  }
  const config = loadConfig(process.env, {
    apiUrl: flags.apiUrl,
    username: flags.username,
    clientId: flags.clientId,
    state: flags.state,
  });
  // stderr carries only the error JSON unless logging was asked for explicitly.
  const logger = process.env.FLEETBOOK_LOG_LEVEL ? createLogger({ level: config.logLevel }) : silentLogger;
  checkCredentials(config, {
    takesApiUrl: true,
    ...(flags.apiUrl !== undefined ? { apiUrl: '--api-url' } : {}),
    ...(flags.clientId !== undefined ? { clientId: '--client-id' } : {}),
    ...(flags.username !== undefined ? { username: '--username' } : {}),
  });
  // The service's logins are counted in the store, with those of every process on it (a daemon, runs): five
  // failed ones lock the user, whichever process sent them. The embedded emulator is this process's own.
  const store = !onEmbeddedEmulator(config)
    ? await openStore(config.state, { origin: stateOrigin(process.env, flags) })
    : undefined;
  let target: Target | undefined;
  let client: ApiClient | undefined;
  try {
    target = await connect(config, logger);
    client = createClient({ ...target.options, logger, ...(store ? { logins: store.logins } : {}) });
    const result = await client.callByName(action, input);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof UnknownActionError) {
      process.stderr.write(`fleetbook: ${e.message}\nRun \`fleetbook actions\` for the list.\n`);
      return EXIT_USAGE;
    }
    if (e instanceof InputError) {
      process.stderr.write(`fleetbook: ${e.action}: invalid input, nothing was sent:\n`);
      for (const p of e.problems) process.stderr.write(`  ${p.path}: ${p.message}\n`);
      return EXIT_USAGE;
    }
    if (e instanceof FleetbookError) {
      if (e.code === 'FB_CONFIG') throw e;
      process.stderr.write(`${JSON.stringify(redactValue(e.toJSON()))}\n`);
      return 1;
    }
    throw e;
  } finally {
    await client?.close();
    await target?.close();
    await store?.close();
  }
}

function usage(message: string): number {
  process.stderr.write(`fleetbook: ${message}\n`);
  return EXIT_USAGE;
}
