/**
 * Writes schemas/ from the TypeBox schemas, and the generated reference of docs/ (scripts/docs/):
 * `npm run schemas`.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { engineSchemaFiles } from '../src/actions/engine-schema-files.js';
import { apiSchemaFiles, render } from '../src/api/schema-files.js';
import { eventSchemaFiles } from '../src/events/files.js';
import { playbookSchema } from '../src/playbook/schema.js';
import { testFileSchema } from '../src/testing/schema.js';
import { DOCS, renderDoc } from './docs/index.js';

const dir = join(import.meta.dirname, '..', 'schemas', 'api');
await mkdir(dir, { recursive: true });
const files = apiSchemaFiles();
for (const old of await readdir(dir)) if (!files.has(old)) await rm(join(dir, old));
for (const [name, schema] of files) await writeFile(join(dir, name), render(schema));
console.log(`wrote ${files.size} files to schemas/api/`);
const engine = join(dir, '..', 'engine');
await mkdir(engine, { recursive: true });
const engineFiles = engineSchemaFiles();
for (const old of await readdir(engine)) if (!engineFiles.has(old)) await rm(join(engine, old));
for (const [name, schema] of engineFiles) await writeFile(join(engine, name), render(schema));
console.log(`wrote ${engineFiles.size} files to schemas/engine/`);
await writeFile(join(dir, '..', 'playbook.schema.json'), render(playbookSchema()));
console.log('wrote schemas/playbook.schema.json');
await writeFile(join(dir, '..', 'playbook-test.schema.json'), render(testFileSchema()));
console.log('wrote schemas/playbook-test.schema.json');
const events = join(dir, '..', 'events');
await mkdir(events, { recursive: true });
for (const [name, schema] of eventSchemaFiles()) await writeFile(join(events, name), render(schema));
console.log('wrote schemas/events/');
const docs = join(import.meta.dirname, '..', 'docs');
for (const name of Object.keys(DOCS)) {
  const file = join(docs, name);
  await writeFile(file, await renderDoc(name, file));
  console.log(`wrote docs/${name}`);
}
