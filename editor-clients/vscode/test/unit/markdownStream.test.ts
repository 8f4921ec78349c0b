import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markdown, MarkdownStream, renderBlocks } from '../../src/webview/markdownStream';

/** Answers with what makes a block's end hard to tell: fences, lists, tables, quotes, setext headings. */
const ANSWERS = [
  '**Fix login check**\n\nCompare the password too, not only the user name:\n\n```python\nreturn check(user, password)\n\n# done\n```\nThat is all.\n',
  '# Plan\n\n1. read the file\n2. change it\n\n   with a second paragraph\n3. test\n\n- a\n- b\n\n  continued\n- c\n\nafter the list\n#\n#not a heading\n',
  '| name | value |\n|------|------:|\n| a | 1 |\n| b | 2 |\nstill a row\n\nText\nwith a lazy line\n> quoted\ncontinued lazily\n\n> another quote\n\n---\nSetext\n======\n',
  'Para\n    not code (lazy)\n\n    indented code\n\n    more code\n\nend\n~~~\nunclosed fence at the end\n\n* item\n',
  'A table that interrupts\na | b\n- | -\n1 | 2\n\nfoo\n- bar\n\nbaz\n***\n* * *\nqux\n\n1) one\n2) two\n\n3. three\n',
  // '-|-' under 'a|b' makes a table that ends the paragraph 'foo'; '-|-x' does not. '2' is a paragraph, '2.' an item.
  'foo\na|b\n-|-x\n\n1. a\n\n2. b\n\n3\n',
  'CRLF line\r\nends\r\n\r\nnext\r\nparagraph with `code` and [a link](https://example.com)\r\n',
];

/** A streamed answer: every prefix of `text`, one character more each time. */
function* prefixes(text: string): Generator<string> {
  for (let length = 1; length <= text.length; length++) yield text.slice(0, length);
}

describe('markdown of an answer', () => {
  it('does not make file names into web links, and keeps the links that name their scheme', () => {
    const html = markdown.render('Deleted util.py and README.md (see main.rs); docs at https://example.com/x.');
    assert.equal(html, '<p>Deleted util.py and README.md (see main.rs); docs at '
      + '<a href="https://example.com/x">https://example.com/x</a>.</p>\n');
  });
});

describe('MarkdownStream', () => {
  it('shows at each delta what a full render of the text so far gives', () => {
    for (const answer of ANSWERS) {
      const stream = new MarkdownStream();
      for (const text of prefixes(answer)) {
        const shown = stream.update(text);
        assert.equal(shown.finished.join('') + shown.tail, markdown.render(text), `after ${JSON.stringify(text)}`);
      }
    }
  });

  it('never changes a finished block: each is the final render\'s block at that place', () => {
    for (const answer of ANSWERS) {
      const final = renderBlocks(answer);
      const stream = new MarkdownStream();
      let finished = 0;
      for (const text of prefixes(answer)) {
        const shown = stream.update(text);
        assert.ok(shown.finished.length >= finished);
        finished = shown.finished.length;
        assert.deepEqual(shown.finished, final.slice(0, finished), `after ${JSON.stringify(text)}`);
      }
      // Most of the answer was finished before its end: blocks are not held back needlessly.
      assert.ok(finished >= final.length - 2, `${finished} of ${final.length} blocks finished in ${JSON.stringify(answer)}`);
    }
  });

  it('renders the final text as a full render does, block by block', () => {
    for (const answer of ANSWERS) assert.equal(renderBlocks(answer).join(''), markdown.render(answer));
    // A link reference defined after its use: resolved in the final render.
    const text = 'See [the docs].\n\nMore text.\n\n[the docs]: https://example.com/docs\n';
    const stream = new MarkdownStream();
    for (const prefix of prefixes(text)) stream.update(prefix);
    assert.equal(renderBlocks(text).join(''), markdown.render(text));
    assert.match(renderBlocks(text)[0], /href="https:\/\/example.com\/docs"/);
  });

  it('finishes a paragraph at the blank line after it, while the next one is still a word', () => {
    const stream = new MarkdownStream();
    assert.deepEqual(stream.update('First paragraph.\n\nSec'), { finished: ['<p>First paragraph.</p>\n'], tail: '<p>Sec</p>\n' });
  });

  it('keeps a block open while what follows could still join it', () => {
    const stream = new MarkdownStream();
    // '#' alone is an empty heading that ends the paragraph, but '#x' would continue it.
    assert.deepEqual(stream.update('foo\n#').finished, []);
    // A list goes on after a blank line when the next line is indented.
    assert.deepEqual(stream.update('foo\n#x\n\n- a\n\n').finished, ['<p>foo\n#x</p>\n']);
    assert.equal(stream.update('foo\n#x\n\n- a\n\n  b').finished.length, 1);
    // An open fence holds everything after it, blank lines and '#' included.
    const fence = new MarkdownStream();
    assert.deepEqual(fence.update('```\ncode\n\n# not a heading\n\nstill code\n').finished, []);
    assert.equal(fence.update('```\ncode\n\n# not a heading\n\nstill code\n```\nafter\n\nmore').finished.length, 2);
    // A table's header line is a paragraph until the line under it arrives.
    const table = new MarkdownStream();
    assert.deepEqual(table.update('intro\n\na | b\n').finished, ['<p>intro</p>\n']);
    assert.match(table.update('intro\n\na | b\n--|--\n1 | 2\n').tail, /<table>/);
  });

  it('parses only the unfinished tail on each delta: a long answer costs work in proportion to its length', () => {
    const answer = Array.from({ length: 300 }, (_, i) => `Paragraph ${i} says something about the code.\n\n`).join('');
    const stream = new MarkdownStream();
    let shown = stream.update('');
    for (let length = 8; length <= answer.length; length += 8) shown = stream.update(answer.slice(0, length));
    assert.equal(shown.finished.join('') + shown.tail, markdown.render(answer));
    // Each delta parses the last block or two (under 100 characters here): about 5 × the answer's
    // length in all, where a full render per delta parses answer.length² / 16 characters (≈ 12 million).
    assert.ok(stream.parsedChars < 10 * answer.length, `parsed ${stream.parsedChars} characters for ${answer.length}`);
  });

  it('starts again when the text is not a continuation of the last one', () => {
    const stream = new MarkdownStream();
    stream.update('one\n\ntwo\n\nthr');
    assert.deepEqual(stream.update('other\n\nte'), { finished: ['<p>other</p>\n'], tail: '<p>te</p>\n' });
  });
});
