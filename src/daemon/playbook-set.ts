/**
 * The playbooks a daemon runs: read and checked as one set (at start, and at each reload), and held by
 * `LoadedPlaybooks`, which every part of the daemon reads through and a reload swaps whole.
 */
import { unsetSecrets } from '../config.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { LoadedPlaybook } from '../playbook/checker.js';
import { formatText, type Diagnostic } from '../playbook/diagnostics.js';
import { ledgerPlaybookProblems } from '../playbook/ledger-names.js';
import { loadPlaybookText } from '../playbook/load.js';
import { PlaybookNames } from '../playbook/names.js';
import type { Playbook } from '../playbook/schema.js';
import { readSourceAmong } from '../playbook/source.js';
import { versionOf } from '../playbook/version.js';
import { planOf } from '../runner/plan.js';
import { NoPlaybooks, playbooksAt, TEST_SUFFIX } from '../util/files.js';

/** A playbook's file, and what validation says of it (warnings: errors refuse the set). */
export interface PlaybookSource {
  file: string;
  diagnostics: Diagnostic[];
}

export interface PlaybookSet {
  playbooks: Map<string, Playbook>;
  sources: Map<string, PlaybookSource>;
}

/**
 * Why a set of playbooks cannot be run: `problem` says what is wrong with the set, and `problems` each error in
 * one line (`file:line:col: message [rule]`). The message is what `serve` says at start (the CLI exits 2): each
 * error with its source line and a caret. Its code is ConfigError's, 'FB_CONFIG'.
 */
export class PlaybookSetError extends ConfigError {
  constructor(
    readonly problem: string,
    readonly problems: string[] = [],
    detailed: string[] = problems,
  ) {
    super(`${problem}; not starting${detailed.length ? `:\n${detailed.join('\n')}` : ''}`);
    this.name = 'PlaybookSetError';
  }
}

/**
 * Loads every playbook of `path` (a directory searched for *.yaml, *.yml, or a file); refuses the lot when any
 * has an error, listing every error (a PlaybookSetError). Its warnings are those `fleetbook validate` gives the
 * same path, the set's own (`ledger-playbook`) among them.
 */
export async function loadPlaybookSources(path: string): Promise<PlaybookSet> {
  let files: string[];
  try {
    files = await playbooksAt(path);
  } catch (e) {
    throw e instanceof NoPlaybooks ? new PlaybookSetError(e.message) : e;
  }
  // A playbook test named as the playbooks (a directory's are passed over): said, as validate says it, not
  // checked against the playbook schema, which gives it an error for each member a playbook has.
  if (files.length === 1 && files[0] === path && path.endsWith(TEST_SUFFIX))
    throw new PlaybookSetError(`${path} is a playbook test, not a playbook: fleetbook test runs it`);
  const playbooks = new Map<string, Playbook>();
  const sources = new Map<string, PlaybookSource>();
  const heads: string[] = [];
  const detailed: string[] = [];
  const names = new PlaybookNames();
  const loaded: LoadedPlaybook[] = [];
  for (const file of files) {
    const r = loadPlaybookText(await readSourceAmong(file));
    const duplicate = await names.check(r);
    for (const d of duplicate ? [...r.diagnostics, duplicate] : r.diagnostics)
      if (d.severity === 'error') {
        heads.push(formatText(d, undefined));
        detailed.push(formatText(d, r.source));
      }
    if (!r.playbook) continue;
    playbooks.set(r.playbook.name, r.playbook);
    sources.set(r.playbook.name, { file, diagnostics: [...r.diagnostics] });
    loaded.push(r);
  }
  if (heads.length)
    throw new PlaybookSetError(`${heads.length} error(s) in the playbooks of ${path}`, heads, detailed);
  const ofSet = await ledgerPlaybookProblems(loaded);
  loaded.forEach((r, i) => sources.get(r.playbook?.name ?? '')?.diagnostics.push(...(ofSet[i] ?? [])));
  return { playbooks, sources };
}

/**
 * Says the set's warnings (`path`'s, loaded at start or by a reload) in one line, each warning in `warnings` as
 * `file:line:col: warning: message [rule]`: what `fleetbook validate` says of them, not left to the console.
 */
export function sayWarnings(set: PlaybookSet, path: string, log: Logger): void {
  const warnings = [...set.sources.values()].flatMap((s) =>
    s.diagnostics.filter((d) => d.severity === 'warning').map((d) => formatText(d, undefined)),
  );
  if (warnings.length)
    log.warn(`${warnings.length} warning(s) in the playbooks of ${path}; fleetbook validate shows each`, {
      warnings,
    });
}

/**
 * `loadPlaybookSources`, and what would stop the set's runs halfway: a playbook that names a secret not set in
 * `secrets` would fail its runs at that step, after the steps before it acted. What `serve` checks at start,
 * and each reload.
 */
export async function loadRunnableSet(path: string, secrets: Record<string, string>): Promise<PlaybookSet> {
  const set = await loadPlaybookSources(path);
  const unset = [...set.playbooks.values()].flatMap((pb) => {
    const why = unsetSecrets(planOf(pb).secrets, secrets);
    return why ? [`${set.sources.get(pb.name)?.file ?? pb.name}: playbook ${pb.name} ${why}`] : [];
  });
  if (unset.length) throw new PlaybookSetError(`the playbooks of ${path} cannot run`, unset);
  return set;
}

/** What a swap changed, by playbook name, each list sorted. */
export interface SetChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

/**
 * The set the daemon runs, as a map by name that always reads the current set: the matcher, the pool, the
 * routes, the console and the scheduler's runs hold this object, and `swap` replaces what it reads in one
 * assignment, so that no reader sees half of one set and half of another. It also keeps each version it held,
 * so that a run created just before a swap (stored, not yet handed to the pool) still executes its own.
 */
export class LoadedPlaybooks implements ReadonlyMap<string, Playbook> {
  private set: PlaybookSet;
  private readonly versions = new Map<string, Playbook>();
  /** Counts the swaps: what is made of the set (the console's view) is made again when it moves. */
  generation = 0;

  constructor(set: PlaybookSet) {
    this.set = set;
    this.keep(set);
  }

  /** Each playbook's file and diagnostics. */
  get sources(): ReadonlyMap<string, PlaybookSource> {
    return this.set.sources;
  }

  /** A playbook of a version this daemon has loaded (now or before a swap). */
  version(version: string): Playbook | undefined {
    return this.versions.get(version);
  }

  /** Replaces the set; what it changed (a playbook whose version differs is changed). */
  swap(next: PlaybookSet): SetChanges {
    const before = this.set.playbooks;
    const changes: SetChanges = { added: [], changed: [], removed: [] };
    for (const [name, pb] of next.playbooks) {
      const was = before.get(name);
      if (!was) changes.added.push(name);
      else if (versionOf(was).version !== versionOf(pb).version) changes.changed.push(name);
    }
    for (const name of before.keys()) if (!next.playbooks.has(name)) changes.removed.push(name);
    for (const list of Object.values(changes)) list.sort();
    this.keep(next);
    this.set = next;
    this.generation++;
    return changes;
  }

  private keep(set: PlaybookSet): void {
    for (const pb of set.playbooks.values()) {
      const { version } = versionOf(pb);
      if (!this.versions.has(version)) this.versions.set(version, pb);
    }
  }

  get size(): number {
    return this.set.playbooks.size;
  }
  get(name: string): Playbook | undefined {
    return this.set.playbooks.get(name);
  }
  has(name: string): boolean {
    return this.set.playbooks.has(name);
  }
  keys(): MapIterator<string> {
    return this.set.playbooks.keys();
  }
  values(): MapIterator<Playbook> {
    return this.set.playbooks.values();
  }
  entries(): MapIterator<[string, Playbook]> {
    return this.set.playbooks.entries();
  }
  [Symbol.iterator](): MapIterator<[string, Playbook]> {
    return this.set.playbooks[Symbol.iterator]();
  }
  forEach(
    fn: (value: Playbook, key: string, map: ReadonlyMap<string, Playbook>) => void,
    self?: unknown,
  ): void {
    for (const [k, v] of this.set.playbooks) fn.call(self, v, k, this);
  }
}
