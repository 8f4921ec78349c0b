import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

// `npm test` runs from the extension folder.
const ROOT = process.cwd();
/** Drawn only with an emoji font: without one (Debian's chromium, many Linux machines) an empty box. */
const EMOJI = /[\u{1F000}-\u{1FAFF}]|\p{Emoji_Presentation}/u;

/** The code of a source file, without its comments (which may name 👍 freely). */
function code(text: string): string[] {
  return text.split('\n').map((line) => line.replace(/\/\/.*$/, '')).filter((line) => !/^\s*(\/\*|\*)/.test(line));
}

describe('the chat panel draws no emoji', () => {
  it('uses icons or words for its glyphs, in the webview and the chat state it renders', () => {
    const files = ['src/webview', 'src/chat'].flatMap((dir) => readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.ts')).map((name) => join(dir, name)));
    const found = [...files, 'media/chat.css'].flatMap((file) => code(readFileSync(join(ROOT, file), 'utf8'))
      .flatMap((line, i) => (EMOJI.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));
    assert.ok(files.length > 10, 'the sources were found');
    assert.deepEqual(found, []);
  });
});
