"""Keyword coverage: how many of the reference's keywords the output covers.

Built from the user's own keyword-coverage reference and the project's product decisions, which
depart from Mastra's code on purpose. The reference is the run's input, or its ground truth
with `reference="ground_truth"` (see `_reference.py`).

**What a keyword is.** The text is split on whitespace; HTML tags, Markdown emphasis and code
marks, quotes and the punctuation around a word are dropped; punctuation inside a token splits
it, and a line end, a sentence end or punctuation ends a *phrase* (no compound spans it). Each
remaining word is one keyword unless it is a stopword (the SMART list in `data/`) or has no
letter or digit at all (a lone "-"). Matching is case-insensitive. On top of that:

- **Numbers are keywords** (the user's specification overrides Mastra's digit
  rule; docs/scorers.md, Keyword Coverage): a token starting with a
  digit, or with a sign or currency symbol and then a digit, is one keyword with its sign,
  unit and separators ("50%", "-5", "2024-01-01", "10/10", "3.5x", "$20", "200ms", "2024").
  Two numbers match only when these canonical texts are equal, so "50%" never equals "5%"
  nor "50", "-5" never equals "5", and "3.10" never equals "3.1" (versions). The canonical
  text is the token lower-cased, with a leading "+" dropped ("+3.2" = "3.2"), the Unicode
  minus read as "-", "×" as "x", thousands commas removed ("1,000" = "1000"), and a following
  "percent", "per cent" or lone "%" glued on ("50 percent" = "50%"). An ordered-list marker
  ("1." or "2)" opening a line) is layout, not a number.
- **URLs are one keyword**: scheme and host lower-cased, the path, query and fragment kept as
  written (paths are case-sensitive), a bare trailing "/" dropped; a token starting with
  "http://", "https://" or "www." is a URL (a closing bracket or final punctuation is not part
  of it unless the URL opened that bracket).
- **Technical tokens stay whole**: a token with an inner dot or ending in "++" / "#" is one
  keyword ("react.js", "c++", "c#"); a dotted form also matches the same token without its dots
  ("reactjs") unless a digit touches a dot ("v3.5" is not "v35"); a leading dot is kept
  (".NET" is not "net"). A dunder name is one keyword with its underscores ("__init__",
  "__init__.py"; "__init__" is not "init"), Markdown marks around it dropped.
- **Hyphen, space and joined spellings are one term** (one rule): a hyphenated token is one
  keyword that also matches its parts written apart in one phrase ("well-known" = "well
  known", "state-of-the-art" = "state of the art") and written together ("real-time" =
  "realtime", "e-mail" = "email", "gpt-4" = "gpt4"); a word that is two dictionary words
  together, neither a stopword, matches them written apart ("realtime" = "real time",
  "database" = "data base"; "therapist" is not "the rapist"), and two words in a row match
  the same written as one ("open source" = "opensource"). In the response a hyphenated
  word's parts cover the reference's single keywords, as a compound's words do. A token
  with an empty part ("--verbose") is no hyphenated term.
- **Word forms match through lemmas, not stems.** Each word has a set of *forms*: itself plus
  every lemma lemminflect's English dictionary gives it, whatever the part of speech
  ("ran" -> {ran, run}, "mice" -> {mice, mouse}, "testing" -> {testing, test}). A word unknown
  to the dictionary gets a regular plural rule ("apis" -> api) and, for "-ing"/"-ed", the
  dictionary's rule-based verb lemma ("preprocessing" -> preprocess). Two keywords are the same
  when their form sets share a member; on each side a keyword that shares a form with an
  earlier one is left out ("model models" is one keyword). Being lemmas of real words, forms
  never merge unrelated words the way Porter2 stems do (experiment/experience,
  universe/university, general/generous all stay apart); homographs do share a form ("saw"
  the tool and "saw" of "see"), which is the price of not knowing the part of speech. In a
  hyphenated word only the last part is lemmatised ("pre-trained" = "pre-training", through
  "pre-train").
- **Compound terms are one keyword**, found two ways, curated terms first:
  1. the curated list `data/technical-terms-en.txt` ("machine learning", "type inference",
     "convolutional neural network", ...), matched on word forms, longest first; a hyphenated
     spelling of a listed term is the term ("machine-learning");
  2. the **compound rule**: a *noun modifier* directly followed by a *nominalised-verb head*
     is one keyword ("data preprocessing", "hyperparameter tuning", "feature engineering",
     "schema migrations", "error handling", "memory management", "web development"). The
     modifier is a singular noun that cannot be an adjective (lemminflect has a noun reading
     equal to the word and no adjective reading; a word it does not know counts as a noun
     when it is not a plural, "-ing", "-ed" or "-ly" form): nouns modify nouns in their
     singular ("feature engineering", not "features engineering"), so plurals, adjectives and
     conjugated verbs never open a compound. The head is a gerund (an "-ing" form of a verb)
     or a noun whose suffix derives it from a verb that lemminflect knows, or that itself ends
     in -ize/-ise/-ify/-ate: -ion (-ation, -ition, -sion, -ution...), -ment, -ance/-ence,
     -ysis, -esis, -al (when it cannot be an adjective), -age, -ure, -ery ("injection" <- inject,
     "management" <- manage, "inference" <- infer, "retrieval" <- retrieve, "storage" <- store,
     "failure" <- fail, "discovery" <- discover). Two guards read the neighbours as a verb
     phrase instead: a modifier that can be a verb is one right after "to", a modal, a
     subject pronoun or "not" ("to start learning", "we plan testing"), after a plural noun
     ("dashboards make regressions"), or after the subject of a question's auxiliary ("does
     Redis handle caching", "can the cache handle authentication"); an "-ing" head followed
     by a determiner or object pronoun takes an object ("the server handling the requests").
  A compound is matched by the same compound in the response (the same forms word by
  word), never by its words scattered apart, and its words are not counted again in the
  reference. A **rule compound also matches the verb phrase it names**: its head's verb
  with the modifier as object or passive subject, in one phrase: the verb, determiners and
  up to three nouns ("tune hyperparameters", "we tuned the hyperparameters"), the head, "of"
  and its nouns ("tuning of hyperparameters", "migration of the schema"), or the noun, a
  form of "be" and the participle ("the frameworks were tested", "the schema was
  migrated"). A curated term is a term of art and names no verb phrase: "learning about
  machines" is not "machine learning", "deep models for learning" not "deep learning".
  In the response, the words inside a compound do cover the reference's single keywords
  (a response saying "data preparation" covers the reference keyword "data").

Scoring: empty reference and output score 1.0, exactly one of them empty scores 0.0 ("empty" =
blank after `strip()`); a non-empty reference without keywords (only stopwords) scores 1.0.

Results: `preprocess_step_result` = `{"referenceKeywords": set, "responseKeywords": set}` (the
lower-cased surface forms; numbers in their canonical text, URLs with their path's case),
`analyze_step_result` = `{"totalKeywords", "matchedKeywords"}`, score = `matchedKeywords /
totalKeywords`, unrounded. With `reference="ground_truth"` the reference-side fields describe
the ground truth, and a reason says so. (For two empty texts Mastra wraps its preprocess result
in an extra `result` key; this scorer returns the same two empty sets plainly.)

Speed: every word is analysed once and cached (word -> forms and roles; token -> words);
nothing is cached by whole text, so a text costs one dictionary look-up per token and a short
pass over its words: only role-2 words before a word that joins are looked at for spans, and
the keywords are de-duplicated by counting the forms they add to the pool, the per-keyword
comparison run only when the count shows a shared form. The variants (verb phrases, spaced
spellings) are looked for only for the reference keywords the response's forms miss.
The code: the lexicon (`_keyword_lexicon.py`: lists, word forms, verbs), the words
(`_keyword_words.py`: tokenising, the analysed word, its caches), the compounds and variants
(`_keyword_compounds.py`), the keywords of a text (`_keyword_text.py`), this module (the
scorer).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product
from typing import NamedTuple

from core.scorers._keyword_compounds import _span_word, variant_forms
from core.scorers._keyword_lexicon import STOPWORDS, TECHNICAL_TERMS, _whole_term
from core.scorers._keyword_text import _keywords
from core.scorers._keyword_words import _KEYWORDS, _TOKENS, _WORDS, _Word, _word
from core.scorers._reference import (
    Reference,
    check_reference,
    reference_entry,
    reference_scorer,
    reference_text,
)
from core.scorers._text import is_blank, join_texts
from core.scoring import NotScorable, Scorer, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "DESCRIPTION",
    "SCORER_ID",
    "STOPWORDS",
    "TECHNICAL_TERMS",
    "KeywordCoverage",
    "create_keyword_coverage_scorer",
    "extract_keywords",
    "keyword_coverage",
    "keyword_forms",
]

SCORER_ID = "keyword-coverage-scorer"
DESCRIPTION = (
    "Share of the reference's keywords (the input's, or the ground truth's) that the output"
    " covers: stopwords ignored, case-insensitive, word forms matched through lemmas, numbers"
    " with their units, URLs, technical and compound terms kept whole."
)

# --- keywords -------------------------------------------------------------------------------


class _Compared(NamedTuple):
    reference: dict[str, _Word]
    response: dict[str, _Word]
    pool: set[str]  # the response's, with the reference keywords it covers by a variant
    matched: int  # reference keywords covered


# Every cache (they live in _keyword_words), named for the tests that empty them. None is
# keyed by a whole text: each text is read afresh, its words and tokens coming from the caches.
_CACHES = (_WORDS, _TOKENS, _KEYWORDS)


def _compare(reference: str, response: str) -> _Compared:
    """Both sides' keywords, the response's pool with the forms of the reference keywords it
    covers by a variant (a compound's verb phrase, a hyphen's spaced or joined spelling), and
    how many reference keywords are covered."""
    reference_kw, _, reference_order = _keywords(reference)
    response_kw, pool, response_order = _keywords(response)
    extra, matched = variant_forms(reference_kw.values(), reference_order, response_order, pool)
    if extra:
        pool.update(extra)  # the pool is this call's own set
        matched = sum(1 for word in reference_kw.values() if not word.forms.isdisjoint(pool))
    return _Compared(reference_kw, response_kw, pool, matched)


def extract_keywords(text: str) -> dict[str, frozenset[str]]:
    """The keywords of a text: lower-cased surface form -> the forms it is compared on, in
    order of first appearance, one per group of keywords sharing a form."""
    return {surface: word.forms for surface, word in _keywords(text)[0].items()}


def _keyword(surface: str) -> _Word:
    """A keyword from its surface form, as `extract_keywords` reported it."""
    found = _KEYWORDS.get(surface)
    if found is not None:
        return found
    if "://" in surface or surface.startswith("www."):
        return _Word(surface, frozenset({surface}), True)
    if " " in surface:
        parts = surface.split(" ")
        words = [word for part in parts if (word := _word(part)) is not None]
        if len(words) == len(parts):
            word_forms = [word.forms for word in words]
            key = _whole_term(word_forms)
            if key is not None:
                forms = frozenset({key})
            else:
                forms = frozenset(" ".join(combo) for combo in product(*word_forms))
            return _span_word(words, forms)
    word = _word(surface)
    return word if word is not None else _Word(surface, frozenset({surface}), True)


def keyword_forms(surface: str) -> frozenset[str]:
    """The forms a keyword is compared on, from its surface form (see the module docstring)."""
    return _keyword(surface).forms


def _counts(reference: Iterable[str], response: Iterable[str]) -> tuple[int, int]:
    """(total reference keywords, how many share a form with the response's pool)."""
    known = _KEYWORDS.get
    pool: set[str] = set()
    for surface in response:
        pool.update((known(surface) or _keyword(surface)).pool)
    total = matched = 0
    for surface in reference:
        total += 1
        if not (known(surface) or _keyword(surface)).forms.isdisjoint(pool):
            matched += 1
    return total, matched


class KeywordCoverage(NamedTuple):
    """The outcome of comparing two texts' keywords."""

    reference_keywords: set[str]
    response_keywords: set[str]
    total: int
    matched: int
    score: float


def _score(total: int, matched: int, reference_blank: bool, output_blank: bool) -> float:
    if reference_blank or output_blank:
        return 1.0 if reference_blank and output_blank else 0.0
    return 1.0 if total == 0 else matched / total


def keyword_coverage(reference: str, response: str) -> KeywordCoverage:
    """Compare two plain texts (the pure function behind the scorer)."""
    compared = _compare(reference, response)
    total, matched = len(compared.reference), compared.matched
    score = _score(total, matched, not reference.strip(), not response.strip())
    return KeywordCoverage(set(compared.reference), set(compared.response), total, matched, score)


class _KeywordSet(set[str]):
    """A side's keyword surfaces, as the preprocess step shows them, carrying what the analyze
    step counts (the reference's covered keywords, the response's matchable pool), found in
    preprocess where both texts are at hand. A plain set of surfaces still works (the analyze
    step compares each keyword's forms with the response's), but without the variants that
    need the texts' word order (verb phrases, spaced spellings)."""

    # Set only by `both` (set's own __init__ stays, so copies and pickles of the step result
    # rebuild as usual); read with getattr(..., None).
    __slots__ = ("matched", "pool")
    matched: int
    pool: set[str]

    def __repr__(self) -> str:  # shown like the plain set it stands for
        return repr(set(self))

    @classmethod
    def both(cls, reference: str, response: str) -> tuple[_KeywordSet, _KeywordSet]:
        """The reference's keywords with how many are covered, the response's with its pool."""
        compared = _compare(reference, response)
        first, second = cls(compared.reference), cls(compared.response)
        first.matched = compared.matched
        second.pool = compared.pool
        return first, second


def _is_blank(value: object, side: str) -> bool:
    """`is_blank`, with plain texts tested in place (`isspace` copies nothing; `strip` would
    copy the whole text, for every run)."""
    if type(value) is str:
        return not value or value.isspace()
    return is_blank(value, side)


def _analyze(ctx: StepContext) -> dict[str, int]:
    keywords = ctx.results.preprocess_step_result
    reference, response = keywords["referenceKeywords"], keywords["responseKeywords"]
    matched = getattr(reference, "matched", None)
    if matched is None:
        total, matched = _counts(reference, response)
    else:
        total = len(reference)
    return {"totalKeywords": total, "matchedKeywords": matched}


def create_keyword_coverage_scorer(reference: Reference = "input") -> Scorer:
    """The keyword-coverage scorer (id `keyword-coverage-scorer`).

    Args:
        reference: "input" (Mastra's behaviour) to cover the input's keywords, or
            "ground_truth" to cover the ground truth's instead (an item without one is not
            scorable).

    Score = matched reference keywords / reference keywords, unrounded; see the module
    docstring for what a keyword is and how the empty cases score.
    """
    mode = check_reference(reference, "create_keyword_coverage_scorer")

    def preprocess(ctx: StepContext) -> dict[str, set[str]] | NotScorable:
        run = ctx.run
        given = run.input if mode == "input" else None
        text = given if type(given) is str else reference_text(run, mode)
        if isinstance(text, NotScorable):
            return text
        output = run.output
        response = output if type(output) is str else join_texts(output, "output")
        reference_kw, response_kw = _KeywordSet.both(text, response)
        return {"referenceKeywords": reference_kw, "responseKeywords": response_kw}

    def generate_score(ctx: StepContext) -> float:
        counts = ctx.results.analyze_step_result
        run = ctx.run
        return _score(
            counts["totalKeywords"],
            counts["matchedKeywords"],
            mode == "input" and _is_blank(run.input, "input"),  # a ground truth is not blank
            _is_blank(run.output, "output"),
        )

    return reference_scorer(
        SCORER_ID,
        "Keyword Coverage Scorer",
        DESCRIPTION,
        mode,
        preprocess,
        generate_score,
        "referenceKeywords and totalKeywords count the ground truth's keywords.",
        analyze=_analyze,
    )


CATALOG_ENTRY = reference_entry(
    SCORER_ID, "Keyword Coverage", DESCRIPTION, create_keyword_coverage_scorer
)
