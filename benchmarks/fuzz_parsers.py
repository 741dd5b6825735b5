"""Fuzzing benchmark: mutated files of every format through the parsers under the production limits.

    .venv/bin/python benchmarks/fuzz_parsers.py [--files 1000] [--seed 1] [--workers 2]
                                                [--time-limit 20] [--memory-mb 1024]

Makes ``--files`` mutated files from one small valid file of each format (``tests/ingest/fuzz.py``:
bit flips, truncation, repeated and nested structures, huge numbers in headers, zip entries and
container fields corrupted), parses and chunks each in its own child process under the production
size limits, a task time limit and a memory limit (``RLIMIT_CPU``/``RLIMIT_AS``, and a kill past its
wall time), and prints: the outcomes (parsed; failed with a reason; unexpected exception; killed),
the outcomes per format, the failures by reason, the slowest files and the peak memory. Every file
must end parsed or failed with a reason; the exit status is 1 when one does not. The same seed
makes the same files; the caption gives the load average (times grow when other work shares the
cores).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's tests/ helpers make the files

from tests.ingest import fuzz  # noqa: E402

log = logging.getLogger("benchmarks.fuzz_parsers")


def reason_key(outcome: fuzz.Outcome) -> str:
    """A failure's reason without its file name and numbers, so that alike failures count together."""
    kind, _, message = outcome.reason.partition(": ")
    message = message.split("\n", 1)[0]
    message = re.sub(r"^\d{4}-[\w.]+?: ", "", message)
    message = re.sub(r"\d[\d,.]*", "N", message)
    return f"{kind}: {message[:90]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000, help="mutated files to make and parse")
    parser.add_argument("--seed", type=int, default=1, help="seed of the mutations (the same seed, the same files)")
    parser.add_argument("--workers", type=int, default=2, help="child processes at a time")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds one file may take")
    parser.add_argument("--memory-mb", type=int, default=1024, help="MiB one child may grow by")
    parser.add_argument("--slowest", type=int, default=10, help="slowest files listed")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console()

    with tempfile.TemporaryDirectory(prefix="ragloom-fuzz-") as tmp:
        seeds = fuzz.seed_files(Path(tmp))
    started = time.monotonic()
    done = [0]

    def progress(outcome: fuzz.Outcome) -> None:
        done[0] += 1
        if done[0] % 100 == 0:
            log.warning("%d/%d files, %.0f s", done[0], args.files, time.monotonic() - started)

    outcomes = fuzz.run(fuzz.mutated_files(seeds, args.files, args.seed), workers=args.workers,
                        time_limit=args.time_limit, memory_mb=args.memory_mb, progress=progress)
    wall = time.monotonic() - started
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    kinds = Counter(o.kind for o in outcomes)
    peak = max(outcomes, key=lambda o: o.memory_mb)

    summary = Table(title=f"Fuzzing the parsers: {len(outcomes):,} files from {len(seeds)} seeds (seed {args.seed})",
                    caption=f"{args.workers} workers, {args.time_limit:.0f} s and {args.memory_mb} MiB per file; "
                            f"load average {load:.1f}")
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    for kind in (fuzz.PARSED, fuzz.FAILED, fuzz.UNEXPECTED, fuzz.KILLED):
        summary.add_row(kind, f"{kinds[kind]:,}")
    summary.add_row("wall time", f"{wall:,.0f} s ({len(outcomes) / wall:.1f} files/s)")
    times = sorted(o.seconds for o in outcomes)
    summary.add_row("time per file: median / p95 / max",
                    f"{times[len(times) // 2] * 1000:.0f} / {times[int(len(times) * 0.95)] * 1000:.0f} / "
                    f"{times[-1] * 1000:,.0f} ms")
    summary.add_row("peak memory growth of a child", f"{peak.memory_mb:,.0f} MiB ({peak.name})")
    console.print(summary)

    formats = Table(title="Outcomes by format")
    for column in ("seed", "files", fuzz.PARSED, fuzz.FAILED, fuzz.UNEXPECTED, fuzz.KILLED, "slowest s", "peak MiB"):
        formats.add_column(column, justify="left" if column == "seed" else "right")
    by_seed: dict[str, list[fuzz.Outcome]] = defaultdict(list)
    for o in outcomes:
        by_seed[o.seed].append(o)
    for seed, group in sorted(by_seed.items()):
        count = Counter(o.kind for o in group)
        formats.add_row(seed, str(len(group)), *(str(count[k]) for k in (fuzz.PARSED, fuzz.FAILED, fuzz.UNEXPECTED,
                                                                          fuzz.KILLED)),
                        f"{max(o.seconds for o in group):.2f}", f"{max(o.memory_mb for o in group):.0f}")
    console.print(formats)

    reasons = Table(title="Failures by reason (file names and numbers folded)")
    reasons.add_column("files", justify="right")
    reasons.add_column("reason")
    for reason, n in Counter(reason_key(o) for o in outcomes if o.kind != fuzz.PARSED).most_common(25):
        reasons.add_row(str(n), reason)
    console.print(reasons)

    slow = Table(title=f"Slowest {args.slowest} files")
    for column in ("file", "mutations", "seconds", "MiB", "outcome"):
        slow.add_column(column, justify="right" if column in ("seconds", "MiB") else "left")
    for o in sorted(outcomes, key=lambda o: -o.seconds)[: args.slowest]:
        slow.add_row(o.name, ", ".join(o.ops), f"{o.seconds:.2f}", f"{o.memory_mb:.0f}",
                     f"{o.kind}: {o.reason.splitlines()[0][:70]}")
    console.print(slow)

    bad = [o for o in outcomes if o.kind not in (fuzz.PARSED, fuzz.FAILED)]
    for o in bad:
        console.print(f"[red]{o.name}[/red] {list(o.ops)}: {o.kind}: {o.reason}", markup=True, highlight=False)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
