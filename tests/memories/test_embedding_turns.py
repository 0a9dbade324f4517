"""A large batch of embeddings never holds a query behind it: a query asked while one of the
batch's passes runs is answered beside that pass, not after it; two batches take turns pass by
pass. A query here is the model's pass of one text (`embed_texts([query])`): `embed_query`
would answer a repeated query from the process's query vectors without taking a turn."""

from __future__ import annotations

import random
import string
import threading

import numpy as np

from memories import embeddings


def test_a_query_asked_during_a_batch_pass_is_answered_before_that_pass_ends():
    rng = random.Random(3)
    # One pass of long texts: seconds of work, far longer than a query's pass.
    texts = [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(150))
        for _ in range(embeddings.BATCH_SIZE)
    ]
    query = "How do we verify payment webhook signatures?"
    alone = embeddings.embed_texts([query])[0]
    batch = threading.Thread(target=embeddings.embed_texts, args=(texts,))
    batch.start()
    while batch.is_alive() and not embeddings._turns.batch_running:
        threading.Event().wait(0.005)
    assert embeddings._turns.batch_running, "the batch's pass never started"
    answer = embeddings.embed_texts([query])[0]
    during = embeddings._turns.batch_running
    batch.join()
    assert during, "the query waited for the batch's pass"
    assert np.allclose(answer, alone, atol=1e-5)


def test_two_batches_take_turns_pass_by_pass():
    """A second batch does not wait for the whole of the first: their passes alternate."""
    rng = random.Random(6)
    texts = [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(150))
        for _ in range(embeddings.BATCH_SIZE * 3)
    ]
    embeddings.embed_query("warm up")
    first = threading.Thread(target=embeddings.embed_texts, args=(texts,))
    first.start()
    while first.is_alive() and not embeddings._turns.batch_running:
        threading.Event().wait(0.005)
    second = embeddings.embed_texts(texts[: embeddings.BATCH_SIZE])
    finished_first = not first.is_alive()
    first.join()
    assert len(second) == embeddings.BATCH_SIZE
    assert not finished_first, "the second batch waited for the whole first one"


def test_a_stream_of_queries_does_not_starve_a_batch():
    rng = random.Random(4)
    texts = [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(150))
        for _ in range(120)
    ]
    embeddings.embed_query("warm up")
    done = threading.Event()
    answered = []

    def ask():
        while not done.is_set():
            answered.append(embeddings.embed_texts(["Where do the deploy logs go?"])[0])

    askers = [threading.Thread(target=ask) for _ in range(3)]
    for asker in askers:
        asker.start()
    try:
        batch = threading.Thread(target=embeddings.embed_texts, args=(texts,))
        batch.start()
        batch.join(timeout=300)
        finished = not batch.is_alive()
    finally:
        done.set()
        for asker in askers:
            asker.join()
    assert finished, "the batch waited behind the queries"
    assert answered


def test_windows_are_cut_the_same_while_other_threads_embed():
    """Windows are tokenized with a tokenizer of their own: the model's sets its truncation on
    every call, so a thread embedding beside one cutting windows used to cut its text short."""
    rng = random.Random(5)
    text = " ".join("".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(1500))
    expected = embeddings.windows_for(text)
    assert len(expected) > 10
    errors: list[BaseException] = []
    different = []

    model = embeddings.get_model()

    def embed():  # what each embedding pass does first: the model's tokenizer, truncating
        try:
            for _ in range(1500):
                model.preprocess([text[:300], text[300:900]])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    embedders = [threading.Thread(target=embed) for _ in range(2)]
    for thread in embedders:
        thread.start()
    for _ in range(150):
        different.append(embeddings.windows_for(text) != expected)
    for thread in embedders:
        thread.join()
    assert not errors and not any(different), (errors[:1], sum(different))


def test_a_repeated_query_is_answered_with_the_vector_the_model_gave_it():
    query = "Which queue retries the nightly export?"
    first = embeddings.embed_query(query)
    again = embeddings.embed_query(query)
    assert again == first
    assert np.allclose(first, embeddings.embed_texts([query])[0], atol=1e-6)
    again.append(1.0)  # a caller's copy: the kept vector stays as the model gave it
    assert embeddings.embed_query(query) == first
    # The key is the string exactly as sent: a trailing space is another query.
    spaced = embeddings.embed_query(query + " ")
    assert np.allclose(spaced, embeddings.embed_texts([query + " "])[0], atol=1e-6)


def test_query_vectors_keep_the_most_recently_used():
    kept = embeddings.QueryVectors(2)
    kept.put("a", [1.0])
    kept.put("b", [2.0])
    assert kept.get("a") == [1.0]  # now the most recent
    kept.put("c", [3.0])
    assert kept.get("b") is None
    assert kept.get("a") == [1.0] and kept.get("c") == [3.0]
