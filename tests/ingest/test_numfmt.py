"""Excel number formats: a value as the sheet shows it (numfmt.render)."""

from __future__ import annotations

import datetime as dt

import pytest

from ragloom.ingest.parsers.numfmt import number_format_code, render

CASES = [
    (1234.5, "#,##0.00", "1,234.50"),
    (1234567, "#,##0", "1,234,567"),
    (0.256, "0%", "26%"),
    (0.2567, "0.00%", "25.67%"),
    (2.675, "0.00", "2.68"),  # half away from zero, on the decimal the cell holds
    (-2.5, "0", "-3"),
    (0.5, "#.##", ".5"),
    (5551234, "000-0000", "555-1234"),
    (1234567, "#,##0,", "1,235"),
    (1234567, '0.0,,"M"', "1.2M"),
    (-1234.5, '"$"#,##0.00_);("$"#,##0.00)', "($1,234.50)"),
    (1234.5, '"$"#,##0.00_);("$"#,##0.00)', "$1,234.50"),
    (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
    (0, '_(* #,##0_);_(* \\(#,##0\\);_(* "-"_);_(@_)', "-"),
    (12345.678, "0.00E+00", "1.23E+04"),
    (0.000123, "0.00E+00", "1.23E-04"),
    (1.5, "# ?/?", "1 1/2"),
    (0.3, "?/4", "1/4"),
    (1, "\\1\\.0#", "1.01"),  # a numbering trick: what the sheet shows is "1.01"
    (0.1 + 0.2, "General", "0.3"),
    (3.0, "General", "3"),
    (42, '0" kg"', "42 kg"),
    (150, '[>100]"big";"small"', "big"),
    ("abc", '0;0;0;"<"@">"', "<abc>"),
    (12.5, "@", "12.5"),  # a number in a text cell shows as it is
    (True, "General", "TRUE"),
    (dt.datetime(2024, 1, 1), "yyyy\\-mm\\-dd\\ h:mm:ss", "2024-01-01 0:00:00"),
    (dt.datetime(2024, 3, 5, 14, 7, 9), "d-mmm-yy", "5-Mar-24"),
    (dt.datetime(2024, 3, 5, 14, 7, 9), "h:mm AM/PM", "2:07 PM"),
    (dt.datetime(2024, 3, 5), "dddd, mmmm d, yyyy", "Tuesday, March 5, 2024"),
    (dt.datetime(2024, 1, 1, 10, 30, 15, 250000), "mm:ss.00", "30:15.25"),
    (dt.time(8, 0), "h:mm:ss", "8:00:00"),
    (dt.timedelta(hours=30, minutes=5), "[h]:mm:ss", "30:05:00"),
    (45000, "yyyy-mm-dd", "2023-03-15"),  # a serial number under a date format
]


@pytest.mark.parametrize(("value", "code", "shown"), CASES)
def test_values_read_as_the_sheet_shows_them(value: object, code: str, shown: str) -> None:
    assert render(value, code) == shown


def test_locale_dates_read_as_iso_and_unreadable_formats_keep_the_value() -> None:
    assert number_format_code(14, "mm-dd-yy") == "yyyy-mm-dd" and number_format_code(4, "#,##0.00") == "#,##0.00"
    assert render(1.5, "0" * 300) is None  # longer than Excel allows: the caller keeps the stored value
    assert render(float("inf"), "0.00") is None
