/**
 * The runs as they start and end, for the console's live list (`GET /console/api/runs/stream`): the store is
 * read twice a second while someone watches (the newest runs, and those queued or running), so that the runs of
 * every replica on a shared database show, not only this one's. Each run seen for the first time, or in another
 * status than last time, goes to every watcher.
 */
import { ENDED, type RunRecord, type RunStatus, type Store } from '../store/store.js';
import { runRow, type RunRow } from './views.js';

const POLL_MS = 500;

export class RunsFeed {
  private readonly watchers = new Set<(run: RunRow) => void>();
  /** Each run read last time, with its status. */
  private known = new Map<string, RunStatus>();
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private primed = false;

  constructor(
    private readonly store: Store,
    private readonly onError: (e: Error) => void,
  ) {}

  /** Calls `send` with each run that starts or changes status from now on, until the returned function is called. */
  watch(send: (run: RunRow) => void): () => void {
    this.watchers.add(send);
    if (!this.timer) {
      this.timer = setInterval(() => void this.read(), POLL_MS);
      this.timer.unref();
      void this.read();
    }
    return () => {
      this.watchers.delete(send);
      if (this.watchers.size) return;
      clearInterval(this.timer);
      this.timer = undefined;
      this.primed = false;
      this.known.clear();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.watchers.clear();
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const [recent, running, queued] = await Promise.all([
        this.store.listRuns({ limit: 50 }),
        this.store.listRuns({ status: 'running', limit: 200 }),
        this.store.listRuns({ status: 'queued', limit: 200 }),
      ]);
      const now = new Map<string, RunRecord>();
      for (const r of [...recent, ...running, ...queued]) now.set(r.id, r);
      // A run that was unfinished last time and is in neither list now has ended: read it.
      for (const [id, status] of this.known)
        if (!ENDED.has(status) && !now.has(id)) {
          const r = await this.store.getRun(id);
          if (r) now.set(id, r);
        }
      const changed = [...now.values()].filter((r) => this.known.get(r.id) !== r.status);
      this.known = new Map([...now.values()].map((r) => [r.id, r.status]));
      if (this.primed) for (const r of changed.reverse()) for (const w of this.watchers) w(runRow(r));
      this.primed = true;
    } catch (e) {
      this.onError(e as Error);
    } finally {
      this.reading = false;
    }
  }
}
