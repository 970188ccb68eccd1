/**
 * An input given a value its type does not take, said as the console's run form shows it: the field (labelled
 * with the input's name), what is typed in it, and what it takes. The form sends the text of a list's or an
 * object's field as typed, and the daemon reads it (coerceInputs), so that this is the one place it is said.
 * A required input left out is a field left empty: filling it in is how it is given.
 */
import { JSON_EXAMPLE, type InputMismatch, type InputType, type InputWording } from '../runner/inputs.js';

const TAKES: Record<InputType, string> = {
  string: 'text',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'a JSON list',
  object: 'a JSON object',
};

/** What is typed, on one line and cut short: a field can hold pages of it. */
const LONGEST = 60;

export function formWording({ input, type, got, unread }: InputMismatch): string {
  const text = (unread && typeof got === 'string' ? got : JSON.stringify(got)).replace(/\s+/g, ' ').trim();
  const typed = text.length > LONGEST ? `${text.slice(0, LONGEST - 1)}…` : text;
  const example = JSON_EXAMPLE[type];
  return `Input ${input}: ${typed} is not ${TAKES[type]}.${example ? ` Write it like ${example}.` : ''}`;
}

/** How the console's run form gives inputs: in its fields. */
export const FORM_WORDING: InputWording = {
  mismatch: formWording,
  missing: (missing) => (missing.length === 1 ? 'fill in its field.' : 'fill in their fields.'),
};
