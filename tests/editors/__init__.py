"""The editor clients end to end: Neovim headless (0.7.2 and 0.11) and VS Code in code-server."""

import pytest

ONE_AT_A_TIME = pytest.mark.xdist_group("editors")
"""`make pytest` runs the suite in two pytest-xdist workers (``--dist loadgroup``). Every test
of this package carries this mark, so they all run on one worker, one after another, while the
other worker takes the rest: an editor run drives several processes (Neovim or code-server and
Chromium, the daemon, the fake provider) and waits on what it shows, and two at once on a
2-core machine would compete for the same cores. The VS Code tests also share the setup of
``editor-clients/vscode`` (npm ci, code-server, the .vsix), which must not run twice at once."""
