/**
 * `node --import ./module-log.mjs ...`: appends to the file named by MODULE_LOG every module the process
 * loads, one URL or path per line: ES modules as they are imported, and at exit every module in require.cache
 * (what require() loaded, ES modules included; not what those ES modules import in turn).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.MODULE_LOG;
if (file) {
  writeFileSync(file, '');
  register(new URL('./module-log-hooks.mjs', import.meta.url), { data: { file } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => appendFileSync(file, `${Object.keys(require.cache).join('\n')}\n`));
}
