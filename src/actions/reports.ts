/**
 * Where `report.write` writes: only inside the reports directory (FLEETBOOK_REPORTS_DIR, default ./reports).
 * A step's `path` is relative to it, so a daemon started from another working directory writes to the same
 * place. The text of the path is judged first (policy.ts: not absolute, never climbing with `..`); then the
 * directories are walked one at a time from the reports directory, so that a symbolic link on the way cannot
 * lead outside it, and a symbolic link at the file's own name is refused.
 *
 * A report is written to a temporary file beside it and renamed over its name once whole (and on disk): a reader
 * never finds half a report under the name, and a write that fails, or a crash, leaves the previous report of
 * that name as it was. The temporary file is named after its writer (pid and host): the next write of that name
 * on the same machine removes those whose writer is no longer running, left by a crash.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, isAbsolute, join, posix, relative, sep } from 'node:path';
import { makeDirs } from '../util/files.js';
import { RefusedError, REPORTS_DIR_SETTING, reportPathProblem } from './policy.js';

const ACTION = 'report.write';
/** The temporary file: a new one, write only, never through a symbolic link. */
const FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** True when `p` is `root` or below it. */
function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Where `path`, relative to `reportsDir` (absolute), is written: the file, and the directory it is in.
 * Refused (a RefusedError naming the path and the directory): an absolute path, one that climbs with `..`, a
 * directory on the way that is a symbolic link to somewhere outside the reports directory, and a symbolic
 * link at the file's own name. The reports directory itself may be a link: the directory it leads to counts.
 * With `create`, the directories it needs are made; without (a dry run's check), nothing is, and a directory
 * not there yet ends the walk: what would be made below it cannot be a link.
 */
async function reportPlace(
  reportsDir: string,
  path: string,
  create: boolean,
): Promise<{ file: string; dir: string } | undefined> {
  const shown = JSON.stringify(path);
  const refuse = (why: string) =>
    new RefusedError(
      ACTION,
      `${why}; reports are written only inside ${reportsDir} (${REPORTS_DIR_SETTING})`,
      REPORTS_DIR_SETTING,
    );
  const problem = reportPathProblem(path);
  if (problem) throw refuse(problem);
  if (create) makeDirs(reportsDir);
  else if (!(await lstat(reportsDir).catch(() => undefined))) return undefined;
  const root = await realpath(reportsDir);
  const parts = posix
    .normalize(path)
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  const name = parts.pop() as string;
  let dir = root;
  for (const part of parts) {
    const next = join(dir, part);
    let st = await lstat(next).catch((e: unknown) => {
      if (code(e) === 'ENOENT') return undefined;
      throw e;
    });
    if (!st && !create) return undefined;
    if (!st) {
      await mkdir(next).catch((e: unknown) => {
        if (code(e) !== 'EEXIST') throw e;
      });
      st = await lstat(next);
    }
    if (st.isSymbolicLink()) {
      const real = await realpath(next);
      if (!inside(root, real))
        throw refuse(
          `path ${shown} leads through the symbolic link ${next} to ${real}, outside the reports directory`,
        );
      if (!(await stat(real)).isDirectory()) throw new Error(`${ACTION}: ${next} is not a directory`);
      dir = real;
    } else if (st.isDirectory()) dir = next;
    else throw new Error(`${ACTION}: ${next} is not a directory`);
  }
  const file = join(dir, name);
  const existing = await lstat(file).catch((e: unknown) => {
    if (code(e) === 'ENOENT') return undefined;
    throw e;
  });
  if (existing?.isSymbolicLink())
    throw refuse(`path ${shown} is a symbolic link (${file}): a report is never written through one`);
  return { file, dir };
}

/**
 * A dry run's check of a report it plans: refused as openReport refuses it, with the same error, and nothing
 * is made, neither the file nor a directory.
 */
export async function checkReportPath(reportsDir: string, path: string): Promise<void> {
  await reportPlace(reportsDir, path, false);
}

/**
 * Opens a temporary file to write `path` in, relative to `reportsDir` (absolute), and makes the directories it
 * needs; `file` is where it goes once written. Refused as reportPlace says.
 */
export async function openReport(
  reportsDir: string,
  path: string,
): Promise<{ file: string; temp: string; handle: FileHandle }> {
  const { file, dir } = (await reportPlace(reportsDir, path, true)) as { file: string; dir: string };
  const name = basename(file);
  await removeLeftovers(dir, name);
  const temp = join(dir, `.${name}.${process.pid}@${hostname()}.${randomUUID().slice(0, 8)}.partial`);
  return { file, temp, handle: await open(temp, FLAGS, 0o666) };
}

/** True when a process `pid` runs on this machine (one of another user's counts: EPERM). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return code(e) === 'EPERM';
  }
}

/**
 * Removes the temporary files of `name` in `dir` whose writer ran on this machine and runs no more: a crash
 * left them. A writer still running, or on another machine sharing the directory, keeps its own.
 */
async function removeLeftovers(dir: string, name: string): Promise<void> {
  const prefix = `.${name}.`;
  const here = hostname();
  for (const entry of await readdir(dir)) {
    if (!entry.startsWith(prefix) || !entry.endsWith('.partial')) continue;
    const writer = /^(\d+)@(.+)\.[0-9a-f]{8}$/.exec(entry.slice(prefix.length, -'.partial'.length));
    if (writer?.[2] === here && !running(Number(writer[1]))) await rm(join(dir, entry), { force: true });
  }
}

/**
 * Writes the chunks `text` gives to `path` under `reportsDir` (see openReport), one after the other, so that a
 * report of many rows is never one string. `text` is called once the file is open. Gives the file written,
 * absolute, and whether it replaced a report of that name (a second run of the day, a rerun by hand).
 */
export async function writeReport(
  reportsDir: string,
  path: string,
  text: () => AsyncIterable<string>,
): Promise<{ file: string; replaced: boolean }> {
  const { file, temp, handle } = await openReport(reportsDir, path);
  let replaced: boolean;
  try {
    try {
      for await (const chunk of text()) {
        const bytes = Buffer.from(chunk);
        for (let at = 0; at < bytes.length;) at += (await handle.write(bytes, at)).bytesWritten;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    replaced = await lstat(file).then(
      () => true,
      () => false,
    );
    await rename(temp, file);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  return { file, replaced };
}
