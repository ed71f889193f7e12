"""Keyword coverage's words: a text cut into analysed words (`_Word`, cached per word and per
token) with phrase breaks, as `core/scorers/keyword_coverage.py`'s docstring describes: markup,
quotes and punctuation dropped, numbers, URLs, dotted, dunder and hyphenated tokens kept whole,
each word's forms and its roles in the compound rules computed once."""

from __future__ import annotations

import re
from typing import Any

from core.scorers._keyword_lexicon import (
    _AUXILIARIES,
    _DOTTED_STOPWORDS,
    _OBJECT_CUES,
    _VERB_CUES,
    STOPWORDS,
    _alpha_forms,
    _forms,
    _is_derived_from_verb,
    _singular,
    _Term,
    _term_second_forms,
    _terms_starting_with,
    _whole_term,
    derived_verbs,
    hyphen_parts,
)

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

# The forms of "be" (and "get") before a passive participle: "the frameworks were tested".
_BE = frozenset(
    {"is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "gotten",
     "getting", "isn't", "aren't", "wasn't", "weren't"}
)  # fmt: skip
# A dunder name ("__init__", "__init__.py"), kept whole like a dotted name.
_DUNDER_RE = re.compile(r"__[^\W_]\w*__(?:\.\w+)*")
_NOUN_MODIFIER_EXCLUDED_ENDINGS = ("ing", "ed", "ly")
_ING, _NOMINAL = 2, 1  # head kinds
# Entries per cache (a distinct word costs about 1 kB across the three): a cache that grows
# past this is emptied, and the words in use come back at once.
_CACHE_LIMIT = 50_000

# --- words ----------------------------------------------------------------------------------


class _Word:
    """One word of a text, analysed once: its surface, forms and roles in the compound rules.

    `role`: 0 = nothing to do (a stopword that starts no term), 1 = a plain keyword,
    2 = needs a look at its neighbours (starts a curated term, may modify a compound head, or
    is a number that a "percent" may follow), 3 = a plain keyword whose pool adds more than
    its forms (a hyphenated word's parts): the text's loop tells them apart by one number.
    """

    __slots__ = (
        "acts",
        "alpha",
        "aux",
        "be",
        "forms",
        "head",
        "head_verbs",
        "is_keyword",
        "joins",
        "modifier",
        "noun_like",
        "noun_only",
        "number",
        "object_cue",
        "participle",
        "parts",
        "percent",
        "plural",
        "pool",
        "role",
        "size",
        "splits",
        "surface",
        "term_seconds",
        "terms",
        "verb_cue",
        "verbish",
        "verbs",
    )

    def __init__(self, surface: str, forms: frozenset[str], is_keyword: bool) -> None:
        self.surface = surface
        self.forms = forms
        self.size = len(forms)  # (read once per keyword of every text: kept, not recounted)
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
        # Verb phrases: the verbs this word is a form of ("tested" -> test), the verbs it
        # names as a compound head ("migration" -> migrate), whether it is a verb's
        # participle that can follow "were" ("tested", "built"), whether a form of "be".
        self.verbs: frozenset[str] = frozenset()
        self.head_verbs: frozenset[str] = frozenset()
        self.participle = False
        self.be = surface in _BE
        # A rule compound's verb phrases ("tune:hyperparameter"; see _keyword_compounds).
        self.acts: frozenset[str] = frozenset()
        # A hyphenated keyword's parts, its hyphens read as spaces ("well", "known").
        self.parts: tuple[str, ...] = ()
        # A keyword of letters (a word, a hyphenated word or a span of words), which a
        # spelling variant may cover; its two-word splits, found when first needed.
        self.alpha = False
        self.splits: tuple[tuple[str, str], ...] | None = None

    def settle(self) -> _Word:
        if self.terms:
            self.term_seconds = frozenset().union(*(term.words[1] for term in self.terms))
        if self.terms or self.modifier or self.number:
            self.role = 2
        elif self.role == 1 and self.pool is not self.forms:
            self.role = 3
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
    word.alpha = True
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
    _verb_roles(word, readings)
    return word.settle()


def _verb_roles(word: _Word, readings: dict[str, tuple[str, ...]]) -> None:
    """Set the verbs a word is a form of or names, and whether it is a participle."""
    import lemminflect  # on first use: its dictionaries load numpy

    surface = word.surface
    if readings:
        lemmas = readings.get("VERB", ())
        word.verbs = frozenset(lemmas)
        word.participle = any(
            surface in lemminflect.getInflection(lemma, "VBN") for lemma in lemmas
        )
    else:  # unknown to the dictionary: its forms may be a verb's ("tokenized" -> tokenize)
        word.verbs = word.forms
        word.participle = surface.endswith("ed")
    if word.head == _ING:
        word.head_verbs = word.verbs - {surface}
    elif word.head == _NOMINAL:
        nouns = readings.get("NOUN", ()) if readings else (_singular(surface),)
        word.head_verbs = frozenset(verb for noun in nouns for verb in derived_verbs(noun))


def _hyphenated_word(surface: str) -> _Word:
    parts = surface.split("-")
    part_forms = [_forms(part) for part in parts]
    key = _whole_term(part_forms) if all(part.isalpha() for part in parts) else None
    if key is None:
        word = _Word(surface, _forms(surface), True)
        word.parts = hyphen_parts(surface)
        word.alpha = bool(word.parts)
        # Its parts cover the reference's single keywords, as a compound's words do.
        word.pool = word.forms.union(
            *(forms for part, forms in zip(parts, part_forms, strict=True) if part not in STOPWORDS)
        )
        return word
    word = _Word(surface, frozenset({key}), True)  # "machine-learning" is the listed term
    word.alpha = True
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
    if "__" in piece:
        dunder = _DUNDER_RE.search(piece)
        if dunder is not None and not piece[: dunder.start()].strip("*~`'"):
            return piece[dunder.start() : dunder.end()]  # "`__init__`" -> "__init__"
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
    if "\u2019" in text:  # (a test, cheaper than the copy that replace makes)
        text = text.replace("\u2019", "'")
    items: list[_Word | None] = []
    extend = items.extend
    cached = _TOKENS.get
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        first = tokens[0]
        if first[-1] in ".)" and _is_list_marker(first):
            del tokens[0]
        for token in tokens:
            # (A token without words caches the empty tuple, rebuilt each time: correct,
            # and rare enough that the plain `or` beats a test against None for every token.)
            extend(cached(token) or _new_token(token))
        items.append(None)
    return items


def _new_token(token: str) -> tuple[_Word | None, ...]:
    found = (_word(token),) if token.isalpha() else _token_items(token)
    _remember(_TOKENS, token, found)
    return found
