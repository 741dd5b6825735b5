"""The analysers of the knowledge-base languages besides Chinese and English (ragloom.nlp.languages): each
reduces its language's inflected forms to one term where the Chinese and English analyser cannot, drops
its stop words from questions, and detection tells the languages apart."""

from __future__ import annotations

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.nlp import Analyzer, TermWeigher, build_fulltext_query
from ragloom.nlp.languages import KB_LANGUAGES, Analyzers, check_language, detect_language
from tests.nlp.multilingual import CORPORA

ANALYZERS = Analyzers()

# (language, a form in a document, another form of the same word in a question)
FORMS = [
    ("de", "Die Pumpe", "Pumpen"), ("de", "Bäckerei", "Bäckereien"),
    ("fr", "le cheval", "les chevaux"), ("fr", "l'entretien", "entretien"),
    ("es", "la panadería", "las panaderías"), ("it", "la pompa", "le pompe"),
    ("pt", "verificada", "verificam"), ("nl", "de pomp", "pompen"),
    ("ru", "насоса", "насосы"), ("ru", "ёлка", "елки"),
    ("ar", "المضخة", "المضخات"), ("ar", "المخبز", "مخبز"),
    ("ja", "ポンプは", "ポンプを"), ("ja", "メンテナンスが必要", "メンテナンスを"),
    ("ko", "펌프는", "펌프를"), ("ko", "빵집은", "빵집이"),
]


def _content(analyzer: Analyzer, text: str) -> set[str]:
    return set(analyzer.remove_stop_words(analyzer.tokenize(text)))


@pytest.mark.parametrize(("language", "document", "question"), FORMS)
def test_each_language_reads_two_forms_of_a_word_as_one_term(language: str, document: str, question: str) -> None:
    own = ANALYZERS.get(language)
    assert _content(own, document) & _content(own, question), (own.tokenize(document), own.tokenize(question))
    base = ANALYZERS.base  # the Chinese and English analysis does not: the test would fail without the language's
    assert not _content(base, document) & _content(base, question)


def test_japanese_units_and_their_pieces() -> None:
    ja = ANALYZERS.get("ja")
    assert ja.tokenize("外国人参政権について") == ["外国人参政権", "に", "つく", "て"]
    assert ja.fine_pieces("外国人参政権") == ["外国", "人", "参政", "権"]
    assert ja.tokenize("行われます") == ["行う", "れる", "ます"]  # the normalised (dictionary) forms
    assert ja.tokenize("ＰＵＭＰ") == ["pump"]  # full-width Latin; half-width kana, kana and kanji spellings
    assert ja.tokenize("ｶﾀｶﾅ") == ja.tokenize("カタカナ") == ja.tokenize("片仮名")
    assert "權" not in "".join(ja.tokenize("權利"))  # no traditional→simplified rewrite: Sudachi's own forms


def test_korean_drops_particles_and_endings() -> None:
    ko = ANALYZERS.get("ko")
    assert ko.tokenize("펌프는 석 달마다 점검됩니다.") == ["펌프", "석", "달", "점검"]
    assert ko.tokenize("ISO 9001 인증을 받았습니다") == ["iso", "9001", "인증", "받"]


def test_english_stop_words_do_not_take_another_language_s_words_and_long_runs_are_read() -> None:
    es = ANALYZERS.get("es")
    assert "min" in _content(es, "¿Dónde está la mina de cobre?")  # "mine" stemmed in Spanish is "mina"'s stem
    ja = ANALYZERS.get("ja")
    assert len(ja.tokenize("ポンプの点検" * 5000)) > 10000  # 30,000 characters in one run: more than Sudachi takes


def test_arabic_and_russian_normalisation() -> None:
    ar = ANALYZERS.get("ar")
    assert ar.normalize("أَحْمَد") == ar.normalize("احمد")  # short vowels off, hamza on alef read as alef
    ru = ANALYZERS.get("ru")
    assert ru.tokenize("Ёж") == ru.tokenize("еж")


def test_a_question_loses_its_language_s_stop_words() -> None:
    for language, question, kept in [("de", "Wie oft werden die Pumpen gewartet?", {"pump", "oft"}),
                                     ("fr", "Quand est-ce que la boulangerie ouvre ?", {"boulanger", "ouvr"}),
                                     ("ja", "パン屋は何時に開店しますか？", {"パン屋", "開店"}),
                                     ("ko", "빵집은 언제 문을 엽니까?", {"빵집", "문"})]:
        analyzer = ANALYZERS.get(language)
        analysis = build_fulltext_query(question, analyzer, TermWeigher(analyzer))
        terms = {t for t, _ in analysis.keywords}
        assert kept <= terms, (language, terms)
        assert not any(analyzer.is_stop_word(t) for t in terms), (language, terms)


@pytest.mark.parametrize("language", sorted(CORPORA))
def test_detection_tells_the_corpora_apart(language: str) -> None:
    for text in CORPORA[language]["docs"].values():
        assert detect_language(text) == language
    # a question in Latin script needs a function word; the rest go by their script
    for question, _ in CORPORA[language]["questions"]:
        assert detect_language(question) == language, question


def test_detection_of_chinese_english_and_the_fallback() -> None:
    assert detect_language("水泵每个月检查一次。") == "zh"
    # a Chinese question quoting a Japanese name, or written with the middle dot, is Chinese
    assert detect_language("《ワンピース》的作者是谁？") == detect_language("迈克尔・乔丹是谁？") == "zh"
    # an English question py3langid is unsure of keeps the default (it scores Dutch 0.51, Spanish 0.58)
    assert detect_language("When was Angela Merkel born?") == detect_language("pasta carbonara recipe") == "en"
    assert detect_language("The pump is checked every month and the seals are replaced.") == "en"
    assert detect_language("東京の天気はどうですか") == "ja"  # kanji with kana is Japanese
    assert detect_language("Pumpen Wartung", default="de") == "de"  # no function word: the default
    assert detect_language("12345 ...") == "en"


def test_the_knowledge_base_languages_and_their_names() -> None:
    assert set(KB_LANGUAGES) == {"en", "zh", "de", "fr", "es", "it", "pt", "nl", "ru", "ja", "ko", "ar", "auto"}
    assert check_language("German") == "de" and check_language(" JA ") == "ja" and check_language("auto") == "auto"
    with pytest.raises(InvalidRequestError, match="language must be one of en, zh, de"):
        check_language("klingon")


def test_the_query_analyser_follows_the_knowledge_bases() -> None:
    assert ANALYZERS.for_query("Wie oft?", ["en"]) is ANALYZERS.base  # Chinese and English: one analyser
    assert ANALYZERS.for_query("what is it", ["zh", "en"]) is ANALYZERS.base
    assert ANALYZERS.for_query("how often", ["de"]).language == "de"  # the documents' language decides
    assert ANALYZERS.for_query("Wie oft werden Pumpen gewartet?", ["fr", "de"]).language == "de"
    assert ANALYZERS.for_query("ポンプの点検", ["auto"]).language == "ja"  # auto: the question's own
    assert ANALYZERS.for_query("the pump", ["auto"]) is ANALYZERS.base
    assert ANALYZERS.for_query("the pump and the seals", ["fr", "de"]).language == "fr"  # neither: the first
    assert ANALYZERS.for_text("Die Pumpe wird gewartet.", "auto").language == "de"
    assert ANALYZERS.for_text("Die Pumpe wird gewartet.", "fr").language == "fr"


def test_german_nouns_are_no_names_to_the_answerer_but_codes_are() -> None:
    from ragloom.generation.keyterms import analysis_for, name_terms

    with analysis_for(ANALYZERS.get("de")):
        assert name_terms("In welchem Jahr hat man mit dem Bau des Kölner Doms begonnen?") == []
        assert name_terms("Wie lange dauert das Aufladen beim Akku ES-500?") == ["es-500"]
    assert name_terms("When did Kölner Dom open?") != []  # English: a capitalised word past the first is a name
