/**
 * Preloaded into a child process (`node --import`): samples its memory every 10 ms and, at exit, writes the
 * peaks (bytes of resident set and of used heap) as JSON to the file MEMORY_PEAK_FILE names.
 */
import { writeFileSync } from 'node:fs';
import { setInterval } from 'node:timers';

const file = process.env.MEMORY_PEAK_FILE;
const peak = { rss: 0, heapUsed: 0 };
const sample = () => {
  const m = process.memoryUsage();
  peak.rss = Math.max(peak.rss, m.rss);
  peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
};
if (file) {
  setInterval(sample, 10).unref();
  process.on('exit', () => {
    sample();
    writeFileSync(file, JSON.stringify(peak));
  });
}
