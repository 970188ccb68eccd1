/**
 * What happens as simulated time passes. Work is done in time order up to the clock: timers (report
 * completion callbacks, trigger reminders) at their instants, and at each midnight the daily work
 * (price-plan cycles closing, the location usage-trigger check, daily summaries, report expiry). Price plan
 * triggers are also evaluated where the clock stops, and mobile-originated SMS received up to it are sent to the
 * accounts that started SMS callbacks. Time that jumps by a month is walked a day at a time,
 * so nothing is skipped.
 */
import { pruneReports } from './location.js';
import { DAY_MS, LATEST, MINUTE_MS, iso, startOfDay } from './sim-clock.js';
import { sendSms } from './sms-history.js';
import type { Core, EmulatorState } from './state.js';
import { checkUsageTriggers } from './subscriptions.js';
import { evaluateTriggers, flushSummaries, forgetOldActivations } from './trigger-evaluation.js';

const nextMidnight = new WeakMap<EmulatorState, number>();

/**
 * Does the work due up to now. `evaluate` also evaluates price plan triggers at the current instant (always
 * after an explicit advance; at most once a simulated minute when the clock runs by itself).
 */
export function catchUp(core: Core, evaluate: boolean): void {
  const st = core.state;
  const now = st.now();
  let midnight = nextMidnight.get(st) ?? startOfDay(st.processedUntil) + DAY_MS;
  for (;;) {
    const timer = st.nextTimer();
    if (timer && timer.at <= now && timer.at <= midnight) {
      st.popTimer();
      st.processedUntil = Math.max(st.processedUntil, timer.at);
      timer.run();
      continue;
    }
    if (midnight > now) break;
    evaluateTriggers(core, st.evaluatedAt, midnight);
    st.evaluatedAt = midnight;
    checkUsageTriggers(core, midnight);
    flushSummaries(core);
    pruneReports(st, midnight);
    forgetOldActivations(st, midnight);
    st.processedUntil = midnight;
    midnight += DAY_MS;
  }
  nextMidnight.set(st, midnight);
  st.processedUntil = Math.max(st.processedUntil, now);
  sendSms(core, now);
  if (evaluate || now - st.evaluatedAt >= MINUTE_MS) {
    evaluateTriggers(core, st.evaluatedAt, now);
    st.evaluatedAt = now;
  }
}

/** Moves the simulated clock `seconds` forward and does the work due; throws ClockLimit as SimClock.advance. */
export function advance(core: Core, seconds: number): void {
  core.state.clock.advance(seconds);
  catchUp(core, true);
}

/**
 * While the clock runs by itself (timeScale > 0), catches up four times a second. A clock that reaches LATEST
 * stops there, said once.
 */
export function startTicker(core: Core): () => void {
  let ended: EmulatorState | undefined;
  const timer = setInterval(() => {
    const st = core.state;
    if (st.clock.timeScale > 0) {
      try {
        catchUp(core, false);
      } catch (e) {
        core.log.error('emulator: simulated time processing failed', { error: (e as Error).message });
      }
      if (ended !== st && st.now() === LATEST) {
        ended = st;
        core.log.warn(
          `emulator: the simulated clock reached ${iso(LATEST)}, the last time it goes to, and stays there`,
        );
      }
    }
  }, 250);
  timer.unref();
  return () => clearInterval(timer);
}
