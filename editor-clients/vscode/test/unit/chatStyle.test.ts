import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

// `npm test` runs from the extension folder.
const CSS = readFileSync(join(process.cwd(), 'media/chat.css'), 'utf8');

/** The declarations of the rule whose selector list is exactly `selector`, custom properties resolved one level. */
function rule(selector: string): string {
  const found = [...CSS.matchAll(/([^{}]+)\{([^{}]*)\}/g)].find((m) => m[1].replace(/\/\*[\s\S]*?\*\//g, '').trim() === selector);
  assert.ok(found, `chat.css has a rule for ${selector}`);
  const root = [...CSS.matchAll(/:root\s*\{([^{}]*)\}/g)].map((m) => m[1]).join(';');
  return found[2].replace(/var\((--[\w-]+)\)/g, (whole, name: string) => {
    const defined = new RegExp(`${name}\\s*:\\s*([^;]+);`).exec(root);
    return defined ? defined[1].trim() : whole;
  });
}

describe('chat.css: code blocks', () => {
  // In Light Modern textCodeBlock.background is the panel's own #F8F8F8 (in Light+ a faint grey):
  // a fenced block was barely told apart from the prose around it.
  for (const selector of ['.markdown pre', '.entry.command pre']) {
    it(`${selector} takes the theme's code block colour, with a fallback and a visible border`, () => {
      const declarations = rule(selector);
      assert.match(declarations, /background:\s*color-mix\(in srgb, var\(--vscode-textCodeBlock-background,\s*[^)]+\)/);
      assert.match(declarations, /var\(--vscode-foreground\)\);/, 'tinted towards the text: Light Modern gives the panel\'s own colour');
      assert.match(declarations, /border:\s*1px solid [^;]*rgba\(128, 128, 128, \.\d+\)/);
    });
  }
});

describe('chat.css: a command\'s output', () => {
  it('wraps a line with no spaces (minified JSON, a long path) instead of scrolling sideways', () => {
    // A 5,000-character line showed its first 150 characters and a horizontal scrollbar.
    const declarations = rule('.tool-output');
    assert.match(declarations, /white-space:\s*pre-wrap/);
    assert.match(declarations, /overflow-wrap:\s*anywhere/);
  });
});

describe('chat.css: approval cards', () => {
  it('wrap a command\'s, a diff\'s and a task\'s long lines: scrolled sideways, their end was out of sight', () => {
    for (const selector of ['.approval-command, .approval-diff', '.approval-task']) {
      assert.match(rule(selector), /white-space:\s*pre-wrap/, selector);
      assert.match(rule(selector), /overflow-wrap:\s*anywhere/, selector);
    }
  });
});

describe('chat.css: delegation cards', () => {
  it('a folded card shows three lines of its task, an opened one all of it', () => {
    // A planner's task of many paragraphs filled the chat under a card folded to its title.
    const folded = rule('.delegation:not(.open) .delegation-task');
    assert.match(folded, /-webkit-line-clamp:\s*3/);
    assert.match(folded, /overflow:\s*hidden/);
    assert.match(folded, /display:\s*-webkit-box/);
    assert.doesNotMatch(rule('.delegation-task'), /line-clamp/, 'opened: the whole task');
  });
});
