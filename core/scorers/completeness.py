"""Completeness: how many of the input's elements (words) the output covers.
(docs/scorers.md, Completeness)

Mastra parses both texts with compromise (a JS part-of-speech tagger), rewrites every verb
phrase to its infinitive, and takes the words of the result. No Python library reproduces
compromise, so the element extraction here approximates it: the words of the text (accents
stripped, lower case, split on anything outside `[a-z0-9]`), with

- auxiliaries in front of a main verb dropped ("were sleeping" -> "sleep", "has run" -> "run");
- a copula or auxiliary standing alone replaced by its infinitive ("is" -> "be");
- a main verb replaced by its lemma when the context says it is a verb: after a subject
  pronoun, "to", an auxiliary or "not"; an inflected form between a content word and a
  function word ("the fox jumps over" -> "jump"); an "-ing" form opening a clause;
- negative contractions expanded ("didn't go" -> "does not go", as compromise writes it).

Lemmas and "can this word be a verb" come from lemminflect's English dictionary. The coverage
formula is Mastra's exactly (`coverage` below): an input element of at most 3 characters
needs an identical output element; a longer one is covered by an output element when the
shorter of the two is a substring of the longer and at least 60% of its length (strictly more).

Results: `preprocess_step_result` = `{"inputElements", "outputElements", "missingElements",
"elementCounts": {"input", "output"}}` (missing = input elements not exactly among the output
elements); score = coverage, unrounded. A missing input or output (None) raises
`ValueError("Inputs cannot be null or undefined")`, as Mastra does.

With `reference="ground_truth"` the run's ground truth takes the input's place: its elements
fill the `input*` fields (the keys stay Mastra's; a reason says what was compared), and an
item without a ground truth is not scorable (only a missing output still raises).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from core.scorers._reference import (
    Reference,
    check_reference,
    reference_entry,
    reference_scorer,
    reference_text,
)
from core.scorers._text import join_texts
from core.scoring import NotScorable, Scorer, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "DESCRIPTION",
    "SCORER_ID",
    "coverage",
    "create_completeness_scorer",
    "extract_elements",
    "is_covered",
]

SCORER_ID = "completeness-scorer"
DESCRIPTION = (
    "Share of the input's elements (words, with verbs reduced to their infinitive) that the"
    " output covers, with fuzzy matching of word forms."
)

# Word classes that decide whether a neighbouring word is a verb. Small closed classes only:
# open classes come from the lemminflect dictionary.
_BE = frozenset({"am", "is", "are", "was", "were", "be", "been", "being"})
_HAVE = frozenset({"has", "have", "had", "having"})
_DO = frozenset({"do", "does", "did"})
_MODALS = frozenset({"will", "would", "shall", "should", "can", "could", "may", "might", "must"})
_AUXILIARIES = _BE | _HAVE | _DO | _MODALS
_NEGATIONS = frozenset({"not", "never"})
_SUBJECTS = frozenset({"i", "you", "he", "she", "it", "we", "they", "who"})
_FUNCTION_WORDS = frozenset(
    {
        # determiners and possessives
        "the", "a", "an", "this", "that", "these", "those", "my", "your", "his", "her", "its",
        "our", "their", "some", "any", "each", "every", "no", "all", "many", "much", "several",
        # prepositions
        "of", "in", "on", "at", "by", "for", "with", "about", "over", "under", "to", "from",
        "into", "onto", "across", "through", "past", "after", "before", "between", "during",
        "without", "within", "upon", "around", "against", "among", "behind", "like",
        # conjunctions and object pronouns
        "and", "or", "but", "nor", "yet", "so", "because", "while", "though", "although", "if",
        "when", "than", "me", "him", "us", "them",
    }
)  # fmt: skip
_NOT_VERB_BEFORE = frozenset(
    {
        "the", "a", "an", "this", "these", "those", "my", "your", "his", "her", "its", "our",
        "their", "of", "in", "on", "at", "by", "for", "with", "about", "from", "into",
    }
)  # fmt: skip
_BREAK = ""  # marks punctuation between words: no verb rule looks across it
_NEGATIVE_CONTRACTIONS = {
    "can't": ("can", "not"), "cannot": ("can", "not"), "won't": ("will", "not"),
    "shan't": ("shall", "not"), "didn't": ("does", "not"), "doesn't": ("does", "not"),
    "don't": ("do", "not"), "ain't": ("is", "not"),
}  # fmt: skip
_INFINITIVES = {"am": "be", "is": "be", "are": "be", "was": "be", "were": "be", "been": "be",
                "being": "be", "has": "have", "had": "have", "having": "have", "does": "do",
                "did": "do"}  # fmt: skip

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)*|[^\sa-z0-9'\-]")
_ELEMENT_SPLIT_RE = re.compile(r"[^a-z0-9]+")


def _ascii_fold(text: str) -> str:
    """NFD, combining accents (U+0300-U+036F) removed, lower case, as Mastra normalises."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in decomposed if not "\u0300" <= ch <= "\u036f").lower()


@lru_cache(maxsize=65536)
def _verb_lemma(word: str) -> str | None:
    """The verb lemma of a word that can be a verb, else None."""
    import lemminflect  # on first use: its dictionaries load numpy

    readings = lemminflect.getAllLemmas(word)
    lemmas = readings.get("VERB") or readings.get("AUX")
    return lemmas[0] if lemmas else None


@lru_cache(maxsize=65536)
def _is_inflected_verb(word: str) -> bool:
    """True for a conjugated form ("jumps", "went", "tested"), not a base form."""
    lemma = _verb_lemma(word)
    return lemma is not None and lemma != word


def _tokens(text: str) -> list[str]:
    """Words (contractions expanded) and `_BREAK` markers for punctuation."""
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if not (token[0].isalnum()):
            if tokens and tokens[-1] != _BREAK:
                tokens.append(_BREAK)
        elif token in _NEGATIVE_CONTRACTIONS:
            tokens.extend(_NEGATIVE_CONTRACTIONS[token])
        elif token.endswith("n't"):
            tokens.extend((token[:-3], "not"))
        else:
            tokens.append(token)
    return tokens


def _previous(tokens: Sequence[str], index: int) -> str:
    """The nearest earlier word, skipping negations and -ly adverbs; `_BREAK` at a boundary."""
    for position in range(index - 1, -1, -1):
        word = tokens[position]
        if word in _NEGATIONS or (word.endswith("ly") and len(word) > 4):
            continue
        return word
    return _BREAK


def _following_verb(tokens: Sequence[str], index: int) -> int | None:
    """Index of the main verb an auxiliary at `index` introduces, if any."""
    for position in range(index + 1, len(tokens)):
        word = tokens[position]
        if word in _NEGATIONS or word in _AUXILIARIES or (word.endswith("ly") and len(word) > 4):
            continue
        if word == _BREAK:
            return None
        lemma = _verb_lemma(word)
        if lemma is None:
            return None
        if tokens[index] in _BE and not word.endswith(("ing", "ed")) and lemma == word:
            return None  # "is blue", "was home": a copula, not a verb phrase
        return position
    return None


def _is_main_verb(tokens: Sequence[str], index: int) -> bool:
    """Whether the non-auxiliary word at `index` is used as a verb (see module docstring)."""
    word = tokens[index]
    if _verb_lemma(word) is None:
        return False
    before = _previous(tokens, index)
    if before in _SUBJECTS or before == "to" or before in _AUXILIARIES:
        return True
    if not _is_inflected_verb(word):
        return False
    if word.endswith("ing"):
        return before not in _NOT_VERB_BEFORE
    after = tokens[index + 1] if index + 1 < len(tokens) else _BREAK
    content_before = before != _BREAK and before not in _FUNCTION_WORDS
    return content_before and (after == _BREAK or after in _FUNCTION_WORDS)


def _rewrite(tokens: list[str]) -> list[str]:
    """The words after verb phrases are put in the infinitive (compromise's mutation)."""
    words: list[str] = []
    dropped: set[int] = set()
    for index, word in enumerate(tokens):
        if word == _BREAK or index in dropped:
            continue
        if word in _AUXILIARIES:
            verb = _following_verb(tokens, index)
            if verb is None:
                words.append(_INFINITIVES.get(word, word))
            elif word in _DO and index + 1 < len(tokens) and tokens[index + 1] == "not":
                words.append("does")  # compromise writes negated do-support as "does not"
            continue  # an auxiliary before a main verb is dropped
        if _is_main_verb(tokens, index):
            words.append(_verb_lemma(word) or word)
        else:
            words.append(word)
    return words


def _dedupe(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(words))


def extract_elements(text: str) -> list[str]:
    """The elements of a text: its ASCII words with verbs in the infinitive, de-duplicated."""
    folded = _ascii_fold(text.strip())
    words = _rewrite(_tokens(folded))
    elements = (part for word in words for part in _ELEMENT_SPLIT_RE.split(word) if part)
    return _dedupe(elements)


def is_covered(element: str, candidates: Iterable[str]) -> bool:
    """Mastra's fuzzy inclusion of one input element among the output elements."""
    if element in candidates:
        return True
    if len(element) <= 3:
        return False
    for candidate in candidates:
        # Ties go to the candidate as the longer string, as in Mastra.
        longer, shorter = (
            (candidate, element) if len(candidate) >= len(element) else (element, candidate)
        )
        if shorter in longer and len(shorter) / len(longer) > 0.6:
            return True
    return False


def coverage(input_elements: Sequence[str], output_elements: Sequence[str]) -> float:
    """Share of input elements covered by output elements (Mastra's `calculateCoverage`)."""
    if not input_elements:
        return 1.0 if not output_elements else 0.0
    candidates = frozenset(output_elements)
    covered = sum(1 for element in input_elements if is_covered(element, candidates))
    return covered / len(input_elements)


def _elements(reference: str, output: str) -> dict[str, Any]:
    input_elements = extract_elements(reference)
    output_elements = extract_elements(output)
    present = frozenset(output_elements)
    return {
        "inputElements": input_elements,
        "outputElements": output_elements,
        "missingElements": [element for element in input_elements if element not in present],
        "elementCounts": {"input": len(input_elements), "output": len(output_elements)},
    }


def _generate_score(ctx: StepContext) -> float:
    result = ctx.results.preprocess_step_result
    return coverage(result["inputElements"], result["outputElements"])


def create_completeness_scorer(reference: Reference = "input") -> Scorer:
    """The completeness scorer (id `completeness-scorer`).

    Args:
        reference: "input" (Mastra's behaviour) to cover the input's elements, or
            "ground_truth" to cover the ground truth's instead: its elements then fill
            `inputElements` (and `elementCounts["input"]`), and an item without a ground
            truth is not scorable.
    """
    mode = check_reference(reference, "create_completeness_scorer")

    def preprocess(ctx: StepContext) -> dict[str, Any] | NotScorable:
        if ctx.run.output is None or (mode == "input" and ctx.run.input is None):
            raise ValueError("Inputs cannot be null or undefined")
        text = reference_text(ctx.run, mode)
        if isinstance(text, NotScorable):
            return text
        return _elements(text, join_texts(ctx.run.output, "output"))

    return reference_scorer(
        SCORER_ID,
        "Completeness Scorer",
        DESCRIPTION,
        mode,
        preprocess,
        _generate_score,
        "inputElements, missingElements and elementCounts.input describe the ground truth.",
    )


CATALOG_ENTRY = reference_entry(SCORER_ID, "Completeness", DESCRIPTION, create_completeness_scorer)
