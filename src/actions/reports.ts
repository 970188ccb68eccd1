/**
 * Where `report.write` writes: only inside the reports directory (FLEETBOOK_REPORTS_DIR, default ./reports).
 * A step's `path` is relative to it, so a daemon started from another working directory writes to the same
 * place. The text of the path is judged first (policy.ts: not absolute, never climbing with `..`); then the
 * directories are walked one at a time from the reports directory, so that a symbolic link on the way cannot
 * lead outside it, and a symbolic link at the file's own name is refused.
 *
 * A report is written to a temporary file beside it and renamed over its name once whole (and on disk): a reader
 * never finds half a report under the name, and a write that fails, or a crash, leaves the previous report of
 * that name as it was.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
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
 * Opens a temporary file to write `path` in, relative to `reportsDir` (absolute), and makes the directories it
 * needs; `file` is where it goes once written.
 * Refused (a RefusedError naming the path and the directory): an absolute path, one that climbs with `..`, a
 * directory on the way that is a symbolic link to somewhere outside the reports directory, and a symbolic
 * link at the file's own name. The reports directory itself may be a link: the directory it leads to counts.
 */
export async function openReport(
  reportsDir: string,
  path: string,
): Promise<{ file: string; temp: string; handle: FileHandle }> {
  const shown = JSON.stringify(path);
  const refuse = (why: string) =>
    new RefusedError(
      ACTION,
      `${why}; reports are written only inside ${reportsDir} (${REPORTS_DIR_SETTING})`,
      REPORTS_DIR_SETTING,
    );
  const problem = reportPathProblem(path);
  if (problem) throw refuse(problem);
  makeDirs(reportsDir);
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
  if ((await lstat(file).catch(() => undefined))?.isSymbolicLink())
    throw refuse(`path ${shown} is a symbolic link (${file}): a report is never written through one`);
  const temp = join(dir, `.${name}.${randomUUID().slice(0, 8)}.partial`);
  return { file, temp, handle: await open(temp, FLAGS, 0o666) };
}

/**
 * Writes the chunks `text` gives to `path` under `reportsDir` (see openReport), one after the other, so that a
 * report of many rows is never one string; the file written, absolute. `text` is called once the file is open.
 */
export async function writeReport(
  reportsDir: string,
  path: string,
  text: () => AsyncIterable<string>,
): Promise<string> {
  const { file, temp, handle } = await openReport(reportsDir, path);
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
    await rename(temp, file);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  return file;
}
