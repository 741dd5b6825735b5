"""Maintenance commands of the data directory: ``gc``."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import CliTable, app, emit, state
from ragloom.errors import RagloomError


@app.command()
def gc(
    grace: Annotated[float | None, typer.Option(
        "--grace", min=0, help="Keep unreferenced files younger than this many seconds (default: "
        "RAGLOOM_GC_GRACE_SECONDS). 0 is safe only while nothing uploads or parses.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report what would be deleted.")] = False,
) -> None:
    """Delete stored files (originals, page images) that no document version references any more (local mode)."""
    from ragloom.service.documents.gc import collect_garbage

    if state.url:
        raise RagloomError("gc works on the data directory; run it without --url")
    ctx = state.context()
    report = collect_garbage(ctx, grace_seconds=ctx.settings.gc_grace_seconds if grace is None else grace,
                             dry_run=dry_run)
    table = CliTable("", "", title="object store garbage collection" + (" (dry run: nothing deleted)" if dry_run
                                                                       else ""), show_header=False)
    rows = [
        ("files scanned", report.scanned), ("referenced", report.referenced),
        ("would be deleted" if dry_run else "deleted", report.deleted),
        ("bytes " + ("to free" if dry_run else "freed"), report.bytes_freed),
        (f"kept: younger than {report.grace_seconds:g} s", report.kept_young),
        ("referenced but missing", report.missing),
        ("temporary leftovers", report.temp_files), ("empty folders", report.dirs_removed),
        ("old versions' chunks dropped", report.versions_trimmed),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    emit(report.as_dict(), table)
