"""Generated multi-document text for the RAPTOR tests: each document has sections on two topics of its
own, several paragraphs each, so that a document's chunks fall into clusters and documents differ."""

from __future__ import annotations

TOPICS: dict[str, list[str]] = {
    "pump": [
        "The Orion pump must be greased every 450 operating hours with lithium grease.",
        "The pump impeller is cast in bronze and balanced at the factory.",
        "A pump that runs dry overheats its seals within minutes.",
        "Replace the pump shaft seal every two years or after a dry run.",
        "The pump bearing is checked for noise during each grease service.",
        "Pump pressure must stay between four and six bar at the outlet.",
    ],
    "valve": [
        "The blue valve controls the flow of coolant to the heat exchanger.",
        "Valves are tested for leaks every spring before the cooling season.",
        "A stuck valve is freed with penetrating oil, never with a hammer.",
        "The valve handle turns clockwise to close the coolant line.",
        "Valve gaskets are made of EPDM rubber and last five years.",
        "Each valve carries a tag with its number and the date of its last test.",
    ],
    "leave": [
        "Parents may take sixteen weeks of paid parental leave.",
        "Parental leave is requested two months before it starts.",
        "Vacation requests need two weeks of notice to the team lead.",
        "Every employee has twenty-five vacation days a year.",
        "Sick leave is paid from the first day with a doctor's note after three days.",
        "Unused vacation days expire at the end of March of the next year.",
    ],
    "travel": [
        "Business travel is booked through the travel desk at least ten days ahead.",
        "Train travel is preferred over flights for trips under five hours.",
        "Hotel costs are reimbursed up to one hundred and forty euros a night.",
        "Travel expenses are claimed within thirty days with the receipts.",
        "Meals on business trips are covered by a daily allowance of forty euros.",
        "A travel insurance card is issued to every employee who travels.",
    ],
    "garden": [
        "Tomatoes are planted in the garden after the last frost in May.",
        "The garden beds are mulched with straw to keep the soil moist.",
        "Roses in the garden are pruned in early spring above an outward bud.",
        "Garden compost needs turning every three weeks to stay aerobic.",
        "Water the garden in the early morning so the leaves dry by noon.",
        "Slugs in the garden are kept away with copper tape around the beds.",
    ],
    "bread": [
        "Sourdough bread rises overnight in a cool kitchen.",
        "The bread dough is folded four times during the first two hours.",
        "Bake the bread at two hundred and fifty degrees with steam for twenty minutes.",
        "Rye bread needs a longer proof and a sour starter.",
        "Let the bread cool for an hour before slicing it.",
        "A bread starter is fed with equal weights of flour and water every day.",
    ],
}

DOCUMENTS: dict[str, tuple[str, str]] = {
    "plant-manual.md": ("pump", "valve"),
    "staff-handbook.md": ("leave", "travel"),
    "home-notes.md": ("garden", "bread"),
}


def paragraphs(topic: str) -> list[str]:
    """Six paragraphs on a topic: two sentences each, in a rotating order."""
    s = TOPICS[topic]
    return [f"{s[i]} {s[(i + 1) % len(s)]}" for i in range(len(s))]


def document(name: str) -> str:
    first, second = DOCUMENTS[name]
    parts = [f"# {name.removesuffix('.md').replace('-', ' ').title()}"]
    for topic in (first, second):
        parts.append(f"## {topic.title()}")
        parts.extend(paragraphs(topic))
    return "\n\n".join(parts) + "\n"


def corpus() -> dict[str, bytes]:
    """``{file name: Markdown bytes}`` of every document."""
    return {name: document(name).encode() for name in DOCUMENTS}


CHUNKING = {"chunk_token_num": 40, "heading_prefix": False}
"""Chunking that makes one chunk of about each paragraph."""
