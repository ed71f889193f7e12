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
  (".NET" is not "net").
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
  A compound is matched only by the same compound in the response (the same forms word by
  word), never by its words scattered apart, and its words are not counted again in the
  reference. In the response, the words inside a compound do cover the reference's single
  keywords (a response saying "data preparation" covers the reference keyword "data").

Scoring: empty reference and output score 1.0, exactly one of them empty scores 0.0 ("empty" =
blank after `strip()`); a non-empty reference without keywords (only stopwords) scores 1.0.

Results: `preprocess_step_result` = `{"referenceKeywords": set, "responseKeywords": set}` (the
lower-cased surface forms; numbers in their canonical text, URLs with their path's case),
`analyze_step_result` = `{"totalKeywords", "matchedKeywords"}`, score = `matchedKeywords /
totalKeywords`, unrounded. With `reference="ground_truth"` the reference-side fields describe
the ground truth, and a reason says so. (For two empty texts Mastra wraps its preprocess result
in an extra `result` key; this scorer returns the same two empty sets plainly.)

Speed: every word is analysed once and cached (word -> forms and roles; token -> words), so a
text costs one dictionary look-up per token and a short pass for compounds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from itertools import product
from typing import Any, NamedTuple

import lemminflect

from core.scorers._data import data_lines
from core.scorers._reference import (
    Reference,
    ReferenceOptions,
    check_reference,
    reference_text,
    scorer_name,
    with_ground_truth_reason,
)
from core.scorers._registry import PrebuiltScorer, reference_comparison, reference_needs
from core.scorers._text import is_blank, join_texts
from core.scoring import NotScorable, Scorer, StepContext, create_scorer

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

STOPWORDS: frozenset[str] = frozenset(data_lines("smart-stopwords-en.txt"))
"""The SMART English stopword list (keyword-extractor's), lower case."""
TECHNICAL_TERMS: frozenset[str] = frozenset(data_lines("technical-terms-en.txt"))
"""The curated multi-word technical terms, as written in the data file."""

# Dotted spellings of SMART stopwords ("eg", "ie", ...); "U.S." stays a keyword, not "us".
_DOTTED_STOPWORDS = frozenset({"e.g", "i.e", "a.k.a"})
# Words after which a noun/verb word is a verb: "to start", "we plan", "should use", "not test".
_VERB_CUES = frozenset(
    {"to", "can", "could", "will", "would", "shall", "should", "may", "might", "must", "i",
     "we", "you", "they", "he", "she", "it", "not", "never", "please", "let's", "don't",
     "doesn't", "didn't", "won't", "can't", "cannot"}
)  # fmt: skip
# Auxiliaries and modals that open a question's verb phrase: "does Redis handle caching".
_DO = frozenset({"do", "does", "did"})
_AUXILIARIES = _DO | {
    "can", "could", "will", "would", "shall", "should", "may", "might", "must"
}  # fmt: skip
# Words that open a verb's object: "handling the requests", "tuning them".
_OBJECT_CUES = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "it", "them", "its", "their", "our",
     "your", "his", "her", "my", "me", "him", "us", "some", "all", "every", "each", "any"}
)  # fmt: skip
# Suffix of a nominalised verb -> what to put back to get the verb ("migration" -> migrate).
# Every suffix that fits is tried ("compression" is compress + ion, not compres + sion).
_NOMINAL_SUFFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ication", ("y",)),
    ("faction", ("fy",)),
    ("ation", ("", "e", "ate", "ize", "ise")),
    ("ition", ("", "e", "ize", "ise")),
    ("ution", ("ute", "ve")),
    ("uction", ("uce",)),
    ("ption", ("be", "pt")),
    ("sion", ("", "d", "de", "t", "e")),
    ("ion", ("", "e")),
    ("ment", ("",)),
    ("iance", ("y",)),
    ("ance", ("", "e", "ate")),
    ("ence", ("", "e")),
    ("ysis", ("yse", "yze")),
    ("esis", ("esize", "esise")),
    ("al", ("e", "")),
    ("age", ("e", "")),
    ("ure", ("", "e")),
    ("ery", ("er",)),
)
_VERB_FORMING = ("ize", "ise", "ify", "ate")

_TAG_RE = re.compile(r"<[^>]+>")
_URL_START_RE = re.compile(r"https?://|www\.", re.IGNORECASE)
_URL_PARTS_RE = re.compile(r"((?:[a-z][a-z0-9+.\-]*://)?)([^/?#]*)(.*)", re.IGNORECASE | re.DOTALL)
_URL_TRAILING = ".,;:!?'\"]}>"
# Characters that end a phrase and split a token; a comma or colon between two digits does
# not ("1,000", "10:30").
_BREAK_RE = re.compile(
    '[;!?()"\u201c\u201d\u2018\\[\\]{}\u2013\u2014\u2026]|(?<!\\d)[,:]|[,:](?!\\d)'
)
_NUMBER_START_RE = re.compile("[+\\-\u2212]?[$\u20ac\u00a3\u00a5\u20b9]?[+\\-\u2212]?\\d")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DIGIT_DOT_RE = re.compile(r"\d\.|\.\d")
_MARKUP = "*_~`"

_NOUN_MODIFIER_EXCLUDED_ENDINGS = ("ing", "ed", "ly")
_ING, _NOMINAL = 2, 1  # head kinds
# Entries per cache (a distinct word costs about 1 kB across the three): a cache that grows
# past this is emptied, and the words in use come back at once.
_CACHE_LIMIT = 50_000


# --- word forms -----------------------------------------------------------------------------


def _singular(word: str) -> str:
    """A regular plural's singular, for words the dictionary does not know."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    # Only a form is added, so a singular "redis" losing its "s" costs nothing.
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _alpha_forms(word: str) -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """The forms of an alphabetic word (apostrophes allowed) and lemminflect's readings."""
    base = word[:-2] if word.endswith("'s") else word.strip("'")
    readings = lemminflect.getAllLemmas(base)
    forms = {word, base}
    if readings:
        for lemmas in readings.values():
            forms.update(lemmas)
    else:
        forms.add(_singular(base))
        if base.endswith(("ing", "ed")):
            forms.update(lemminflect.getAllLemmasOOV(base, "VERB").get("VERB", ()))
    return frozenset(forms), readings


def _forms(surface: str) -> frozenset[str]:
    """The forms of a lower-cased non-number word token, without any curated-term mapping."""
    if surface.replace("'", "").isalpha():
        return _alpha_forms(surface)[0]
    if "." in surface and not _DIGIT_DOT_RE.search(surface):
        undotted = surface.replace(".", "")
        return frozenset({"." + undotted if surface.startswith(".") else undotted})
    if "-" in surface:
        prefix, _, last = surface.rpartition("-")
        if last.isalpha():
            return frozenset({surface} | {f"{prefix}-{form}" for form in _alpha_forms(last)[0]})
    return frozenset({surface})  # "c++", "c#", "gpt4", "gpt-4"


# --- curated terms --------------------------------------------------------------------------


class _Term(NamedTuple):
    """A curated term: the forms of each of its words, its key (as listed) and its length."""

    words: tuple[frozenset[str], ...]
    key: str
    length: int


def _load_terms() -> dict[str, tuple[_Term, ...]]:
    """The curated terms, indexed by every form of their first word, longest first."""
    index: dict[str, list[_Term]] = {}
    for line in data_lines("technical-terms-en.txt"):
        words = tuple(_forms(word) for word in line.split())
        term = _Term(words, line, len(words))
        for form in words[0]:
            index.setdefault(form, []).append(term)
    return {form: tuple(sorted(terms, key=lambda t: -t.length)) for form, terms in index.items()}


@functools.cache
def _term_index() -> dict[str, tuple[_Term, ...]]:
    """`_load_terms`, on first use: lemmatising the list took 0.3 s of every process's start
    (the dashboard's, the CLI's), scorer used or not."""
    return _load_terms()


@functools.cache
def _term_second_forms() -> frozenset[str]:
    """Every form of the second word of a curated term."""
    return frozenset(
        form for terms in _term_index().values() for term in terms for form in term.words[1]
    )


def _terms_starting_with(forms: frozenset[str]) -> tuple[_Term, ...]:
    found: dict[str, _Term] = {}
    for form in forms:
        for term in _term_index().get(form, ()):
            found.setdefault(term.key, term)
    return tuple(sorted(found.values(), key=lambda t: -t.length))


def _whole_term(word_forms: list[frozenset[str]]) -> str | None:
    """The key of the curated term made of exactly these words, if any."""
    for term in _terms_starting_with(word_forms[0]):
        if term.length == len(word_forms) and all(
            not forms.isdisjoint(wanted)
            for forms, wanted in zip(word_forms, term.words, strict=True)
        ):
            return term.key
    return None


# --- words ----------------------------------------------------------------------------------


class _Word:
    """One word of a text, analysed once: its surface, forms and roles in the compound rules.

    `role`: 0 = nothing to do (a stopword that starts no term), 1 = a plain keyword,
    2 = needs a look at its neighbours (starts a curated term, may modify a compound head, or
    is a number that a "percent" may follow).
    """

    __slots__ = (
        "aux",
        "forms",
        "head",
        "is_keyword",
        "joins",
        "modifier",
        "noun_like",
        "noun_only",
        "number",
        "object_cue",
        "percent",
        "plural",
        "pool",
        "role",
        "surface",
        "term_seconds",
        "terms",
        "verb_cue",
        "verbish",
    )

    def __init__(self, surface: str, forms: frozenset[str], is_keyword: bool) -> None:
        self.surface = surface
        self.forms = forms
        self.pool = forms  # what this keyword adds to the response's matchable forms
        self.is_keyword = is_keyword
        self.terms: tuple[_Term, ...] = ()
        self.term_seconds: frozenset[str] = frozenset()  # forms a term's second word may take
        self.modifier = False
        self.verbish = False
        self.head = 0
        self.number = False
        self.percent = False
        self.verb_cue = surface in _VERB_CUES
        self.object_cue = surface in _OBJECT_CUES
        self.aux = surface in _AUXILIARIES
        self.plural = False  # a plural noun of the dictionary ("dashboards")
        self.noun_like = False  # may be a noun (a noun reading, or unknown to the dictionary)
        self.noun_only = False  # a noun that cannot be a verb (or a word the dictionary lacks)
        self.role = 1 if is_keyword else 0
        self.joins = False  # may be the second word of a span (see settle)

    def settle(self) -> _Word:
        if self.terms:
            self.term_seconds = frozenset().union(*(term.words[1] for term in self.terms))
        if self.terms or self.modifier or self.number:
            self.role = 2
        self.joins = bool(
            self.head
            or self.percent
            or self.surface == "per"
            or not self.forms.isdisjoint(_term_second_forms())
        )
        return self


_WORDS: dict[str, _Word | None] = {}
_TOKENS: dict[str, tuple[_Word | None, ...]] = {}
_KEYWORDS: dict[str, _Word] = {}  # surface -> the keyword (single word, URL or span)


def _remember(cache: dict[str, Any], key: str, value: Any) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def _canonical_number(surface: str) -> str:
    text = surface.replace("\u2212", "-").replace("\u00d7", "x")
    if text.startswith("+"):
        text = text[1:]
    return _THOUSANDS_RE.sub("", text) if "," in text else text


def _is_verb(candidate: str) -> bool:
    verbs = lemminflect.getAllLemmas(candidate).get("VERB")
    return bool(verbs) and candidate in verbs


def _is_derived_from_verb(noun: str) -> bool:
    for suffix, endings in _NOMINAL_SUFFIXES:
        if noun.endswith(suffix) and len(noun) - len(suffix) >= 2:
            stem = noun[: -len(suffix)]
            for ending in endings:
                verb = stem + ending
                if _is_verb(verb) or verb.endswith(_VERB_FORMING):
                    return True
    return False


def _head_kind(word: str, readings: dict[str, tuple[str, ...]], forms: frozenset[str]) -> int:
    """_ING for a gerund, _NOMINAL for a noun derived from a verb, else 0."""
    if len(word) > 4 and word.endswith("ing"):
        verbs = readings.get("VERB", ()) if readings else forms - {word}
        return _ING if any(verb != word for verb in verbs) else 0
    if readings and "NOUN" not in readings:
        return 0
    if word.endswith("al") and "ADJ" in readings:  # "final", "total": adjectives first
        return 0
    nouns = readings.get("NOUN", ()) if readings else (_singular(word),)
    return _NOMINAL if any(_is_derived_from_verb(noun) for noun in nouns) else 0


def _alpha_word(surface: str) -> _Word:
    forms, readings = _alpha_forms(surface)
    word = _Word(surface, forms, True)
    word.terms = _terms_starting_with(forms)
    if readings:
        nouns = readings.get("NOUN", ())
        word.verbish = "VERB" in readings
        word.modifier = surface in nouns and "ADJ" not in readings
        word.noun_like = bool(nouns)
        word.noun_only = bool(nouns) and not word.verbish
        word.plural = bool(nouns) and surface not in nouns and surface.endswith("s")
    else:
        word.verbish = word.noun_like = word.noun_only = True
        word.modifier = (
            _singular(surface) == surface
            and len(surface) > 2
            and not surface.endswith(_NOUN_MODIFIER_EXCLUDED_ENDINGS)
        )
    word.head = _head_kind(surface, readings, forms)
    word.percent = surface == "percent"
    return word.settle()


def _hyphenated_word(surface: str) -> _Word:
    parts = surface.split("-")
    part_forms = [_forms(part) for part in parts]
    key = _whole_term(part_forms) if all(part.isalpha() for part in parts) else None
    if key is None:
        return _Word(surface, _forms(surface), True)
    word = _Word(surface, frozenset({key}), True)  # "machine-learning" is the listed term
    word.pool = word.forms.union(*part_forms)
    return word


def _make_word(piece: str) -> _Word | None:
    surface = piece.lower()
    if surface == "%":
        word = _Word(surface, frozenset({surface}), False)
        word.percent = True
        return word.settle()
    if not any(char.isalnum() for char in surface):
        return None  # a lone "-" or "&": no letter or digit, no keyword
    if _NUMBER_START_RE.match(surface):
        canonical = _canonical_number(surface)
        word = _Word(canonical, frozenset({canonical}), True)
        word.number = True
        return word.settle()
    if surface in STOPWORDS or surface in _DOTTED_STOPWORDS:
        word = _Word(surface, _forms(surface), False)
        word.terms = _terms_starting_with(word.forms)
        return word.settle()
    if surface.replace("'", "").isalpha():
        return _alpha_word(surface)
    if "-" in surface and "." not in surface:
        return _hyphenated_word(surface).settle()
    return _Word(surface, _forms(surface), True).settle()


def _word(piece: str) -> _Word | None:
    """The analysed word for a cleaned token piece (cached per lower-cased piece, so that
    "Fox" and "fox" are one object and de-duplicate by identity)."""
    key = piece.lower()
    try:
        return _WORDS[key]
    except KeyError:
        word = _make_word(key)
        _remember(_WORDS, key, word)
        if word is not None and word.is_keyword:
            _remember(_KEYWORDS, word.surface, word)
        return word


def _url_word(url: str) -> _Word | None:
    while url and (
        url[-1] in _URL_TRAILING or (url[-1] == ")" and url.count("(") < url.count(")"))
    ):
        url = url[:-1]
    match = _URL_PARTS_RE.fullmatch(url)
    if match is None or not match.group(2):
        return None
    scheme, host, rest = match.groups()
    surface = scheme.lower() + host.lower() + ("" if rest == "/" else rest)
    word = _Word(surface, frozenset({surface}), True)
    _remember(_KEYWORDS, surface, word)
    return word


def _clean_piece(piece: str) -> str:
    """Drop what only surrounds a word: quotes, a final dot, and Markdown emphasis or code
    marks ("'word'", "end.", "**bold**", "`code`"), which LLM answers are full of."""
    piece = piece.strip(_MARKUP)
    if piece.startswith(".."):  # an ellipsis glued to the word: "...and"
        piece = piece.lstrip(".")
    return piece.lstrip("'").rstrip(".'").strip(_MARKUP)


def _plain_items(text: str) -> list[_Word | None]:
    items: list[_Word | None] = []
    for index, raw in enumerate(_BREAK_RE.split(text)):
        if index:
            items.append(None)
        if not raw:
            continue
        word = _word(_clean_piece(raw))
        if word is not None:
            items.append(word)
        if raw.endswith("."):  # a sentence ends here
            items.append(None)
    return items


def _token_items(token: str) -> tuple[_Word | None, ...]:
    """The words of one whitespace-separated token; None marks a phrase break."""
    match = _URL_START_RE.search(token)
    if match is not None and (match.start() == 0 or not token[match.start() - 1].isalnum()):
        items = _plain_items(token[: match.start()])
        url = _url_word(token[match.start() :])
        items += [None, url, None] if url is not None else [None]
    else:
        items = _plain_items(token)
    return tuple(items)


def _is_list_marker(token: str) -> bool:
    return len(token) <= 4 and token[-1] in ".)" and token[:-1].isdigit()


def _items(text: str) -> list[_Word | None]:
    """The words of a text in order, with None at every phrase break (a line always ends with
    one, so a word is never the last item)."""
    if "<" in text:
        text = _TAG_RE.sub(" ", text)
    text = text.replace("\u2019", "'")
    items: list[_Word | None] = []
    extend = items.extend
    cached = _TOKENS.get
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if _is_list_marker(tokens[0]):
            del tokens[0]
        for token in tokens:
            found = cached(token)
            extend(found if found is not None else _new_token(token))
        items.append(None)
    return items


def _new_token(token: str) -> tuple[_Word | None, ...]:
    found = (_word(token),) if token.isalpha() else _token_items(token)
    _remember(_TOKENS, token, found)
    return found


# --- compounds ------------------------------------------------------------------------------


def _match_term(items: list[_Word | None], start: int, terms: tuple[_Term, ...]) -> _Term | None:
    """The longest curated term starting at `start`, or None."""
    for term in terms:
        end = start + term.length
        if end > len(items):
            continue
        for offset in range(1, term.length):
            item = items[start + offset]
            if item is None or item.forms.isdisjoint(term.words[offset]):
                break
        else:
            return term
    return None


def _span_word(words: list[_Word], forms: frozenset[str]) -> _Word:
    """The keyword made of several words (cached by its surface)."""
    surface = " ".join(word.surface for word in words)
    found = _KEYWORDS.get(surface)
    if found is None:
        found = _Word(surface, forms, True)
        found.pool = forms.union(*(word.forms for word in words if word.is_keyword))
        _remember(_KEYWORDS, surface, found)
    return found


def _term_span(items: list[_Word | None], start: int, word: _Word) -> _Word | None:
    term = _match_term(items, start, word.terms)
    if term is None:
        return None
    # _match_term found a word at every position of the term: the filter drops nothing.
    words = [item for item in items[start : start + term.length] if item is not None]
    return _span_word(words, frozenset({term.key}))


def _reads_as_verb(items: list[_Word | None], start: int) -> bool:
    """Whether the noun-or-verb word at `start` is, from the words before it, a clause's verb:
    after "to", a modal, a subject pronoun or "not" ("to start learning", "we plan testing");
    after a plural noun, its subject ("dashboards make regressions"); or after the subject of
    a question ("does Redis handle caching", "can the cache handle authentication"). A modal
    opens a question only before a determiner or nouns that cannot be verbs: in "you should
    test load balancing", "test" is the verb."""
    before = items[start - 1] if start else None
    if before is None:
        return False
    if before.verb_cue or before.plural:
        return True
    determiner, nouns_only = False, True
    for position in range(start - 1, max(start - 6, -1), -1):  # a subject of up to 4 words
        item = items[position]
        if item is None:
            return False
        if item.aux and position < start - 1:
            return item.surface in _DO or determiner or nouns_only
        if item.object_cue:
            determiner = True
        elif item.is_keyword or item is _CONSUMED:
            nouns_only = nouns_only and item.noun_only
        else:
            return False
    return False


def _compound_span(
    items: list[_Word | None], start: int, modifier: _Word, head: _Word
) -> _Word | None:
    """The rule compound `modifier head`, unless the context reads it as a verb phrase."""
    if head.terms and _match_term(items, start + 1, head.terms) is not None:
        return None
    if modifier.verbish and _reads_as_verb(items, start):
        return None
    if head.head == _ING and start + 2 < len(items):
        after = items[start + 2]
        if after is not None and after.object_cue:
            return None
    surface = modifier.surface + " " + head.surface
    found = _KEYWORDS.get(surface)
    if found is None:
        forms = frozenset(f"{left} {right}" for left, right in product(modifier.forms, head.forms))
        found = _span_word([modifier, head], forms)
    return found


def _percent_span(items: list[_Word | None], start: int, number: _Word) -> tuple[_Word, int] | None:
    """`number` + "percent" / "%" / "per cent" as one number keyword, and its length."""
    following = items[start + 1]
    assert following is not None
    if following.percent:
        length = 2
    elif following.surface == "per" and start + 2 < len(items):
        after = items[start + 2]
        if after is None or after.surface != "cent":
            return None
        length = 3
    else:
        return None
    merged = _word(number.surface.rstrip("%") + "%")
    assert merged is not None
    return merged, length


def _span_at(items: list[_Word | None], position: int, word: _Word) -> tuple[_Word, int] | None:
    """The multi-word (or merged number) keyword starting at a role-2 word, and its length."""
    following = items[position + 1]
    assert following is not None
    if word.terms and not following.forms.isdisjoint(word.term_seconds):
        span = _term_span(items, position, word)
        if span is not None:
            return span, span.surface.count(" ") + 1
    if word.modifier and following.head:
        compound = _compound_span(items, position, word, following)
        return None if compound is None else (compound, 2)
    if word.number and (following.percent or following.surface == "per"):
        return _percent_span(items, position, word)
    return None


# --- keywords -------------------------------------------------------------------------------


# Stands for the words a span consumed after its first: no keyword, no phrase break.
_CONSUMED = _Word("", frozenset(), False)
_CONSUMED.noun_only = True  # a span is a noun phrase
_CONSUMED_RUN: list[_Word | None] = [_CONSUMED] * 16  # longer than any curated term


def _keywords(text: str) -> tuple[dict[str, _Word], set[str]]:
    """The keywords of a text (surface -> keyword, in order; a keyword sharing a form with an
    earlier one is left out) and its matchable pool: every form of every keyword, with the
    words inside its compounds."""
    items = _items(text)
    kept: dict[str, _Word] = {}
    seen: set[str] = set()
    parts: list[frozenset[str]] = []
    for position, word in enumerate(items):
        if word is None:
            continue
        role = word.role
        if role != 1:
            if not role:
                continue
            following = items[position + 1]
            span = (
                _span_at(items, position, word)
                if following is not None and following.joins
                else None
            )
            if span is not None:
                word, length = span
                # The span's other words are consumed (items is this call's own list).
                items[position + 1 : position + length] = _CONSUMED_RUN[: length - 1]
                parts.append(word.pool)
            elif not word.is_keyword:
                continue
        surface = word.surface
        if surface not in kept:
            forms = word.forms
            if forms.isdisjoint(seen):
                kept[surface] = word
            seen.update(forms)
    return kept, seen.union(*parts) if parts else seen


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
    reference_kw = set(_keywords(reference)[0])
    response_kw = set(_keywords(response)[0])
    total, matched = _counts(reference_kw, response_kw)
    score = _score(total, matched, not reference.strip(), not response.strip())
    return KeywordCoverage(reference_kw, response_kw, total, matched, score)


class _KeywordSet(set[str]):
    """A side's keyword surfaces, as the preprocess step shows them, carrying what the analyze
    step compares (each keyword's forms, the response's matchable pool) so that it need not
    look every keyword up again. A plain set of surfaces works too, only slower."""

    # Set only by the constructors below (set's own __init__ stays, so copies and pickles of
    # the step result rebuild as usual); read with getattr(..., None).
    __slots__ = ("forms", "pool")
    forms: list[frozenset[str]]
    pool: set[str]

    def __repr__(self) -> str:  # shown like the plain set it stands for
        return repr(set(self))

    @classmethod
    def reference(cls, text: str) -> _KeywordSet:
        keywords, _ = _keywords(text)
        made = cls(keywords)
        made.forms = [word.forms for word in keywords.values()]
        return made

    @classmethod
    def response(cls, text: str) -> _KeywordSet:
        keywords, pool = _keywords(text)
        made = cls(keywords)
        made.pool = pool
        return made


def _analyze(ctx: StepContext) -> dict[str, int]:
    keywords = ctx.results.preprocess_step_result
    reference, response = keywords["referenceKeywords"], keywords["responseKeywords"]
    forms = getattr(reference, "forms", None)
    pool = getattr(response, "pool", None)
    if forms is None or pool is None:
        total, matched = _counts(reference, response)
    else:
        total = len(forms)
        matched = sum(1 for keyword in forms if not keyword.isdisjoint(pool))
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
        text = reference_text(ctx.run, mode)
        if isinstance(text, NotScorable):
            return text
        return {
            "referenceKeywords": _KeywordSet.reference(text),
            "responseKeywords": _KeywordSet.response(join_texts(ctx.run.output, "output")),
        }

    def generate_score(ctx: StepContext) -> float:
        counts = ctx.results.analyze_step_result
        return _score(
            counts["totalKeywords"],
            counts["matchedKeywords"],
            mode == "input" and is_blank(ctx.run.input, "input"),  # a ground truth is not blank
            is_blank(ctx.run.output, "output"),
        )

    scorer = (
        create_scorer(
            id=SCORER_ID,
            name=scorer_name("Keyword Coverage Scorer", mode),
            description=DESCRIPTION,
        )
        .preprocess(preprocess)
        .analyze(_analyze)
        .generate_score(generate_score)
    )
    return with_ground_truth_reason(
        scorer, mode, "referenceKeywords and totalKeywords count the ground truth's keywords."
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Keyword Coverage",
    DESCRIPTION,
    create_keyword_coverage_scorer,
    calls_judge=False,
    options_model=ReferenceOptions,
    compares=reference_comparison,
    needs=reference_needs,
)
