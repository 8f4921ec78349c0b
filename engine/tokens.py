"""Input-size estimates for routing.

Routing needs a size before any provider is called, so it estimates rather
than asks the provider's tokenizer: about four characters per token for text
(close to both Anthropic's and OpenAI's tokenizers on English and code) and a
flat allowance per image. The same estimate is used for every candidate.
"""

from __future__ import annotations

from collections.abc import Iterable

from switchman.engine.messages import Message, image_count, message_texts

CHARS_PER_TOKEN = 4
TOKENS_PER_IMAGE = 1600
TOKENS_PER_MESSAGE = 4


def estimate_text(text: str) -> int:
    """Estimated tokens of ``text``."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_turn(texts: Iterable[str], images: int = 0) -> int:
    """Estimated input tokens of a request made of ``texts`` (system prompt, tools,
    history, new message) plus ``images``."""
    total = 0
    for text in texts:
        total += estimate_text(text) + TOKENS_PER_MESSAGE
    return total + images * TOKENS_PER_IMAGE


def estimate_messages(messages: list[Message]) -> int:
    """Estimated input tokens of ``messages`` in a request (a sum over the messages, so a
    transcript's estimate can be kept up to date as messages are added)."""
    return estimate_turn(message_texts(messages), image_count(messages))
