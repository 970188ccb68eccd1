import { expect } from 'chai';
import { DeviceResults } from '../../src/runner/device-results.js';
import { resultsOf } from '../../src/runner/devices.js';
import type { DeviceGroup } from '../../src/store/store.js';

const failed = (ids: string[], errorType: string, attempts = 1): DeviceGroup => ({
  kind: 'imei',
  outcome: 'failed',
  errorType,
  errorClass: 'transient',
  attempts,
  ids,
});
const succeeded = (ids: string[], attempts = 1, data?: Record<string, unknown>[]): DeviceGroup => ({
  kind: 'imei',
  outcome: 'succeeded',
  attempts,
  ids,
  ...(data ? { data } : {}),
});

/** Each device once, with its latest result, as `id:outcome:attempts`. */
function latest(r: DeviceResults): string[] {
  return resultsOf(r.groups())
    .map((d) => `${d.deviceId}:${d.outcome}:${d.attempts}`)
    .sort();
}

describe('DeviceResults: a step’s results as groups', () => {
  it('keeps each device once: a device sent again has only its newer result', () => {
    const r = new DeviceResults();
    r.add([succeeded(['a', 'b'], 1, [{ x: 1 }, { x: 2 }]), failed(['c', 'd', 'e'], 'CACHE')]);
    const again = r.resend((g) => g.outcome === 'failed');
    expect([...again].sort()).to.deep.equal(['c', 'd', 'e']);
    // The second pass answers for two of the three: the third keeps its first failure.
    r.add([succeeded(['c'], 2), failed(['d'], 'CACHE', 2)]);
    expect(latest(r)).to.deep.equal([
      'a:succeeded:1',
      'b:succeeded:1',
      'c:succeeded:2',
      'd:failed:2',
      'e:failed:1',
    ]);
    // Data stays with its device.
    const withData = r.groups().find((g) => g.data);
    expect(withData?.ids).to.deep.equal(['a', 'b']);
    expect(withData?.data).to.deep.equal([{ x: 1 }, { x: 2 }]);
  });

  it('a third pass resends only the devices whose latest result still fails', () => {
    const r = new DeviceResults();
    r.add([failed(['a', 'b', 'c'], 'CACHE')]);
    r.resend((g) => g.outcome === 'failed');
    r.add([succeeded(['a'], 2), failed(['b', 'c'], 'CACHE', 2)]);
    const third = r.resend((g) => g.outcome === 'failed');
    expect([...third].sort()).to.deep.equal(['b', 'c']);
    r.add([succeeded(['b', 'c'], 3)]);
    expect(latest(r)).to.deep.equal(['a:succeeded:2', 'b:succeeded:3', 'c:succeeded:3']);
  });

  it('skip makes the picked groups skipped and returns them', () => {
    const r = new DeviceResults();
    r.add([failed(['a'], 'CONSENT'), failed(['b'], 'CACHE'), succeeded(['c'])]);
    const skipped = r.skip((g) => g.errorType === 'CONSENT');
    expect(skipped.map((g) => [g.outcome, g.ids])).to.deep.equal([['skipped', ['a']]]);
    expect(latest(r)).to.deep.equal(['a:skipped:1', 'b:failed:1', 'c:succeeded:1']);
  });

  it('addOne joins a run of equal results, and never a list it shares with a device set', () => {
    const shared = ['a'];
    const r = new DeviceResults();
    r.add([succeeded(shared)]);
    r.addOne({ deviceId: 'b', kind: 'imei', outcome: 'succeeded', attempts: 1 });
    r.addOne({ deviceId: 'c', kind: 'imei', outcome: 'succeeded', attempts: 1 });
    r.addOne({ deviceId: 'd', kind: 'imei', outcome: 'failed', errorType: 'X', attempts: 1 });
    expect(shared).to.deep.equal(['a']);
    expect(r.groups().map((g) => g.ids)).to.deep.equal([['a'], ['b', 'c'], ['d']]);
  });
});
