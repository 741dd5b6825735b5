"""Write ragloom's multi-document ("two-hop") labelled set into src/ragloom/evaluation/data/multidoc.

    .venv/bin/python scripts/make_multidoc_set.py

Every question needs two passages: a *person* passage says which company a person works for, a
*site* passage says what that company's site is like; the question names the person and asks about
the site, so the second passage shares no name with the question (only the company links them).
Other people and sites are distractors with the same vocabulary. The text is invented (fixed seed:
the same files every run; pairs in order, so `--corpus-limit 2N` keeps N whole questions); the set is
committed, this script is how it was made.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "ragloom" / "evaluation" / "data" / "multidoc"

FIRST = ["Harlan", "Mirela", "Tobias", "Ingrid", "Osric", "Leonie", "Caspar", "Yvaine", "Dorian", "Saskia",
         "Bertil", "Ottilie", "Ferris", "Marisol", "Anselm", "Greta", "Lucan", "Petra", "Emrys", "Rosalind",
         "Quentin", "Hedda", "Aurelio", "Svea", "Magnus", "Elodie", "Torvald", "Benedikt", "Linnea", "Cyrus"]
LAST = ["Voss", "Quarles", "Brandt", "Okafor", "Lindqvist", "Marchetti", "Ashdown", "Kerrigan", "Holloway",
        "Nakamura", "Ferreira", "Duchene", "Strand", "Albescu", "Whitcombe", "Ibarra", "Rademacher", "Sorensen",
        "Pellegrini", "Hartigan", "Castellan", "Moreau", "Tarrant", "Vasquez", "Eklund", "Baptiste", "Oyelaran",
        "Drummond", "Kowalczyk", "Penhallow"]
COMPANY_A = ["Meridian", "Corvane", "Halberd", "Stellan", "Brightwater", "Ostrava", "Kestrel", "Thornfield",
             "Calder", "Ardent", "Silverlake", "Norwick", "Pellam", "Redhaven", "Ulmar", "Westmarch", "Quillon",
             "Zephyr", "Ironvale", "Larkspur", "Morrow", "Ashcombe", "Tidewell", "Granby", "Fenwick", "Oakhurst",
             "Vantor", "Harrowgate", "Elmstead", "Blackmoor"]
COMPANY_B = ["Tidal Works", "Freight Lines", "Pumping Company", "Grain Cooperative", "Cable Makers", "Ropeworks",
             "Marine Services", "Logistics", "Shipyards", "Terminal Operators"]
ROLES = ["chief engineer", "safety officer", "operations manager", "maintenance planner", "harbour pilot",
         "quality auditor", "site surveyor", "procurement lead"]
SITES = ["pumping station", "grain terminal", "container berth", "rope walk", "dry dock", "cold store",
         "ferry landing", "crane yard"]
TOWNS = ["Falkirk Sound", "Port Isolde", "Carrowmore", "Lindenholm", "Saltmarsh Quay", "Eastry Bay", "Greywater",
         "Holmfirth Reach", "Tarn Harbour", "Wexley Point", "Marrow Cove", "Duneley", "Crossfell", "Ravensmouth",
         "Oldhaven", "Brimstone Bay", "Kelling Reach", "Aldwick", "Northmead", "Sundry Point"]
CARGO = ["timber", "fertiliser", "frozen fish", "cement", "steel coil", "soybeans", "wind turbine blades",
         "salt", "coffee", "copper cathodes", "paper pulp", "olive oil"]
HOBBIES = ["restores old sailing dinghies", "sings in a harbour choir", "keeps bees on an allotment",
           "coaches a youth rowing crew", "collects tide tables", "builds model lighthouses"]
PAIRS = 40


def main() -> None:
    rng = random.Random(20261204)
    people = rng.sample([f"{f} {last}" for f in FIRST for last in LAST], PAIRS)
    companies = rng.sample([f"{a} {b}" for a in COMPANY_A for b in COMPANY_B], PAIRS)
    corpus, queries = [], []
    for i, (person, company) in enumerate(zip(people, companies, strict=True)):
        role, site, town = rng.choice(ROLES), rng.choice(SITES), rng.choice(TOWNS)
        year, cargo, staff = rng.randint(1952, 2019), rng.choice(CARGO), rng.randint(40, 900)
        since, hobby = rng.randint(2003, 2024), rng.choice(HOBBIES)
        pid, sid = f"p{i:02d}", f"s{i:02d}"
        corpus.append({"id": pid, "text": (
            f"{person} has worked as the {role} of {company} since {since}. Colleagues describe "
            f"{person.split()[0]} as careful with schedules and quick to answer questions from the crews. "
            f"Outside work, {person.split()[0]} {hobby}.")})
        corpus.append({"id": sid, "text": (
            f"{company} runs the {site} at {town}. The {site} was commissioned in {year} and today "
            f"handles mostly {cargo}. About {staff} people work there in three shifts, and the site is "
            f"inspected every spring by the port authority.")})
        kind = i % 3
        if kind == 0:
            q, a = f"In which year was the {site} run by the employer of {person} commissioned?", [str(year)]
        elif kind == 1:
            q, a = f"What cargo does the site of the company {person} works for mostly handle?", [cargo]
        else:
            q, a = f"Where is the {site} of the company whose {role} is {person}?", [town]
        queries.append({"id": f"md-q{i:02d}", "query": q, "relevant": [pid, sid], "answer": a})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "corpus.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in corpus))
    (OUT / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries))
    print(f"{len(corpus)} passages, {len(queries)} questions -> {OUT}")


if __name__ == "__main__":
    main()
