"""Hypothesis strategies for arbitrary findings and reports."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from desched.linter.finding import SEVERITIES, Finding
from desched.linter.formatters import Report

from .cases import BASE_DIR, RULES

# Settings for every property test here: no example database written into the tree, and no failure when a busy
# machine (the whole suite, other jobs) makes generation or a run slow.
FUZZ = settings(database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Lone surrogates come from undecodable file names (surrogateescape), which only makes U+DC80..U+DCFF; they are
# drawn on purpose, and only from that range: a high surrogate followed by a low one cannot survive any JSON round
# trip (the decoder joins the two escapes into one character). Plain st.characters() draws any surrogate now and
# then, hence the codec.
SURROGATES = st.integers(0xDC80, 0xDCFF).map(chr)
CHARS = st.characters(codec="utf-8")
CHARS_AND_SURROGATES = st.one_of(CHARS, SURROGATES)
# Strings likely to break formats: separators, escapes, line breaks, markup.
TRICKY = st.sampled_from(
    ["%", "%25", "%0A", ",", ":", "::", "=", "\n", "\r", "\r\n", "\t", '"', "<", "&", "]]>", "\x00"]
)


def texts(surrogates: bool = False, min_size: int = 0) -> st.SearchStrategy[str]:
    alphabet = CHARS_AND_SURROGATES if surrogates else CHARS
    pieces = st.lists(st.one_of(st.text(alphabet, max_size=12), TRICKY), max_size=6)
    return pieces.map("".join).filter(lambda text: len(text) >= min_size)


def findings(surrogates: bool = False) -> st.SearchStrategy[Finding]:
    return st.builds(
        Finding,
        rule=st.one_of(st.sampled_from(sorted(RULES)), st.integers(0, 999).map("DS{:03d}".format)),
        severity=st.sampled_from(SEVERITIES),
        file=st.one_of(st.just("-"), texts(surrogates, min_size=1)),
        line=st.integers(1, 10**6),
        column=st.integers(1, 10**4),
        message=texts(surrogates),
        object=texts(surrogates),
        path=texts(surrogates),
        suppressed=st.one_of(st.none(), texts(surrogates)),
    )


def reports(surrogates: bool = False) -> st.SearchStrategy[Report]:
    return st.builds(
        lambda found, files: Report(
            findings=sorted(found, key=Finding.sort_key), files=files, rules=dict(RULES), base_dir=BASE_DIR
        ),
        st.lists(findings(surrogates), max_size=4),
        st.integers(0, 50),
    )
