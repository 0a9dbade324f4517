"""Chat turns like LoCoMo's (two people telling each other about their lives, about 25 words a
turn), generated with a fixed seed, and questions about them, for the serving benchmarks.

Nothing here is drawn from LoCoMo itself: the words are this file's own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

SEED = 20261201
PEOPLE = [
    "Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas",
    "Kira", "Liam", "Maya", "Noor", "Oscar", "Priya", "Quinn", "Rosa", "Sami", "Tara",
    "Umar", "Vera", "Wes", "Xin", "Yara", "Zane",
]  # fmt: skip
ACTIVITIES = [
    ("went to", "a pottery class"), ("signed up for", "a half marathon"),
    ("started", "a book club"), ("visited", "my grandmother in Lisbon"),
    ("adopted", "a rescue dog named Biscuit"), ("finished", "painting the kitchen"),
    ("tried", "rock climbing at the new gym"), ("joined", "a community garden"),
    ("booked", "a camping trip to the lake"), ("learned", "to bake sourdough bread"),
    ("played", "guitar at an open mic night"), ("volunteered at", "the animal shelter"),
    ("moved into", "a flat near the river"), ("went to", "a support group meeting"),
    ("bought", "a secondhand road bike"), ("watched", "the meteor shower from the hill"),
    ("started", "learning Japanese online"), ("hosted", "a dinner for my cousins"),
    ("ran", "a charity bake sale at school"), ("got", "a new job at the library"),
    ("went to", "a jazz concert downtown"), ("planted", "tomatoes and basil on the balcony"),
    ("took", "my kids to the science museum"), ("repaired", "the old sewing machine"),
    ("signed", "the lease for a small studio"), ("went", "kayaking along the coast"),
    ("organised", "a birthday picnic in the park"), ("knitted", "a scarf for my sister"),
    ("applied for", "a photography course"), ("visited", "the farmers market at dawn"),
]  # fmt: skip
TIMES = [
    "last weekend", "yesterday", "two weeks ago", "on Friday night", "this morning",
    "last summer", "in March", "over the holidays", "on my birthday", "after work on Monday",
]  # fmt: skip
FEELINGS = [
    "and honestly it made me feel so much calmer", "and I was nervous at first but loved it",
    "which was exhausting but really worth it", "and everyone there was incredibly kind",
    "and it reminded me why I care about community", "though the weather almost ruined it",
    "and I want to keep doing it every month", "and it helped me think about my future",
]  # fmt: skip
FOLLOW_UPS = [
    "What have you been up to lately?", "Have you ever tried something like that?",
    "I will send you some photos later.", "My friend {friend} came along too.",
    "I keep thinking about what you said about {friend}.", "It was {friend}'s idea.",
]  # fmt: skip
REPLIES = [
    "That sounds wonderful, {name}! I {verb} {thing} {time} too",
    "Wow {name}, I am so proud of you. I {verb} {thing} {time}",
    "No way, {name}! Funny enough I {verb} {thing} {time}",
]  # fmt: skip


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


def _turn(rng: random.Random, speaker: str, other: str) -> tuple[Turn, str]:
    verb, thing = rng.choice(ACTIVITIES)
    time, feeling = rng.choice(TIMES), rng.choice(FEELINGS)
    friend = rng.choice(PEOPLE)
    if rng.random() < 0.5:
        text = f"I {verb} {thing} {time}, {feeling}. " + rng.choice(FOLLOW_UPS).format(
            friend=friend
        )
    else:
        text = rng.choice(REPLIES).format(name=other, verb=verb, thing=thing, time=time)
        text += f", {feeling}."
    question = f"When did {speaker} say they {verb} {thing}?"
    return Turn(speaker, text), question


def conversations(total: int, scopes: int) -> tuple[list[list[Turn]], list[list[str]]]:
    """`total` turns split over `scopes` conversations, and questions about each."""
    rng = random.Random(SEED)
    turns: list[list[Turn]] = [[] for _ in range(scopes)]
    questions: list[list[str]] = [[] for _ in range(scopes)]
    pairs = [rng.sample(PEOPLE, 2) for _ in range(scopes)]
    for index in range(total):
        conversation = index % scopes
        a, b = pairs[conversation]
        speaker, other = (a, b) if index % 2 == 0 else (b, a)
        turn, question = _turn(rng, speaker, other)
        turns[conversation].append(turn)
        if len(questions[conversation]) < 200 and rng.random() < 0.2:
            questions[conversation].append(question)
    return turns, questions


def short_memory(n: int) -> str:
    return f"The billing service retries webhooks {n % 7 + 2} times (config/billing/{n}.yaml)."
