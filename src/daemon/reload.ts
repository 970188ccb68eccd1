/**
 * Reloading the playbooks of a running daemon: when a file under `--playbooks` changes (watched), and on SIGHUP.
 * A reload checks the whole set as the start does (playbook-set.ts); a set with any error is refused whole, in
 * one error line, and the daemon goes on with the set it has. A valid set is swapped in at once (the matcher,
 * the pool, manual starts and the console read it through LoadedPlaybooks), its versions stored first, then the
 * scheduler is given its schedules and the callback services it newly needs are registered.
 */
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import type { Store } from '../store/store.js';
import {
  loadRunnableSet,
  PlaybookSetError,
  sayWarnings,
  type LoadedPlaybooks,
  type SetChanges,
} from './playbook-set.js';
import { savePlaybookVersions } from './versions.js';
import { watchPlaybookFiles } from './watch-files.js';

/** What asked for a reload: a file that changed, or a signal. */
export type ReloadCause = 'file change' | 'SIGHUP';

export interface ReloaderOptions {
  /** The `--playbooks` path: a directory or a file. */
  path: string;
  playbooks: LoadedPlaybooks;
  secrets: Record<string, string>;
  store: Store;
  log: Logger;
  /** After the swap: the daemon's parts that hold more than the map (the scheduler, the registrations). */
  swapped(playbooks: Iterable<Playbook>): Promise<void>;
  /**
   * How long the watcher waits after the last change before it reloads: an editor's save is several writes and a
   * rename. @default 300
   */
  settleMs?: number;
}

/** What a reload did: the changes, or why the set was refused. */
export type ReloadOutcome = { ok: true; changes: SetChanges } | { ok: false; error: string };

/**
 * The last reload refused, while no later one has taken the files: `/status` (`reloadRefused`) and the gauge
 * `fleetbook_playbooks_reload_refused` say so, since the daemon's next start would refuse those files too.
 */
export interface ReloadRefusal {
  /** When it was refused (ISO 8601). */
  at: string;
  on: ReloadCause;
  /** What is wrong, as the error line says it. */
  error: string;
  /** Each error at its `file:line:col`, where the set had some. */
  problems: string[];
}

export class Reloader {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private refused: ReloadRefusal | undefined;

  constructor(private readonly o: ReloaderOptions) {}

  /** The last reload refused, until a reload takes the files; undefined when the files on disk are in force. */
  refusal(): ReloadRefusal | undefined {
    return this.refused;
  }

  /** Reloads the playbooks, after any reload under way: one at a time, in the order asked. */
  reload(cause: ReloadCause): Promise<ReloadOutcome> {
    const next = this.queue.then(() => this.once(cause));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async once(cause: ReloadCause): Promise<ReloadOutcome> {
    const { log, path } = this.o;
    if (this.closed) return { ok: false, error: 'stopping' };
    let next;
    try {
      next = await loadRunnableSet(path, this.o.secrets);
      // Before any run of them is created, as at start: a run resumed after a later edit goes on with its own.
      await savePlaybookVersions(this.o.store, next.playbooks.values());
    } catch (e) {
      const error =
        e instanceof PlaybookSetError
          ? `${e.problem}${e.problems.length ? `: ${e.problems.join('; ')}` : ''}`
          : (e as Error).message;
      const problems = e instanceof PlaybookSetError ? e.problems : [];
      // One line, whatever the number of problems: what is wrong, each error at its file:line:col.
      log.error(`playbooks not reloaded (${cause}): ${error}; the previous playbooks stay in force`, {
        path,
        ...(problems.length ? { problems } : {}),
      });
      this.refused = { at: new Date().toISOString(), on: cause, error, problems };
      return { ok: false, error };
    }
    if (this.closed) return { ok: false, error: 'stopping' };
    const changes = this.o.playbooks.swap(next);
    this.refused = undefined;
    log.info('playbooks reloaded', { on: cause, path, ...changes });
    sayWarnings(next, path, log);
    try {
      await this.o.swapped(this.o.playbooks.values());
    } catch (e) {
      // The set is in force; what failed (a schedule, a registration) says why in its own line too.
      log.error('playbooks reloaded, but the schedules or the callback registrations were not all updated', {
        error: (e as Error).message,
      });
    }
    return { ok: true, changes };
  }

  /**
   * Reloads once the playbook files of the path have settled after a change (watch-files.ts). Returns what stops
   * watching. A path that cannot be watched is said in a warning: the daemon runs, and SIGHUP reloads.
   */
  watch(): () => void {
    const { path, log } = this.o;
    const settleMs = this.o.settleMs ?? 300;
    let timer: NodeJS.Timeout | undefined;
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void this.reload('file change'), settleMs);
    };
    let stop: () => void;
    try {
      stop = watchPlaybookFiles(path, changed, (e) =>
        log.warn('a directory of the playbooks is no longer watched: SIGHUP reloads its edits', {
          path,
          error: e.message,
        }),
      );
    } catch (e) {
      // Out of inotify watches, say.
      log.warn('the playbooks cannot be watched: edits are not reloaded on their own; SIGHUP reloads them', {
        path,
        error: (e as Error).message,
      });
      return () => undefined;
    }
    log.info('watching the playbooks: an edit is reloaded', { path });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }

  /** No reload from now on (the daemon is stopping); one under way ends without swapping. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
  }
}
