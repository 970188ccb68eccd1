import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { engineSchemaFiles } from '../../src/actions/engine-schema-files.js';
import { apiSchemaFiles, render } from '../../src/api/schema-files.js';
import { ACTIONS } from '../../src/api/catalog.js';
import { explainingAjv } from '../../src/api/validate.js';

const dir = join(import.meta.dirname, '..', '..', 'schemas', 'api');

describe('schemas/api', () => {
  const files = apiSchemaFiles();

  it('are up to date with the TypeBox sources (run `npm run schemas` when this fails)', async () => {
    const onDisk = (await readdir(dir)).sort();
    expect(onDisk).to.deep.equal([...files.keys()].sort());
    for (const [name, schema] of files) {
      expect(await readFile(join(dir, name), 'utf8'), name).to.equal(render(schema));
    }
  });

  it('give every action an input and an output schema, and each compiles as JSON Schema 2020-12', () => {
    for (const action of ACTIONS) {
      for (const part of ['input', 'output']) {
        const schema = files.get(`${action}.${part}.schema.json`) as { $id: string } | undefined;
        expect(schema, `${action} ${part}`).to.be.an('object');
        // A fresh compile by $id-less copy: the shared instance already holds the TypeBox originals.
        const { $id: _id, ...rest } = schema as { $id: string };
        expect(() => explainingAjv().compile(rest), `${action} ${part}`).not.to.throw();
      }
    }
  });
});

describe('schemas/engine', () => {
  it('are up to date with the engine actions (run `npm run schemas` when this fails), each JSON Schema 2020-12', async () => {
    const files = engineSchemaFiles();
    const engine = join(dir, '..', 'engine');
    expect((await readdir(engine)).sort()).to.deep.equal([...files.keys()].sort());
    for (const [name, schema] of files) {
      expect(await readFile(join(engine, name), 'utf8'), name).to.equal(render(schema));
      const { $id: _id, ...rest } = schema as { $id: string };
      expect(() => explainingAjv().compile(rest), name).not.to.throw();
    }
  });
});

describe('schemas/playbook.schema.json', () => {
  it('is up to date and compiles as JSON Schema 2020-12', async () => {
    const { playbookSchema } = await import('../../src/playbook/schema.js');
    const schema = playbookSchema();
    expect(await readFile(join(dir, '..', 'playbook.schema.json'), 'utf8')).to.equal(render(schema));
    const { $id: _id, ...rest } = schema;
    const validate = explainingAjv().compile(rest);
    expect(
      validate({
        version: 1,
        name: 'ok',
        on: { manual: true },
        steps: [{ id: 'a', uses: 'log', with: { message: 'hi' } }],
      }),
    ).to.equal(true);
    expect(
      validate({
        version: 1,
        name: 'ok',
        on: { manual: true },
        steps: [{ id: 'a', uses: 'log', with: { mesage: 'hi' } }],
      }),
    ).to.equal(false);
  });
});
