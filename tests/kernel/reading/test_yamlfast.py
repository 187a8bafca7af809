"""The fast path of YAML loading: whatever it accepts, it composes exactly as libyaml's path (load_all) does."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from desched.reading import yamlsrc
from desched.reading._yamlfast import compose_simple
from desched.reading.yamlsrc import MAX_DEPTH, NodeBudget, YamlError, load_all
from tests.trees import tree_difference

ROOT = Path(__file__).resolve().parents[3]


def libyaml(text: str, budget: NodeBudget | None = None) -> list[Any]:
    """load_all(text) through libyaml's events, the fast scanner turned off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlsrc, "compose_simple", lambda text, budget=None: None)
        return load_all(text, budget=budget)


def check(text: str) -> list[Any] | None:
    """compose_simple(text), after checking that whatever it returns is what libyaml's path of load_all returns,
    having spent as many nodes."""
    fast_budget, slow_budget = NodeBudget(), NodeBudget()
    fast = compose_simple(text, fast_budget)
    if fast is not None:
        try:
            slow = libyaml(text, slow_budget)
        except YamlError as exc:  # pragma: no cover - only on a bug
            pytest.fail(f"the fast path accepted {text!r}, which libyaml refuses: {exc.message}")
        difference = tree_difference(fast, slow)
        assert difference is None, f"{text!r}: {difference}"
        assert fast_budget.left == slow_budget.left, f"{text!r}: nodes counted differ"
    return fast


ACCEPTED = [
    "",
    "\n",
    "# only a comment\n",
    "---\n",
    "---\n# c\n---",
    "--- # c\na: 1\n",
    "a: 1\n---\n- 2\n---\n",
    "a: 1\n---",
    "a:\nb: 1",
    "a:",
    "a:   ",
    "a:  # c\nb: 1",
    "a:\n  b:\nc:",
    "a:\n- x\n- y\nb:",
    "a:\n  - x\n  -\n  - y\n  -",
    "- a: 1\n  b:\n-   c: 2",
    "- - x\n  - y\n- z",
    "- - - x\n    -\n  - y\n-",
    "-\n a: 1",
    "-\n- x",
    "- a:\n  - x\n  b: 1",
    "- a:\n- x",
    "a:\n    b: 1\n    c:\n     - x",
    "  a: 1\n  b: 2",
    "a: 1\na: 2\nb:\n  c: 1\n  c: 2\n",
    "a: {x: 1, x: 2}\na: [1]",
    "1: a\ntrue: b\n~: c\n0x1f: d\n1e3: e\n.inf: f\n'1': g\n1.0: h\nnull: i\nNo: j",
    "a: yes\nb: ~\nc: 0x1f\nd: 1e3\ne: .inf\nf: -.Inf\ng: .nan\nh: null\ni: -1\nj: 017\nk: 1_000",
    "a: \"x\"\nb: 'y'\nc: 'it''s'\nd: \"\"\ne: ''\n\"f\": 1\n'g': 2\n'h''i': 3",
    "a: \"x\" #c\nb: x#y\nc: x #y\nd: 'a #b'",
    'a: x "#y"\nb: x:y\nc: http://x/y?z=1\nd: b]c\ne: b,c{d}\nf: a!b&c*d|e>f',
    'a: [x, y ,  z]\nb: {c: 1,  d: "x"}\nc: []\nd: {}\ne: [ ]\nf: { }',
    "a: [x,y,]\nb: {a: 1,}\nc: [-1, -x]\nd: [a b, c  d ]\ne: [nginx:1.2, 'x''y', \"z\"]",
    "a: {url: http://x, 'k': \"v\", \"q\": 'r'}",
    "a: [[x], {y: z}, [], {}]\nb: {c: [1, 2], d: {e: f}}",
    "- [a, b]\n- {c: d}\n- \"e\"\n- 'f'\n- g # h",
    "a: 1   \nb: x  \nc:\n- - -",
    "-a: 1\n--b: 2",
    "- ---\n- ...",
    "a: é # ç\n😀b: [x, 'ü', y]\nc: {d: 😀}",
    "a: 1:30\nb: 2024-01-01\nc: =\nd: <<\ne: 0o17\nf: +1\ng: 1.\nh: OFF\ni: ---\nj: ...",
    "a:: b\nc: b:c\nx: {a: b:c, a:b: c}\ny: [a:b, 'c']",
    "- -1\n- --\n- -x: 1",
    "a:\n  - - x\n    - y\n  - z",
    "- - a: 1\n    b: 2\n  - c",
    "a:  x\n\"a b\":  'c d'  # x\nb: 'x'''\nc: ''''",
    "a:\n-\n-\n",
    "a:\n\n  b: 1",
    "a: [x]\n---\n- 1\n---\n",
    "# c\n---\na: 1",
    "a: {1: a, ~: b, true: c, '1': d}\nb: [yes, ~, 0x1f, .nan, \"\"]",
    "a: {a: [b, c], d: {e: f}}  #x\nb: [ a ,b,  ]\nc: {  a:  1 ,b: 2,}",
    "a: " + "b" * 5000,
    "- " + "b" * 5000,
    "a" * 999 + ": 1",
    "k:\n  # a comment inside\n\n    # another\n  v: 1\n# last",
    "a:\n  b:\n    c:\n      d: 1\n  e: 2\nf: 3",
]


@pytest.mark.parametrize("text", ACCEPTED, ids=lambda text: repr(text[:40]))
def test_accepted_texts_compose_as_libyaml_does(text):
    assert check(text) is not None, f"{text!r} should be within the subset"


REFUSED = [
    "a:\tb",  # tab
    "a: b\r\n",  # carriage return
    "\ufeffa: 1",  # byte order mark
    "a: b\x85c",  # NEL is a line break to libyaml
    "a: \u00a0",  # no-break space
    "a: &x 1\nb: *x",  # anchor, alias
    "a: &",
    "a: !!str 1",  # tag
    "%YAML 1.1\n---\na: 1",  # directive
    "a: 1\n...\n",  # document end
    "a: |\n  x\n",  # block scalar
    "a: >-\n  x\n",
    "a: x\n  y\n",  # multi-line plain scalar
    'a: "x\n  y"\n',  # multi-line quoted scalar
    'a: "x\\ty"',  # escape
    "a: [x,\n  y]\n",  # multi-line flow
    "? a\n: b\n",  # complex key
    "<<: {a: 1}\n",  # merge key
    "a: {<<: {b: 1}}\n",
    "a: b: c",
    "a: - b",
    "a: -",
    "a : b",  # space before the colon
    "a:b",  # a document that is a scalar
    "x\n",
    "[a, b]\n",
    "--- a: 1",
    "--- x",
    "---x: 1",
    "a: 1\n  b: 2",  # odd indentation
    "a:\n    b: 1\n  c: 2",
    "a:\n  - x\n  b: 1",
    "- a: 1\n  - b",
    "- a: 1\n - b",
    "a: 1\nb",
    "a:\n  b",  # a scalar on the next line
    "a: [a: 1]",  # single-pair mapping in a sequence
    "a: {a:1}",
    "a: {a: }",
    "a: [,]",
    "a: [a, , b]",
    "a: [a] b",
    'a: "x"#c',
    "a: 'x' y",
    "a" * 1030 + ": 1",  # libyaml stops looking for the colon of a key after 1024 characters
    "a: {" + "k" * 1030 + ": 1}",
]


@pytest.mark.parametrize("text", REFUSED, ids=lambda text: repr(text[:40]))
def test_texts_outside_the_subset_are_refused(text):
    assert compose_simple(text) is None


def test_without_atomic_groups_the_scanner_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.10's re has no atomic groups: the scanner then builds its key pattern without one."""
    import importlib
    import re

    import desched.reading._yamlfast as module

    compile_pattern = re.compile

    def without_atomic_groups(pattern: Any, flags: int = 0) -> re.Pattern[str]:
        if isinstance(pattern, str) and "(?>" in pattern:
            raise re.error("unknown extension ?>")
        return compile_pattern(pattern, flags)

    texts = [*ACCEPTED, *REFUSED, (ROOT / "deploy/executor/base/policy.yaml").read_text()]
    try:
        monkeypatch.setattr(module.re, "compile", without_atomic_groups)
        importlib.reload(module)
        monkeypatch.undo()
        assert "(?>" not in module._LINE.pattern
        fallback = [module.compose_simple(text) for text in texts]
    finally:
        monkeypatch.undo()
        importlib.reload(module)
    assert "(?>" in module._LINE.pattern
    for text, answer in zip(texts, fallback, strict=True):
        expected = compose_simple(text)
        assert (answer is None) == (expected is None), text
        if answer is not None:
            assert tree_difference(answer, expected) is None, text


def _levels(line: str, count: int) -> str:
    return "".join(" " * level + line + "\n" for level in range(count))


@pytest.mark.parametrize(
    "text",
    [
        _levels("k:", MAX_DEPTH - 1) + " " * (MAX_DEPTH - 1) + "k: v\n",  # MAX_DEPTH mappings
        _levels("k:", MAX_DEPTH - 2) + " " * (MAX_DEPTH - 2) + "x: [1]\n",  # and the last one a flow sequence
        _levels("-", MAX_DEPTH - 2) + " " * (MAX_DEPTH - 2) + "- x: 1\n",  # sequences, then a mapping
    ],
    ids=["maps", "maps-and-flow", "sequences-and-map"],
)
def test_the_depth_limit_is_libyamls(text):
    assert check(text) is not None
    deeper = " " + text.replace("\n", "\n ").rstrip(" ")  # one more level below a new root key
    deeper = "r:\n" + deeper
    assert compose_simple(deeper) is None
    with pytest.raises(YamlError, match="nesting deeper"):
        load_all(deeper)


def test_policy_is_accepted_and_matches():
    docs = check((ROOT / "deploy/executor/base/policy.yaml").read_text())
    assert docs is not None and docs[0]["kind"] == "DeschedulerPolicy"


def _yaml_files() -> list[Path]:
    found = []
    for top in ("examples", "deploy", "tests"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".yaml", ".yml") and path.is_file():
                found.append(path)
    return found


def test_repository_yaml_files_compose_as_libyaml_does():
    accepted = {}
    for path in _yaml_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        accepted[path.relative_to(ROOT).as_posix()] = check(text) is not None
    examples = [name for name in accepted if name.startswith("examples/")]
    assert accepted["deploy/executor/base/policy.yaml"]
    assert sum(accepted[name] for name in examples) >= 5  # all but the two ConfigMaps, which hold block scalars
    assert sum(accepted.values()) >= 0.75 * len(accepted)


def test_the_comparison_catches_differences():
    text = "a: [x, {b: 1}]\nc:\n- d\n"
    fast = compose_simple(text)
    assert fast is not None
    assert tree_difference(fast, libyaml(text)) is None
    mutations = [
        lambda doc: doc.value_pos.update(c=(3, 2)),
        lambda doc: doc["a"].item_pos.__setitem__(0, (1, 6)),
        lambda doc: setattr(doc["a"][1], "column", 9),
        lambda doc: doc["a"][1].key_pos.update(b=(1, 1)),
        lambda doc: doc["a"][1].update(b=True),
        lambda doc: doc["a"][1].update(b=1.0),
        lambda doc: doc["c"].styles.__setitem__(0, "'"),
        lambda doc: doc.duplicates.append(("a", (1, 1))),
        lambda doc: setattr(doc, "nested_duplicates", 1),
    ]
    for mutate in mutations:
        broken = copy.deepcopy(fast)
        mutate(broken[0])
        assert tree_difference(broken, libyaml(text)) is not None


# Random texts from a grammar of lines, valid and not: whenever the fast path answers, libyaml agrees.
# fmt: off
_GOOD_KEYS = ["a", "b", "name", "1", "true", "~", "null", "0x1f", "1e3", ".inf", '"q"', "'s'", "'a''b'", "-k", "a b",
              "a:b", "a#b", "é", '"<<"']
_BAD_KEYS = ["<<", "k ", "?", "? k", "&x", "*x", "!t", "[a]", "{a}", "---", "...", '"a\\"b"', "'", "-", "a" * 1030]
_GOOD_SCALARS = ["x", "yes", "~", "0x1f", "1e3", ".inf", "-.Inf", ".nan", "null", "Null", '"x"', "'y'", "'it''s'", "-1",
                 ":x", "x #c", "x#c", "nginx:1.2", "http://x", "a b", "1:30", "2024-01-01", "=", "<<", "x,y", "x]",
                 "é", "017", "0o17", "1_000", "0b11", "+1", "1.", "Yes", "OFF", "'\"'", "a  b", "---", "..."]
_BAD_SCALARS = ["a: b", "- ", "-", ":", "x:", "&a x", "*a", "!!str x", "|", ">", "'", '"', "'a", '"x"y', "@x", "`x",
                "%x", "x\ty", "x\ry", '"x\\ny"', "\ufeffx", "x\u2028y"]
_GOOD_FLOWS = ["[]", "{}", "[ ]", "{ }", "[a, b]", "[a,b,]", "[ a , b ]", "{a: 1, b: 2}", "{a: 1,}", "[a, [b, {c: d}]]",
               "{a: [1, 2], b: {c: d}}", "[\"x\", 'y''z']", "{\"k\": 'v', 'k2': \"v2\"}", "{url: http://x}",
               "[nginx:1.2]", "[-1, -x]", "{a: 1, a: 2}", "[x] #c", "[[[]]]", "[{a: [{b: c}]}]", "[a b]",
               "[x, 'a #b', \"c, d\"]", "{a: 'x: y'}", "{1: a, ~: b, true: c}", "[yes, ~, 0x1f, .nan, \"\"]"]
_BAD_FLOWS = ["{a:1}", "{a: }", "[a: 1]", "[,]", "[a, , b]", "[a:]", "[-]", "[x] y", "[x]#c", "{<<: {a: 1}}", "[a",
              "{a: 1", "[?x]", "[&a x]", "[!t x]", "[a]]"]
_PREFIXES = ["", "", "", "- ", "- ", "-", "-  ", "- - ", "--", "? ", ": "]
_SEPARATORS = [":", ": ", ": ", ":  ", " :", ":\t", ": "]
_SPECIAL = ["---", "--- # c", "...", "", "", "# comment", "   ", "  # indented comment", "%YAML 1.1", "--- x",
            "--- [a]", "-", "- ", ":", "? a", "---x: 1", "\ufeff", "\t"]
# fmt: on

_indent = st.sampled_from([0, 0, 0, 1, 2, 2, 2, 3, 4, 4, 6, 8]).map(" ".__mul__)
_good_value = st.sampled_from(_GOOD_SCALARS) | st.sampled_from(_GOOD_FLOWS)
_value = _good_value | st.sampled_from(_BAD_SCALARS) | st.sampled_from(_BAD_FLOWS)
_key = st.sampled_from(_GOOD_KEYS) | st.sampled_from(_BAD_KEYS)
_trailing = st.sampled_from(["", "", "", " ", "  ", " # c", "#c", " #"])
_line = st.one_of(
    st.sampled_from(_SPECIAL),
    st.tuples(_indent, st.sampled_from(_PREFIXES), _key, st.sampled_from(_SEPARATORS), _value | st.just(""),
              _trailing).map("".join),
    st.tuples(_indent, st.sampled_from(_PREFIXES), _value, _trailing).map("".join),
)  # fmt: skip
_texts = st.tuples(st.lists(_line, max_size=12), st.sampled_from(["", "\n", "\n\n"])).map(
    lambda parts: "\n".join(parts[0]) + parts[1]
)


def _collection(draw: Any, depth: int, indent: int) -> list[str]:
    """Lines of a valid block collection at ``indent``, in random but regular styles."""
    lines: list[str] = []
    pad = " " * indent
    if draw(st.booleans()):  # a sequence
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["scalar", "empty", "map", "nested"] if depth < 4 else ["scalar"]))
            if kind == "scalar":
                lines.append(f"{pad}- {draw(_good_value)}{draw(_trailing)}")
            elif kind == "empty":
                lines.append(f"{pad}-{draw(_trailing)}")
            elif kind == "map":
                lines.append(f"{pad}- {draw(st.sampled_from(_GOOD_KEYS))}: {draw(_good_value)}")
                lines.extend(_mapping(draw, depth + 1, indent + 2) if draw(st.booleans()) else [])
            else:
                lines.append(f"{pad}-")
                lines.extend(_collection(draw, depth + 1, indent + draw(st.sampled_from([1, 2, 4]))))
        return lines
    return _mapping(draw, depth, indent)


def _mapping(draw: Any, depth: int, indent: int) -> list[str]:
    """Lines of a valid block mapping at ``indent``."""
    lines: list[str] = []
    pad = " " * indent
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(_GOOD_KEYS))
        kind = draw(st.sampled_from(["scalar", "scalar", "empty", "nested", "indentless"] if depth < 4 else ["scalar"]))
        if kind == "scalar":
            lines.append(f"{pad}{key}: {draw(_good_value)}{draw(_trailing)}")
        elif kind == "empty":
            lines.append(f"{pad}{key}:{draw(_trailing)}")
        elif kind == "nested":
            lines.append(f"{pad}{key}:{draw(_trailing)}")
            lines.extend(_collection(draw, depth + 1, indent + draw(st.sampled_from([1, 2, 4]))))
        else:
            lines.append(f"{pad}{key}:")
            for _ in range(draw(st.integers(1, 2))):
                lines.append(f"{pad}- {draw(_good_value)}")
    return lines


@st.composite
def _near_valid(draw: Any) -> str:
    """Valid documents, then perhaps one line changed: re-indented, cut, swapped for a random line or one added."""
    lines = _collection(draw, 0, draw(st.sampled_from([0, 0, 2])))
    if draw(st.integers(0, 3)) == 0:
        lines += [draw(st.sampled_from(["---", "--- # c"])), *_collection(draw, 0, 0)]
    if draw(st.booleans()):
        index = draw(st.integers(0, len(lines) - 1))
        change = draw(st.sampled_from(["indent", "cut", "swap", "insert"]))
        if change == "indent":
            lines[index] = " " * draw(st.integers(0, 3)) + lines[index].lstrip(" ")
        elif change == "cut":
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))]
        elif change == "swap":
            lines[index] = draw(_line)
        else:
            lines.insert(index, draw(_line))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_texts, _near_valid()))
def test_random_texts_compose_as_libyaml_does_or_are_refused(text):
    # About 30% are accepted (most near-valid texts, a few line soups): see --hypothesis-show-statistics.
    event("accepted" if check(text) is not None else "refused")
