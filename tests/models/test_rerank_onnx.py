"""The local ONNX cross-encoder: a tiny model and tokenizer built here prove the loading and scoring path.

The model embeds token ids one-hot, sums the query tokens (type 0) and the passage
tokens (type 1) into two bags, and outputs ``logit = 2 * |query words ∩ passage
words| - 1`` — so the expected relevance is ``sigmoid(2 * shared - 1)``, computable
in the test. Special and unknown tokens have zero embeddings.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
tokenizers = pytest.importorskip("tokenizers")

from onnx import TensorProto, helper  # noqa: E402

from ragloom.errors import ConfigError  # noqa: E402
from ragloom.models.rerank import Reranker, RerankerSpec, make_reranker  # noqa: E402
from ragloom.models.rerank_onnx import OnnxCrossEncoder  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WORDS = ["solar", "panel", "wind", "turbine", "battery", "storage", "grid", "price", "the", "a", "of", "cat"]
VOCAB = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}


def build_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    tok.save(str(path))


def _const(name: str, values, dtype=TensorProto.FLOAT, dims=None):
    arr = np.asarray(values)
    return helper.make_tensor(name, dtype, list(arr.shape) if dims is None else dims, arr.flatten().tolist())


def build_model(path: Path, *, two_class: bool = False) -> None:
    """The overlap cross-encoder described in the module docstring, as an opset-17 ONNX graph."""
    v = len(VOCAB)
    table = np.eye(v, dtype=np.float32)
    table[: len(SPECIALS)] = 0.0  # [PAD] [UNK] [CLS] [SEP] carry no word
    n = helper.make_node
    nodes = [
        n("Gather", ["table", "input_ids"], ["emb"]),
        n("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        n("Cast", ["token_type_ids"], ["typef"], to=TensorProto.FLOAT),
        n("Mul", ["maskf", "typef"], ["pmask"]),
        n("Sub", ["maskf", "pmask"], ["qmask"]),
        n("Unsqueeze", ["qmask", "last"], ["qmask3"]),
        n("Unsqueeze", ["pmask", "last"], ["pmask3"]),
        n("Mul", ["emb", "qmask3"], ["qemb"]),
        n("Mul", ["emb", "pmask3"], ["pemb"]),
        n("ReduceSum", ["qemb", "seq_axis"], ["qbag"], keepdims=0),
        n("ReduceSum", ["pemb", "seq_axis"], ["pbag"], keepdims=0),
        n("Clip", ["qbag", "zero", "one"], ["qset"]),
        n("Clip", ["pbag", "zero", "one"], ["pset"]),
        n("Mul", ["qset", "pset"], ["both"]),
        n("ReduceSum", ["both", "vocab_axis"], ["shared"], keepdims=1),
        n("Mul", ["shared", "two"], ["scaled"]),
        n("Sub", ["scaled", "one"], ["logit"]),
    ]
    if two_class:  # softmax([-x/2, x/2])[1] == sigmoid(x)
        nodes += [
            n("Mul", ["logit", "half"], ["pos"]),
            n("Neg", ["pos"], ["neg"]),
            n("Concat", ["neg", "pos"], ["logits"], axis=1),
        ]
    else:
        nodes.append(n("Identity", ["logit"], ["logits"]))
    inits = [
        _const("table", table),
        _const("last", [-1], TensorProto.INT64),
        _const("seq_axis", [1], TensorProto.INT64),
        _const("vocab_axis", [1], TensorProto.INT64),
        _const("zero", 0.0, dims=[]),
        _const("one", 1.0, dims=[]),
        _const("two", 2.0, dims=[]),
        _const("half", 0.5, dims=[]),
    ]
    ins = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
           for name in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 2 if two_class else 1])
    graph = helper.make_graph(nodes, "tiny_overlap_cross_encoder", ins, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def make_dir(root: Path, *, two_class: bool = False, max_length: int | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    build_model(root / "model.onnx", two_class=two_class)
    build_tokenizer(root / "tokenizer.json")
    if max_length is not None:
        (root / "tokenizer_config.json").write_text(json.dumps({"model_max_length": max_length}))
    return root


def expected(query: str, doc: str) -> float:
    words = set(WORDS)
    shared = len({w for w in query.lower().split() if w in words} & {w for w in doc.lower().split() if w in words})
    return 1.0 / (1.0 + math.exp(-(2 * shared - 1)))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dir(tmp_path_factory.mktemp("tiny-cross-encoder"))


QUERY = "solar panel storage"
DOCS = [
    "the cat",                                               # nothing shared
    "Solar",                                                 # 1, case folded
    "a wind turbine of the grid with battery storage price",  # 1, long (padding)
    "solar panel storage",                                   # 3
    "PANEL price solar unknownword",                         # 2, unknown word ignored
    "",                                                      # empty passage
]


def test_scores_are_the_sigmoid_of_the_models_logit_in_batches(model_dir: Path) -> None:
    reranker = OnnxCrossEncoder(model_dir, batch_size=2)
    assert isinstance(reranker, Reranker) and reranker.name == f"onnx/{model_dir.name}"
    scores = reranker.score(QUERY, DOCS)
    assert scores.dtype == np.float32 and scores.shape == (len(DOCS),)
    assert np.allclose(scores, [expected(QUERY, d) for d in DOCS], atol=1e-5)
    assert int(np.argmax(scores)) == 3
    # batching and length grouping do not change a document's score
    single = np.array([reranker.score(QUERY, [d])[0] for d in DOCS])
    assert np.allclose(scores, single, atol=1e-6)
    assert reranker.score(QUERY, []).shape == (0,)


def test_two_class_output_uses_softmax_of_the_positive_class(tmp_path: Path) -> None:
    reranker = OnnxCrossEncoder(make_dir(tmp_path / "two", two_class=True))
    assert np.allclose(reranker.score(QUERY, DOCS), [expected(QUERY, d) for d in DOCS], atol=1e-5)


def test_max_length_from_tokenizer_config_truncates_the_passage(tmp_path: Path) -> None:
    doc = "the cat of a grid price wind turbine battery solar"  # "solar" is token 10 of the passage
    cut = OnnxCrossEncoder(make_dir(tmp_path / "short", max_length=12))
    assert cut.max_length == 12
    assert cut.score("solar panel", [doc])[0] == pytest.approx(expected("solar panel", "the cat"), abs=1e-5)
    full = OnnxCrossEncoder(tmp_path / "short", max_length=64)  # an explicit length wins
    assert full.score("solar panel", [doc])[0] == pytest.approx(expected("solar panel", doc), abs=1e-5)


def test_registry_builds_the_onnx_reranker(model_dir: Path) -> None:
    reranker = make_reranker(RerankerSpec(provider="onnx", path=str(model_dir), batch_size=3, threads=1))
    assert isinstance(reranker, OnnxCrossEncoder) and reranker.batch_size == 3
    with pytest.raises(ConfigError, match="path"):
        make_reranker(RerankerSpec(provider="onnx"))


def test_missing_or_broken_files_raise_config_errors_naming_the_file(tmp_path: Path, model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        OnnxCrossEncoder(tmp_path / "nowhere")
    no_model = tmp_path / "no-model"
    no_model.mkdir()
    build_tokenizer(no_model / "tokenizer.json")
    with pytest.raises(ConfigError, match="model.onnx"):
        OnnxCrossEncoder(no_model)
    no_tok = tmp_path / "no-tokenizer"
    no_tok.mkdir()
    (no_tok / "model.onnx").write_bytes((model_dir / "model.onnx").read_bytes())
    with pytest.raises(ConfigError, match="tokenizer.json"):
        OnnxCrossEncoder(no_tok)
    (no_tok / "tokenizer.json").write_text("{}")
    with pytest.raises(ConfigError, match="tokenizer.json"):
        OnnxCrossEncoder(no_tok)
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    build_tokenizer(corrupt / "tokenizer.json")
    (corrupt / "model.onnx").write_bytes(b"not a protobuf")
    with pytest.raises(ConfigError, match="model.onnx"):
        OnnxCrossEncoder(corrupt)


def test_hugging_face_layout_and_a_model_without_token_type_ids(tmp_path: Path) -> None:
    """XLM-R style rerankers take only ids and mask: the reranker feeds what the model declares."""
    root = tmp_path / "hf"
    (root / "onnx").mkdir(parents=True)
    build_tokenizer(root / "tokenizer.json")
    n = helper.make_node
    # logit = number of real tokens (mask sum) - 5
    nodes = [
        n("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        n("ReduceSum", ["maskf", "axis"], ["length"], keepdims=1),
        n("Sub", ["length", "five"], ["logits"]),
    ]
    inits = [_const("axis", [1], TensorProto.INT64), _const("five", 5.0, dims=[])]
    ins = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
           for name in ("input_ids", "attention_mask")]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(nodes, "length", ins, [out], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
              str(root / "onnx" / "model.onnx"))
    scores = OnnxCrossEncoder(root).score("solar", ["cat", "the cat of a grid"])
    # [CLS] solar [SEP] doc... [SEP]: 4 + words tokens
    assert np.allclose(scores, [1 / (1 + math.exp(-0.0)), 1 / (1 + math.exp(-4.0))], atol=1e-5)
