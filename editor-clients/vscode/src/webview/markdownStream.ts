/**
 * Markdown rendered block by block while an answer streams (no DOM here: the page puts each
 * block's HTML into its own nodes, see render.ts).
 *
 * A top-level block (paragraph, list, code block, table, ...) is *finished* once nothing the
 * stream may still add can change it; its HTML is then rendered once and never again. Only the
 * rest (the *tail*: the block still growing, and whatever follows it) is parsed and rendered on
 * each delta, so a long answer costs work in proportion to its last block, not to its length.
 */

import MarkdownIt from 'markdown-it';

type Token = ReturnType<MarkdownIt['parse']>[number];
type Env = { references?: Record<string, unknown> };

/**
 * Answers are untrusted text: raw HTML is escaped (html: false) and markdown-it refuses
 * javascript:, vbscript:, file: and most data: links; the page's CSP blocks inline scripts too.
 */
export const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });
/**
 * Only addresses with their scheme (`https://…`, and e-mail addresses) become links: with fuzzy links
 * a file name whose extension is a country's domain (`util.py`, `README.md`, `main.rs`, `run.sh`)
 * was a link to that web site (`http://util.py`), which a click opened in the browser.
 */
markdown.linkify.set({ fuzzyLink: false });

/** What the answer shows: the finished blocks' HTML (each rendered once) and the tail's. */
export interface StreamedMarkdown {
  finished: readonly string[];
  tail: string;
}

/** One top-level block of a parse: its tokens and its first and end line (end exclusive). */
interface Block {
  tokens: Token[];
  start: number;
  end: number;
}

/**
 * Blocks closed for good by a blank line after them: a later line cannot continue them (unlike a
 * list, an indented code block or a block quote, which may go on after a blank line).
 */
const CLOSED_BY_BLANK = new Set(['paragraph_open', 'heading_open', 'hr', 'table_open', 'fence']);

/** markdown-it's own line-ending normalisation, done first so that line numbers and offsets agree. */
function normalise(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** The top-level blocks of a token stream, in order (a link reference definition makes none). */
function blocksOf(tokens: Token[]): Block[] {
  const blocks: Block[] = [];
  let open: Token[] | null = null;
  for (const token of tokens) {
    if (open) {
      open.push(token);
      if (token.level === 0 && token.nesting === -1) {
        blocks[blocks.length - 1].tokens = open;
        open = null;
      }
      continue;
    }
    const [start, end] = token.map ?? [0, 0];
    blocks.push({ tokens: [token], start, end });
    if (token.nesting === 1) open = [token];
  }
  return blocks;
}

function renderBlock(block: Block, env: Env): string {
  return markdown.renderer.render(block.tokens, markdown.options, env);
}

/** The whole text rendered at once, split into its top-level blocks' HTML (joined: `markdown.render(text)`). */
export function renderBlocks(text: string): string[] {
  const env: Env = {};
  return blocksOf(markdown.parse(normalise(text), env)).map((block) => renderBlock(block, env));
}

/**
 * A streaming answer's Markdown. `update` takes the whole text so far; when it extends the last
 * one, only the unfinished tail is parsed again. `finished` never changes an entry it returned,
 * and `finished.join('') + tail` is what a full render of the text gives, except that a link
 * reference defined after its use is resolved only at the end: {@link renderBlocks} of the final
 * text is the answer's final HTML.
 */
export class MarkdownStream {
  private text = '';
  private finished: string[] = [];
  /** Offset in `text` where the tail starts (the start of a line). */
  private tailStart = 0;
  /** The link reference definitions of the finished part, as markdown-it keeps them. */
  private references: Record<string, unknown> = {};
  /** Characters parsed so far (the cost the incremental rendering saves; read by the tests). */
  parsedChars = 0;

  update(raw: string): StreamedMarkdown {
    const text = normalise(raw);
    if (!text.startsWith(this.text)) this.reset();
    this.text = text;
    const tail = text.slice(this.tailStart);
    const env: Env = { references: { ...this.references } };
    this.parsedChars += tail.length;
    const blocks = blocksOf(markdown.parse(tail, env));
    const lines = tail.split('\n');
    const finishedCount = this.finishedCount(blocks, lines);
    if (finishedCount > 0) {
      for (const block of blocks.slice(0, finishedCount)) this.finished.push(renderBlock(block, env));
      const firstOpenLine = blocks[finishedCount].start;
      const length = lines.slice(0, firstOpenLine).reduce((sum, line) => sum + line.length + 1, 0);
      // The finished part's reference definitions, for the tails to come (first definition wins).
      const kept: Env = { references: this.references };
      markdown.block.parse(tail.slice(0, length), markdown, kept, []);
      this.parsedChars += length;
      this.references = kept.references ?? {};
      this.tailStart += length;
    }
    const open = blocks.slice(finishedCount);
    return { finished: [...this.finished], tail: open.map((block) => renderBlock(block, env)).join('') };
  }

  /**
   * How many of the tail's first blocks are finished: block i is when block i+1 has started and
   * either a blank line closed block i for good, or the line block i+1 starts on and the one after
   * it are complete (markdown-it decides where a block ends by looking at most one line ahead:
   * '#' alone is a heading that ends a paragraph, '#x' is not; a table needs its second line).
   */
  private finishedCount(blocks: Block[], lines: string[]): number {
    const complete = lines.length - 1; // the last line has no '\n' yet
    let count = 0;
    for (let i = 0; i + 1 < blocks.length; i++) {
      const next = blocks[i + 1];
      const blankAfter = next.start > blocks[i].end && CLOSED_BY_BLANK.has(blocks[i].tokens[0].type);
      if (blankAfter || next.start + 2 <= complete) count = i + 1;
    }
    return count;
  }

  private reset(): void {
    this.text = '';
    this.finished = [];
    this.tailStart = 0;
    this.references = {};
  }
}
