"""Issue 25 end to end: a statistics table under a grouped header, ingested, answers a question naming a
row and a column with that row's chunk first in hybrid search; its chunks carry their rows with the
columns' header paths through the API and `ragloom chunks --json`; a re-parse moves the document to a
new version atomically."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.schemas.datasets import KBCreate
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.documents import catalog, chunks
from ragloom.service.search.retrieval import search
from ragloom.worker import run_until

STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
          "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
          "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri",
          "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York", "Ohio",
          "Oklahoma", "Oregon", "Pennsylvania", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Wyoming"]
GROUPS = ["Pre-Pawn", "Redemption", "Returned/Disposition"]
KINDS = ["Handgun", "Long Gun", "Other"]


def nics_html() -> tuple[bytes, dict[str, list[str]]]:
    """The NICS report's shape: 'State', 'Permit', 'Handgun', 'Long Gun', then three groups of three
    columns under a two-row header, 'Totals'; a footnote under the rows."""
    rng = random.Random(25)
    head1 = ('<tr><th rowspan="2">State / Territory</th><th rowspan="2">Permit</th><th rowspan="2">Handgun</th>'
             '<th rowspan="2">Long Gun</th>' + "".join(f'<th colspan="3">{g}</th>' for g in GROUPS)
             + '<th rowspan="2">Totals</th></tr>')
    head2 = "<tr>" + "".join(f"<th>{k}</th>" for _ in GROUPS for k in KINDS) + "</tr>"
    values: dict[str, list[str]] = {}
    body = []
    for state in STATES:
        cells = [f"{rng.randint(1000, 300000):,}" for _ in range(3 + 3 * len(GROUPS))]
        values[state] = [*cells, f"{rng.randint(300000, 900000):,}"]
        body.append(f"<tr><td>{state}</td>" + "".join(f"<td>{v}</td>" for v in values[state]) + "</tr>")
    foot = '<tfoot><tr><td colspan="14">*Refers to frames, receivers and other firearm parts.</td></tr></tfoot>'
    html = (f"<html><body><h1>NICS Firearm Checks: Month/Year by State/Type</h1><table><caption>November 2015"
            f"</caption><thead>{head1}{head2}</thead><tbody>{''.join(body)}</tbody>{foot}</table></body></html>")
    return html.encode(), values


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Context, Principal, str, dict[str, list[str]]]]:
    ctx = Context(Settings(home=tmp_path_factory.mktemp("tables") / "home", workers=0, _env_file=None))
    ctx.init_storage()
    with ctx.db.session() as s:
        principal = identity.bootstrap(s).principal
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="checks", parser_config={"chunk_token_num": 160}))
    data, values = nics_html()
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="checks",
                                         uploads=[catalog.Upload(filename="nics-2015-11.html", data=data)])
        doc_id = doc.id
    run_until(ctx, lambda: _status(ctx, principal, doc_id) in ("done", "failed"), poll=0.01)
    assert _status(ctx, principal, doc_id) == "done"
    yield ctx, principal, doc_id, values
    ctx.close()


def _status(ctx: Context, principal: Principal, doc_id: str) -> str:
    with ctx.db.session() as s:
        return catalog.get(s, principal=principal, kb_id="checks", doc_id=doc_id).status


def test_a_question_naming_a_row_and_a_column_finds_that_rows_chunk_first(world) -> None:  # type: ignore[no-untyped-def]
    ctx, principal, doc_id, values = world
    with ctx.db.session() as s:
        listing = chunks.list_chunks(ctx, s, principal=principal, kb_id="checks", doc_id=doc_id, offset=0, limit=100)
    tables = [c for c in listing.chunks if c.kind == "table"]
    assert len(tables) > 1  # the table is cut into row groups
    for c in tables:
        assert c.table is not None and c.table["header_paths"][5] == ["Pre-Pawn", "Long Gun"]
        assert all(row[0] in STATES for row in c.table["rows"])
    assert sum(len(c.table["rows"]) for c in tables) == len(STATES)  # the footnote is no row
    assert "*Refers to frames" in tables[-1].content and tables[-1].table["notes"]
    kentucky = next(line for c in tables for line in c.content.splitlines() if "Kentucky" in line)
    assert kentucky.startswith(f"State / Territory: Kentucky — Permit: {values['Kentucky'][0]}; ")
    assert f"Pre-Pawn › Handgun: {values['Kentucky'][3]}" in kentucky
    for state, question in (("Kentucky", "How many permit checks were there in Kentucky?"),
                            ("Oregon", "Oregon Pre-Pawn long gun checks"),
                            ("New Mexico", "total checks New Mexico")):
        res = search(ctx, principal=principal, kb_ids=["checks"], question=question,
                     options=RetrievalOptions(mode="hybrid"))
        top = res.chunks[0].record
        assert top.table is not None and state in [r[0] for r in top.table["rows"]], (question, top.content[:200])


def test_chunks_json_gives_each_table_chunk_its_rows_and_a_reparse_is_a_new_version(world, cli_state) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from ragloom.cli import app

    ctx, principal, doc_id, _ = world
    home = str(ctx.settings.home)
    res = CliRunner().invoke(app, ["--home", home, "--json", "chunks", "checks", "nics-2015-11.html"])
    assert res.exit_code == 0, res.output
    listed = json.loads(res.stdout)["chunks"]
    tables = [c for c in listed if c["kind"] == "table"]
    assert tables and all(c["table"]["stub_columns"] == 1 for c in tables)
    assert tables[0]["table"]["header_paths"][:5] == [["State / Territory"], ["Permit"], ["Handgun"], ["Long Gun"],
                                                      ["Pre-Pawn", "Handgun"]]
    assert tables[0]["table"]["caption"] == "November 2015"
    assert all("table" not in c for c in listed if c["kind"] != "table")  # absent, never null
    with ctx.db.session() as s:
        before = catalog.get(s, principal=principal, kb_id="checks", doc_id=doc_id).active_version_id
        catalog.reparse(ctx, s, principal=principal, kb_id="checks", doc_id=doc_id)
    run_until(ctx, lambda: _status(ctx, principal, doc_id) in ("done", "failed"), poll=0.01)
    with ctx.db.session() as s:
        doc = catalog.get(s, principal=principal, kb_id="checks", doc_id=doc_id)
        assert doc.status == "done" and doc.active_version_id != before
        versions = catalog.versions(s, principal=principal, kb_id="checks", doc_id=doc_id)
    assert len(versions) == 2
