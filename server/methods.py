"""Wire names of Switchman's custom LSP methods (documented in docs/protocol.md)."""

CHAT = "switchman/chat"
CANCEL = "switchman/cancel"
SET_MODEL = "switchman/setModel"
MODELS = "switchman/models"
EXPLAIN = "switchman/explain"
PREVIEW = "switchman/preview"
SESSIONS = "switchman/sessions"
SESSION = "switchman/session"
NEW_SESSION = "switchman/newSession"
RESUME_SESSION = "switchman/resumeSession"
FEEDBACK = "switchman/feedback"
PROFILES = "switchman/profiles"
SET_PROFILE = "switchman/setProfile"

CHAT_DELTA = "switchman/chatDelta"
ROUTE_DECIDED = "switchman/routeDecided"
STATUS = "switchman/status"
DELEGATION = "switchman/delegation"
SESSION_CHANGED = "switchman/sessionChanged"

# Requests the server sends to the client.
APPROVE = "switchman/approve"

TRUST = "switchman/trust"
REVOKE_TRUST = "switchman/revokeTrust"
APPLY_CODE = "switchman/applyCode"
