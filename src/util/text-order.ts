/**
 * The one order of names fleetbook writes out (playbook files, diagnostics, suggestions): English collation,
 * whatever the machine's locale. `localeCompare` with no locale takes the process's, from LANG: on a Danish
 * machine `aa.yaml` came after `z.yaml`, on a Lithuanian one `y.yaml` before `j.yaml`.
 */
const collator = new Intl.Collator('en');

/** Compares two names in the order fleetbook lists them: negative when `a` comes first. */
export const compareText = (a: string, b: string): number => collator.compare(a, b);
