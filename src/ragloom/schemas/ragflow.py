"""RAGFlow's HTTP API shapes (``/ragflow/api/v1/...``, :mod:`ragloom.api.ragflow`): the envelope
``{"code": 0, "data": ...}`` / ``{"code": <n>, "message": ...}``, and RAGFlow's field names for
datasets, documents, chunks and retrieval (``chunk_method``, ``parser_config``, ``document_count``,
``run``, ``progress``, ``dataset_id``, ``similarity``, ``docnm_kwd``, ``document_keyword`` ...).

Requests keep RAGFlow's leniency where its server is lenient (document and chunk updates, retrieval
ignore unknown keys; dataset create and update refuse them) and accept the nulls the ``ragflow-sdk``
sends for options it does not set.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ragloom.schemas.chunks import MAX_CHUNK_TERMS

T = TypeVar("T")

# RAGFlow's return codes (common/constants.py RetCode)
SUCCESS = 0
EXCEPTION_ERROR = 100
ARGUMENT_ERROR = 101
DATA_ERROR = 102
OPERATING_ERROR = 103
PERMISSION_ERROR = 108
AUTHENTICATION_ERROR = 109

RunStatus = Literal["UNSTART", "RUNNING", "CANCEL", "DONE", "FAIL"]
CHUNK_METHODS = ("naive", "book", "email", "laws", "manual", "one", "paper", "picture", "presentation", "qa",
                 "table", "tag", "resume")
MAX_PAGE_SIZE = 100  # documents, chunks and retrieval
MAX_DATASET_PAGE_SIZE = 10_000  # RAGFlow sets none; its MCP server lists datasets 1,000 at a time


class RFModel(BaseModel):
    """A RAGFlow body ragloom sends: exactly its declared fields."""

    model_config = ConfigDict(extra="forbid")


class RFResult(RFModel, Generic[T]):
    """Success: ``code`` 0 and ``data``."""

    code: int = SUCCESS
    data: T
    message: str = "success"


class RFListDatasets(RFModel, Generic[T]):
    code: int = SUCCESS
    data: list[T]
    total_datasets: int = Field(description="datasets matching the filters, all pages")


class RFCode(RFModel):
    """Success without data (``{"code": 0}``), with an optional message."""

    code: int = SUCCESS
    message: str = "success"


class RFError(RFModel):
    """Every error: a non-zero ``code`` (101 bad argument, 102 not found / not allowed / refused, 100 other,
    401 no or unknown API key, 404 unknown route, 429 rate limit) and a ``message``; HTTP 200 but for
    401, 404 and 429, as RAGFlow's server does."""

    code: int
    message: str
    data: Any = None


# --- datasets -------------------------------------------------------------------------------------


class RFDataset(RFModel):
    id: str
    name: str
    avatar: str | None = None
    description: str | None = None
    tenant_id: str
    created_by: str
    language: str
    permission: str
    embedding_model: str
    chunk_method: str
    parser_config: dict[str, Any]
    pagerank: int
    document_count: int
    chunk_count: int
    token_num: int = 0
    similarity_threshold: float
    vector_similarity_weight: float
    status: str = "1"
    create_time: int | None = Field(description="milliseconds since the epoch")
    create_date: str | None
    update_time: int | None
    update_date: str | None


class RFAutoMetadataField(BaseModel):
    """One field of RAGFlow's ``auto_metadata_config``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    type: Literal["string", "list", "time"]
    description: str | None = Field(None, max_length=400)
    examples: list[str] | None = Field(None, max_length=20)
    restrict_values: bool = False


class RFAutoMetadataConfig(BaseModel):
    """RAGFlow's ``auto_metadata_config``: the metadata the chat model fills in for each document
    (ragloom's ``parser_config.metadata_fields``)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    fields: list[RFAutoMetadataField] = Field(default_factory=list, max_length=20)


class RFDatasetCreate(BaseModel):
    """``POST /datasets`` (unknown keys refused, as RAGFlow does)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    avatar: str | None = None
    description: str | None = None
    embedding_model: str | None = Field(None, description="a ragloom embedding model; null: the workspace's")
    permission: Literal["me", "team"] = "me"
    chunk_method: str = Field("naive", description="one of " + ", ".join(CHUNK_METHODS))
    parser_config: dict[str, Any] | None = None
    auto_metadata_config: RFAutoMetadataConfig | None = Field(
        None, description="the metadata the chat model fills in: parser_config.metadata_fields in ragloom")
    ext: dict[str, Any] | None = Field(None, description="accepted, not used by ragloom")


class RFDatasetUpdate(BaseModel):
    """``PUT /datasets/{id}``: any subset (unknown keys refused)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1, max_length=128)
    avatar: str | None = None
    description: str | None = None
    embedding_model: str | None = Field(None, description="changing it is a re-index in ragloom: refused here")
    permission: Literal["me", "team"] | None = None
    chunk_method: str | None = None
    parser_config: dict[str, Any] | None = None
    pagerank: int | None = Field(None, ge=0, le=100)
    language: str | None = None
    connectors: list[Any] | None = Field(None, description="accepted, not used by ragloom")
    auto_metadata_config: RFAutoMetadataConfig | None = Field(
        None, description="the metadata the chat model fills in: parser_config.metadata_fields in ragloom")
    ext: dict[str, Any] | None = Field(None, description="accepted, not used by ragloom")


class RFDeleteRequest(BaseModel):
    """``DELETE /datasets`` and ``DELETE /datasets/{id}/documents``: ``ids`` or ``delete_all``."""

    model_config = ConfigDict(extra="ignore")

    ids: list[str] | None = None
    delete_all: bool = False


class RFSuccessCount(RFModel):
    success_count: int


class RFDeleted(RFModel):
    deleted: int


# --- documents ------------------------------------------------------------------------------------


class RFDocument(RFModel):
    id: str
    name: str
    dataset_id: str
    chunk_method: str
    parser_config: dict[str, Any]
    pipeline_id: str | None = None
    source_type: str = "local"
    type: str = Field(description="pdf, doc, visual (images), presentation, ...")
    suffix: str
    location: str
    size: int
    thumbnail: str | None = None
    created_by: str = ""
    token_count: int = Field(0, description="ragloom does not count tokens: always 0")
    chunk_count: int
    progress: float = Field(description="0..1; -1 when parsing failed")
    progress_msg: str
    process_begin_at: str | None = None
    process_duration: float = 0.0
    run: RunStatus = Field(description="ragloom parses on upload: a new document is RUNNING at once")
    status: str = Field("1", description="'1' enabled")
    meta_fields: dict[str, Any]
    create_time: int | None
    create_date: str | None
    update_time: int | None
    update_date: str | None


class RFDocumentList(RFModel):
    total: int
    docs: list[RFDocument]


class RFDocumentUpdate(BaseModel):
    """``PATCH`` (or ``PUT``) ``/datasets/{id}/documents/{doc}``; unknown keys ignored, as RAGFlow does."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = Field(None, description="renaming is not supported by ragloom: a different name is refused")
    meta_fields: dict[str, Any] | None = Field(None, description="replaces the document's metadata")
    chunk_method: str | None = None
    parser_config: dict[str, Any] | None = None
    enabled: int | None = Field(None, description="accepted; ragloom documents are always enabled")


class RFDocumentIds(BaseModel):
    """Parse (``POST /datasets/{id}/chunks``) and stop parsing (``DELETE``): the documents."""

    model_config = ConfigDict(extra="ignore")

    document_ids: list[str] | None = None


# --- chunks ---------------------------------------------------------------------------------------


class RFChunk(RFModel):
    """A stored chunk, as RAGFlow's chunk list gives it (``docnm_kwd``, not ``document_keyword``)."""

    id: str
    content: str
    document_id: str
    docnm_kwd: str
    important_keywords: list[str]
    tag_kwd: list[str]
    questions: list[str]
    dataset_id: str
    image_id: str = ""
    doc_type_kwd: str = "text"
    available: bool
    positions: list[list[float]]


class RFChunkList(RFModel):
    total: int
    chunks: list[RFChunk]
    doc: RFDocument


class RFNewChunk(RFModel):
    id: str
    content: str
    document_id: str
    dataset_id: str
    important_keywords: list[str]
    tag_kwd: list[str]
    questions: list[str]
    create_timestamp: float
    create_time: str
    doc_type_kwd: str = "text"
    image_id: str = ""


class RFAddedChunk(RFModel):
    chunk: RFNewChunk


class RFChunkCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str = Field(max_length=100_000)
    important_keywords: list[str] = Field(default_factory=list, max_length=MAX_CHUNK_TERMS,
                                          description="keywords matched beside the text")
    questions: list[str] = Field(default_factory=list, max_length=MAX_CHUNK_TERMS,
                                 description="questions the chunk answers (matched, and embedded in its place)")
    tag_kwd: list[str] = Field(default_factory=list, description="accepted, not stored by ragloom")
    tag_feas: dict[str, Any] | None = None
    image_base64: str | None = Field(None, description="not supported by ragloom")


class RFChunkUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str | None = Field(None, max_length=100_000)
    important_keywords: list[str] | None = Field(None, max_length=MAX_CHUNK_TERMS,
                                                 description="keywords matched beside the text")
    questions: list[str] | None = Field(None, max_length=MAX_CHUNK_TERMS,
                                        description="questions the chunk answers (matched, and embedded in its "
                                                    "place)")
    available: bool | None = None
    positions: list[Any] | None = None
    tag_kwd: list[str] | None = None


class RFChunkDelete(BaseModel):
    model_config = ConfigDict(extra="ignore")

    chunk_ids: list[str] | None = None
    delete_all: bool = False


class RFChunkSwitch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    chunk_ids: list[str] | None = None
    available: bool | None = None
    available_int: int | None = None


# --- retrieval ------------------------------------------------------------------------------------


class RFCondition(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str | list[str]
    comparison_operator: str
    value: str | int | float | list[str | int | float] | None = None


class RFMetadataCondition(BaseModel):
    model_config = ConfigDict(extra="ignore")

    logic: Literal["and", "or"] = "and"
    conditions: list[RFCondition] = Field(default_factory=list)


class RFRetrievalRequest(BaseModel):
    """``POST /retrieval``, as the ragflow-sdk sends it (nulls for options it does not set)."""

    model_config = ConfigDict(extra="ignore")

    question: str | None = None
    dataset_ids: list[str] | None = None
    document_ids: list[str] | None = None
    page: int | None = 1
    page_size: int | None = 30
    similarity_threshold: float | None = Field(0.2, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(0.3, ge=0.0, le=1.0)
    top_k: int | None = 1024
    rerank_id: str | None = Field(None, description="ignored: ragloom reranks with the workspace's reranker")
    keyword: bool | None = Field(False, description="ignored")
    highlight: bool | None = False
    cross_languages: list[str] | None = None
    metadata_condition: RFMetadataCondition | None = None
    use_kg: bool | None = False
    toc_enhance: bool | None = False


class RFRetrievedChunk(RFModel):
    id: str
    content: str
    content_ltks: str = ""
    document_id: str
    document_keyword: str
    dataset_id: str
    important_keywords: list[str]
    tag_kwd: list[str]
    image_id: str = ""
    positions: list[list[float]]
    similarity: float
    vector_similarity: float
    term_similarity: float
    doc_type_kwd: str = ""
    highlight: str | None = None


class RFDocAgg(RFModel):
    doc_name: str
    doc_id: str
    count: int


class RFRetrieval(RFModel):
    total: int
    chunks: list[RFRetrievedChunk]
    doc_aggs: list[RFDocAgg]


# --- system ---------------------------------------------------------------------------------------


class RFHealth(RFModel):
    db: str
    redis: str
    doc_engine: str
    storage: str
    status: str


# --- chat assistants, sessions, completions -------------------------------------------------------


class RFChat(RFModel):
    """A chat assistant with RAGFlow's 0.27 flat fields (``llm_id``, ``llm_setting``, ``prompt_config``)."""

    id: str
    name: str
    description: str
    icon: str = ""
    language: str = "English"
    tenant_id: str
    dataset_ids: list[str]
    kb_names: list[str]
    llm_id: str = Field(description="the chat model; 'extractive' when none is configured")
    llm_setting: dict[str, Any]
    prompt_type: str = "simple"
    prompt_config: dict[str, Any]
    similarity_threshold: float | None
    vector_similarity_weight: float | None
    top_n: int
    top_k: int = 1024
    rerank_id: str = ""
    do_refer: str = "1"
    status: str = "1"
    create_time: int | None = None
    create_date: str | None = None
    update_time: int | None = None
    update_date: str | None = None


class RFChatList(RFModel):
    chats: list[RFChat]
    total: int


class RFChatRequest(BaseModel):
    """``POST /chats`` and ``PATCH``/``PUT /chats/{id}``: RAGFlow's keys (unknown keys ignored, as RAGFlow
    does; its older ``llm``/``prompt`` objects are read as ``llm_setting``/``prompt_config``)."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    description: str | None = None
    icon: str | None = None
    dataset_ids: list[str] | None = None
    llm_id: str | None = None
    llm_setting: dict[str, Any] | None = None
    prompt_config: dict[str, Any] | None = None
    llm: dict[str, Any] | None = None
    prompt: dict[str, Any] | None = None
    top_n: int | None = Field(None, ge=1, le=64)
    top_k: int | None = None
    similarity_threshold: float | None = Field(None, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(None, ge=0.0, le=1.0)
    rerank_id: str | None = None
    tenant_id: str | None = None


class RFMessage(RFModel):
    role: str
    content: str
    id: str | None = None


class RFSession(RFModel):
    id: str
    chat_id: str
    name: str
    messages: list[RFMessage]
    reference: list[Any] = Field(default_factory=list)
    user_id: str = ""
    create_time: int | None = None
    create_date: str | None = None
    update_time: int | None = None
    update_date: str | None = None


class RFFeedback(BaseModel):
    """A rating of an answer: ``thumbup`` true or false, and with false a ``feedback`` comment."""

    model_config = ConfigDict(extra="ignore")

    thumbup: Any = Field(None, description="true: a thumb up; false: a thumb down (must be a boolean)")
    feedback: str = Field("", max_length=4000, description="why, with a thumb down")


class RFSessionRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    messages: Any = None
    message: Any = None
    reference: Any = None


class RFReferenceChunk(RFModel):
    """A cited chunk of an answer (RAGFlow's ``chunks_format``); ``[ID:n]`` in the answer is ``chunks[n]``."""

    id: str
    content: str
    document_id: str
    document_name: str
    dataset_id: str | None
    image_id: str = ""
    positions: list[list[float]]
    url: str | None = None
    similarity: float | None = Field(None, description="the retrieval's score when it was cited (null on "
                                     "answers stored before ragloom kept it)")
    vector_similarity: float | None = None
    term_similarity: float | None = None
    doc_type: str = ""


class RFAnswerReference(RFModel):
    total: int
    chunks: list[RFReferenceChunk]
    doc_aggs: list[RFDocAgg]


class RFCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str | None = None
    messages: list[dict[str, Any]] | None = None
    stream: bool = True
    session_id: str | None = None
    chat_id: str | None = None


class RFCompletion(RFModel):
    answer: str
    reference: RFAnswerReference
    prompt: str = ""
    created_at: float
    audio_binary: None = None
    id: str
    session_id: str
    chat_id: str
    final: bool | None = None
