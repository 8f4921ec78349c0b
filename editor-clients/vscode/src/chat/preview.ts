/** The route preview under the chat input (pure). */

import { shortModelName } from '../common/format';
import type { RequestFailure } from '../protocol/errors';
import type { PreviewResult } from '../protocol/types';
import type { PreviewView } from './messages';

export function previewView(draft: string, result: PreviewResult): PreviewView {
  if (result.command) {
    return { draft, text: `command ${result.command}`, tone: 'command', detail: 'Handled by Switchman; no model is called.' };
  }
  if (result.error) {
    return { draft, text: result.error.message, tone: 'error', detail: result.text };
  }
  const model = result.model ? shortModelName(result.model) : 'no model';
  const why = result.summary ? ` · ${result.summary}` : '';
  return { draft, text: `→ ${model}${why}`, tone: 'route', detail: result.text };
}

export function previewFailure(draft: string, failure: RequestFailure): PreviewView {
  return { draft, text: failure.message, tone: 'error', detail: null };
}

/** Enter while an answer is being written sends nothing (the daemon runs one turn at a time): say so. */
export function busyPreview(draft: string): PreviewView {
  return { draft, text: 'Not sent: an answer is still being written. Stop it, or press Enter again when it ends.',
    tone: 'busy', detail: null };
}
