/**
 * `npm start` and `npm test` run this before the daemon and the tests: it runs `npm run build` only when
 * something the build reads is newer than what the build writes last (dist/generated/rules.json, by
 * scripts/emit-rules.ts), when that is missing, or when another Node built it (dist/generated/node.json, written
 * by the same script: the validators' V8 code caches are for the V8 that made them). A build that fails leaves
 * rules.json missing or old, so the next start builds again.
 *
 * What the build reads: every file and folder under src/ (a folder's time changes when a file is added to it or
 * removed), scripts/emit-rules.ts, the TypeScript configuration, package.json and package-lock.json.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const LAST_OUTPUT = join('dist', 'generated', 'rules.json');
const BUILT_BY = join('dist', 'generated', 'node.json');
const INPUTS = [
  'src',
  join('scripts', 'emit-rules.ts'),
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
];

/** The modification time (ms) of a path, or undefined when it does not exist. */
function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The newest modification time of a path and, for a folder, of everything under it. */
function newest(path) {
  let latest = mtime(path) ?? 0;
  let entries = [];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch (e) {
    if (e.code !== 'ENOTDIR' && e.code !== 'ENOENT') throw e;
  }
  for (const entry of entries) latest = Math.max(latest, newest(join(path, entry.name)));
  return latest;
}

/** Whether the build was made by another V8 or for another architecture than this Node's, or by an unknown one. */
function builtByAnotherNode() {
  let by;
  try {
    by = JSON.parse(readFileSync(BUILT_BY, 'utf8'));
  } catch {
    return true;
  }
  return by?.v8 !== process.versions.v8 || by?.arch !== process.arch;
}

const built = mtime(LAST_OUTPUT);
if (built === undefined || Math.max(...INPUTS.map(newest)) > built || builtByAnotherNode()) {
  // Under npm, npm_execpath is the npm that runs this: the same one builds.
  const npm = process.env.npm_execpath;
  const args = ['run', 'build', '--silent'];
  const r = npm
    ? spawnSync(process.execPath, [npm, ...args], { stdio: 'inherit' })
    : spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { stdio: 'inherit' });
  if (r.error) throw r.error;
  process.exitCode = r.status ?? 1;
}
