"""Keyword coverage: how many of the input's keywords the output covers.

Built from the user's specification (`seeds/keyword-coverage.fr.txt`) and the product decisions
of `spec/prebuilt-scorers.md`, which depart from Mastra's code on purpose:

- stopwords and common words are filtered (the SMART list shipped in `data/`), matching is
  case-insensitive, a single word is one keyword;
- **morphological variants match**: two keywords are the same when their Snowball (Porter2)
  stems are equal ("frameworks" = "framework", "tuning" = "tune", "tested" = "testing");
- **technical terms stay whole**: a token with an inner dot or ending in `++` / `#` is one
  keyword ("react.js", "c++", "c#"), and a dotted form also matches the same token without its
  dots ("reactjs"); multi-word terms from the curated list `data/technical-terms-en.txt`
  ("machine learning", "type inference") are one keyword, whose words are not counted again,
  and a reference term is matched only by the same term in the response;
- empty input and output score 1.0, exactly one of them empty scores 0.0 ("empty" = blank
  after `strip()`); a non-empty input without keywords (only stopwords) scores 1.0;
- a token without any letter or digit (a lone "-") is not a keyword; Mastra counts it.

Tokenising otherwise follows Mastra's extractor (keyword-extractor 0.0.28): HTML tags removed,
split on whitespace, quotes and punctuation stripped, all-digit tokens dropped, hyphenated
words kept whole. Unlike it, punctuation inside a token splits it ("a,b" gives "a" and "b")
instead of gluing the halves together, typographic apostrophes count as "'", and Markdown
emphasis or code marks around a word are dropped ("**React**" is "react").

Results: `preprocess_step_result` = `{"referenceKeywords": set, "responseKeywords": set}` (the
lower-cased surface forms), `analyze_step_result` = `{"totalKeywords", "matchedKeywords"}`,
score = `matchedKeywords / totalKeywords`, unrounded. (For two empty texts Mastra wraps its
preprocess result in an extra `result` key; this scorer returns the same two empty sets plainly.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, NamedTuple

import snowballstemmer

from core.scorers._data import data_lines
from core.scorers._text import JS_WHITESPACE_RUN, is_blank, join_texts
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "DESCRIPTION",
    "SCORER_ID",
    "STOPWORDS",
    "TECHNICAL_TERMS",
    "KeywordCoverage",
    "create_keyword_coverage_scorer",
    "extract_keywords",
    "keyword_coverage",
    "normalise_word",
    "surface_norm",
]

SCORER_ID = "keyword-coverage-scorer"
DESCRIPTION = (
    "Share of the input's keywords that the output covers: stopwords ignored, case-insensitive,"
    " word variants matched (stemming), technical and compound terms kept whole."
)

STOPWORDS: frozenset[str] = frozenset(data_lines("smart-stopwords-en.txt"))
"""The SMART English stopword list (keyword-extractor's), lower case."""

_STEMMER = snowballstemmer.stemmer("english")

_TAG_RE = re.compile(r"<[^>]+>")
_URL_RE = re.compile(r"https?://", re.IGNORECASE)
# Characters that end a phrase: they split a token and a multi-word term cannot span them.
_BREAK_RE = re.compile('[,;!?():"\u201c\u201d\u2018\\[\\]{}\u2013\u2014\u2026]')
_NUMBER_RE = re.compile(r"[+\-]?\d[\d.,:/%\-]*")
_URL_TRAILING = ".,;:!?)]}\"'"
# Dotted spellings of SMART stopwords ("eg", "ie", ...); "U.S." stays a keyword, not "us".
_DOTTED_STOPWORDS = frozenset({"e.g", "i.e", "a.k.a"})


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # Snowball's English stemmer is pure rules; caching makes repeated words free.
    return _STEMMER.stemWord(word)


def _normalise_plain(word: str) -> str:
    """Normalise a lower-cased token that has no dot."""
    if word.replace("'", "").isalpha():
        return _stem(word)
    if "-" in word:
        # Hyphenated words: stem each part so "pre-trained" matches "pre-training".
        return "-".join(_stem(part) if part.isalpha() else part for part in word.split("-"))
    return word  # "c++", "c#", "gpt4": no stemming for mixed tokens


def normalise_word(word: str) -> str:
    """The form two keywords are compared on: lower case, no dots, stemmed."""
    return _normalise_plain(word.lower().replace(".", ""))


def _load_terms() -> dict[str, tuple[tuple[tuple[str, ...], str], ...]]:
    """The curated multi-word terms, indexed by the normalised form of their first word.

    Each entry is (normalised words, key); the key is the words joined by spaces. Longer
    terms come first so that "convolutional neural network" wins over "neural network".
    """
    index: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for line in data_lines("technical-terms-en.txt"):
        norms = tuple(normalise_word(word) for word in line.split())
        index.setdefault(norms[0], []).append((norms, " ".join(norms)))
    return {
        first: tuple(sorted(terms, key=lambda term: -len(term[0])))
        for first, terms in index.items()
    }


_TERM_INDEX = _load_terms()
_TERM_KEYS: frozenset[str] = frozenset(key for terms in _TERM_INDEX.values() for _, key in terms)
TECHNICAL_TERMS: frozenset[str] = frozenset(data_lines("technical-terms-en.txt"))
"""The curated multi-word technical terms, as written in the data file."""


class _Piece(NamedTuple):
    """One word of the text: its lower-cased surface, its normalised form, and whether it
    counts as a keyword on its own (stopwords and numbers do not, but may be part of a term)."""

    surface: str
    norm: str
    is_keyword: bool


@lru_cache(maxsize=65536)
def _analyse_piece(piece: str) -> _Piece | None:
    """Classify one punctuation-free token; None when it is not a word at all."""
    surface = piece.lower()
    if not any(char.isalnum() for char in surface):
        return None  # a lone "-" or "&": no letter or digit, no keyword
    undotted = surface.replace(".", "")
    if surface.startswith("."):  # ".NET" is not the word "net"
        undotted = "." + undotted
    norm = _normalise_plain(undotted)
    if "-" in undotted and " ".join(norm.split("-")) in _TERM_KEYS:
        norm = " ".join(norm.split("-"))  # "machine-learning" is the term "machine learning"
    is_keyword = not (
        surface in STOPWORDS
        or surface in _DOTTED_STOPWORDS
        or _NUMBER_RE.fullmatch(surface.replace(".", ""))
    )
    return _Piece(surface, norm, is_keyword)


def _clean_piece(piece: str) -> str:
    """Drop what only surrounds a word: quotes, a final dot, and Markdown emphasis or code
    marks ("'word'", "end.", "**bold**", "`code`"), which LLM answers are full of."""
    piece = piece.strip(_MARKUP)
    if piece.startswith(".."):  # an ellipsis glued to the word: "...and"
        piece = piece.lstrip(".")
    return piece.lstrip("'").rstrip(".'").strip(_MARKUP)


_MARKUP = "*_~`"


def _segments(text: str) -> Iterator[list[_Piece]]:
    """The text's words, grouped into runs that no punctuation separates."""
    text = _TAG_RE.sub(" ", text.replace("\u2019", "'"))
    current: list[_Piece] = []
    for token in JS_WHITESPACE_RUN.split(text):
        if not token:
            continue
        if _URL_RE.search(token):  # a URL is one keyword, kept as written (lower-cased)
            yield current
            url = token.rstrip(_URL_TRAILING).lower()
            yield [_Piece(url, url, True)]
            current = []
            continue
        for index, raw in enumerate(_BREAK_RE.split(token)):
            if index:
                yield current
                current = []
            word = _analyse_piece(_clean_piece(raw)) if raw else None
            if word is not None:
                current.append(word)
            if raw.endswith("."):  # a sentence ends here
                yield current
                current = []
    yield current


def _match_term(segment: list[_Piece], start: int) -> tuple[str, str, int] | None:
    """The longest curated term starting at `start`: (key, surface, length), or None."""
    for norms, key in _TERM_INDEX.get(segment[start].norm, ()):
        end = start + len(norms)
        if end <= len(segment) and all(
            segment[start + offset].norm == norms[offset] for offset in range(1, len(norms))
        ):
            surface = " ".join(piece.surface for piece in segment[start:end])
            return key, surface, len(norms)
    return None


def extract_keywords(text: str) -> dict[str, str]:
    """The keywords of a text: normalised form -> first lower-cased surface form, in order."""
    keywords: dict[str, str] = {}
    for segment in _segments(text):
        position = 0
        while position < len(segment):
            term = _match_term(segment, position) if segment[position].norm in _TERM_INDEX else None
            if term is not None:
                key, surface, length = term
                keywords.setdefault(key, surface)
                position += length
                continue
            piece = segment[position]
            if piece.is_keyword:
                keywords.setdefault(piece.norm, piece.surface)
            position += 1
    return keywords


class KeywordCoverage(NamedTuple):
    """The outcome of comparing two texts' keywords."""

    reference_keywords: set[str]
    response_keywords: set[str]
    total: int
    matched: int
    score: float


def _score(total: int, matched: int, input_blank: bool, output_blank: bool) -> float:
    if input_blank or output_blank:
        return 1.0 if input_blank and output_blank else 0.0
    return 1.0 if total == 0 else matched / total


def keyword_coverage(reference: str, response: str) -> KeywordCoverage:
    """Compare two plain texts (the pure function behind the scorer)."""
    reference_kw = extract_keywords(reference)
    response_kw = extract_keywords(response)
    matched = sum(1 for norm in reference_kw if norm in response_kw)
    score = _score(len(reference_kw), matched, not reference.strip(), not response.strip())
    return KeywordCoverage(
        set(reference_kw.values()), set(response_kw.values()), len(reference_kw), matched, score
    )


@lru_cache(maxsize=65536)
def surface_norm(surface: str) -> str:
    """The normalised form of a keyword as `extract_keywords` reports it (its surface form).

    Lets the analyze step match the preprocess step's surface forms without extracting again.
    """
    if _URL_RE.search(surface):
        return surface
    if " " in surface:  # a multi-word term: its key is its words' normalised forms
        return " ".join(_analyse_piece(word).norm for word in surface.split(" "))  # type: ignore[union-attr]
    piece = _analyse_piece(surface)
    return piece.norm if piece is not None else surface


def _preprocess(ctx: StepContext) -> dict[str, Any]:
    reference = extract_keywords(join_texts(ctx.run.input, "input"))
    response = extract_keywords(join_texts(ctx.run.output, "output"))
    return {
        "referenceKeywords": set(reference.values()),
        "responseKeywords": set(response.values()),
    }


def _analyze(ctx: StepContext) -> dict[str, int]:
    keywords = ctx.results.preprocess_step_result
    reference = {surface_norm(surface) for surface in keywords["referenceKeywords"]}
    response = {surface_norm(surface) for surface in keywords["responseKeywords"]}
    return {"totalKeywords": len(reference), "matchedKeywords": len(reference & response)}


def _generate_score(ctx: StepContext) -> float:
    counts = ctx.results.analyze_step_result
    return _score(
        counts["totalKeywords"],
        counts["matchedKeywords"],
        is_blank(ctx.run.input, "input"),
        is_blank(ctx.run.output, "output"),
    )


def create_keyword_coverage_scorer() -> Scorer:
    """The keyword-coverage scorer (id `keyword-coverage-scorer`); it takes no options.

    Score = matched reference keywords / reference keywords, unrounded; see the module
    docstring for what a keyword is and how the empty cases score.
    """
    return (
        create_scorer(id=SCORER_ID, name="Keyword Coverage Scorer", description=DESCRIPTION)
        .preprocess(_preprocess)
        .analyze(_analyze)
        .generate_score(_generate_score)
    )
