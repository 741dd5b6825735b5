"""Tables as tables in a real browser: a generated PDF with a 26-column table under a two-row grouped
header, 40 rows over two pages, cut into row chunks. The chunks page shows each chunk as a table
(header paths as grouped header rows, scrolling sideways with the header and the state column in view,
the notes under the last one); selecting a row chunk outlines its own rows on their page(s), where the
PDF drew them; the chat's citation of a row shows the row as a small table and outlines it on the page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF

from tests.fakes.openai_server import FakeOpenAIServer
from tests.web.browser import BROWSER, World, create_kb, new_page, open_world, shot, sign_up, sync_api, until

pytestmark = BROWSER

expect = sync_api.expect
SLOW = 60_000  # ms

GROUPS = ["Permit", "Pre-Pawn", "Redemption", "Returned", "Rentals"]
KINDS = ["Handgun", "Long Gun", "Other", "Multiple", "Admin"]
STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
          "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
          "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri",
          "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York",
          "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island",
          "South Carolina"]
NOTE = "* Multiple refers to more than one gun checked in a single sale."
PAGE = (841.89, 595.28)  # A4 landscape, points
LEFT, STUB, COL, ROW = 20.0, 72.0, 29.0, 13.0  # the table's left edge, column widths and row height
ON_PAGE_1 = 26  # body rows at the foot of page 1; the rest under the header again on page 2
TOP_1 = PAGE[1] - 30 - (2 + ON_PAGE_1) * ROW  # the header's top on page 1
TOP_2 = 30.0
RIGHT = LEFT + STUB + 25 * COL


def value(row: int, column: int) -> str:
    return f"{(row * 37 + column * 101) % 9000 + 10:,}"


def row_top(i: int) -> tuple[int, float]:
    """Body row ``i``'s page and top (points from the page's top)."""
    return (1, TOP_1 + (2 + i) * ROW) if i < ON_PAGE_1 else (2, TOP_2 + (2 + i - ON_PAGE_1) * ROW)


def write_pdf(path: Path) -> None:
    """The table ruled cell by cell: 'State' down both header rows, five groups of five columns."""
    pdf = FPDF(unit="pt", format=PAGE)
    pdf.set_auto_page_break(False)

    def cell(x: float, y: float, w: float, h: float, text: str, bold: bool = False) -> None:
        pdf.rect(x, y, w, h)
        pdf.set_font("Helvetica", "B" if bold else "", 6)
        pdf.text(x + 2.5, y + h / 2 + 2.3, text)

    def header(top: float) -> None:
        cell(LEFT, top, STUB, 2 * ROW, "State", True)
        for g, name in enumerate(GROUPS):
            x = LEFT + STUB + g * 5 * COL
            cell(x, top, 5 * COL, ROW, name, True)
            for k, kind in enumerate(KINDS):
                cell(x + k * COL, top + ROW, COL, ROW, kind, True)

    def body(rows: range) -> float:
        for i in rows:
            _, y = row_top(i)
            cell(LEFT, y, STUB, ROW, STATES[i])
            for c in range(25):
                cell(LEFT + STUB + c * COL, y, COL, ROW, value(i, c))
        return y + ROW

    pdf.add_page()
    pdf.set_font("Helvetica", "B", 14)
    pdf.text(LEFT, 50, "Background checks by state and type")
    pdf.set_font("Helvetica", "", 10)
    pdf.text(LEFT, 70, "Checks run in November, by the state where they were run and the kind of sale or return.")
    header(TOP_1)
    body(range(ON_PAGE_1))
    pdf.add_page()
    header(TOP_2)
    end = body(range(ON_PAGE_1, len(STATES)))
    pdf.set_font("Helvetica", "", 7)
    pdf.text(LEFT, end + 12, NOTE)
    pdf.set_font("Helvetica", "", 10)
    pdf.text(LEFT, end + 60, "The totals for the year follow in the next section of this report.")
    pdf.output(str(path))


def responder(body: dict[str, Any]) -> str:
    """A chat model citing the evidence that holds Kentucky's row."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    for block in prompt.split("ID: ")[1:]:
        n = block.split("\n", 1)[0].strip()
        if "State: Kentucky" in block:
            return f"Kentucky ran {value(16, 0)} handgun permit checks [ID:{n}]."
    return "I do not know."


@pytest.fixture(scope="module")
def table_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with FakeOpenAIServer(responder=responder) as server, open_world(
            tmp_path_factory.mktemp("tables-ui"), chat_base_url=server.base_url, chat_model="fake-chat",
            chat_api_key="sk-test", rate_limit_per_minute=0) as world:
        yield world


def api(page, method: str, path: str, body: object = None) -> Any:  # type: ignore[no-untyped-def]
    return page.evaluate("([m, p, b]) => RL.api(m, p, b === null ? undefined : b)", [method, path, body])


def boxes(locator) -> list[dict[str, float]]:  # type: ignore[no-untyped-def]
    out = [b for b in (x.bounding_box() for x in locator.all()) if b]
    assert out
    return out


def assert_outline(locator) -> None:  # type: ignore[no-untyped-def]
    """An outline with a light fill: a visible border, a background one can read the page through."""
    style = locator.evaluate("""(e) => { const s = getComputedStyle(e);
      const fill = s.backgroundColor.match(/[\\d.]+/g).map(Number);
      return {border: parseFloat(s.borderTopWidth), line: s.borderTopStyle, alpha: fill.length > 3 ? fill[3] : 1}; }""")
    assert style["border"] >= 1 and style["line"] == "solid", style
    assert 0 < style["alpha"] <= 0.3, style


def assert_on_rows(page, region_box: dict[str, float], rows: range) -> None:  # type: ignore[no-untyped-def]
    """``region_box`` (in the browser) covers exactly ``rows`` of one page, as the PDF drew them."""
    number = row_top(rows[0])[0]
    img = page.locator(f".page-frame[data-page='{number}'] img").first.bounding_box()
    assert img
    sx, sy = img["width"] / PAGE[0], img["height"] / PAGE[1]
    top, bottom = row_top(rows[0])[1], row_top(rows[-1])[1] + ROW
    tol = 3
    assert abs(region_box["y"] - (img["y"] + top * sy)) <= tol, (region_box, top)
    assert abs(region_box["y"] + region_box["height"] - (img["y"] + bottom * sy)) <= tol, (region_box, bottom)
    assert abs(region_box["x"] - (img["x"] + LEFT * sx)) <= tol
    assert abs(region_box["x"] + region_box["width"] - (img["x"] + RIGHT * sx)) <= tol


def test_table_chunks_render_as_tables_and_outline_their_own_rows(table_world: World) -> None:
    world = table_world
    pdf = world.tmp / "background-checks.pdf"
    write_pdf(pdf)
    page = new_page(world, width=1440, height=900)
    sign_up(page, "tab@example.com")
    kb = create_kb(page, "Checks")
    api(page, "PATCH", f"/datasets/{kb}", {"parser_config": {"chunk_token_num": 1024}})  # four rows a chunk
    page.locator("#file-input").set_input_files([{"name": pdf.name, "mimeType": "application/pdf",
                                                  "buffer": pdf.read_bytes()}])
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"], timeout=240_000)
    doc = page.locator("#docs-table tbody tr").first.get_attribute("data-doc-id")
    listed = api(page, "GET", f"/datasets/{kb}/documents/{doc}/chunks?page_size=1000")["chunks"]
    tables = [c for c in listed if c["kind"] == "table"]
    assert len(tables) >= 5 and all(c.get("table") for c in tables), [c["kind"] for c in listed]
    kentucky = next(c for c in tables if c["table"]["rows"][0][0] == "Kentucky")
    crossing = next(c for c in tables if {p[0] for p in c["positions"]} == {1, 2})

    page.goto(f"/ui/kb/{kb}/documents/{doc}")
    expect(page.get_by_test_id("page-image")).to_have_count(2, timeout=SLOW)
    until(page, "() => [...document.querySelectorAll('[data-testid=page-image]')]"
                ".every(i => i.complete && i.naturalWidth > 0)")
    expect(page.locator("#chunk-list [data-testid=chunk-table]")).to_have_count(len(tables), timeout=SLOW)

    # each table chunk is a table: the grouped header as two rows, the state as each row's header
    item = page.locator(f"#chunk-list li[data-chunk-id='{kentucky['chunk_id']}']")
    table = item.get_by_test_id("chunk-table")
    head = table.locator("thead tr")
    expect(head).to_have_count(2)
    expect(head.nth(0).locator("th")).to_have_text(["State", *GROUPS])
    assert head.nth(0).locator("th").first.get_attribute("rowspan") == "2"
    assert [head.nth(0).locator("th").nth(i).get_attribute("colspan") for i in range(1, 6)] == ["5"] * 5
    expect(head.nth(1).locator("th")).to_have_text(KINDS * 5)
    assert head.nth(1).locator("th").nth(1).get_attribute("title") == "Permit › Long Gun"
    expect(table.locator("tbody th[scope=row]")).to_have_text(STATES[16:20])
    expect(table.locator("tbody tr").first.locator("td")).to_have_text([value(16, c) for c in range(25)])
    cells = table.evaluate("""(t) => { const s = getComputedStyle(t.querySelector('td.num'));
      const heights = [...t.querySelectorAll('td, thead tr:last-child th')].map(c => c.getBoundingClientRect().height);
      return {align: s.textAlign, wrap: s.whiteSpace, tallest: Math.max(...heights), line: parseFloat(s.lineHeight)
        || parseFloat(s.fontSize) * 1.5}; }""")
    assert cells["align"] == "right" and cells["wrap"] == "nowrap", cells
    assert cells["tallest"] < 2 * cells["line"], cells  # no cell wraps, let alone letter by letter

    # 26 columns scroll sideways inside the chunk's card; the header and the state column stay in view
    scroll = item.get_by_test_id("table-scroll")
    shape = scroll.evaluate("""(box) => ({overflow: getComputedStyle(box).overflowX, width: box.scrollWidth,
      client: box.clientWidth, card: box.closest('li').getBoundingClientRect().width,
      sticky: getComputedStyle(box.querySelector('thead')).position,
      stub: getComputedStyle(box.querySelector('tbody th')).position})""")
    assert shape["overflow"] == "auto" and shape["width"] > shape["client"] + 200, shape
    assert shape["client"] < shape["card"] and shape["sticky"] == "sticky" and shape["stub"] == "sticky", shape
    item.locator("button.pick").click()
    moved = scroll.evaluate("""async (box) => {
      box.style.maxHeight = '5.5rem';  // short enough to scroll down within its four rows
      const at = (e) => e.getBoundingClientRect();
      box.scrollLeft = 600; box.scrollTop = 1000;
      await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
      const head = box.querySelector('thead'), stub = box.querySelector('tbody tr:last-child th');
      const permit = box.querySelector('thead tr:last-child th');
      return {scrolled: [box.scrollLeft, box.scrollTop], box: [at(box).left, at(box).top], head: at(head).top,
        stub: at(stub).left, permit: at(permit).left, row: at(box.querySelector('tbody tr')).top,
        headBottom: at(head).bottom}; }""")
    assert moved["scrolled"][0] > 0 and moved["scrolled"][1] > 0, moved
    assert abs(moved["head"] - moved["box"][1]) <= 2, moved  # the header still at the box's top
    assert moved["row"] < moved["headBottom"], moved  # the first row went under it
    assert abs(moved["stub"] - moved["box"][0]) <= 2, moved  # the state column still at its left
    assert moved["permit"] < moved["box"][0], moved  # while the values scrolled away
    scroll.evaluate("(box) => { box.style.maxHeight = ''; box.scrollLeft = 0; box.scrollTop = 0; }")

    # the notes under the table end its last chunk; no row is made of them
    last = page.locator(f"#chunk-list li[data-chunk-id='{tables[-1]['chunk_id']}']")
    expect(last.get_by_test_id("table-notes")).to_have_text(NOTE)
    expect(page.locator("#chunk-list [data-testid=chunk-table]", has_text="Multiple refers")).to_have_count(0)

    # selecting a row chunk outlines its four rows only, where the PDF drew them; the table is far taller
    regions = page.locator(f".region[data-chunk-id='{kentucky['chunk_id']}']")
    expect(regions).to_have_count(1)
    expect(regions.first).to_have_class(re.compile(r"\bselected\b"))
    (selected,) = boxes(regions)
    page1 = boxes(page.locator(".page-frame[data-page='1'] .region"))
    table_top = min(b["y"] for b in page1 if b["width"] > selected["width"] - 5)
    table_bottom = max(b["y"] + b["height"] for b in page1 if b["width"] > selected["width"] - 5)
    assert selected["height"] < (table_bottom - table_top) / 5, (selected, table_top, table_bottom)
    assert_on_rows(page, selected, range(16, 20))
    assert_outline(regions.first)
    assert_outline(page.locator(f".region[data-chunk-id='{tables[0]['chunk_id']}']").first)
    assert page.locator(".region.selected").count() == 1
    shot(page, "chunks-table")

    # a chunk whose rows cross the page break: its two rows on page 1 and its two on page 2
    first_row = STATES.index(crossing["table"]["rows"][0][0])
    page.locator(f"#chunk-list li[data-chunk-id='{crossing['chunk_id']}'] button.pick").click()
    for number, rows in ((1, range(first_row, ON_PAGE_1)), (2, range(ON_PAGE_1, first_row + 4))):
        on_page = page.locator(f".page-frame[data-page='{number}'] .region.selected")
        expect(on_page).to_have_count(1)
        assert_on_rows(page, boxes(on_page)[0], rows)
    # and clicking a row's outline on the page selects its chunk in the list
    page.locator(f".region[data-chunk-id='{kentucky['chunk_id']}']").click()
    expect(item).to_have_class(re.compile(r"\bselected\b"))

    # the other sources of a table: a chunk's HTML (inert: nothing of it runs) and a citation's text
    built = page.evaluate("""() => {
      const shape = (fig) => fig && {
        head: [...fig.querySelectorAll('thead tr')].map(tr => [...tr.children].map(c => [c.textContent, c.colSpan])),
        rows: [...fig.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(c => c.textContent)),
        caption: (fig.querySelector('figcaption') || {}).textContent || '',
        notes: [...fig.querySelectorAll('.table-notes li')].map(li => li.textContent),
        marked: [...fig.querySelectorAll('tbody tr')].map(tr => tr.classList.contains('marked')),
        tags: [...fig.querySelectorAll('*')].map(e => e.tagName.toLowerCase()) };
      return {
        html: shape(RLTables.fromHtml('<table><thead><tr><th colspan="2">G</th></tr></thead><tbody><tr>'
          + '<th>a</th><td>1<img src=x onerror="window.owned=1"></td></tr></tbody></table>'
          + '<script>window.owned=2</script>')),
        text: shape(RLTables.fromText('Sales\\nRegion: North — Y › 2023: 1; Y › 2024: 2\\n'
          + 'Region: South — Y › 2023: 3; Z: 9; Y › 2024: 4\\n* In euros.', 'Region: South — Y › 2023: 3;')),
        prose: RLTables.fromText('The pump is serviced every 90 days.\\nContact: the harbor crew; Phone: 12'),
        owned: window.owned || 0 }; }""")
    assert built["html"]["head"] == [[["G", 2]]] and built["html"]["rows"] == [["a", "1"]]
    assert not {"img", "script"} & set(built["html"]["tags"]) and built["owned"] == 0
    assert built["text"]["head"] == [[["Region", 1], ["Y", 1], ["Z", 1], ["Y", 1]], [["2023", 1], ["2024", 1]]]
    assert built["text"]["rows"] == [["North", "1", "", "2"], ["South", "3", "9", "4"]]
    assert built["text"]["caption"] == "Sales" and built["text"]["notes"] == ["* In euros."]
    assert built["text"]["marked"] == [False, True] and built["prose"] is None

    # at phone width the page itself never scrolls sideways: only a table's own box does
    page.set_viewport_size({"width": 390, "height": 844})
    expect(scroll).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    page.set_viewport_size({"width": 1440, "height": 900})

    # the chat's citation of Kentucky's row: the rows as a small table, the row outlined on page 1
    chat = api(page, "POST", "/chats", {"name": "Checks helper", "dataset_ids": [kb], "top_n": 4})
    page.goto(f"/ui/chat/{chat['id']}")
    expect(page.locator("#conversation-heading")).to_have_text("Checks helper")
    page.get_by_label("Your question").fill("How many handgun permit checks were run in Kentucky?")
    page.get_by_label("Your question").press("Enter")
    answer = page.get_by_test_id("answer").last
    expect(answer).to_have_attribute("data-state", "done", timeout=SLOW)
    answer.get_by_test_id("cite").first.click()
    panel = page.locator("#cite-panel")
    cited = panel.get_by_test_id("cite-text").get_by_test_id("chunk-table")
    expect(cited.locator("thead tr").first.locator("th")).to_have_text(["State", *GROUPS])
    expect(cited.locator("thead tr").nth(1).locator("th")).to_have_text(KINDS * 5)
    expect(cited.locator("tbody th[scope=row]")).to_have_text(STATES[16:20])
    expect(cited.locator("tbody tr").first.locator("td").first).to_have_text(value(16, 0))
    expect(panel.get_by_test_id("cite-page")).to_have_count(1, timeout=SLOW)
    until(page, "() => [...document.querySelectorAll('#cite-panel [data-testid=cite-page]')]"
                ".every(i => i.complete && i.naturalWidth > 0)")
    region = panel.get_by_test_id("cite-region")
    expect(region).to_have_count(1)
    assert_outline(region.first)
    frame = panel.locator(".page-frame[data-page='1'] img").bounding_box()
    (box,) = boxes(region)
    assert frame and box["height"] < frame["height"] / 10  # four rows, not the table
    shot(page, "chat-citation-table")
    assert page.outside == []
