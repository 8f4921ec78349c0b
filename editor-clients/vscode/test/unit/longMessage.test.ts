import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FOLD_OVER_CHARS, FOLD_OVER_LINES, FOLDED_CHARS, foldedMessage, foldedOutput, foldLabel, OUTPUT_FOLD_OVER_LINES, outputFoldLabel,
  terminalText,
} from '../../src/chat/longMessage';

describe('a long message of the user\'s', () => {
  it('is folded to its first lines, with a toggle naming how many it has; a short one is shown whole', () => {
    // A pasted log of thousands of lines was shown whole in the chat, the answer far below it.
    const log = Array.from({ length: 8000 }, (_, i) => `line ${i + 1}`).join('\n');
    const fold = foldedMessage(log);
    assert.ok(fold);
    assert.equal(fold.head, [...Array.from({ length: 10 }, (_, i) => `line ${i + 1}`), '…'].join('\n'));
    assert.deepEqual([foldLabel(fold, false), foldLabel(fold, true)], ['Show all (8000 lines)', 'Show less']);
    const short = Array.from({ length: FOLD_OVER_LINES }, () => 'x').join('\n');
    assert.equal(foldedMessage(short), undefined, `${FOLD_OVER_LINES} lines: whole`);
    assert.ok(foldedMessage(`${short}\nx`), 'one more: folded');
  });

  it('keeps its Attached lines (at its end) in view while folded', () => {
    const log = Array.from({ length: 400 }, (_, i) => `line ${i + 1}`).join('\n');
    const fold = foldedMessage(`${log}\nAttached: src/app.py (lines 3–9)\nAttached: README.md`);
    assert.ok(fold);
    assert.deepEqual(fold.head.split('\n').slice(-3), ['…', 'Attached: src/app.py (lines 3–9)', 'Attached: README.md']);
    assert.equal(foldLabel(fold, false), 'Show all (400 lines)', 'its attachments are no lines of it');
    const few = Array.from({ length: FOLD_OVER_LINES }, () => 'x').join('\n');
    assert.equal(foldedMessage(`${few}\nAttached: a.py\nAttached: b.py`), undefined, 'attachments do not make it long');
  });

  it('folds one very long line (no line breaks) by its characters', () => {
    const line = 'x'.repeat(50_000);
    const fold = foldedMessage(line);
    assert.ok(fold, 'a 50,000-character line was shown whole');
    assert.equal(fold.head, `${'x'.repeat(FOLDED_CHARS)}\n…`);
    assert.equal(foldLabel(fold, false), 'Show all (50,000 characters)');
    assert.equal(foldedMessage('y'.repeat(FOLD_OVER_CHARS)), undefined, `${FOLD_OVER_CHARS} characters: whole`);
  });
});

describe('a command\'s output under its tool line', () => {
  it('is folded to its last lines (where a failure says why), with a toggle; a short one is shown whole', () => {
    const log = ['Exit status 2.', ...Array.from({ length: 300 }, (_, i) => `line ${i + 1}`)].join('\n') + '\n';
    const fold = foldedOutput(log);
    assert.ok(fold);
    assert.equal(fold.tail, ['…', ...Array.from({ length: 8 }, (_, i) => `line ${293 + i}`)].join('\n'));
    assert.deepEqual([outputFoldLabel(fold, false), outputFoldLabel(fold, true)], ['Show all (301 lines)', 'Show less']);
    const short = ['Exit status 0.', ...Array.from({ length: OUTPUT_FOLD_OVER_LINES - 1 }, () => 'x')].join('\n') + '\n';
    assert.equal(foldedOutput(short), undefined, `${OUTPUT_FOLD_OVER_LINES} lines: whole`);
    const wide = foldedOutput(`Exit status 0.\n${'x'.repeat(FOLD_OVER_CHARS)}`);
    assert.ok(wide && wide.tail.length <= FOLDED_CHARS + 2 && outputFoldLabel(wide, false).endsWith('characters)'));
  });

  it('reads as a terminal showed it: no colour codes or other escapes (a box and `[31m`), a carriage return\'s last value', () => {
    assert.equal(terminalText('Exit status 1.\n\x1b[1;31mFAILED\x1b[0m test_login\n\x1b]0;title\x07done\x1b[2K\n'),
      'Exit status 1.\nFAILED test_login\ndone\n');
    assert.equal(terminalText('Exit status 0.\n 10%\r 50%\r100%\r\nok\r\n\tbell\x07 back\x08\n'), 'Exit status 0.\n100%\nok\n\tbell back\n');
    assert.equal(terminalText('plain\ttext\n'), 'plain\ttext\n');
  });
});
