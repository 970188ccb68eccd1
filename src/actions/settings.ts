/**
 * The settings of the engine actions, compiled once at start-up from the configuration (FLEETBOOK_REPORTS_DIR,
 * FLEETBOOK_WEBHOOK_ALLOW, FLEETBOOK_EMULATOR_WEBHOOKS) and handed to every run (RunOptions.engine).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { REPORTS_DIR_SETTING } from './policy.js';
import { compileWebhookPolicy, type WebhookPolicy, type WebhookPolicyOptions } from './webhook.js';

export interface EngineSettings {
  /** Where `report.write` writes, absolute: a step's `path` is relative to it. */
  readonly reportsDir: string;
  /** What `notify.webhook` may connect to. */
  readonly webhooks: WebhookPolicy;
}

export interface EngineSettingsOptions extends WebhookPolicyOptions {
  /**
   * The reports directory, resolved against the working directory now.
   * @default './reports'
   */
  reportsDir?: string;
  /**
   * Hosts, addresses and CIDR ranges a webhook may reach although they are not public.
   * @default []
   * @example ['hooks.internal.example', '10.20.0.0/16']
   */
  webhookAllow?: readonly string[];
  /**
   * The process's calls go to its embedded emulator, whose events are made up: webhooks are held back unless
   * `emulatorWebhooks` is `send`.
   * @default false
   */
  embedded?: boolean;
  /** On the embedded emulator: `hold` sends no webhook, `send` sends them. @default 'hold' */
  emulatorWebhooks?: 'hold' | 'send';
}

/**
 * Checks and compiles the settings; a wrong allowlist entry, or a reports directory that is a file, is a
 * ConfigError. `loadConfig()`'s result fits.
 */
export function engineSettings(o: EngineSettingsOptions = {}): EngineSettings {
  const reportsDir = resolve(o.reportsDir ?? './reports');
  // Not there yet is fine (the first report.write makes it); a file there would fail every report.write, after
  // the steps before it acted.
  if (statSync(reportsDir, { throwIfNoEntry: false })?.isDirectory() === false)
    throw new ConfigError(
      `invalid configuration:\n  ${REPORTS_DIR_SETTING}: ${reportsDir} is not a directory: report.write writes its reports in it`,
    );
  return Object.freeze({
    reportsDir,
    webhooks: compileWebhookPolicy(o.webhookAllow ?? [], {
      ...(o.lookup ? { lookup: o.lookup } : {}),
      ...(o.confine ? { confine: o.confine } : {}),
      heldBack: Boolean(o.embedded) && o.emulatorWebhooks !== 'send',
    }),
  });
}
