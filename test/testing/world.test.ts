/**
 * A test file's faults are checked by the emulator's own bounds (faults.ts), not a copy of them: a value the file
 * loads with is one the emulator takes, and one just past the emulator's bound is refused when the file loads,
 * at its place, by the file's name for it.
 */
import { expect } from 'chai';
import { FAULT_BOUNDS, parseFaults } from '../../src/emulator/faults.js';
import { emulatorFaults, settingProblems } from '../../src/testing/world.js';

/** Test-file fault → its value at the emulator's bound, and just past it, as the file writes them. */
const EDGES: Record<string, [unknown, unknown]> = {
  rateLimit: [FAULT_BOUNDS.maxRequestsPerSecond.max, FAULT_BOUNDS.maxRequestsPerSecond.max + 1],
  carrierDelay: [`${FAULT_BOUNDS.processingSeconds.max}s`, `${FAULT_BOUNDS.processingSeconds.max + 1}s`],
  sessionExpiry: [`${FAULT_BOUNDS.sessionTtlSeconds.max}s`, `${FAULT_BOUNDS.sessionTtlSeconds.max + 1}s`],
  // A timer's bound is 24.8 days; a duration of a test file is at most 24d, as a playbook's.
  latency: ['24d', `${FAULT_BOUNDS.latencyMs.max + 1}ms`],
};

describe('test files: faults checked by the emulator’s bounds', () => {
  for (const [name, [edge, past]] of Object.entries(EDGES))
    it(`${name}: ${String(edge)} loads and the emulator takes it; ${String(past)} is refused at load`, () => {
      const at = (v: unknown) => settingProblems({ faults: { [name]: v } });
      expect(at(edge)).to.deep.equal([]);
      expect(parseFaults(emulatorFaults({ [name]: edge }))).to.be.an('object');
      expect(typeof parseFaults(emulatorFaults({ [name]: past }))).to.equal('string');
      expect(at(past).map((p) => p.path)).to.deep.equal([['faults', name]]);
    });

  it('sessionExpiry 0s is refused at load, as the emulator refuses a session that expires at once', () => {
    expect(settingProblems({ faults: { sessionExpiry: '0s' } }).map((p) => p.message)).to.deep.equal([
      'faults.sessionExpiry is zero: a session would expire at once; give a duration above zero',
    ]);
    expect(parseFaults(emulatorFaults({ sessionExpiry: '0s' }))).to.be.a('string');
  });
});
