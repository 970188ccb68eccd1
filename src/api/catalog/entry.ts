/** A catalog entry whose schemas are read through getters, so that they load only when first needed. */
import type Type from 'typebox';
import type { Operation } from './operation.js';

type Base = Omit<Operation, 'input' | 'output' | 'page' | 'request'>;

export const entry = <const B extends Base, I extends Type.TSchema, O extends Type.TSchema>(
  base: B,
  input: () => I,
  output: () => O,
  page?: () => Type.TSchema,
) =>
  ({
    ...base,
    get input() {
      return input();
    },
    get output() {
      return output();
    },
    get page() {
      return page?.();
    },
  }) as const satisfies Operation;
