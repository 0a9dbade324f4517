"""Benchmark of the write-path language rule on tests/data/language_sentences.tsv.

Run from the repository root: `python bench/language.py` (optionally `--repeats N`). It prints
figures and never fails: the accuracy threshold is asserted by tests/memories/test_language.py,
and no test asserts a wall-clock time.

Scoring: a row labelled `en` is right when it is not sent to translation (English or skipped); a
row in any other language is right only when it is sent to translation (foreign); a row labelled
`und` (only code, paths, identifiers) is right when it is not sent to translation.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from memories.canonical.language import detect_language  # noqa: E402
from memories.canonical.protected import mask_protected, protected_spans  # noqa: E402

DATA = REPO_ROOT / "tests" / "data" / "language_sentences.tsv"


def load_rows(path: Path = DATA) -> list[tuple[str, str]]:
    """(lang, text) rows of the TSV, header skipped."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if number == 0 or not line.strip():
            continue
        lang, text = line.split("\t", 1)
        rows.append((lang.strip(), text))
    return rows


def score(rows: list[tuple[str, str]]) -> dict[str, object]:
    """Accuracy figures of the English/non-English decision over `rows`."""
    correct = 0
    false_english: list[tuple[str, str, str]] = []
    false_foreign: list[tuple[str, str, str]] = []
    english_code_translated = 0
    english_with_code = 0
    for lang, text in rows:
        decision = detect_language(text)
        if lang in ("en", "und"):
            ok = not decision.needs_translation
            if lang == "en" and protected_spans(text):
                english_with_code += 1
                english_code_translated += int(decision.needs_translation)
            if not ok:
                false_foreign.append((lang, text, f"{decision.lang}: {decision.reason}"))
        else:
            ok = decision.needs_translation
            if not ok:
                false_english.append((lang, text, f"{decision.status}: {decision.reason}"))
        correct += int(ok)
    return {
        "total": len(rows),
        "accuracy": correct / len(rows) if rows else 0.0,
        "false_english": false_english,
        "false_foreign": false_foreign,
        "english_with_code": english_with_code,
        "english_code_translated": english_code_translated,
    }


def _timings(function, texts: list[str], repeats: int) -> list[float]:
    """Per-call times in microseconds, each text timed `repeats` times."""
    samples = []
    clock = time.perf_counter_ns
    for _ in range(repeats):
        for text in texts:
            start = clock()
            function(text)
            samples.append((clock() - start) / 1000)
    return samples


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    rows = load_rows()
    result = score(rows)
    languages = sorted({lang for lang, _ in rows})
    english = sum(1 for lang, _ in rows if lang == "en")
    print(f"rows: {result['total']} ({english} en, {len(languages)} labels: {' '.join(languages)})")
    print(f"accuracy (English / non-English decision): {result['accuracy']:.2%}")
    print(f"false English (foreign judged English or skipped): {len(result['false_english'])}")
    print(f"false foreign (English or und sent to translation): {len(result['false_foreign'])}")
    print(
        "English sentences with code/paths sent to translation: "
        f"{result['english_code_translated']} of {result['english_with_code']}"
    )
    misclassified = result["false_english"] + result["false_foreign"]
    if misclassified:
        print("misclassified:")
        for lang, text, why in misclassified:
            print(f"  [{lang}] {text}\n        -> {why}")

    texts = [text for _, text in rows]
    detect_language(texts[0])  # warm-up: imports, caches
    full = _timings(detect_language, texts, args.repeats)
    mask = _timings(mask_protected, texts, args.repeats)
    full_median, mask_median = statistics.median(full), statistics.median(mask)
    print(f"detect_language per call: median {full_median:.1f} us, p95 {_p95(full):.1f} us")
    print(f"mask_protected per call:  median {mask_median:.1f} us, p95 {_p95(mask):.1f} us")
    print(f"mask_protected / detect_language (median): {mask_median / full_median:.2f}")
    print(f"({len(texts)} texts x {args.repeats} repeats)")


if __name__ == "__main__":
    main()
