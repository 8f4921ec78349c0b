"""Exception hierarchy for the engine.

::

    SwitchmanError
    ├── UnreadableFile           a file is not a regular, small enough, UTF-8 file
    ├── CheckStopped             the configuration check process exited during a check
    ├── RoutingError             a turn cannot be routed
    │   ├── UnknownAlias         ``@name`` at the start of a message names no model
    │   ├── UnknownModel         a model id or alias (e.g. for /model) names no model
    │   ├── EmptyMessage         nothing left to send after stripping an override
    │   ├── InvalidText          the message is not valid Unicode (a lone surrogate)
    │   ├── NoModelAvailable     every policy in the chain was empty or rejected
    │   └── OverrideUnusable     ``/route override``: the suggested model cannot take the turn
    └── SessionError             a session request cannot be carried out
        ├── UnknownWorkspace     not an open workspace folder
        ├── UnknownSession       no such session
        ├── UnknownTurn          no such turn
        ├── WorkerSession        a worker session cannot take messages
        ├── UnknownProfile       no agent profile has that name
        ├── DelegationDisabled   ``/delegate`` while ``delegation.enabled`` is false
        ├── TurnInProgress       the session is busy with another turn
        ├── TurnElsewhere        the turn runs in another daemon (another editor window)
        ├── InvalidAttachment    an attached file or selection cannot be used
        └── InvalidApply         an Apply names a file or span that cannot be edited

Provider errors live in ``switchman.engine.providers.errors``. Configuration
problems are not exceptions: loading returns every problem found, located
(``switchman.engine.config.problems``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from switchman.engine.wording import unknown_name

if TYPE_CHECKING:
    from switchman.engine.routing.decision import RouteDecided


def sentence(text: str) -> str:
    """``text`` ending as a sentence: a full stop added unless it has one (or ``!``, ``?``), so
    an SDK's "Connection error." followed by our own words does not read "error.. Your"."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


class SwitchmanError(Exception):
    """Base class of every error the engine raises on purpose."""

    code = "switchman_error"

    def as_draft(self) -> str:
        """The error as said of a draft (``switchman/preview``), which nothing has sent yet."""
        return str(self)


class UnreadableFile(SwitchmanError):
    """A file was not read: not a regular file, too large, unreadable or not UTF-8.

    ``reason`` completes "the file ..."; ``line`` and ``column`` (0-based) locate
    the first bad byte of a file that is not UTF-8.
    """

    code = "unreadable_file"

    def __init__(self, path: str, reason: str, line: int = 0, column: int = 0) -> None:
        self.path = path
        self.reason = reason
        self.line = line
        self.column = column
        super().__init__(f"{path} {reason}.")


class CheckStopped(SwitchmanError):
    """The configuration check process exited during a check (the next check starts another)."""

    code = "check_stopped"

    def __init__(self) -> None:
        super().__init__("The configuration check stopped unexpectedly.")


class DataFolderUnusable(SwitchmanError):
    """The data folder (sessions, costs, learned patterns, trust) cannot be created or
    written, so the daemon cannot keep anything: every request that needs it says so."""

    code = "data_folder_unusable"

    def __init__(self, folder: str, reason: str, damaged: str | None = None) -> None:
        self.folder = folder
        self.reason = reason
        self.damaged = damaged
        """The database file in the folder that could not be read, when it was one file
        (damaged, or not a database) rather than the folder: that file is what to move."""
        if damaged is not None:
            super().__init__(
                f"Switchman cannot read {damaged} ({reason}): it is damaged or not one of "
                "Switchman's databases, so nothing can be sent until it is out of the way. "
                "Move that file aside (Switchman then starts a new, empty one), then restart "
                "Switchman.")
            return
        super().__init__(
            f"Switchman cannot use its data folder {folder} ({reason}). It keeps your chat "
            "sessions, costs, learned patterns and always-allowed tools there, so nothing "
            "can be sent until it can write it: make the folder writable, or set "
            "SWITCHMAN_DATA_DIR to a folder you can write, then restart Switchman.")


class TrustNotSaved(SwitchmanError):
    """trust.json could not be written (a folder, a file or folder the user may not write)."""

    code = "trust_not_saved"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"Switchman could not change {path} ({reason}), so what is always "
                         "allowed stays as it was. Fix or delete that file.")


class PatternsNotSaved(SwitchmanError):
    """A 👍 / 👎 (or taking one back) could not be written to the pattern store, patterns.db
    (a full disk, a file the user may not write, its write lock held too long): nothing was
    rated."""

    code = "patterns_not_saved"

    def __init__(self, turn_id: str, path: str, reason: str) -> None:
        self.turn_id = turn_id
        super().__init__(f"Switchman could not save this rating in its pattern store {path} "
                         f"({reason}), so the turn's rating stays as it was. Free space on "
                         "that disk or make the file writable, then rate the answer again.")


class RoutingError(SwitchmanError):
    """A turn could not be routed; no turn starts."""

    code = "routing_error"


class UnknownAlias(RoutingError):
    """``@alias`` at the start of a message does not name a model."""

    code = "unknown_alias"

    def __init__(self, token: str, suggestions: list[str], note: str = "") -> None:
        self.token = token
        self.suggestions = suggestions
        self.hint = f" Did you mean {', '.join('@' + s for s in suggestions)}?" if suggestions \
            else ""
        self.hint += f" {note}" if note else ""
        super().__init__(
            f"Unknown model alias '@{token}'. The message was not sent.{self.hint} "
            "Start the message with \\@ to send a literal @."
        )

    def as_draft(self) -> str:
        return (f"Unknown model alias '@{self.token}': sent like this, the message would be "
                f"refused.{self.hint} Start it with \\@ to send a literal @.")


class UnknownModel(RoutingError):
    """A model id or alias given by the user names no configured model."""

    code = "unknown_model"

    def __init__(self, name: str, suggestions: list[str], note: str = "") -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"Unknown model '{name}'.{hint}" + (f" {note}" if note else ""))


class EmptyMessage(RoutingError):
    """The message is empty once the ``@alias`` token is removed."""

    code = "empty_message"

    def __init__(self, token: str = "") -> None:
        self.token = token
        super().__init__(f"Nothing to send after '@{token}'. Type your message after the alias."
                         if token else "Nothing to send: the message is empty.")


class InvalidText(RoutingError):
    """The message holds a lone UTF-16 surrogate (or, from Neovim, a byte that is not UTF-8, read
    as one), which no file, database or API can store."""

    code = "invalid_text"

    def __init__(self, where: str, offset: int) -> None:
        self.where = where
        self.offset = offset
        super().__init__(f"The {where} contains an invalid character (a byte that is not "
                         f"UTF-8, or a lone UTF-16 surrogate) at position {offset}; nothing was "
                         "sent. Remove it (it often comes from a bad copy and paste) and send "
                         "again.")


def check_text(text: str, where: str = "message") -> None:
    """Raise :class:`InvalidText` if ``text`` cannot be encoded as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidText(where, exc.start) from None


class NoModelAvailable(RoutingError):
    """Every policy in the chain returned nothing or was rejected by validation."""

    code = "no_model_available"

    def __init__(self, decision: RouteDecided, message: str) -> None:
        self.decision = decision
        super().__init__(message)


class OverrideUnusable(RoutingError):
    """A required override (``/route override``'s suggested model) was rejected by
    validation; the turn did not start rather than fall through to another model."""

    code = "override_unusable"

    def __init__(self, model: str, reason: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"Cannot run the last message again on {model}: {reason}. Nothing "
                         "was sent or recorded; the suggestion still stands (/route override "
                         "once the model can be used, or /route ignore).")


class SessionError(SwitchmanError):
    """A request about sessions that cannot be carried out."""

    code = "session_error"


class UnknownWorkspace(SessionError):
    """The workspace is not one of the editor's open folders."""

    code = "unknown_workspace"

    def __init__(self, workspace: str, message: str | None = None) -> None:
        self.workspace = workspace
        super().__init__(message or f"'{workspace}' is not an open workspace folder.")


class UnknownSession(SessionError):
    """No session has this id."""

    code = "unknown_session"

    def __init__(self, session_id: str, workspace: str | None = None) -> None:
        self.session_id = session_id
        super().__init__(f"No session '{session_id}'." if workspace is None else
                         f"Session '{session_id}' belongs to another workspace, not "
                         f"{workspace}; open that folder to use it.")


class UnknownTurn(SessionError):
    """No turn has this id."""

    code = "unknown_turn"

    def __init__(self, turn_id: str, message: str | None = None) -> None:
        self.turn_id = turn_id
        super().__init__(message or f"No turn '{turn_id}'.")


class NothingToRate(SessionError):
    """A 👍 / 👎 on a turn that ended before it answered anything (no text, no tool call)."""

    code = "nothing_to_rate"

    def __init__(self, turn_id: str, status: str) -> None:
        self.turn_id = turn_id
        ended = "was stopped" if status in ("cancelled", "interrupted") else "failed"
        super().__init__(f"Turn '{turn_id}' {ended} before it answered: there is nothing to "
                         "rate.")


class WorkerSession(SessionError):
    """A worker session (or, with ``turn_id``, its turn) was named where only a top-level
    session's can be used."""

    code = "worker_session"

    def __init__(self, session_id: str, turn_id: str | None = None) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        if turn_id is not None:  # a 👍 / 👎: the user never read this answer as theirs
            super().__init__(f"Turn '{turn_id}' is a worker's: its answer went to its planner, "
                             "not to you, so it takes no rating. Rate the planner's answer; "
                             "whether the worker succeeded already counts in the planner's "
                             "score, and the worker's turn is scored from how it ran.")
            return
        super().__init__(f"Session '{session_id}' is a worker: it ran one task delegated by its "
                         "planner and cannot take messages. Open its planner's session to "
                         "continue.")


class UnknownProfile(SessionError):
    """A profile name that no profile file or built-in profile defines."""

    code = "unknown_profile"

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(unknown_name(f"No profile is called '{name}'.", name, known,
                                      "Known profiles:") + ".")


class CommandUsage(SessionError):
    """A slash command given arguments it does not take; the message is its usage line.

    Only ever part of a command's result (``status: failed``), never a request's error."""

    code = "command_usage"


class UnknownCommand(SessionError):
    """A slash command typed one slip away from a real one (``/modle``); the message names it.

    Only ever part of a command's result (``status: failed``), never a request's error."""

    code = "unknown_command"

    def __init__(self, typed: str, meant: list[str]) -> None:
        self.typed, self.meant = typed, meant
        super().__init__(f"Unknown command {typed} — did you mean {' or '.join(meant)}? Nothing "
                         f"was sent to a model (/help lists the commands).")

    def as_draft(self) -> str:
        return (f"Unknown command {self.typed} — did you mean {' or '.join(self.meant)}? Sent "
                f"like this, it would go to no model (/help lists the commands).")


class UnknownTier(SessionError):
    """``/delegate``'s first word reads as a tier or profile but names none (``/delegate
    ultra``, ``/delegate fsat fix it``); nothing was delegated.

    Only ever part of a command's result (``status: failed``), never a request's error."""

    code = "unknown_tier"

    def __init__(self, word: str, meant: list[str], tiers: tuple[str, ...],
                 profiles: tuple[str, ...]) -> None:
        self.word, self.meant = word, meant
        known = f"Tiers: {', '.join(tiers)}" + (f"; profiles: {', '.join(profiles)}"
                                                 if profiles else "")
        if meant:
            head = f"Unknown tier or profile '{word}' — did you mean {' or '.join(meant)}?"
            tail = f"to start the task with '{word}', name the tier first (/delegate " \
                   f"{tiers[1] if len(tiers) > 1 else tiers[0]} {word} …)."
        else:
            head = f"'{word}' is not a tier or profile."
            tail = "write the task after the tier: /delegate [tier] <task>."
        super().__init__(f"{head} {known}. Nothing was delegated; {tail}")


class DelegationDisabled(SessionError):
    """``/delegate`` (or "delegate that") while the user's routing.yaml turns delegation off;
    nothing was delegated.

    Only ever part of a command's result (``status: failed``), never a request's error."""

    code = "delegation_disabled"

    def __init__(self, routing_file: str) -> None:
        self.routing_file = routing_file
        super().__init__(f"Delegation is turned off: `delegation: {{enabled: false}}` in "
                         f"{routing_file}. Nothing was delegated; set it to true there (or "
                         "remove it) to use /delegate.")


class TurnInProgress(SessionError):
    """The session is already running a turn."""

    code = "turn_in_progress"

    def __init__(self, turn_id: str, *, elsewhere: bool = False) -> None:
        self.turn_id = turn_id
        self.elsewhere = elsewhere
        super().__init__("A turn started in another window (or editor) is still running in "
                         "this session; wait for it to finish, or stop it there." if elsewhere
                         else "A turn is already running in this session; wait for it to "
                         "finish or cancel it.")


class InvalidAttachment(SessionError):
    """An attachment of a chat message cannot be used (not a file, outside the workspace, …)."""

    code = "invalid_attachment"


class InvalidApply(SessionError):
    """An Apply (a code block put into a file) names a file or span that cannot be edited."""

    code = "invalid_apply"


class TurnElsewhere(SessionError):
    """The turn is running, but in another daemon sharing the data folder.

    Each editor window starts its own daemon; a daemon can stop only the turns it
    runs itself, so the answer says where the turn can be stopped instead of
    claiming that it already ended.
    """

    code = "turn_elsewhere"

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        super().__init__("This turn is running in another editor window (another Switchman "
                         "daemon); stop it from that window.")
