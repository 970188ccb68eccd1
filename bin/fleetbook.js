#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { main } from '../dist/cli/main.js';

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
