"""The applicability scope a request or an assistant declares: the document metadata keys an answer
needs a value for, how a value matches (:mod:`ragloom.retrieval.scope` decides it), and a retrieval's
known values."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MatchKind = Literal["equal", "in", "range"]
MAX_KEYS = 8
MAX_ALIASES = 200
_KEY = r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$"


class ScopeKey(BaseModel):
    """One required scope key: a document metadata key and how a value matches it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(pattern=_KEY, description="the document metadata key, e.g. model, firmware")
    match: MatchKind = Field("equal", description="equal: the document's value (or one of its list's); in: the "
                             "document's list contains it; range: the document's version range (>=2.1,<3) "
                             "contains the version asked about")
    label: str | None = Field(None, max_length=64, description="how the question names it (default: the key), "
                              "e.g. 'device model'")
    names: list[str] = Field(default_factory=list, max_length=16, description="other words that introduce a "
                             "value in a question, e.g. ['fw', 'software version'] for firmware")
    aliases: dict[str, str] = Field(default_factory=dict, max_length=MAX_ALIASES, description="other names of a "
                                    "value: {alias: value}, e.g. {'pro': 'X200'}")

    @field_validator("names")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        cleaned = [v.strip() for v in value]
        if any(not v or len(v) > 64 for v in cleaned):
            raise ValueError("each name is 1 to 64 characters")
        return list(dict.fromkeys(cleaned))

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, value: dict[str, str]) -> dict[str, str]:
        cleaned = {k.strip(): v.strip() for k, v in value.items()}
        if any(not k or not v or len(k) > 128 or len(v) > 128 for k, v in cleaned.items()):
            raise ValueError("each alias and value is 1 to 128 characters")
        return cleaned

    @property
    def title(self) -> str:
        return self.label or self.key.replace("_", " ")


class ScopeSettings(BaseModel):
    """An assistant's applicability scope: the keys every answer needs a value for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: list[ScopeKey] = Field(default_factory=list, max_length=MAX_KEYS, description="required scope keys; "
                                 "empty: no scope (answers come from all the assistant's documents)")

    @field_validator("keys")
    @classmethod
    def _unique(cls, value: list[ScopeKey]) -> list[ScopeKey]:
        names = [k.key for k in value]
        if len(set(names)) != len(names):
            raise ValueError("a key is declared twice")
        return value


class ScopeRequest(BaseModel):
    """A retrieval's scope: required keys (read from the question when no value is given) and values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: list[ScopeKey] = Field(default_factory=list, max_length=MAX_KEYS, description="required scope keys "
                                 "and how they match; a key without a value in values is read from the question")
    values: dict[str, str] = Field(default_factory=dict, max_length=MAX_KEYS, description="known values, e.g. "
                                   '{"model": "X200", "firmware": "2.4"}; a key not in keys matches equal')

    @field_validator("values")
    @classmethod
    def _value_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key, v in value.items():
            if not re.match(_KEY, key):
                raise ValueError(f"{key!r} is not a metadata key")
            if not v.strip() or len(v) > 128:
                raise ValueError(f"{key}: a value is 1 to 128 characters")
        return value

    def required(self) -> list[ScopeKey]:
        declared = {k.key for k in self.keys}
        return [*self.keys, *(ScopeKey(key=k) for k in self.values if k not in declared)]
