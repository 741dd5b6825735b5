"""HTML fidelity (issue 11): inline elements join as a browser renders them, and a Wikipedia-like
article keeps all its visible words (infobox, nested lists, definition lists, figures, quotes, code,
details, references, spanned tables); what is dropped on purpose stays out."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import lxml.html
import pytest

from ragloom.ingest.parsers import parse_document
from tests.ingest.docgen import paragraph, sentence

# words placed only where the parser drops them on purpose (see ragloom.ingest.parsers.html)
DROPPED = ["scriptword", "styleword", "templateword", "hiddenattrword", "displaynoneword", "navword",
           "sitebannerword", "sitefooterword", "noscriptword", "sidebarword"]
_WORD = re.compile(r"\w+")
# elements a browser lays out as blocks (or cells / line breaks): a word never runs across them
_SEPARATED = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "figure",
              "figcaption", "dl", "dt", "dd", "ul", "ol", "li", "table", "caption", "tr", "td", "th", "pre",
              "h1", "h2", "h3", "h4", "h5", "h6", "details", "summary", "br", "hr", "address", "body"}


def _article(rng: random.Random) -> str:
    """A saved Wikipedia-like article: site chrome around ``<main>``, an infobox, references..."""
    p = [paragraph(rng, 4) for _ in range(8)]
    s = [sentence(rng, 7) for _ in range(12)]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Western marsh harrier - Wikipedia</title>
<style>.infobox {{ float: right }} /* styleword */</style>
<script>var scriptword = "scriptword";</script></head>
<body>
<header class="site-header"><a href="/">sitebannerword Wikipedia</a><form><input name="search"></form></header>
<nav id="sidebar"><ul><li><a href="/main">navword Main page</a></li><li><a>navword Contents</a></li></ul></nav>
<noscript>noscriptword enable JavaScript</noscript>
<main id="content">
<header class="mw-body-header"><h1 id="firstHeading">Western marsh harrier</h1></header>
<div id="siteSub">From Wikipedia, the free encyclopedia</div>
<div role="note" class="hatnote">For other uses, see <a href="/wiki/Harrier">Harrier (disambiguation)</a>.</div>
<table class="infobox biota"><caption>Western marsh harrier</caption>
<tbody>
<tr><td colspan="2"><figure><a href="/f"><img src="h.jpg" alt="photo"></a>
<figcaption>Male in flight, <a href="/wiki/Spain">Spain</a></figcaption></figure></td></tr>
<tr><th colspan="2"><a href="/wiki/Conservation_status">Conservation status</a></th></tr>
<tr><td colspan="2"><a href="/wiki/LC">Least Concern</a>&nbsp;<small>(<a href="/wiki/IUCN">IUCN 3.1</a>)</small><sup
 class="reference"><a href="#cite_note-1">[1]</a></sup></td></tr>
<tr><th colspan="2">Scientific classification</th></tr>
<tr><td>Kingdom:</td><td><a href="/wiki/Animal">Animalia</a></td></tr>
<tr><td>Phylum:</td><td><a href="/wiki/Chordate">Chordata</a></td></tr>
<tr><td>Family:</td><td><a href="/wiki/Acc">Accipitridae</a></td></tr>
<tr><td>Genus:</td><td><i><a href="/wiki/Circus">Circus</a></i></td></tr>
<tr><th colspan="2">Binomial name</th></tr>
<tr><td colspan="2"><b><i>Circus aeruginosus</i></b><br><small>(<a href="/wiki/Linnaeus">Linnaeus</a>, 1758)</small>
</td></tr>
<tr><td colspan="2"><table class="nested"><tr><td>Breeding</td><td>Resident</td><td>Winter</td></tr></table></td></tr>
</tbody></table>
<p>The <b>western marsh harrier</b> (<i>Circus aeruginosus</i>) is a large <a href="/wiki/Harrier">harrier</a>,
a <a href="/wiki/Bird_of_prey">bird of prey</a> from temperate and subtropical western
<a href="/wiki/Eurasia">Eurasia</a> and adjacent <a href="/wiki/Africa">Africa</a>.<sup class="reference"><a
href="#cite_note-1">[1]</a></sup> It nests in reed beds, tall <a href="/wiki/Grass">grasses</a>, aquatic plants
and <span class="nowrap">marshes</span>; its call is a <q>kee-ah</q>.<sup class="reference">[2]</sup></p>
<span style="display: none">displaynoneword</span><p hidden>hiddenattrword</p>
<template><p>templateword</p></template>
<div class="mw-heading mw-heading2"><h2 id="Taxonomy">Taxonomy</h2></div>
<p>{p[0]}</p>
<div class="thumb tright"><div class="thumbinner"><img src="e.jpg" alt="egg">
<div class="thumbcaption">Egg, collection <a href="/wiki/Museum">Museum Wiesbaden</a></div></div></div>
<p>{p[1]} Loose <abbr title="et cetera">etc.</abbr> text with <code>inline code</code>.</p>
<h3>Subspecies</h3>
<ul>
<li><i>C. a. aeruginosus</i> – <a href="/wiki/L">Linnaeus</a>, 1758: Europe and north Africa
<ul><li>{s[0]}</li><li>{s[1]}<ul><li>{s[2]}</li></ul></li></ul></li>
<li><i>C. a. harterti</i> – Zedlitz, 1914: northwest Africa</li>
</ul>
<h2 id="Description">Description</h2>
<dl><dt>Length</dt><dd>48–56&nbsp;cm</dd><dt>Wingspan</dt><dd>115–130 cm, {s[3]}</dd></dl>
<figure typeof="mw:File/Thumb"><a href="/f2"><img src="f.jpg" alt="female"></a>
<figcaption>A female <i>on</i> the nest near <a href="/wiki/Lake">Lake Neusiedl</a></figcaption></figure>
<p>{p[2]}</p>
<blockquote><p>{s[4]}</p><p>— <cite>The Birds of Africa</cite>, 1982</p></blockquote>
<ol><li>{s[5]}</li><li>{s[6]}<ol><li>{s[7]}</li></ol></li></ol>
<pre>harrier = Bird("Circus aeruginosus")
    harrier.fly(height=40)</pre>
<details><summary>Measurements of museum skins</summary><p>{s[8]}</p>
<table><tr><th>Sex</th><th>Wing (mm)</th></tr><tr><td>male</td><td>378–410</td></tr></table></details>
<h2 id="Distribution">Distribution and habitat</h2>
<table class="wikitable sortable"><caption>Breeding pairs by country</caption>
<thead><tr><th rowspan="2">Country</th><th colspan="2">Pairs</th><th rowspan="2">Trend</th></tr>
<tr><th>minimum</th><th>maximum</th></tr></thead>
<tbody><tr><td rowspan="2">France</td><td>1,600</td><td>2,200</td><td>stable</td></tr>
<tr><td>1,700</td><td>2,300</td><td>rising</td></tr>
<tr><td>Poland</td><td colspan="2">7,000</td><td>{s[9]}</td></tr></tbody></table>
<div>Loose text in a division <p>{p[3]}</p> and its tail after the paragraph.</div>
<section><h3>Migration</h3><p>{p[4]}</p><address>Ringing centre, Radolfzell</address></section>
<section hidden="until-found"><p>{p[5]}</p></section>
<aside class="sidebox"><p>{s[10]}</p></aside>
<h2 id="References">References</h2>
<div class="reflist"><ol class="references">
<li id="cite_note-1"><span class="mw-cite-backlink"><b><a href="#r1">^</a></b></span> <span
 class="reference-text">BirdLife International (2016). "Circus aeruginosus". <i>IUCN Red List</i>.</span></li>
<li id="cite_note-2"><span class="mw-cite-backlink">^</span> <span class="reference-text">{s[11]}</span></li>
</ol></div>
<div role="navigation" class="navbox"><a>navword Accipitridae</a> <a>navword Harriers</a></div>
</main>
<aside id="sidebar2">sidebarword tools</aside>
<footer>sitefooterword Privacy policy</footer>
</body></html>"""


def visible_words(html: str) -> Counter[str]:
    """The words a reader sees in ``<main>``, computed with lxml alone: text of every element but
    script/style/template/noscript, ``hidden`` or ``display: none`` elements and navigation, with a
    break at every block so that no word runs across two blocks."""
    main = lxml.html.document_fromstring(html).find(".//main")
    assert main is not None
    for el in list(main.iter()):
        if not isinstance(el.tag, str):
            continue
        style = (el.get("style") or "").replace(" ", "").lower()
        hidden = el.get("hidden") not in (None, "until-found")
        if (el.tag in ("script", "style", "template", "noscript", "nav") or hidden or "display:none" in style
                or el.get("role") == "navigation"):
            el.drop_tree()
    for el in main.iter():
        if isinstance(el.tag, str) and el.tag in _SEPARATED:
            el.text = " " + (el.text or "")
            el.tail = " " + (el.tail or "")
    return Counter(w.lower() for w in _WORD.findall(main.text_content()))


def parsed_words(data: bytes, filename: str) -> Counter[str]:
    doc = parse_document(data, filename)
    return Counter(w.lower() for b in doc.blocks for w in _WORD.findall(b.text))


def coverage(expected: Counter[str], got: Counter[str]) -> float:
    """Share of ``expected`` (as a multiset) found in ``got``."""
    return sum(min(n, got[w]) for w, n in expected.items()) / sum(expected.values())


def test_a_wikipedia_like_article_keeps_its_visible_words() -> None:
    html = _article(random.Random(11))
    expected = visible_words(html)
    assert not set(DROPPED) & set(expected)  # the reference leaves out what the parser drops on purpose
    got = parsed_words(html.encode(), "Western_marsh_harrier.html")
    missing = expected - got
    assert coverage(expected, got) >= 0.99, f"missing: {sorted(missing.elements())[:40]}"
    assert not set(DROPPED) & set(got)


def test_article_structure_survives(tmp_path: Path) -> None:
    html = _article(random.Random(5))
    doc = parse_document(html.encode(), "harrier.html")
    texts = [b.text for b in doc.blocks]
    joined = "\n".join(texts)
    assert doc.title == "Western marsh harrier - Wikipedia"
    titles = [(b.level, b.text) for b in doc.blocks if b.kind == "title"]
    assert titles[:3] == [(1, "Western marsh harrier"), (2, "Taxonomy"), (3, "Subspecies")]
    assert "tall grasses, aquatic plants and marshes; its call is a kee-ah.[2]" in joined
    assert "Least Concern (IUCN 3.1)[1]" in joined
    assert "Africa.[1] It nests" in joined
    lists = [b.text for b in doc.blocks if b.kind == "list"]
    subspecies = next(t for t in lists if "harterti" in t).split("\n")
    assert subspecies[0] == "- C. a. aeruginosus – Linnaeus, 1758: Europe and north Africa"
    assert subspecies[1].startswith("  - ") and subspecies[3].startswith("    - ")
    assert subspecies[-1] == "- C. a. harterti – Zedlitz, 1914: northwest Africa"
    code = next(b for b in doc.blocks if b.kind == "code")
    assert code.text == 'harrier = Bird("Circus aeruginosus")\n    harrier.fly(height=40)'
    tables = [b for b in doc.blocks if b.kind == "table"]
    pairs = next(t for t in tables if t.meta.get("caption") == "Breeding pairs by country")
    assert pairs.table is not None
    assert pairs.table.header == ["Country", "Pairs › minimum", "Pairs › maximum", "Trend"]
    assert pairs.table.rows[1] == ["France", "1,700", "2,300", "rising"]
    assert "Breeding pairs by country" in texts  # the caption is text too, just before its table
    assert texts.index("Breeding pairs by country") == doc.blocks.index(pairs) - 1
    assert "A female on the nest near Lake Neusiedl" in texts
    assert "Measurements of museum skins" in texts
    assert "Ringing centre, Radolfzell" in texts


@pytest.mark.parametrize(("body", "expected"), [
    ('<p>tall <a href="#">grasses</a>, aquatic plants</p>', ["tall grasses, aquatic plants"]),
    ("<p><b>bold</b><i>italic</i> and <span>New</span> <span>York</span></p>", ["bolditalic and New York"]),
    ("<p>a word<sup>[1]</sup>, then H<sub>2</sub>O and x<sup>2</sup>.</p>", ["a word[1], then H2O and x2."]),
    ("<p>  spread \n\t over\n   lines  </p>", ["spread over lines"]),
    ("<p>first line<br>second <br/> third</p>", ["first line\nsecond\nthird"]),
    ("<p>(<i>Circus</i>)&nbsp;and <q>quoted</q></p>", ["(Circus) and quoted"]),
    ("<p>co&shy;operation of <ruby>漢字<rp>(</rp><rt>かんじ</rt><rp>)</rp></ruby></p>",
     ["cooperation of 漢字(かんじ)"]),
    ("<div>before <p>inside</p> after</div>", ["before", "inside", "after"]),
    ("<p>text <span>inner <div>block</div> tail</span> end</p>", ["text inner", "block", "tail end"]),
    ("<ul><li>one<li><b>two</b>, three</ul>", ["- one\n- two, three"]),
    ("<table><tr><th>Name</th><th>Role</th></tr><tr><td><b>Ann</b>, <i>PhD</i></td><td>lead<br>owner</td></tr>"
     "</table>", ["Name: Ann, PhD; Role: lead owner"]),
    ("<h2>Price <small>(2024)</small>, <abbr>EUR</abbr></h2>", ["Price (2024), EUR"]),
])
def test_inline_elements_join_as_a_browser_renders_them(body: str, expected: list[str]) -> None:
    html = f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>{body}</body></html>"
    assert [b.text for b in parse_document(html.encode(), "p.html").blocks] == expected


def test_header_and_footer_of_an_article_are_kept_page_chrome_is_not() -> None:
    html = ("<html><body><header>sitebannerword</header><article><header><h1>Report</h1><p>By Ann</p></header>"
            "<p>Body text.</p><footer>Filed under birds</footer></article><footer>sitefooterword</footer>"
            "</body></html>")
    texts = [b.text for b in parse_document(html.encode(), "a.html").blocks]
    assert texts == ["Report", "By Ann", "Body text.", "Filed under birds"]
