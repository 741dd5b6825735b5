"""A local cross-encoder reranker: an ONNX model plus a Hugging Face ``tokenizer.json``.

The directory the user gives holds:

* ``model.onnx`` (or ``onnx/model.onnx``, the layout of Hugging Face exports) —
  inputs among ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64,
  ``[batch, sequence]``); first output the relevance logits, ``[batch]``,
  ``[batch, 1]`` (sigmoid is applied) or ``[batch, 2]`` (softmax, class 1);
* ``tokenizer.json`` — loaded with the ``tokenizers`` library; the query and
  the passage are encoded as a pair, so the tokenizer's own post-processor adds
  the special tokens and type ids the model was trained with;
* optionally ``tokenizer_config.json`` (``model_max_length``) and
  ``config.json`` (``max_position_embeddings``), which bound the pair length.

Nothing is downloaded: the files must be there.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragloom.errors import ConfigError, MissingDependencyError, ModelError
from ragloom.models.scores import sigmoid

log = logging.getLogger(__name__)

DEFAULT_MAX_LENGTH = 512
_KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _import_runtime() -> tuple[Any, Any]:
    try:
        import onnxruntime
    except ImportError:
        raise MissingDependencyError("onnxruntime") from None
    try:
        import tokenizers
    except ImportError:
        raise MissingDependencyError("tokenizers") from None
    return onnxruntime, tokenizers


def _ort_errors(ort: Any) -> tuple[type[BaseException], ...]:
    state = ort.capi.onnxruntime_pybind11_state
    names = ("Fail", "InvalidArgument", "InvalidProtobuf", "InvalidGraph", "NoSuchFile", "RuntimeException")
    return tuple(getattr(state, n) for n in names if hasattr(state, n))


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    return data if isinstance(data, dict) else {}


def _max_length(directory: Path, tokenizer_json: dict[str, Any], explicit: int | None) -> int:
    """explicit > tokenizer.json truncation > tokenizer_config model_max_length > config positions > 512."""
    if explicit:
        return explicit
    truncation = tokenizer_json.get("truncation") or {}
    if isinstance(truncation, dict) and truncation.get("max_length"):
        return int(truncation["max_length"])
    tok_cfg = _read_json(directory / "tokenizer_config.json").get("model_max_length")
    if isinstance(tok_cfg, int | float) and 0 < tok_cfg < 100_000:  # HF writes 1e30 for "unbounded"
        return int(tok_cfg)
    positions = _read_json(directory / "config.json").get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0:
        return min(positions, DEFAULT_MAX_LENGTH)
    return DEFAULT_MAX_LENGTH


def _pad_id(tokenizer: Any, tokenizer_json: dict[str, Any]) -> int:
    padding = tokenizer_json.get("padding") or {}
    if isinstance(padding, dict) and "pad_id" in padding:
        return int(padding["pad_id"])
    for token in ("[PAD]", "<pad>"):
        tid = tokenizer.token_to_id(token)
        if tid is not None:
            return int(tid)
    return 0


def _locate_model(directory: Path) -> Path:
    for candidate in (directory / "model.onnx", directory / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"the onnx reranker directory {directory} has no model.onnx")


def _relevance(logits: np.ndarray, n: int) -> np.ndarray:
    """Model output -> probability of relevance per row."""
    out = np.asarray(logits, dtype=np.float32)
    if out.shape == (n,) or out.shape == (n, 1):
        return sigmoid(out.reshape(n))
    if out.shape == (n, 2):
        shifted = out - out.max(axis=1, keepdims=True)
        probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        relevant: np.ndarray = probs[:, 1].astype(np.float32)
        return relevant
    raise ModelError(f"the onnx reranker output has shape {out.shape}; expected [{n}], [{n}, 1] or [{n}, 2]")


class OnnxCrossEncoder:
    """A cross-encoder run with onnxruntime on the CPU; see the module docstring for the files.

    Missing files raise :class:`ConfigError` naming the file; an unreadable model or
    tokenizer raises :class:`ConfigError`; a failure while scoring raises
    :class:`ModelError`. Documents are scored in batches of ``batch_size``, grouped
    by length so that little padding is computed.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 16,
        max_length: int | None = None,
        threads: int | None = None,
    ) -> None:
        ort, tokenizers = _import_runtime()
        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise ConfigError(f"the onnx reranker directory {directory} does not exist")
        if batch_size < 1:
            raise ConfigError("the onnx reranker batch size must be at least 1")
        model_path = _locate_model(directory)
        tok_path = directory / "tokenizer.json"
        if not tok_path.is_file():
            raise ConfigError(f"the onnx reranker directory {directory} has no tokenizer.json")
        self.name = f"onnx/{directory.name}"
        self.batch_size = batch_size
        self._errors = _ort_errors(ort)
        self._tokenizer, tok_json = self._load_tokenizer(tokenizers, tok_path)
        self.max_length = _max_length(directory, tok_json, max_length)
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        self._pad_id = _pad_id(self._tokenizer, tok_json)
        self._session = self._load_session(ort, model_path, threads)
        self._inputs = [i.name for i in self._session.get_inputs()]
        unknown = [n for n in self._inputs if n not in _KNOWN_INPUTS]
        if unknown:
            raise ConfigError(f"{model_path} needs inputs {unknown}; the reranker feeds only {list(_KNOWN_INPUTS)}")
        self._lock = threading.Lock()  # the tokenizer's truncation state is shared

    @staticmethod
    def _load_tokenizer(tokenizers: Any, tok_path: Path) -> tuple[Any, dict[str, Any]]:
        try:
            text = tok_path.read_text(encoding="utf-8")
            tokenizer = tokenizers.Tokenizer.from_str(text)
        except Exception as exc:  # the tokenizers library raises bare Exception; re-raised with its cause
            raise ConfigError(f"cannot load {tok_path}: {exc}") from exc
        return tokenizer, json.loads(text)

    def _load_session(self, ort: Any, model_path: Path, threads: int | None) -> Any:
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        try:
            return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
        except self._errors as exc:
            raise ConfigError(f"cannot load {model_path}: {exc}") from exc

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """Sigmoid (or softmax class 1) of the model's logit for each (query, document) pair."""
        docs = list(documents)
        out = np.zeros(len(docs), dtype=np.float32)
        order = sorted(range(len(docs)), key=lambda i: len(docs[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._score_batch(query, [docs[i] for i in idx])
        return out

    def _encode(self, query: str, docs: list[str]) -> dict[str, np.ndarray]:
        with self._lock:
            encodings = self._tokenizer.encode_batch([(query, d) for d in docs])
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(docs), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(docs), width), dtype=np.int64)
        types = np.zeros((len(docs), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {name: feeds[name] for name in self._inputs}

    def _score_batch(self, query: str, docs: list[str]) -> np.ndarray:
        feeds = self._encode(query, docs)
        try:
            logits = self._session.run(None, feeds)[0]
        except self._errors as exc:
            raise ModelError(f"the onnx reranker {self.name} failed: {exc}") from exc
        return _relevance(logits, len(docs))
