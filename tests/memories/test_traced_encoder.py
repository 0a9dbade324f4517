"""A pass of a few texts runs the model's encoder as a traced graph, and its vectors are the
model's own bit for bit: the same numbers sentence-transformers gives for the same texts, for
one to seven texts of one word to past the model's window, padded together as a pass pads them.
A batch (eight texts or more) runs the module, whose layers give way to requests."""

from __future__ import annotations

import random
import string

import pytest
import torch

from memories import embeddings


def _module_vectors(texts: list[str]) -> list[list[float]]:
    """The vectors of sentence-transformers' own forward pass over the same texts, normalized
    as `embed_texts` normalizes them."""
    model = embeddings.get_model()
    with torch.inference_mode():
        output = model.forward(model.preprocess(texts))["sentence_embedding"].float()
        return torch.nn.functional.normalize(output, p=2, dim=1).tolist()


def _texts(rng: random.Random, count: int) -> list[str]:
    words = [
        "".join(rng.choices(string.ascii_lowercase + "éüß", k=rng.randint(1, 9)))
        for _ in range(rng.choice([1, 2, 6, 25, 90, 400]) * count)
    ]
    size = len(words) // count
    return [" ".join(words[i * size : (i + 1) * size]) for i in range(count)]


def test_the_bundled_model_runs_its_short_passes_traced():
    assert embeddings.runs_traced()


@pytest.mark.parametrize("count", range(1, embeddings.SMALL_BATCH))
def test_a_short_pass_gives_the_models_own_vectors_bit_for_bit(count):
    rng = random.Random(count)
    for _ in range(6):
        texts = _texts(rng, count)
        order = sorted(range(count), key=lambda i: len(texts[i]))  # as a pass sorts them
        expected = _module_vectors([texts[i] for i in order])
        got = embeddings.embed_texts(texts)
        assert [got[i] for i in order] == expected


def test_a_query_is_embedded_as_the_model_embeds_it():
    query = "Which port does the staging database listen on?"
    assert embeddings.embed_texts([query]) == _module_vectors([query])


@pytest.mark.parametrize("count", [1, 3, embeddings.SMALL_BATCH - 1])
def test_texts_tokenized_before_their_pass_give_the_same_vectors(count):
    """A request tokenizes its few texts itself before a helper runs their pass
    (`embeddings.tokenized`): the vectors are the same, and an input made for other texts is
    not used."""
    rng = random.Random(100 + count)
    texts = _texts(rng, count)
    order = sorted(range(count), key=lambda i: len(texts[i]))
    expected = _module_vectors([texts[i] for i in order])
    got = embeddings.embed_texts(texts, given=embeddings.tokenized(texts))
    assert [got[i] for i in order] == expected
    others = embeddings.tokenized(_texts(rng, count))
    got = embeddings.embed_texts(texts, given=others)
    assert [got[i] for i in order] == expected
    assert embeddings.tokenized(_texts(rng, embeddings.SMALL_BATCH)) is None


# Every kind of text a team writes: scripts, accents, emoji, code, whitespace at the ends.
_PIECES = [
    "Deploys",
    "run",
    "blue-green",
    "déploiement",
    "Straße",
    "数据库",
    "端口",
    "🚀",
    "naïve",
    "pnpm-lock.yaml",
    "ZM_DATA_DIR",
    "\t",
    "\n",
    "  ",
    "Ünïcödé",
    "مرحبا",
    "Привет",
    "x" * 120,
    "3.14159",
    "[CLS]",
    "don't",
    "e-mail@example.org",
    "ﬁle",
    "Ⅻ",
    "\u200b",
    "café",
]


def _mixed(rng: random.Random, count: int) -> list[str]:
    return [
        "".join(
            rng.choice(_PIECES) + rng.choice(["", " ", "  "])
            for _ in range(rng.choice([1, 3, 20, 300]))
        )
        for _ in range(count)
    ]


def test_the_bundled_model_takes_its_input_from_its_own_tokenizer():
    assert embeddings.tokenizes_directly()


@pytest.mark.parametrize("count", [1, 2, embeddings.SMALL_BATCH - 1, embeddings.SMALL_BATCH, 40])
def test_texts_of_every_script_give_the_models_own_vectors(count):
    """The input is made by a tokenizer called directly, not through the model's
    `preprocess`: the vectors are still the model's own, for a few texts (the traced graph)
    and for a batch (the module)."""
    rng = random.Random(200 + count)
    for _ in range(3):
        texts = _mixed(rng, count)
        order = sorted(range(count), key=lambda i: len(texts[i]))
        got = embeddings.embed_texts(texts)
        for part in embeddings._passes(order, texts):  # the texts padded together in a pass
            assert [got[i] for i in part] == _module_vectors([texts[i] for i in part])


def test_a_caller_told_of_each_pass_gets_a_short_last_pass_of_the_models_own_vectors():
    """A batch's write looks up and inserts each pass's texts while the model works on the
    next, so its last pass is cut short (TAIL_PASS texts): 100 texts run as passes of 64, 24
    and 12. Each pass's vectors are the model's own for the texts padded together in it; a
    caller that is not told of the passes keeps the two passes of 64 and 36."""
    rng = random.Random(100)
    texts = [
        f"Ticket {rng.randint(1, 10**6)} was closed by the {word} team."
        for word in rng.choices(["billing", "search", "mobile", "platform", "data"], k=100)
    ]
    told: list[list[int]] = []
    got = embeddings.embed_texts(texts, on_pass=lambda indexes, vectors: told.append(indexes))
    tail = embeddings.TAIL_PASS
    assert [len(part) for part in told] == [embeddings.BATCH_SIZE, 36 - tail, tail]
    assert sorted(i for part in told for i in part) == list(range(len(texts)))
    for part in told:
        assert [got[i] for i in part] == _module_vectors([texts[i] for i in part])
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    assert [len(part) for part in embeddings._passes(order, texts)] == [64, 36]
