/** The loader hooks of module-log.mjs: each ES module's URL, as it loads. */
import { appendFileSync } from 'node:fs';

let file;
export function initialize(data) {
  file = data.file;
}
export async function load(url, context, next) {
  appendFileSync(file, `${url}\n`);
  return next(url, context);
}
