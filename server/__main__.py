"""``python -m switchman.server`` runs the language server (what editors start)."""

import sys

from switchman.server.app import run

sys.exit(run())
