"""The web UI's interface text: one catalogue per language in ``locales/<code>.json``, the same keys and
placeholders in each (a test checks it). Pages get the catalogue of the visitor's language: the
``ragloom_lang`` cookie (set by the language menu), else the first language of the browser's
``Accept-Language`` that ragloom has, else English. Placeholders are ``{name}``, filled by the page
scripts; dates and numbers are formatted by the browser for the page's ``lang`` (its :data:`HTML_LANG`)."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi import Request

LANGUAGE_COOKIE = "ragloom_lang"
LOCALES = Path(__file__).parent / "locales"
# code -> the language's own name (the language menu shows each in its own words)
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English", "zh": "简体中文", "ja": "日本語", "de": "Deutsch", "fr": "Français", "es": "Español",
}
# code -> the page's BCP 47 tag (``<html lang>``: fonts, and the browser's date and number formats)
HTML_LANG: dict[str, str] = {"en": "en", "zh": "zh-CN", "ja": "ja", "de": "de", "fr": "fr", "es": "es"}
LANGUAGES = tuple(code for code in LANGUAGE_NAMES if (LOCALES / f"{code}.json").is_file())


def _load(code: str) -> dict[str, str]:
    data = json.loads((LOCALES / f"{code}.json").read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


CATALOGUES: dict[str, dict[str, str]] = {code: _load(code) for code in LANGUAGES}
EN = CATALOGUES["en"]
ZH = CATALOGUES["zh"]


def language(request: Request) -> str:
    """The visitor's interface language: the cookie, else the browser's first supported preference."""
    chosen = request.cookies.get(LANGUAGE_COOKIE, "")
    if chosen in CATALOGUES:
        return chosen
    return from_accept_language(request.headers.get("accept-language", ""))


def from_accept_language(header: str) -> str:
    """The language of an ``Accept-Language`` header that ragloom has, by the header's preference
    (``q``), else English: ``de-CH, fr;q=0.8`` → ``de``."""
    wanted: list[tuple[float, int, str]] = []
    for order, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        code = tag.strip().lower().split("-", 1)[0]
        if code in CATALOGUES and quality > 0:
            wanted.append((-quality, order, code))
    return min(wanted)[2] if wanted else "en"


def catalogue(lang: str) -> dict[str, str]:
    return CATALOGUES.get(lang, EN)
