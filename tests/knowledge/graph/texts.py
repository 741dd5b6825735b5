"""Documents of the knowledge-graph tests (written for them) and a scripted extraction model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragloom.knowledge.graph.prompts import COMPLETION_DELIMITER, CONTINUE_PROMPT, LOOP_PROMPT

# Three English documents: two share Kappa Labs, Ann Berg and the Orion Pump; the third stands apart.
PUMPS = [
    ("a1", "doc-a", "Acme Corporation builds the Orion Pump at its plant in Dayton, Ohio. The Orion Pump must be "
                    "serviced every 450 operating hours."),
    ("a2", "doc-a", "Kappa Labs tests every Orion Pump before it ships. Dr. Ann Berg directs Kappa Labs and reports "
                    "to the board of Acme Corporation."),
    ("a3", "doc-a", "Engineers replace the seals of the pump every two years. Spare seals are sold by Acme "
                    "Corporation."),
]
LABS = [
    ("b1", "doc-b", "Kappa Labs moved to Oslo in 2021. In Oslo, Kappa Labs works with the Norwegian Institute of "
                    "Technology on new seals for the Orion Pump."),
    ("b2", "doc-b", "Ann Berg published the results with Lars Holm. Lars Holm teaches at the Norwegian Institute "
                    "of Technology."),
]
ENGINES = [
    ("c1", "doc-c", "The Vega Engine was designed by Nordic Motors. Nordic Motors sells the Vega Engine to Polar "
                    "Freight."),
]
HUAWEI = [
    ("z1", "doc-z", "华为技术有限公司总部位于深圳。任正非于1987年在深圳创立了华为。华为与中国移动合作建设5G网络。"),
    ("z2", "doc-z", "腾讯公司的总部也在深圳。马化腾是腾讯公司的创始人。马化腾和任正非都在深圳工作。"),
]


def prompt_text(prompt: str) -> str:
    """The document text of an extraction prompt (after the last ``Text:`` line)."""
    return prompt.rsplit("\nText:\n", 1)[1].rsplit("\n\nRecords:", 1)[0]


@dataclass
class ScriptedExtractor:
    """A fake model that "knows" some entities and relations: for an extraction prompt it writes the
    records of those the text names (plus junk lines); the gleaning round adds the ``held_back`` ones;
    the continue question is answered ``more``. Counts the prompts it saw, by kind."""

    entities: dict[str, tuple[str, str]]  # NAME -> (type, description)
    relations: list[tuple[str, str, str, str, float]]  # (source, target, description, keywords, strength)
    held_back: set[str] = field(default_factory=set)  # names written only when asked to glean
    junk: list[str] = field(default_factory=list)
    more: str = "N"
    seen: dict[str, int] = field(default_factory=lambda: {"extract": 0, "glean": 0, "loop": 0, "other": 0})
    light: bool = True

    def _records(self, text: str, names: set[str]) -> list[str]:
        low = text.lower()
        out = []
        for name in sorted(names):
            if name.lower() in low:
                kind, description = self.entities[name]
                out.append(f'("entity"<|>{name}<|>{kind}<|>{description})')
        for source, target, description, keywords, strength in self.relations:
            if {source, target} <= names and source.lower() in low and target.lower() in low:
                middle = f"{description}<|>{keywords}" if self.light else description
                out.append(f'("relationship"<|>{source}<|>{target}<|>{middle}<|>{strength:g})')
        return out

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        last = messages[-1]["content"]
        if last == LOOP_PROMPT:
            self.seen["loop"] += 1
            return self.more
        if last == CONTINUE_PROMPT:
            self.seen["glean"] += 1
            text = prompt_text(messages[0]["content"])
            all_names = set(self.entities)
            found = [r for r in self._records(text, all_names) if any(n in r for n in self.held_back)]
            return "##\n".join(found) + f"\n{COMPLETION_DELIMITER}"
        if "\nText:\n" in last:
            self.seen["extract"] += 1
            text = prompt_text(last)
            records = self._records(text, set(self.entities) - self.held_back)
            return "##\n".join([*records, *self.junk]) + f"##\n{COMPLETION_DELIMITER}"
        self.seen["other"] += 1
        return "I cannot help with that."

