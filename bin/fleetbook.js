#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';

// The HTTP client's response parser is WebAssembly. V8 compiles its hot functions again, optimised, on another
// thread, and a process cannot exit before that compilation ends: about 0.3 s of waiting and 0.2 s of CPU after
// every short command that calls the service (`call`, `run`, `test`), for a parser whose speed does not show in a
// run (measured the same either way on 200 KB listing pages). The baseline compiler's code is kept.
setFlagsFromString('--liftoff-only');

// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
const { main } = await import('../dist/cli/main.js');

/** The commands whose exit status is their verdict: a reader that leaves does not end them. */
const CHECKS = new Set(['test', 'validate', 'fmt']);

// A reader that stops early (`fleetbook schema | head`) is not an error: a command that only prints ends there. A
// check goes on with its output dropped, and exits with its verdict, so that a pipeline under `set -o pipefail`
// does not pass on a case that failed, or never ran, after the reader left.
process.stdout.on('error', (e) => {
  if (e.code !== 'EPIPE') throw e;
  if (!CHECKS.has(process.argv[2])) process.exit(process.exitCode ?? 0);
  process.stdout.write = (_chunk, encoding, done) => {
    (typeof encoding === 'function' ? encoding : done)?.();
    return true;
  };
});

process.exitCode = await main(process.argv.slice(2));
