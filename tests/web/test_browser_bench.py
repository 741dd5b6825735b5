"""The retrieval bench in a real browser: a question against a knowledge base with every score shown,
the explain table with the stage that dropped each candidate, the API's own refusal, two settings
compared side by side, and the page at phone width (shared parts in browser.py)."""

from __future__ import annotations

import re

from tests.web.browser import (
    BROWSER,
    World,
    create_kb,
    new_page,
    shot,
    sign_up,
    sync_api,
    until,
    upload_texts,
)

pytestmark = BROWSER
expect = sync_api.expect

FILES = {
    "pump-service.md": "# Pump service\n\nThe harbor pump is serviced every 90 days by the harbor crew.\n",
    "lantern.txt": "The harbor lantern is lit at dusk and put out at dawn by the keeper.\n",
    "leave-policy.txt": "Employees take parental leave after one month of work.\n",
}
QUESTION = "How often is the pump serviced?"
SCORE = re.compile(r"^\d+\.\d{4}$")


def test_bench_scores_explain_errors_and_a_comparison(world: World) -> None:
    page = new_page(world)
    sign_up(page, "bench@example.com")
    kb = create_kb(page, "Bench")
    # every chunk stays a candidate (no relevance floor): the comparison below wants the vector side's all
    page.evaluate("(p) => RL.api('PATCH', p, {min_relevance: 0})", f"/datasets/{kb}")
    upload_texts(page, FILES)
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"] * 3, timeout=180_000)

    # ask from the keyboard: the pump's chunk ranks first, with every score the API returns
    page.goto("/ui/bench")
    expect(page.get_by_test_id("bench-kbs").get_by_label("Bench")).to_be_checked()  # the only knowledge base is chosen
    question = page.get_by_label("Question", exact=True)
    question.fill(QUESTION)
    question.press("Enter")
    a, b = page.locator("#result-a"), page.locator("#result-b")
    first = a.locator(".bench-hit").first
    expect(first.get_by_test_id("hit-doc")).to_have_text("pump-service.md")
    assert re.match(rf"^/ui/kb/{kb}/documents/[^/]+$", first.get_by_role("link").get_attribute("href") or "")
    for name in ("final", "term", "vector", "rank-feature"):
        assert SCORE.match(first.locator(f"[data-score={name}] dd").inner_text()), name
    expect(first.locator("[data-score=rerank] dd")).to_have_text("—")  # no reranker configured
    expect(a.get_by_test_id("bench-summary")).to_contain_text("hybrid")
    expect(b).to_be_hidden()
    expect(a.get_by_test_id("explain-table")).to_have_count(0)
    a.get_by_role("button", name="Explain results A").click()  # the same question again, explained
    expect(a.get_by_test_id("explain-table")).to_be_visible()
    expect(a.get_by_role("button", name="Explain results A")).to_be_hidden()

    # explain: one result per page, so the other candidates are dropped at the page stage
    setting_a = page.locator("#setting-a")
    setting_a.get_by_label("Results").fill("1")
    page.get_by_label("Explain: every candidate and the stage that dropped it").check()
    page.get_by_role("button", name="Search", exact=True).click()
    expect(a.locator(".bench-hit")).to_have_count(1)  # the new results, with their explain table
    table = a.get_by_test_id("explain-table")
    expect(table).to_be_visible()
    stages = table.get_by_test_id("explain-stage").all_inner_texts()
    assert len(stages) >= 2 and stages[0] == "returned" and "outside the page" in stages, stages
    expect(table.locator("tbody tr").first).to_contain_text("pump-service.md")
    expect(a.locator(".bench-explain")).to_contain_text("pump")  # the analysed keywords
    a.get_by_label("Dropped candidates only").check()
    expect(table.locator("tbody tr[data-stage=returned]")).to_be_hidden()

    # the weighted fusion's threshold drops every candidate under it: nothing returned, all explained
    setting_a.get_by_label("Results").fill("6")
    setting_a.get_by_label("Fusion").select_option("weighted")
    setting_a.get_by_label("Similarity threshold").fill("0.99")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(a.locator(".bench-none")).to_be_visible()
    expect(a.get_by_test_id("bench-summary")).to_contain_text("threshold 0.99")
    until(page, """() => { const s = [...document.querySelectorAll('#result-a [data-testid=explain-stage]')];
      return s.length >= 2 && s.every(b => b.textContent === 'below threshold'); }""")

    # a filter the API refuses shows the API's own message; one that is not JSON, ours
    setting_a.get_by_label("Similarity threshold").fill("")
    setting_a.get_by_label("Fusion").select_option("")
    setting_a.get_by_label("Metadata filter (JSON)").fill('{"key": "year", "op": "between", "value": 1}')
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#result-a-error")).to_contain_text("op must be one of")
    expect(a.locator(".bench-hit")).to_have_count(0)
    setting_a.get_by_label("Metadata filter (JSON)").fill("{nope")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#result-a-error")).to_contain_text("not valid JSON")
    setting_a.get_by_label("Metadata filter (JSON)").fill("")

    # compare keyword (A) with vector (B): both lists side by side, the chunks only B finds marked
    page.get_by_label("Compare with a second setting (B)").check()
    setting_b = page.locator("#setting-b")
    expect(setting_b).to_be_visible()
    setting_a.get_by_label("Mode").select_option("keyword")
    setting_b.get_by_label("Mode").select_option("vector")
    setting_b.get_by_label("Re-score with the reranker").uncheck()  # sent as rerank: false
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#result-a-error")).to_be_empty()
    expect(a.get_by_test_id("bench-summary")).to_contain_text("keyword")
    expect(b.get_by_test_id("bench-summary")).to_contain_text("vector")
    expect(b.get_by_test_id("bench-summary")).to_contain_text("no reranker")
    expect(a.get_by_test_id("bench-summary")).not_to_contain_text("no reranker")
    expect(a.locator(".bench-hit").first.get_by_test_id("hit-doc")).to_have_text("pump-service.md")
    expect(b.locator(".bench-hit")).to_have_count(3)  # a vector search finds every chunk
    expect(b.locator(".bench-hit[data-compare=only]").first).to_contain_text("only in B")
    expect(a.locator(".bench-hit").first.get_by_test_id("bench-move")).to_be_visible()
    expect(b.get_by_test_id("explain-table")).to_be_visible()
    box_a, box_b = a.bounding_box(), b.bounding_box()
    assert box_a and box_b and box_b["x"] > box_a["x"] + box_a["width"] - 1  # side by side at 1280 px
    shot(page, "retrieval-bench")
    assert page.outside == []

    # at phone width the columns stack and nothing scrolls sideways (the explain tables scroll themselves)
    phone = new_page(world, width=390, height=844)
    phone.context.add_cookies(page.context.cookies())
    phone.goto("/ui/bench")
    expect(phone.get_by_test_id("bench-kbs").get_by_label("Bench")).to_be_checked()
    phone.get_by_label("Explain: every candidate and the stage that dropped it").check()
    phone.get_by_label("Compare with a second setting (B)").check()
    phone.locator("#setting-b").get_by_label("Mode").select_option("keyword")
    phone.get_by_label("Question", exact=True).fill(QUESTION)
    phone.get_by_role("button", name="Search", exact=True).click()
    expect(phone.locator("#result-b").get_by_test_id("explain-table")).to_be_visible()
    expect(phone.locator("#result-a").get_by_test_id("explain-table")).to_be_visible()
    pa, pb = phone.locator("#result-a").bounding_box(), phone.locator("#result-b").bounding_box()
    assert pa and pb and pb["y"] >= pa["y"] + pa["height"] - 1  # stacked
    overflow = phone.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the bench scrolls sideways by {overflow}px at 390px"
    shot(phone, "retrieval-bench-phone")
    assert phone.outside == []


def test_bench_in_chinese(world: World) -> None:
    page = new_page(world)
    sign_up(page, "bench-zh@example.com")
    page.wait_for_load_state("load")  # the language menu's handler is attached when the page has loaded
    page.get_by_test_id("lang-switch").select_option("zh")
    expect(page.locator("h1")).to_have_text("知识库")
    page.goto("/ui/bench")
    expect(page.locator("h1")).to_have_text("检索测试")
    expect(page.get_by_role("button", name="检索", exact=True)).to_be_visible()
    expect(page.locator("#bench-no-kbs")).to_be_visible()  # no knowledge base yet: says where to make one
    page.get_by_label("问题", exact=True).fill("泵多久保养一次？")
    page.get_by_role("button", name="检索", exact=True).click()
    expect(page.locator("#bench-error")).to_have_text("请至少选择一个知识库。")
    assert page.outside == []
