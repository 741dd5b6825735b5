"""Knowledge builds and the knowledge graph in a real browser: the estimate before a build starts, the
API's refusal of a chat-model method without a chat model, an offline graph build and a RAPTOR build
followed live to done, the graph drawn with an entity's details, its empty state, and the graph page at
phone width (shared parts in browser.py)."""

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

# Shared capitalised names, so that the offline method (capitalised noun phrases and co-occurrence)
# finds the same entities in several documents and relates them.
FILES = {
    "pump-service.md": "# Pump service\n\nMaria Lopez of the Harbor Authority services the Kestrel Pump every "
                       "90 days. The Kestrel Pump stands at Port Avalon, beside the Old Lighthouse. Maria Lopez "
                       "reports to the Harbor Authority.\n",
    "lantern.txt": "The Harbor Authority keeps the lantern of the Old Lighthouse at Port Avalon. Jonas Berg "
                   "lights it at dusk. Jonas Berg and Maria Lopez share the night watch for the Harbor "
                   "Authority.\n",
    "tides.txt": "Jonas Berg records the tides of Port Avalon for the Harbor Authority. The Kestrel Pump "
                 "drains the dock of Port Avalon when the tide is high, and Maria Lopez checks it.\n",
}


def watch_builds(page) -> None:  # type: ignore[no-untyped-def]
    """Record every build status and progress bar the builds table ever shows (the live progress)."""
    page.evaluate("""() => { window.buildsSeen = new Set();
      const note = () => { document.querySelectorAll('[data-testid=build-status]')
        .forEach(b => window.buildsSeen.add(b.textContent));
        if (document.querySelector('#builds-table progress')) window.buildsSeen.add('progress'); };
      new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true,
                                                         attributes: true});
    }""")


def test_build_a_graph_and_raptor_from_the_ui_and_explore_the_graph(world: World) -> None:
    page = new_page(world)
    sign_up(page, "builds@example.com")
    kb = create_kb(page, "Harbor")
    upload_texts(page, FILES)
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"] * 3, timeout=180_000)

    # the graph page before any build: the empty state, with the build button
    page.get_by_role("link", name="Knowledge graph", exact=True).click()
    page.wait_for_url(re.compile(rf"/ui/kb/{kb}/graph$"))
    expect(page.get_by_test_id("graph-empty")).to_be_visible()
    expect(page.get_by_role("heading", name="No knowledge graph built yet.")).to_be_visible()
    expect(page.get_by_role("button", name="Build knowledge graph")).to_be_visible()
    expect(page.locator("#kb-crumb")).to_have_text("Harbor")

    page.get_by_role("link", name="Knowledge builds", exact=True).click()
    page.wait_for_url(re.compile(rf"/ui/kb/{kb}/knowledge$"))
    expect(page.locator("#builds-empty")).to_be_visible()
    watch_builds(page)

    # light needs a chat model, and this workspace has none: the API's message, and the method put back
    page.get_by_label("Method").select_option("light")
    page.get_by_role("button", name="Build knowledge graph").click()
    expect(page.get_by_test_id("builds-error")).to_contain_text("needs a chat model")
    expect(page.get_by_test_id("build-estimate")).to_be_hidden()
    saved = page.evaluate(f"RL.api('GET', '/datasets/{kb}').then(d => d.graphrag)")
    assert saved["method"] == "offline", saved
    expect(page.locator("#builds-table")).to_be_hidden()  # nothing was started

    # offline, with communities: the estimate first (no chat-model call), then the build followed to done
    page.get_by_label("Method").select_option("offline")
    page.get_by_label("Detect communities and write their reports").check()
    page.get_by_role("button", name="Build knowledge graph").click()
    estimate = page.get_by_test_id("build-estimate")
    expect(estimate).to_be_visible()
    expect(page.get_by_test_id("builds-error")).to_be_empty()
    expect(estimate.get_by_role("heading")).to_have_text("Knowledge graph: estimate")
    expect(estimate).to_contain_text("offline")
    expect(estimate.locator("dd").nth(1)).to_have_text("3 to build of 3")
    expect(estimate.locator("dd").nth(2)).to_have_text("0 (0 already cached)")
    estimate.get_by_role("button", name="Start the build").click()
    expect(estimate).to_be_hidden()
    rows = page.locator("#builds-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_test_id("build-status")).to_have_text("done", timeout=120_000)
    expect(rows.first.get_by_test_id("build-message")).to_contain_text("entities")
    seen = set(page.evaluate("[...window.buildsSeen]"))
    assert seen & {"queued", "running"}, seen  # shown live before done, without a reload
    graphrag = page.evaluate(f"RL.api('GET', '/datasets/{kb}').then(d => d.graphrag)")
    assert graphrag["method"] == "offline" and graphrag["community"] is True, graphrag

    # RAPTOR (extractive without a chat model): estimate, start, done
    page.get_by_role("button", name="Build RAPTOR summaries").click()
    expect(estimate.get_by_role("heading")).to_have_text("RAPTOR summaries: estimate")
    expect(estimate).to_contain_text("extractive")
    until(page, "() => getComputedStyle(document.getElementById('flash')).opacity === '0'")  # the toast is gone
    shot(page, "knowledge-builds")  # the estimate, and the graph build done below it
    estimate.get_by_role("button", name="Start the build").click()
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("RAPTOR summaries")
    expect(rows.get_by_test_id("build-status")).to_have_text(["done", "done"], timeout=120_000)
    assert not [t for t in rows.all_inner_texts() if "null" in t or "undefined" in t]

    # a running build: its stage, progress bar and message, and a cancel button that asks the API (with
    # the CSRF header). The builds here end within a second, so the list is shown as it is while one
    # runs: the newest build as running, the real cancel route answering (a finished build stays done).
    def running(route) -> None:  # type: ignore[no-untyped-def]
        response = route.fetch()
        data = response.json()
        data["builds"][0].update(status="running", stage="document", progress=0.42,
                                 message="tides.txt (2/3): extracting")
        route.fulfill(response=response, json=data)

    cancels: list[str] = []
    page.on("request", lambda r: cancels.append(r.headers.get("x-csrf-token", ""))
            if r.method == "POST" and r.url.endswith("/cancel") else None)
    page.route(re.compile(r".*/api/v1/datasets/[^/]+/builds\?.*"), running)
    page.reload()
    first = rows.first
    expect(first.get_by_test_id("build-status")).to_have_text("running")
    expect(first.locator("progress")).to_have_attribute("value", "42")
    expect(first.get_by_test_id("build-stage")).to_have_text("Stage: document")
    expect(first.get_by_test_id("build-message")).to_have_text("tides.txt (2/3): extracting")
    first.get_by_role("button", name="Cancel the RAPTOR summaries build").click()
    expect(page.locator("#flash")).to_have_text("Cancelling at its next step…")
    assert cancels and cancels[0], cancels
    expect(page.get_by_test_id("builds-error")).to_be_empty()
    page.unroute_all(behavior="ignoreErrors")
    page.reload()
    expect(rows.get_by_test_id("build-status")).to_have_text(["done", "done"])

    # the graph: nodes and edges drawn, an entity's details, the communities with their reports
    page.get_by_role("link", name="Knowledge graph", exact=True).click()
    page.wait_for_url(re.compile(rf"/ui/kb/{kb}/graph$"))
    nodes = page.get_by_test_id("graph-node")
    expect(nodes.first).to_be_visible()
    assert nodes.count() >= 4
    assert page.locator("#graph-svg line.edge").count() > 0
    expect(page.get_by_test_id("graph-summary")).to_contain_text("entities")
    expect(page.get_by_test_id("community").first).to_be_visible()
    names = page.evaluate("[...document.querySelectorAll('[data-testid=graph-node]')].map(n => n.getAttribute("
                          "'aria-label'))")
    target = next(n for n in names if n.startswith("Maria Lopez"))
    page.locator(f"[data-testid=graph-node][aria-label='{target}']").click()
    detail = page.get_by_test_id("graph-detail")
    expect(detail.get_by_test_id("entity-name")).to_have_text("Maria Lopez")
    expect(detail.get_by_test_id("entity-type")).not_to_be_empty()
    expect(detail.get_by_test_id("entity-description")).not_to_be_empty()
    expect(detail.get_by_test_id("entity-source").first).to_contain_text("Maria Lopez")
    expect(detail.get_by_test_id("entity-community")).to_be_visible()
    until(page, "() => document.querySelector('#graph-svg .node.selected') !== null")
    # a related entity opens from the details
    detail.locator(".graph-related button").first.click()
    expect(detail.get_by_test_id("entity-name")).not_to_have_text("Maria Lopez")
    page.locator(f"[data-testid=graph-node][aria-label='{target}']").click()
    expect(detail.get_by_test_id("entity-source").first).to_be_visible()
    shot(page, "knowledge-graph")
    assert page.outside == []

    # at phone width the drawing fits the screen and the details stack below it
    phone = new_page(world, width=390, height=844)
    phone.context.add_cookies(page.context.cookies())
    phone.goto(f"/ui/kb/{kb}/graph")
    expect(phone.get_by_test_id("graph-node").first).to_be_visible()
    phone.get_by_test_id("graph-node").first.click()
    expect(phone.get_by_test_id("entity-name")).not_to_be_empty()
    overflow = phone.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, overflow
    shot(phone, "knowledge-graph-phone")
    phone.goto(f"/ui/kb/{kb}/knowledge")
    expect(phone.locator("#builds-table tbody tr")).to_have_count(2)
    overflow = phone.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, overflow
    phone.context.close()


def test_the_graph_page_builds_its_first_graph_and_draws_it_when_done(world: World) -> None:
    page = new_page(world)
    sign_up(page, "first@example.com")
    kb = create_kb(page, "Quiet")
    page.context.add_cookies([{"name": "ragloom_lang", "value": "zh", "url": world.live.url}])
    # nothing to build yet: the estimate says so, and "not now" starts nothing (in Chinese here)
    page.goto(f"/ui/kb/{kb}/knowledge")
    expect(page.get_by_role("heading", name="知识构建")).to_be_visible()
    page.get_by_role("button", name="构建 RAPTOR 摘要").click()
    estimate = page.get_by_test_id("build-estimate")
    expect(estimate).to_contain_text("共 0 个，需构建 0 个")
    estimate.get_by_role("button", name="暂不构建").click()
    expect(estimate).to_be_hidden()
    expect(page.locator("#builds-empty")).to_be_visible()

    page.goto(f"/ui/kb/{kb}")
    upload_texts(page, {"lantern.txt": FILES["lantern.txt"]})
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["完成"], timeout=180_000)
    page.goto(f"/ui/kb/{kb}/graph")
    expect(page.get_by_role("heading", name="还没有构建知识图谱。")).to_be_visible()
    page.get_by_role("button", name="构建知识图谱").click()
    expect(estimate).to_contain_text("共 1 个，需构建 1 个")
    estimate.get_by_role("button", name="开始构建").click()
    # the graph is drawn once its build is done, without a reload
    expect(page.get_by_test_id("graph-node").first).to_be_visible(timeout=120_000)
    expect(page.get_by_test_id("graph-empty")).to_be_hidden()
    expect(page.locator("#communities-none")).to_be_visible()  # communities were not asked for
    assert page.outside == []
