/** The YAML examples of the Markdown docs, as the tests of docs/ read them. */

/** The ```yaml blocks of a Markdown file, with the line each starts on. */
export function yamlBlocks(markdown: string): { line: number; text: string }[] {
  const blocks: { line: number; text: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```ya?ml\s*$/.test(lines[i] as string)) continue;
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
