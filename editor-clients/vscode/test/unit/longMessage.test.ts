import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FOLD_OVER_LINES, foldedMessage, foldLabel } from '../../src/chat/longMessage';

describe('a long message of the user\'s', () => {
  it('is folded to its first lines, with a toggle naming how many it has; a short one is shown whole', () => {
    // A pasted log of thousands of lines was shown whole in the chat, the answer far below it.
    const log = Array.from({ length: 8000 }, (_, i) => `line ${i + 1}`).join('\n');
    const fold = foldedMessage(log);
    assert.ok(fold);
    assert.equal(fold.head, Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    assert.deepEqual([foldLabel(fold, false), foldLabel(fold, true)], ['Show all (8000 lines)', 'Show less']);
    const short = Array.from({ length: FOLD_OVER_LINES }, () => 'x').join('\n');
    assert.equal(foldedMessage(short), undefined, `${FOLD_OVER_LINES} lines: whole`);
    assert.ok(foldedMessage(`${short}\nx`), 'one more: folded');
  });
});
