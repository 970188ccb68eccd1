/**
 * This process's peak resident set, in MB. On Linux, from VmHWM of /proc/self/status, the high-water mark of
 * this program's memory since it started: `getrusage`'s maxRSS (process.resourceUsage) carries over the parent's
 * peak across fork and exec, so a child started by a bench that had grown to 460 MB reports 460 MB whatever it
 * used. Elsewhere, maxRSS.
 */
import { readFileSync } from 'node:fs';

export function peakRssMb() {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch {
    // Not Linux.
  }
  return process.resourceUsage().maxRSS / 1024;
}
