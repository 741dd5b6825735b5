"""Prompts of the chat-model graph builders (written for ragloom from the facts of REFERENCE §9).

The record format: each record is a parenthesised tuple whose fields are separated by
:data:`TUPLE_DELIMITER`; records are separated by :data:`RECORD_DELIMITER`; the reply ends with
:data:`COMPLETION_DELIMITER`::

    ("entity"<|>NAME<|>TYPE<|>description)##
    ("relationship"<|>SOURCE<|>TARGET<|>description<|>keywords<|>strength)##      (light)
    ("relationship"<|>SOURCE<|>TARGET<|>description<|>strength)##                 (general)
    <|COMPLETE|>
"""

from __future__ import annotations

from collections.abc import Sequence

TUPLE_DELIMITER = "<|>"
RECORD_DELIMITER = "##"
COMPLETION_DELIMITER = "<|COMPLETE|>"
DEFAULT_ENTITY_TYPES: tuple[str, ...] = ("organization", "person", "geo", "event", "category")

_INTRO = """You build a knowledge graph from a document. Read the text at the end and write down the entities \
it names and the relationships between them, as records in the exact format below.

Entities{types_clause}.
For each entity write one record:
("entity"{t}<entity name, in capital letters, as the text spells it>{t}<entity type>{t}<what the text says \
about the entity: its attributes and what it does>)

Relationships: for each pair of the entities above that the text clearly relates, write one record:
{relationship_format}
The strength is a number from 1 (loosely related) to 10 (closely related).

Separate the records with {r}. Write nothing else: no explanations, no numbering, no code fences.
When all records are written, end with {c}
Write the descriptions in {language}; keep names as the text spells them.

Example
Text: Kappa Labs, a research firm in Oslo, designed the Vega engine. Its chief engineer, Ann Berg, tested it in 2021.
Records:
{example}

Text:
{text}

Records:
"""

_LIGHT_RELATIONSHIP = ('("relationship"{t}<source entity>{t}<target entity>{t}<how and why they are related>{t}'
                       '<a few keywords of the relationship, comma-separated>{t}<strength>)')
_GENERAL_RELATIONSHIP = ('("relationship"{t}<source entity>{t}<target entity>{t}<how and why they are related>{t}'
                         '<strength>)')

_EXAMPLE_ENTITIES = [
    '("entity"{t}KAPPA LABS{t}organization{t}A research firm in Oslo that designed the Vega engine.)',
    '("entity"{t}OSLO{t}geo{t}The city where Kappa Labs is based.)',
    '("entity"{t}VEGA ENGINE{t}category{t}An engine designed by Kappa Labs and tested in 2021.)',
    '("entity"{t}ANN BERG{t}person{t}Chief engineer of Kappa Labs who tested the Vega engine.)',
]
_EXAMPLE_LIGHT = [
    '("relationship"{t}KAPPA LABS{t}VEGA ENGINE{t}Kappa Labs designed the Vega engine.{t}design, product{t}9)',
    '("relationship"{t}ANN BERG{t}KAPPA LABS{t}Ann Berg is the chief engineer of Kappa Labs.{t}employment{t}8)',
    '("relationship"{t}ANN BERG{t}VEGA ENGINE{t}Ann Berg tested the Vega engine in 2021.{t}testing{t}7)',
]
_EXAMPLE_GENERAL = [
    '("relationship"{t}KAPPA LABS{t}VEGA ENGINE{t}Kappa Labs designed the Vega engine.{t}9)',
    '("relationship"{t}ANN BERG{t}KAPPA LABS{t}Ann Berg is the chief engineer of Kappa Labs.{t}8)',
    '("relationship"{t}ANN BERG{t}VEGA ENGINE{t}Ann Berg tested the Vega engine in 2021.{t}7)',
]

CONTINUE_PROMPT = (f"Many entities and relationships were missed in the last extraction. Add them below, in the "
                   f"same format, without repeating the records already written. End with {COMPLETION_DELIMITER}")
LOOP_PROMPT = ("Were some entities or relationships of the text still missed? Answer Y if more need to be added, "
               "N if none do. Answer with the single letter Y or N.")

SUMMARY_PROMPT = """Several descriptions of the same {what} "{name}" were gathered from a document collection. \
Write one comprehensive description in {language} that keeps every fact they give, resolves contradictions, \
and speaks of the {what} in the third person, naming it. Write at most {max_words} words and nothing else.

Descriptions:
{descriptions}
"""

RESOLUTION_PROMPT = """Decide for each numbered pair of names below whether both names refer to the same \
real-world entity (spelling variants, plurals, abbreviations and legal suffixes of one thing are the same; \
different things that share a word are not). Answer with one line per pair, "<number>: yes" or "<number>: no", \
and nothing else.

{pairs}
"""

QUESTION_ENTITIES_PROMPT = """List the named entities (organisations, people, places, products, events, \
concepts) that the question below asks about, one per line, spelled as in the question. Write nothing else; \
write "none" if there are none.

Question: {question}
"""

COMMUNITY_REPORT_PROMPT = """You write a report on a community of a knowledge graph: a group of entities \
that are closely related in a document collection. The report helps a reader decide what the community is \
about and why it matters.

Use only the entities and relationships given below. Reply with one JSON object and nothing else:
{{"title": "<a short specific name of the community, naming its key entities>",
  "summary": "<an executive summary: how the entities relate and what is most significant>",
  "findings": [{{"summary": "<one insight>", "explanation": "<the grounds for it, from the data below>"}}],
  "rating": <a number from 0 to 10: how important the community is>,
  "rating_explanation": "<one sentence on the rating>"}}
Give 2 to 5 findings. Write in {language}.

Entities (id, entity, type, description):
{entities}

Relationships (id, source, target, description):
{relations}
"""


def extraction_prompt(text: str, *, method: str, entity_types: Sequence[str] | None, language: str) -> str:
    """The first extraction prompt over ``text``. ``method`` ``light`` asks for relationship keywords;
    ``general`` does not. ``entity_types`` None lets the model choose the types."""
    t, r = TUPLE_DELIMITER, RECORD_DELIMITER
    if entity_types:
        types_clause = f": things of these types only: {', '.join(entity_types)}"
    else:
        types_clause = (": people, organisations, places, products, events, concepts and other things the text "
                        "is about; name the type with one word")
    rel = _LIGHT_RELATIONSHIP if method == "light" else _GENERAL_RELATIONSHIP
    examples = _EXAMPLE_ENTITIES + (_EXAMPLE_LIGHT if method == "light" else _EXAMPLE_GENERAL)
    example = f"{r}\n".join(e.format(t=t) for e in examples) + f"\n{COMPLETION_DELIMITER}"
    return _INTRO.format(types_clause=types_clause, t=t, r=r, c=COMPLETION_DELIMITER, language=language,
                         relationship_format=rel.format(t=t), example=example, text=text)
