"""What a question asks for: a number, a date, a person or organisation, a place, a definition or
reason, yes or no, a list — read from its question words, in English and Chinese.

:func:`question_type` applies simple ordered rules (the first that matches wins):

* **number** — ``how many``/``how much``/``how long``/``how far``/``how old``..., ``what percentage``,
  ``the number of``/``the total``; 多少, 几个/几次/几天..., 多长/多久/多大/多远/多高/多重;
* **code** — ``what is the <thing> number/code/id`` ("the docket number of ...", "the solicitation
  number"); 编号/代码/型号是什么 — an identifier, not a quantity;
* **date** — ``when``, ``what year``/``which year``/``what date``/``what time``/``what day``;
  哪一年, 哪年, 何时, 什么时候, 什么时间, 几月, 几号, 几点, 哪天, 年份, 日期;
* **person** (or organisation, or another named thing) — ``who``/``whom``/``whose``, ``which
  company``/``organisation``, ``who wrote``, ``the author of``, ``which <noun> <verb>s`` ("which planet
  spins backwards"); 谁, 哪位, 何人, 什么人, 作者, 哪家/哪个公司/什么公司/哪个组织;
* **place** — ``where``, ``which country``/``city``/``town``/``state``, ``what place``; 哪里, 哪儿,
  何处, 什么地方, 哪个国家/城市/省, 哪国, 位于哪;
* **reason** — ``why``, ``what causes``, ``for what reason``; 为什么, 为何, 原因, 怎么会;
* **yes/no** — an English question opening with an auxiliary (``Is``, ``Does``, ``Can``...); 是否,
  是不是, 能不能, 有没有, 可不可以, a closing 吗;
* **list** — ``list``/``name the``, ``what are the``/``which are``, ``what ... are there``; 哪些, 哪几 (before
  the number rule: 哪几个 asks which, not how many);
* **definition** — ``what is``/``what are``/``what does ... mean``, ``define``; 是什么, 什么是, 指什么;
* otherwise **other**.
"""

from __future__ import annotations

import re
from enum import StrEnum


class QType(StrEnum):
    NUMBER = "number"
    DATE = "date"
    PERSON = "person"
    PLACE = "place"
    REASON = "reason"
    YESNO = "yesno"
    LIST = "list"
    DEFINITION = "definition"
    CODE = "code"
    OTHER = "other"


_MEASURE = (r"\b(?:size|age|rate|ratio|count|amount|price|cost|percentage|average|mean|median|score|length|weight|"
            r"height|duration|salary|fee|temperature|speed|population|budget|revenue|income|distance)\b")
"""Nouns of a measure: "what was the <...> size of" asks for a number."""

_EN_RULES: tuple[tuple[QType, re.Pattern[str]], ...] = (
    (QType.CODE, re.compile(
        r"\b(?:in\s+)?(?:which|what)\s+(?:issue|volume|edition)\b|"  # "in which issue of the Federal Register"
        r"\b(?:what|which)\s+(?:is|was|are|were)\s+(?:the|its|their)\s+(?!(?:total|overall|average|mean|whole)\b)"
        r"(?:[\w\-]+\s+){0,3}?(?:number|no\.|code|id|identifier|serial)\b(?!\s+of\s+(?!the\b|this\b|that\b|its\b))")),
    (QType.DATE, re.compile(
        r"\bwhen\b|\b(?:what|which|in what)\s+(?:year|date|month|day|time|century|decade)\b|"
        r"\bhow long ago\b|\bsince when\b")),
    (QType.NUMBER, re.compile(
        r"\bhow\s+(?:many|much|long|far|old|big|large|tall|high|heavy|wide|deep|fast)\b|"
        r"\bwhat\s+(?:percentage|percent|proportion|share|fraction|number|amount|size|price|cost)\b|"
        r"\b(?:the|a)\s+(?:total\s+)?(?:number|amount|count|quantity)\s+of\b|\bthe total\b|\btotal number\b|"
        # "what was the final sample size of", "what is the mean age of", "what hourly rate does": a measure
        rf"\bwhat\s+(?:is|was|are|were)\s+(?:the|its|their)\s+(?:[\w\-]+\s+){{0,3}}?{_MEASURE}\s*(?:of|for|in|at|on|"
        r"per|among|\?|$)|"
        rf"\bwhat\s+(?:[\w\-]+\s+){{0,2}}{_MEASURE}\s+(?:does|did|do|is|was|are|were|will|would)\b")),
    (QType.PERSON, re.compile(
        r"^\s*(?:who|whom|whose)\b|\b(?:who|whom|whose)\s+(?:is|was|are|were|wrote|did|does|has|had|invented|"
        r"founded|made|created|discovered|directed|designed|developed|owns|led)\b|"
        r"\b(?:which|what)\s+(?:company|companies|organi[sz]ation|firm|person|people|team|university|agency|"
        r"author|authors|manufacturer|office|department|division|ministry|committee|institute)\b|"
        r"\bthe\s+authors?\s+of\b|\bwritten\s+by\b|\bwhat\s+(?:is|was)\s+the\s+name\s+of\b|"
        r"^\s*which\s+[a-z]+\s+(?!of\b)[a-z]+s\b")),  # "which planet spins ...": a named thing
    (QType.PLACE, re.compile(
        r"^\s*where\b|\bwhere\s+(?:is|was|are|were|do|does|did|can|in)\b|"
        r"\b(?:which|what|in which|in what|from which|from what|at which|at what)\s+(?:country|countries|city|"
        r"cities|town|state|province|region|continent|place|location|island|airport|port|harbou?r|station|"
        r"county|district|village|venue|site|building|hospital)\b")),
    (QType.REASON, re.compile(r"^\s*why\b|\bwhy\s|\bwhat\s+(?:causes|caused)\b|\bfor what reason\b|\bthe reason\b")),
    (QType.YESNO, re.compile(
        r"^\s*(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|has|have|had|may|must|isn't|"
        r"aren't|doesn't|don't|didn't|can't)\b")),
    (QType.LIST, re.compile(
        r"^\s*(?:list|name)\b|\bname\s+the\b|\bwhat\s+(?:are|were)\s+the\s+(?:[a-z\-]+\s+)?[a-z]+s\b(?!\s+(?:of|for)\s+(?:a|an|the)\b)|\bwhich\s+\w+s\s+(?:are|were)\b|"
        r"\bwhat\s+\w+s\s+are\s+there\b|\bwhat\s+kinds?\s+of\b|"
        r"^\s*what\s+(?:(?:two|three|four|five|six|seven|eight|nine|ten|several|\d+)\s+)?(?:[a-z\-]+\s+)?[a-z]+s\s+"
        r"(?:do|does|did|can|could|are|were|will|should|must|may|might)\b")),
    (QType.DEFINITION, re.compile(
        r"^\s*what\s+(?:is|are|was|were)\b|\bwhat\s+does\s+.+\s+mean\b|^\s*define\b|\bdefinition of\b|"
        r"\bwhat\s+is\s+meant\b")),
)

_ZH_RULES: tuple[tuple[QType, re.Pattern[str]], ...] = (
    (QType.CODE, re.compile(r"(?:编号|代码|代号|型号|文号|案号)(?:是|为)?(?:什么|多少)")),
    (QType.LIST, re.compile(r"哪几")),  # 哪几个站点: which ones, not how many
    (QType.DATE, re.compile(r"哪一?年|何年|何时|什么时[候间]|几月|几号|几点|哪一?天|哪个月|年份|日期|"
                            r"多少年前|哪个朝代|哪个时期")),
    (QType.NUMBER, re.compile(r"多少|几[个次天年岁人种名位条家座部场件本只辆台米公]|多[长久大远高重宽深]|"
                              r"百分之几|几成|几倍")),
    (QType.PERSON, re.compile(r"谁|哪[一]?位|何人|什么人|作者|哪[一]?家|哪[一]?个?(?:公司|组织|机构|团队|人|球队|大学)|"
                              r"什么(?:公司|组织|机构)|由哪")),
    (QType.PLACE, re.compile(r"哪里|哪儿|何处|什么地方|哪[一]?个?(?:国家|城市|省|地区|地方)|哪国|位于哪|在哪")),
    (QType.REASON, re.compile(r"为什么|为何|原因|怎么会|何故")),
    (QType.YESNO, re.compile(r"是否|是不是|能不能|有没有|可不可以|会不会|吗[？?]?\s*$")),
    (QType.LIST, re.compile(r"哪些")),
    (QType.DEFINITION, re.compile(r"是什么|什么是|指什么|是指|什么意思|含义")),
)

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


FREQUENCY_QUESTION = re.compile(r"\bhow often\b|\bhow frequently\b|多久.{0,8}一次|多长时间.{0,8}一次|"
                                r"多少.{0,3}一次|频率|"
                                # de, fr, es, it, pt, nl, ru, ar, ja, ko
                                r"\bwie oft\b|\bwie häufig\b|\btous les combien\b|\bà quelle fréquence\b|"
                                r"\bcombien de fois\b|\bcada cu[aá]nto\b|\bcon qu[eé] frecuencia\b|\bogni quanto\b|"
                                r"\bcon quale frequenza\b|\bde quanto em quanto\b|\bcom que frequ[eê]ncia\b|"
                                r"\bhoe vaak\b|как часто|كم مرة|"
                                r"どのくらいの頻度|どれくらいの頻度|何回|얼마나 자주|몇 번")
"""A question of frequency (lower-cased): its answer states how often, not a number alone."""


_ASKED_NOUN = re.compile(r"\b(?:which|what)\s+([a-z]{3,})\b")
_NOT_NOUNS = frozenset(["are", "was", "were", "does", "did", "has", "had", "can", "could", "will", "would", "should",
                        "the", "this", "that", "these", "those", "kind", "kinds", "type", "types", "sort"])


_ROLE = re.compile(r"^\s*who\s+(?:is|was|are|were)\s+(?:the\s+)?(?:current\s+|new\s+|former\s+)?([a-z]{4,})\s+of\b")


_MEASURE_PHRASE = re.compile(rf"\b(?:the|its|their)\s+((?:[\w\-]+\s+){{0,3}}{_MEASURE})|"
                             rf"\bwhat\s+((?:[\w\-]+\s+){{0,2}}{_MEASURE})\s+(?:does|did|do|is|was|are|were)\b")


def asked_measure(question: str) -> str:
    """The words naming the measure a question asks for ("What was the final sample size of ..." ->
    ``final sample size``, "What hourly labor rate does ..." -> ``hourly labor rate``); ``""`` when none."""
    m = _MEASURE_PHRASE.search(question.lower())
    return next((g for g in m.groups() if g), "") if m else ""


def asked_role(question: str) -> str:
    """The role a "who is the <role> of ..." question asks the holder of ("Who is the superintendent of
    the district?" -> ``superintendent``); ``""`` when there is none."""
    m = _ROLE.search(question.lower())
    return m.group(1) if m and m.group(1) not in _NOT_NOUNS else ""


def asked_noun(question: str) -> str:
    """The noun a "which/what <noun>" question names its answer by ("From which airport did..." ->
    ``airport``, "Which office of DARPA..." -> ``office``), singular; ``""`` when there is none."""
    for m in _ASKED_NOUN.finditer(question.lower()):
        noun = m.group(1)
        if noun not in _NOT_NOUNS:
            return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun
    return ""


_SUPERLATIVE = re.compile(r"\b(?:most|least)\s+[a-z]{3,}\b|\b(?:best|worst)\b|\b[a-z]{2,}est\b|最[\u4e00-\u9fff]")
# words ending in "-est" that are no superlative
_NOT_SUPERLATIVE_TEXT = """
interest interests request test contest protest forest guest nest chest honest modest suggest harvest invest digest
manifest arrest quest pest vest crest zest jest west rest lest unrest priest earnest conquest bequest inquest
behest tempest infest attest detest molest divest
"""
_NOT_SUPERLATIVES = frozenset(_NOT_SUPERLATIVE_TEXT.split())


def asked_superlatives(question: str) -> list[str]:
    """The superlatives a question picks its answer by ("What is the quickest train ..." -> ``quickest``, "the
    most expensive" -> ``most expensive``, 最快的 -> ``最快``), lower-cased; ``[]`` when it has none."""
    return [m.group(0) for m in _SUPERLATIVE.finditer(question.lower()) if m.group(0) not in _NOT_SUPERLATIVES]


def question_type(question: str) -> QType:
    """What ``question`` asks for (see the module docstring); a question of frequency ("how often",
    多久…一次) is *other*: its answer is a phrase ("every year", 每年一次), not a number."""
    text = question.strip()
    if FREQUENCY_QUESTION.search(text.lower()):
        return QType.OTHER
    rules = _ZH_RULES if _HAN.search(text) else _EN_RULES
    probe = text if rules is _ZH_RULES else text.lower()
    for qtype, pattern in rules:
        if pattern.search(probe):
            return qtype
    if rules is _ZH_RULES:  # a Chinese question may still ask in English words ("who wrote 某书")
        lower = text.lower()
        for qtype, pattern in _EN_RULES:
            if pattern.search(lower):
                return qtype
    return QType.OTHER
