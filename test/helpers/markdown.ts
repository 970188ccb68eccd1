/** The code examples of the Markdown docs, as the tests of docs/ read them. */

/** The fenced blocks of a Markdown file in language `lang` (a pattern), with the line each starts on. */
export function codeBlocks(markdown: string, lang: RegExp): { line: number; text: string }[] {
  const blocks: { line: number; text: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\S+)\s*$/.exec(lines[i] as string);
    if (!open || !new RegExp(`^(?:${lang.source})$`).test(open[1] as string)) continue;
    const indent = (lines[i] as string).search(/\S/);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j] as string); j++)
      body.push((lines[j] as string).slice(indent));
    blocks.push({ line: i + 2, text: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

/** The ```yaml blocks of a Markdown file, with the line each starts on. */
export const yamlBlocks = (markdown: string) => codeBlocks(markdown, /ya?ml/);
