"""Go template semantics desched relies on (desched.chart.gotemplate): truth, printing, and ``tpl`` over the
strings of a policy, each case as Helm's engine renders it (checked with Helm 4's engine when written)."""

from __future__ import annotations

import pytest

from desched.chart.gotemplate import UNKNOWN, go_text, holds_action, tpl, tpl_strings, truthy
from desched.reading.yamlsrc import load_all

DATA = {
    "Release": {"Name": "desched", "Namespace": "ops", "Service": "Helm"},
    "Chart": {"Name": "descheduler", "Version": "0.36.0", "AppVersion": "0.36.0"},
    "Values": {"kind": "CronJob", "replicas": 3.0, "image": {"tag": ""}, "none": None, "map": {"a": 1}},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{ .Release.Namespace }}", "ops"),
        ("ns={{ .Release.Namespace }}-{{ .Release.Name }}", "ns=ops-desched"),
        ("{{ $.Chart.Version }}", "0.36.0"),
        ("{{ .Values.replicas }}", "3"),  # a YAML number is a float64 to Helm, printed as Go prints it
        ("{{ .Values.image.tag }}x", "x"),
        ("{{ .Values.none }}", ""),  # <no value>, which Helm prints as nothing
        ("{{ .Values.absent }}", ""),
        ("a {{- .Release.Name -}} b", "adeschedb"),  # trim markers eat the spaces around
        ("{{/* a comment */}}kept", "kept"),
        ("no action", "no action"),
        ("{{ .Values.absent.deeper }}", UNKNOWN),  # a field of nil: Helm fails the render
        ("{{ .Values.map }}", UNKNOWN),  # Go prints a map its own way
        ("{{ .Release.Revision }}", UNKNOWN),  # a field desched does not know
        ('{{ include "descheduler.fullname" . }}', UNKNOWN),
        ('{{ .Values.kind | default "x" }}', UNKNOWN),
        ("{{ .Release.Name", UNKNOWN),  # an action left open
    ],
)
def test_tpl(text: str, expected: object):
    assert tpl(text, DATA) is expected if expected is UNKNOWN else tpl(text, DATA) == expected


def test_tpl_strings_renders_a_copy_and_names_what_it_cannot():
    (tree,) = load_all("a:\n  b: '{{ .Release.Namespace }}'\n  c: ['{{ .Release.Revision }}', plain]\nd: 1\n")
    rendered, unknown = tpl_strings(tree, DATA)
    assert rendered == {"a": {"b": "ops", "c": ["{{ .Release.Revision }}", "plain"]}, "d": 1}
    assert unknown == [("a", "c", 0)]
    assert tree["a"]["b"] == "{{ .Release.Namespace }}"  # the tree as written is not changed
    assert rendered["a"].key_pos == tree["a"].key_pos  # positions are kept
    assert rendered["a"]["c"] is tree["a"]["c"]  # what no string changed in is shared


@pytest.mark.parametrize(
    ("value", "expected"), [(None, False), (False, False), (0, False), ("", False), ({}, False), ([], False),
                            ("0", True), ({"a": 1}, True), (0.5, True)]
)  # fmt: skip
def test_truthy(value: object, expected: bool):
    assert truthy(value) is expected


@pytest.mark.parametrize(("value", "expected"), [(None, ""), (True, "true"), (3.0, "3"), (2.5, "2.5"), ("s", "s")])
def test_go_text(value: object, expected: str):
    assert go_text(value) == expected


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ({"a": [{"b": "plain"}], "c": 3}, False),
        ({"a": [{"b": "{{ .Release.Namespace }}"}]}, True),
        (["x", {"y": ["{{ .Values.z }}"]}], True),
        ("{{", True),
        (None, False),
    ],
)
def test_holds_action_finds_a_template_action_anywhere(tree: object, expected: bool) -> None:
    assert holds_action(tree) is expected
