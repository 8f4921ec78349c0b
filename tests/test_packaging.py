"""Every Python package folder is installed (``pip install .`` lists packages explicitly)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPED = {"engine": "switchman.engine", "server": "switchman.server"}


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"])
    found = set()
    for folder, name in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *relative)))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_every_data_file_the_engine_reads_is_installed() -> None:
    """Files beside the code that the engine opens at run time (schemas, default YAML, the
    fingerprint's word table) match a ``package-data`` pattern, or a wheel would lack them."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    installed: set[Path] = set()
    for package, patterns in setuptools["package-data"].items():
        top, *inner = package.split(".")[1:]  # switchman.engine.config.defaults → engine, …
        folder = ROOT.joinpath(top, *inner)
        for pattern in patterns:
            installed.update(folder.glob(pattern))
    wanted = {*(ROOT / "engine" / "learning" / "words").glob("*.bin"),
              *(ROOT / "engine" / "config" / "schemas").glob("*.schema.json"),
              *(ROOT / "engine" / "config" / "defaults").glob("*.yaml")}
    assert len(wanted) > 2
    assert wanted - installed == set(), "add these to [tool.setuptools.package-data]"


def test_package_data_lives_in_a_listed_package() -> None:
    """A pattern reaching into a sub-folder (``words/*.bin``) makes setuptools treat that
    folder as a package nobody listed: every install (``make demo`` on a fresh clone) printed
    a screenful of "Package would be ignored" warnings about it."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    for package, patterns in setuptools["package-data"].items():
        assert package in listed, package
        assert [p for p in patterns if "/" in p] == [], (
            f"{package}: list the sub-folder as a package of its own")


def test_the_license_is_an_spdx_expression() -> None:
    """``license = {text = ...}`` is deprecated: every install printed setuptools' warning
    about it twice (a screenful each)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
