"""A missing package is reported with an install command that exists."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from ragloom.errors import MissingDependencyError

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _raised() -> list[tuple[str, list[ast.expr], list[ast.keyword]]]:
    """Every ``MissingDependencyError(...)`` call in the package: (file, args, keywords)."""
    calls = []
    for path in sorted((ROOT / "src" / "ragloom").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "MissingDependencyError":
                calls.append((path.name, node.args, node.keywords))
    return calls


def test_every_named_extra_exists_in_pyproject() -> None:
    extras = set(_pyproject()["project"]["optional-dependencies"])
    calls = _raised()
    assert calls
    for name, args, keywords in calls:
        extra = args[1] if len(args) > 1 else next((k.value for k in keywords if k.arg == "extra"), None)
        if extra is not None:
            assert isinstance(extra, ast.Constant) and extra.value in extras, f"{name}: unknown extra {extra}"


def test_a_literal_package_name_is_a_dependency_of_ragloom() -> None:
    project = _pyproject()["project"]
    deps = [*project["dependencies"], *(d for ds in project["optional-dependencies"].values() for d in ds)]
    names = {d.split("=")[0].split("<")[0].split(">")[0].split("[")[0].strip().lower() for d in deps}
    for name, args, _ in _raised():
        if args and isinstance(args[0], ast.Constant) and len(args) == 1:
            assert args[0].value.lower() in names, f"{name}: {args[0].value} is no dependency"


def test_messages_name_the_extra_or_the_package() -> None:
    assert "pip install 'ragloom[plot]'" in MissingDependencyError("matplotlib", "plot").message
    assert MissingDependencyError("python-pptx").message == (
        "python-pptx is not installed; install it with: pip install 'python-pptx'")
    broken = MissingDependencyError("rapidocr", problem="is installed without its model file det.onnx").message
    assert broken.endswith("pip install --force-reinstall 'rapidocr'") and "det.onnx" in broken
