"""Keyword coverage's lexicon: the stopword and curated-term lists, the forms of a word
(lemmas through lemminflect, a plural rule for unknown words, dotted, hyphenated and joined
spellings) and the verbs a word names (a verb's lemmas, a nominalised verb's verb). The rules
are stated in `core/scorers/keyword_coverage.py`'s docstring and docs/scorers.md, Keyword
Coverage."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from core.scorers._data import data_lines

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
_DIGIT_DOT_RE = re.compile(r"\d\.|\.\d")

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
    import lemminflect  # on first use: its dictionaries load numpy

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
        return _hyphenated_forms(surface)
    return frozenset({surface})  # "c++", "c#", "gpt4"


def _term_forms(word: str) -> frozenset[str]:
    """A curated term's word read as the noun or adjective it is there: "learning" in "machine
    learning" has the forms of the noun (learnings), not of the verb learn, so a text where
    "machines learn" does not name the term (a term of art stays a term)."""
    if not word.replace("'", "").isalpha():
        return _forms(word)
    forms, readings = _alpha_forms(word)
    nominal = [lemma for tag in ("NOUN", "ADJ", "PROPN") for lemma in readings.get(tag, ())]
    return frozenset({word, *nominal}) if nominal else forms


def _hyphenated_forms(surface: str) -> frozenset[str]:
    """A hyphenated token's forms: as written, its last part's forms behind the rest
    ("pre-trained" -> pre-train), and the same joined without hyphens ("real-time" ->
    realtime, "e-mails" -> emails, email; "gpt-4" -> gpt4). A token with an empty or
    non-alphanumeric part ("--verbose", "rock-'n'-roll") keeps only its last part's forms."""
    parts = surface.split("-")
    last = parts[-1]
    lasts = _alpha_forms(last)[0] if last.isalpha() else frozenset({last})
    prefix = surface[: -len(last)]  # with its final hyphen
    forms = {surface, *(prefix + form for form in lasts)}
    if all(part.isalnum() for part in parts):
        joined = "".join(parts[:-1])
        forms.update(joined + form for form in lasts)
    elif not last.isalpha():
        return frozenset({surface})
    return frozenset(forms)


def hyphen_parts(surface: str) -> tuple[str, ...]:
    """The parts of a hyphenated token whose hyphens may be spaces ("state-of-the-art" ->
    state, of, the, art), or () when it has an empty or non-alphanumeric part."""
    parts = tuple(surface.split("-"))
    if len(parts) < 2 or not all(part.isalnum() for part in parts):
        return ()
    return parts


def two_word_splits(word: str) -> tuple[tuple[str, str], ...]:
    """The ways an alphabetic word is two words written together ("realtime" -> real + time,
    "database" -> data + base): both parts words the dictionary knows, of two letters or
    more and not stopwords ("therapist" is not "the rapist", "together" not "to get her")."""
    import lemminflect  # on first use: its dictionaries load numpy

    if len(word) < 5 or not word.isalpha():
        return ()
    return tuple(
        (word[:cut], word[cut:])
        for cut in range(2, len(word) - 1)
        if word[:cut] not in STOPWORDS
        and word[cut:] not in STOPWORDS
        and lemminflect.getAllLemmas(word[:cut])
        and lemminflect.getAllLemmas(word[cut:])
    )


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
        words = tuple(_term_forms(word) for word in line.split())
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


# --- verbs ----------------------------------------------------------------------------------


def _is_verb(candidate: str) -> bool:
    import lemminflect

    verbs = lemminflect.getAllLemmas(candidate).get("VERB")
    return bool(verbs) and candidate in verbs


def derived_verbs(noun: str) -> tuple[str, ...]:
    """The verbs a noun's suffix derives it from ("migration" -> migrate, "management" ->
    manage, "tokenization" -> tokenize): a verb lemminflect knows, or one ending in
    -ize/-ise/-ify/-ate. Every suffix and ending that fits is tried."""
    verbs: list[str] = []
    for suffix, endings in _NOMINAL_SUFFIXES:
        if noun.endswith(suffix) and len(noun) - len(suffix) >= 2:
            stem = noun[: -len(suffix)]
            for ending in endings:
                verb = stem + ending
                if verb not in verbs and (_is_verb(verb) or verb.endswith(_VERB_FORMING)):
                    verbs.append(verb)
    return tuple(verbs)


def _is_derived_from_verb(noun: str) -> bool:
    return bool(derived_verbs(noun))
