/**
 * The exit code of a usage error, every command's: a flag or an argument it does not take or cannot read, an
 * unknown action, a playbook that does not validate, a path with no playbook. A failure of what the command did (a
 * run failed, a test case failed) is 1.
 */
export const EXIT_USAGE = 2;
