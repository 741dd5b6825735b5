"""Excel number formats: a cell's value as the sheet shows it.

:func:`render` formats a cell's value (a number, a date or time, a text, a boolean) by its number
format code (``#,##0.00``, ``0%``, ``yyyy-mm-dd h:mm``, ``"$"#,##0_);("$"#,##0)``, ``[h]:mm:ss``,
``0.00E+00``, ``# ?/?``, ``@" units"``...), as Excel displays it: sections for positive, negative,
zero and text values, quoted and escaped literals, currency symbols (``[$€-407]``), thousands
separators and scaling commas, percent, decimals rounded half away from zero, scientific notation,
fractions, dates and times with month and day names (English), AM/PM and elapsed hours. Colours and
padding (``[Red]``, ``_)``, ``* ``) are not text and are left out.

Nothing is made up: a format it does not understand gives None, and the caller keeps the value as
stored. ``General`` shows integers without ``.0`` and other numbers with at most 15 significant
digits (Excel's precision: ``0.1+0.2`` shows ``0.3``). The two built-in formats whose display
depends on the reader's locale (14, the short date; 22, short date and time) read as ISO dates.
Format codes longer than :data:`MAX_FORMAT_CHARS` are not read; the cost of a render is linear in
the length of its format.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache

MAX_FORMAT_CHARS = 255  # Excel's own limit for a format code
MAX_DECIMALS = 30  # Excel shows at most 30 decimals
LOCALE_FORMATS = {14: "yyyy-mm-dd", 22: "yyyy-mm-dd h:mm"}  # built-ins shown in the reader's locale: ISO here
_EPOCH = dt.datetime(1899, 12, 30)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DATE_LETTERS = frozenset("ymdhs")

Token = tuple[str, str]  # (kind, text): lit, digit, dot, comma, pct, exp, slash, text, general, date, elapsed, ampm


@dataclass(slots=True)
class _Section:
    tokens: list[Token] = field(default_factory=list)
    condition: tuple[str, float] | None = None

    @property
    def kind(self) -> str:
        kinds = {k for k, _ in self.tokens}
        if kinds & {"date", "elapsed", "ampm"}:
            return "date"
        if "general" in kinds:
            return "general"
        if "digit" in kinds:
            return "number"
        return "text" if "text" in kinds else "literal"


def _bracket(inner: str, section: _Section) -> Token | None:
    low = inner.lower()
    if low.startswith("$"):
        return ("lit", inner[1:].split("-", 1)[0])  # [$€-407]: the symbol; [$-409]: a locale only
    if low and low[0] in "hms" and low == low[0] * len(low):
        return ("elapsed", low)
    for op in ("<=", ">=", "<>", "<", ">", "="):
        if low.startswith(op):
            try:
                section.condition = (op, float(low[len(op):]))
            except ValueError:
                return None
            return None
    return None  # a colour, [DBNum1], ...: not text


def _tokens(code: str) -> list[_Section]:
    """The sections of a format code, each a list of tokens (one pass over the code)."""
    sections = [_Section()]
    i, n = 0, len(code)
    while i < n:
        ch, section = code[i], sections[-1]
        out = section.tokens
        low = ch.lower()
        if ch == ";":
            sections.append(_Section())
            i += 1
        elif ch == '"':
            end = code.find('"', i + 1)
            end = n if end < 0 else end
            out.append(("lit", code[i + 1:end]))
            i = end + 1
        elif ch == "\\":
            out.append(("lit", code[i + 1:i + 2]))
            i += 2
        elif ch in "_*":  # padding to a character's width, repeated fill: no text
            i += 2
        elif ch == "[":
            end = code.find("]", i + 1)
            end = n if end < 0 else end
            token = _bracket(code[i + 1:end], section)
            if token is not None:
                out.append(token)
            i = end + 1
        elif code[i:i + 5].upper() == "AM/PM":
            out.append(("ampm", code[i:i + 5]))
            i += 5
        elif code[i:i + 3].upper() == "A/P":
            out.append(("ampm", code[i:i + 3]))
            i += 3
        elif code[i:i + 7].lower() == "general":
            out.append(("general", ""))
            i += 7
        elif ch in "0#?":
            out.append(("digit", ch))
            i += 1
        elif low == "e" and code[i + 1:i + 2] in ("+", "-"):
            out.append(("exp", code[i + 1]))
            i += 2
        elif low in _DATE_LETTERS:
            j = i
            while j < n and code[j].lower() == low:
                j += 1
            out.append(("date", low * (j - i)))
            i = j
        else:
            kinds = {".": "dot", ",": "comma", "%": "pct", "/": "slash", "@": "text"}
            out.append((kinds.get(ch, "lit"), ch))
            i += 1
    return sections


@lru_cache(maxsize=1024)
def _compile(code: str) -> tuple[_Section, ...] | None:
    if len(code) > MAX_FORMAT_CHARS:
        return None
    return tuple(_tokens(code))


def number_format_code(num_fmt_id: int, code: str) -> str:
    """The code a format id shows: the locale-dependent built-ins as ISO dates, else ``code``."""
    return LOCALE_FORMATS.get(num_fmt_id, code)


def render(value: object, code: str) -> str | None:
    """``value`` as the format ``code`` shows it; None when the format is not understood (the caller
    then shows the value as stored). Texts come back as they are unless a text section wraps them."""
    sections = _compile(code or "General")
    if sections is None:
        return None
    try:
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, str):
            return _text(value, sections)
        if isinstance(value, (dt.datetime, dt.date, dt.time, dt.timedelta)):
            return _as_date(value, sections)
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                return None
            return _as_number(value, sections)
    except (ValueError, OverflowError, InvalidOperation, ArithmeticError):
        return None
    return None


def general(value: float) -> str:
    """A number as Excel's General format shows it: integers whole, others to 15 significant digits."""
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    text = format(value, ".15g")
    return text.replace("e", "E") if "e" in text else text


def _text(value: str, sections: tuple[_Section, ...]) -> str:
    section = next((s for s in sections if any(k == "text" for k, _ in s.tokens)),
                   sections[3] if len(sections) > 3 else None)
    if section is None:
        return value
    return "".join(value if k == "text" else t if k == "lit" else "" for k, t in section.tokens)


def _holds(condition: tuple[str, float], value: float) -> bool:
    op, limit = condition
    return {"<": value < limit, ">": value > limit, "=": value == limit, "<=": value <= limit,
            ">=": value >= limit, "<>": value != limit}[op]


def _pick(value: float, sections: tuple[_Section, ...]) -> tuple[_Section, float, bool]:
    """The section that shows ``value``, the value it shows, and whether a minus sign is to be added."""
    numeric = [s for s in sections[:3] if not (s.kind == "text" and s is not sections[0])]
    if any(s.condition for s in numeric):
        for s in numeric:
            if s.condition is not None and _holds(s.condition, value):
                return s, abs(value) if value < 0 and s is not numeric[0] else value, False
        rest = [s for s in numeric if s.condition is None]
        return (rest[0], value, False) if rest else (numeric[0], value, False)
    if value < 0 and len(numeric) > 1:
        return numeric[1], -value, False
    if value == 0 and len(numeric) > 2:
        return numeric[2], value, False
    return numeric[0], value, True


def _as_number(value: float, sections: tuple[_Section, ...]) -> str | None:
    section, shown, sign = _pick(value, sections)
    kind = section.kind
    if kind == "date":
        return _as_date(_EPOCH + dt.timedelta(days=float(value)), sections)
    tokens = section.tokens
    if kind == "general":
        body = "".join(general(abs(shown)) if k == "general" else t if k == "lit" else "" for k, t in tokens)
        return ("-" if sign and shown < 0 else "") + body.strip()
    if kind == "text":  # a number in a text format ("@") shows as General
        return "".join(general(shown) if k == "text" else t if k == "lit" else "" for k, t in tokens).strip()
    if kind == "literal":
        return "".join(t for k, t in tokens if k == "lit").strip()
    if any(k == "exp" for k, _ in tokens):
        text, nonzero = _scientific(abs(Decimal(repr(float(shown)))), tokens)
    elif any(k == "slash" for k, _ in tokens):
        text, nonzero = _fraction(abs(Fraction(shown)), tokens)
    else:
        text, nonzero = _fixed(abs(Decimal(repr(shown) if isinstance(shown, float) else shown)), tokens)
    minus = "-" if sign and shown < 0 and nonzero else ""
    return minus + text.strip()


def _digit_layout(tokens: list[Token]) -> tuple[list[int], list[int], int, bool]:
    """Positions of the integer and decimal digit placeholders, the scaling (commas right after the
    last placeholder: thousands each), and whether a comma between placeholders groups thousands."""
    digits = [i for i, (k, _) in enumerate(tokens) if k == "digit"]
    dot = next((i for i, (k, _) in enumerate(tokens) if k == "dot"), None)
    whole = [i for i in digits if dot is None or i < dot]
    decimals = [i for i in digits if dot is not None and i > dot]
    last = digits[-1] if digits else -1
    scale = 0
    i = (whole[-1] if whole else last) + 1
    while i < len(tokens) and tokens[i][0] == "comma":
        scale += 1
        i += 1
    if decimals:  # commas after the decimals scale too
        j = decimals[-1] + 1
        while j < len(tokens) and tokens[j][0] == "comma":
            scale += 1
            j += 1
    grouping = bool(whole) and any(k == "comma" for k, _ in tokens[whole[0]:whole[-1]])
    return whole, decimals, scale, grouping


def _fill_whole(digits: str, places: list[str]) -> list[str]:
    """The integer digits spread over the placeholders right to left (extra digits go to the first);
    a placeholder left without a digit shows ``0`` (``0``), a space (``?``) or nothing (``#``)."""
    out = [""] * len(places)
    k = len(digits)
    for p in range(len(places) - 1, -1, -1):
        if k > 0:
            out[p] = digits[:k] if p == 0 else digits[k - 1]
            k = 0 if p == 0 else k - 1
        else:
            out[p] = {"0": "0", "?": " "}.get(places[p], "")
    return out


def _fixed(value: Decimal, tokens: list[Token]) -> tuple[str, bool]:
    pct = sum(1 for k, _ in tokens if k == "pct")
    whole, decimals, scale, grouping = _digit_layout(tokens)
    value = value * Decimal(100) ** pct / Decimal(1000) ** scale
    places = min(len(decimals), MAX_DECIMALS)
    rounded = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    int_part = int(rounded)
    int_digits = str(int_part) if int_part or any(tokens[i][1] == "0" for i in whole) else ""
    if grouping and int_digits:
        int_digits = f"{int_part:,}"
    frac = f"{rounded:f}".partition(".")[2].ljust(places, "0")[:places]
    frac_out = list(frac)
    for p in range(places - 1, -1, -1):  # trailing zeros of optional placeholders
        ph = tokens[decimals[p]][1]
        if frac_out[p] != "0" or ph == "0":
            break
        frac_out[p] = " " if ph == "?" else ""
    if grouping:
        whole_out = [int_digits] + [""] * (len(whole) - 1) if whole else []
    else:
        whole_out = _fill_whole(int_digits, [tokens[i][1] for i in whole])
    by_index = dict(zip(whole, whole_out, strict=True)) | dict(zip(decimals, frac_out, strict=False))
    parts = []
    for i, (kind, text) in enumerate(tokens):
        if kind == "digit":
            parts.append(by_index.get(i, ""))
        elif kind in ("lit", "pct"):
            parts.append(text)
        elif kind == "dot":
            parts.append(".")
    return "".join(parts), bool(rounded)


def _scientific(value: Decimal, tokens: list[Token]) -> tuple[str, bool]:
    at = next(i for i, (k, _) in enumerate(tokens) if k == "exp")
    mantissa_tokens, exp_tokens = tokens[:at], tokens[at + 1:]
    whole, decimals, _, _ = _digit_layout(mantissa_tokens)
    exp_digits = sum(1 for k, _ in exp_tokens if k == "digit")
    step = len(whole) if len(whole) > 1 and mantissa_tokens[whole[0]][1] == "#" else 1
    exponent = 0
    if value:
        exponent = value.adjusted()
        exponent -= exponent % step
        mantissa = value.scaleb(-exponent)
        places = min(len(decimals), MAX_DECIMALS)
        if mantissa.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP) >= Decimal(10) ** step:
            exponent += step
    mantissa = value.scaleb(-exponent) if value else Decimal(0)
    text, _ = _fixed(mantissa, mantissa_tokens)
    sign = "-" if exponent < 0 else ("+" if tokens[at][1] == "+" else "")
    tail = "".join(t for k, t in exp_tokens if k == "lit")
    return f"{text}E{sign}{str(abs(exponent)).zfill(max(exp_digits, 1))}{tail}", bool(value)


def _fraction(value: Fraction, tokens: list[Token]) -> tuple[str, bool]:
    at = next(i for i, (k, _) in enumerate(tokens) if k == "slash")
    before, after = tokens[:at], tokens[at + 1:]
    numerator = 0
    while numerator < len(before) and before[len(before) - 1 - numerator][0] == "digit":
        numerator += 1
    has_whole = any(k == "digit" for k, _ in before[:len(before) - numerator])
    fixed = "".join(t for k, t in after if k == "lit" and t.isdigit())
    den_places = sum(1 for k, _ in after if k == "digit")
    whole = int(value) if has_whole else 0
    rest = value - whole
    if fixed:
        den = max(1, int(fixed))
        num = int((rest * den + Fraction(1, 2)) // 1)
    else:
        approx = rest.limit_denominator(max(1, 10 ** min(max(den_places, 1), 6) - 1))
        num, den = approx.numerator, approx.denominator
    if num == den:
        whole, num = whole + 1, 0
    prefix = "".join(t for k, t in before[:len(before) - numerator] if k == "lit").strip()
    parts = [prefix] if prefix else []
    if has_whole and (whole or not num):
        parts.append(str(whole))
    if num:
        parts.append(f"{num}/{den}")
    return " ".join(parts), bool(value)


def _as_date(value: object, sections: tuple[_Section, ...]) -> str | None:
    section = sections[0]
    if section.kind != "date":
        if isinstance(value, dt.timedelta):
            return _as_number(value.total_seconds() / 86400, sections)
        return None
    when, elapsed = _moment(value)
    tokens = section.tokens
    fraction = _second_places(tokens)
    when = _round(when, fraction)
    elapsed = round(elapsed, fraction) if fraction else float(round(elapsed))
    twelve = any(k == "ampm" for k, _ in tokens)
    parts: list[str] = []
    for i, (kind, text) in enumerate(tokens):
        if kind == "date":
            parts.append(_date_part(text, when, twelve, _minute_at(tokens, i)))
        elif kind == "elapsed":
            unit = {"h": 3600, "m": 60, "s": 1}[text[0]]
            parts.append(str(int(elapsed // unit)).zfill(len(text)))
        elif kind == "ampm":
            pm = when.hour >= 12
            word = ("PM" if pm else "AM") if len(text) == 5 else ("P" if pm else "A")
            parts.append(word.lower() if text[0].islower() else word)
        elif kind == "dot" and fraction and _after_seconds(tokens, i):
            parts.append("." + f"{when.microsecond:06d}"[:fraction])
        elif kind in ("lit", "dot", "comma", "slash", "pct"):
            parts.append(text)
    return "".join(parts).strip()


def _moment(value: object) -> tuple[dt.datetime, float]:
    """A date/time value as a moment, and as elapsed seconds since Excel's day 0."""
    if isinstance(value, dt.timedelta):
        return _EPOCH + value, value.total_seconds()
    if isinstance(value, dt.datetime):
        when = value.replace(tzinfo=None)
    elif isinstance(value, dt.date):
        when = dt.datetime.combine(value, dt.time())
    elif isinstance(value, dt.time):
        when = dt.datetime.combine(_EPOCH.date(), value.replace(tzinfo=None))
    else:
        raise ValueError("not a date")
    return when, (when - _EPOCH).total_seconds()


def _second_places(tokens: list[Token]) -> int:
    """Decimals of seconds shown (``ss.00``)."""
    for i, (kind, _) in enumerate(tokens):
        if kind == "dot" and _after_seconds(tokens, i):
            places = 0
            while i + 1 + places < len(tokens) and tokens[i + 1 + places] == ("digit", "0"):
                places += 1
            return min(places, 6)
    return 0


def _after_seconds(tokens: list[Token], i: int) -> bool:
    prev = tokens[i - 1] if i else ("", "")
    return (prev[0] == "date" and prev[1][0] == "s") or (prev[0] == "elapsed" and prev[1][0] == "s")


def _round(when: dt.datetime, places: int) -> dt.datetime:
    unit = 10 ** (6 - places)
    micro = (when.microsecond + unit // 2) // unit * unit
    return when.replace(microsecond=0) + dt.timedelta(microseconds=micro)


def _minute_at(tokens: list[Token], i: int) -> bool:
    """Whether an ``m`` token at ``i`` means minutes: after an hour or before a second."""
    for j in range(i - 1, -1, -1):
        kind, text = tokens[j]
        if kind in ("date", "elapsed"):
            if text[0] == "h":
                return True
            break
    for j in range(i + 1, len(tokens)):
        kind, text = tokens[j]
        if kind in ("date", "elapsed"):
            return text[0] == "s"
    return False


def _date_part(text: str, when: dt.datetime, twelve: bool, minute: bool) -> str:
    letter, size = text[0], len(text)
    if letter == "y":
        return f"{when.year % 100:02d}" if size <= 2 else f"{when.year:04d}"
    if letter == "m" and minute:
        return f"{when.minute:02d}" if size >= 2 else str(when.minute)
    if letter == "m":
        name = _MONTHS[when.month - 1]
        return {1: str(when.month), 2: f"{when.month:02d}", 3: name[:3], 4: name}.get(size, name[0])
    if letter == "d":
        name = _DAYS[when.weekday()]
        return {1: str(when.day), 2: f"{when.day:02d}", 3: name[:3]}.get(size, name)
    if letter == "h":
        hour = (when.hour % 12 or 12) if twelve else when.hour
        return f"{hour:02d}" if size >= 2 else str(hour)
    return f"{when.second:02d}" if size >= 2 else str(when.second)  # "s"
