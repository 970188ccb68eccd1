/** Schedules on PostgreSQL (ScheduleStore of store.ts): each fire claimed once across replicas. */
import type { RunRecord, ScheduleStore } from '../store.js';
import { insertRuns, runRow } from './runs.js';
import type { Turns } from './turn.js';

export class PostgresSchedules implements ScheduleStore {
  constructor(private readonly turns: Turns) {}

  async lastFire(schedule: string): Promise<string | undefined> {
    const [row] = await this.turns.read<{ last_fire_at: string }>({
      text: 'SELECT last_fire_at FROM schedules WHERE name = $1',
      values: [schedule],
    });
    return row?.last_fire_at;
  }

  /**
   * One statement: the fire is claimed when it is later than the one recorded, and the run inserted only then. Of
   * two replicas claiming one fire, the second waits for the first's row, finds the fire recorded, and gets none.
   */
  async recordFire(schedule: string, at: string, run?: RunRecord): Promise<boolean> {
    const started = insertRuns(run ? [runRow(run)] : [], 'WHERE EXISTS (SELECT 1 FROM fired)');
    const [claimed] = await this.turns.read<{ n: number }>({
      text: `WITH fired AS (
               INSERT INTO schedules (name, last_fire_at) VALUES ($2, $3)
               ON CONFLICT (name) DO UPDATE SET last_fire_at = excluded.last_fire_at
                 WHERE excluded.last_fire_at > schedules.last_fire_at
               RETURNING 1
             ), started AS (${started.text})
             SELECT count(*) AS n FROM fired`,
      values: [...started.values, schedule, at],
    });
    return claimed?.n === 1;
  }
}
