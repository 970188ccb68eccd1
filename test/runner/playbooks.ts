/**
 * Playbooks that several runner tests run, as their text: the tests write them to files for the CLI, or load
 * them in-process.
 */

/**
 * Suspends every active IMEI device of `inputs.account` in batches, retrying what a faulty service answers:
 * 5xx, 429 and lost connections.
 */
export const SUSPEND_ACTIVE = (o: { name: string; batchSize: number; concurrency: number }) => `
version: 1
name: ${o.name}
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: '\${{ inputs.account }}', currentState: active }
    retry: { on: [http.5xx, http.429, network], maxAttempts: 8, delay: 10ms, maxDelay: 200ms }
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: ${o.batchSize}
      concurrency: ${o.concurrency}
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: '\${{ inputs.account }}', devices: '\${{ item }}' }
          retry: { on: [http.5xx, http.429, network], maxAttempts: 10, delay: 10ms, maxDelay: 200ms }
`;

/** The nightly location report of every IMEI device, the cache misses retried once at cacheMode 1. */
export const NIGHTLY_REPORT = (o: { name: string; pollInterval?: string }) => `
version: 1
name: ${o.name}
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, maxNumberOfDevices: 2000 }
  - id: report
    uses: location.createReport
    with:
      accountName: \${{ inputs.account }}
      deviceList: \${{ steps.devices.items }}
      accuracyMode: "0"
      cacheMode: "0"
    devices:
      retry:
        - on: [SVC CACHE UNAVAILABLE]
          with: { cacheMode: "1" }
    wait: { for: completion, timeout: 2h${o.pollInterval ? `, pollInterval: ${o.pollInterval}` : ''} }
`;

/**
 * A run that waits, in its steps and in its `finally` (`linger`): what a cancel ends, and then what a second
 * cancel or a stop ends. Its last step is never reached.
 */
export const LINGERING = (name: string) => `
version: 1
name: ${name}
on: { manual: true }
inputs:
  site: { type: string }
steps:
  - id: hold
    wait: 10m
finally:
  - id: linger
    wait: 10m
  - id: never
    uses: log
    with: { message: never reached }
`;
