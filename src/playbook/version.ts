/**
 * A playbook's version: a digest of its definition as loaded (comments and layout left out), the same for the
 * same playbook in any process. A run is created with the version of its playbook, whose definition the store
 * keeps, so that a run resumed after the playbook changed (a daemon restarted on an edited file) finishes with
 * the steps it started with, its checkpoints theirs: never half one version, half another.
 */
import { hash } from 'node:crypto';
import type { Playbook } from './schema.js';

const versions = new WeakMap<Playbook, { version: string; definition: string }>();

/** The version of `pb` and its definition as JSON (what the store keeps), made once per loaded playbook. */
export function versionOf(pb: Playbook): { version: string; definition: string } {
  let v = versions.get(pb);
  if (!v) {
    const definition = JSON.stringify(pb);
    v = { version: hash('sha256', definition).slice(0, 16), definition };
    versions.set(pb, v);
  }
  return v;
}
