"""``migrate_text``: what it must never change, idempotence, refusals and where positions point."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.migrate.rewrite import COMMENT_PREFIX, migrate_text
from desched.reading.yamlsrc import load_all

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).parent / "golden"

POLICY = """\
apiVersion: descheduler/v1alpha1
kind: DeschedulerPolicy
strategies:
  RemoveDuplicates:
    enabled: true
"""


def _yaml_files(*folders: Path) -> list[Path]:
    found = (path for folder in folders for path in folder.rglob("*") if path.suffix in (".yaml", ".yml"))
    return sorted(path for path in found if b"descheduler/v1alpha1" not in path.read_bytes())


@pytest.mark.parametrize(
    "path",
    [*_yaml_files(ROOT / "examples"), *sorted(GOLDEN.glob("*.out.*"))],
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_files_without_v1alpha1_come_back_byte_for_byte(path):
    text = path.read_bytes().decode("utf-8-sig")
    result = migrate_text(str(path), text)
    assert not result.changed
    assert result.text is text or result.text == text


@pytest.mark.parametrize(
    "text",
    [
        "a:   1\r\nb: [ x ,y ]\r\n# no policy here\r\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []",  # no final newline
        "---\n...\n---\n",
        "",
        "# only a comment\n",
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  policy.yaml: |\n    apiVersion: descheduler/v1alpha2\n"
        "    kind: DeschedulerPolicy\n",
        "deschedulerPolicy:\n  profiles: []\n",  # Helm values, already v1alpha2 (the chart default)
        "strategies: {RemoveDuplicates: {enabled: true}}\n",  # no apiVersion: upstream cannot read it either
        "kind: ConfigMap\ndata:\n{{- toYaml .Values.data | nindent 2 }}\n",  # a Helm template is not YAML
    ],
)
def test_no_v1alpha1_means_no_change(text):
    result = migrate_text("x.yaml", text)
    assert (result.text, result.changed, result.errors) == (text, False, [])


def test_migrating_twice_changes_nothing_more():
    once = migrate_text("p.yaml", POLICY).text
    twice = migrate_text("p.yaml", once)
    assert once != POLICY and twice.text == once and not twice.changed


def test_crlf_no_final_newline_and_other_documents_are_kept():
    other = "---\r\nkind:  Service   # odd spacing\r\nspec: {ports: [ {port: 80} ]}"
    text = POLICY.replace("\n", "\r\n") + other
    result = migrate_text("p.yaml", text)
    assert result.changed
    assert result.text.endswith(other)
    assert "\n" not in result.text.replace("\r\n", "")


def test_comment_carried_to_the_profile_and_weight_note_written():
    text = POLICY.replace("  RemoveDuplicates:\n", "  # spread replicas\n  RemoveDuplicates:  # on every node\n")
    text += "    weight: 7\n"
    result = migrate_text("p.yaml", text)
    lines = result.text.splitlines()
    profile = next(i for i, line in enumerate(lines) if "- name: strategy-RemoveDuplicates-profile" in line)
    assert lines[profile - 3 : profile] == [
        "  # spread replicas",
        "  # on every node",
        f"  {COMMENT_PREFIX}strategies.RemoveDuplicates.weight (7) was dropped: the descheduler never used it",
    ]
    [(written, first), (note, line)] = result.notes
    assert written.kind == "info" and first == 1
    assert note.kind == "dropped" and line == 7


@pytest.mark.parametrize(
    ("body", "message", "position"),
    [
        ("  Bogus:\n    enabled: false\n", "unknown strategy name: Bogus", (6, 3)),
        (
            "  PodLifeTime:\n    enabled: true\n    params:\n      thresholdPriority: 1\n"
            "      thresholdPriorityClassName: low\n      podLifeTime: {maxPodLifeTimeSeconds: 60}\n",
            "priority threshold misconfigured for plugin PodLifeTime",
            (8, 5),
        ),
        (
            "  LowNodeUtilization:\n    enabled: true\n    params:\n      namespaces: {include: [a]}\n"
            "      nodeResourceUtilizationThresholds: {thresholds: {cpu: 10}, targetThresholds: {cpu: 50}}\n",
            "only Exclude namespaces can be set",
            None,
        ),
    ],
)
def test_what_upstream_refuses_is_an_error_and_no_change(body, message, position):
    text = POLICY + body
    result = migrate_text("p.yaml", text)
    assert result.text == text and not result.changed and not result.notes
    [error] = result.errors
    assert message in error.message
    if position is not None:
        assert (error.line, error.column) == position


def test_every_refusal_in_a_file_is_reported():
    bad = POLICY + "  Bogus:\n    enabled: true\n"
    result = migrate_text("p.yaml", bad + "---\n" + bad.replace("Bogus", "Other"))
    assert [(error.line, error.message) for error in result.errors] == [
        (6, "unknown strategy name: Bogus"),
        (14, "unknown strategy name: Other"),
    ]


def test_invalid_yaml_is_an_error_with_its_position():
    result = migrate_text("p.yaml", "apiVersion: descheduler/v1alpha1\nstrategies: [\n")
    [error] = result.errors
    assert error.message.startswith("invalid YAML") and error.line == 3


def test_configmap_error_points_into_the_block_scalar():
    inner = "".join("    " + line + "\n" for line in (POLICY + "  Bogus:\n    enabled: true\n").splitlines())
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata:\n  policy.yaml: |\n" + inner
    [error] = migrate_text("cm.yaml", text).errors
    assert "unknown strategy name: Bogus" in error.message and "policy.yaml" in error.message
    assert (error.line, error.column) == (11, 7)


def test_configmap_quoted_value_keeps_its_style():
    value = POLICY.replace("\n", "\\n")
    text = f'apiVersion: v1\nkind: ConfigMap\ndata:\n  policy.yaml: "{value}"  # from kubectl\n'
    result = migrate_text("cm.yaml", text)
    assert result.changed
    line = result.text.splitlines()[3]
    assert line.startswith('  policy.yaml: "apiVersion: descheduler/v1alpha2\\n') and line.endswith('"  # from kubectl')
    [doc] = load_all(result.text)
    assert "strategy-RemoveDuplicates-profile" in doc["data"]["policy.yaml"]


def test_configmap_block_keeps_header_and_indentation():
    inner = "".join("      " + line + "\n" for line in POLICY.splitlines())
    text = "kind: ConfigMap\ndata:\n  policy.yaml: |-\n" + inner.rstrip("\n") + "\n  other: 1\n"
    result = migrate_text("cm.yaml", text)
    lines = result.text.splitlines()
    assert lines[2] == "  policy.yaml: |-"
    block = lines[3 : lines.index("  other: 1")]
    assert all(line.startswith("      ") for line in block)
    [doc] = load_all(result.text)
    assert not doc["data"]["policy.yaml"].endswith("\n")


def test_helm_values_get_the_api_version_key_after_the_policy():
    text = "image:\n  tag: v0.35.0\ndeschedulerPolicy:\n  strategies:\n    RemoveDuplicates: {enabled: true}\nx: 1\n"
    result = migrate_text("values.yaml", text)
    [doc] = load_all(result.text)
    assert list(doc) == ["image", "deschedulerPolicy", "deschedulerPolicyAPIVersion", "x"]
    assert doc["deschedulerPolicyAPIVersion"] == "descheduler/v1alpha2"


def test_helm_target_follows_image_tag_then_chart_version_then_every_release_from_v0_31():
    body = "deschedulerPolicy:\n  evictLocalStoragePods: true\n  strategies:\n    RemoveDuplicates: {enabled: true}\n"
    portable = migrate_text("v.yaml", "deschedulerPolicyAPIVersion: descheduler/v1alpha1\n" + body)
    assert "evictLocalStoragePods: true" in portable.text and "podProtections" not in portable.text
    assert portable.notes[0][0].message.startswith("written for descheduler v0.31-v0.36: no release is deployed")
    chart = migrate_text("v.yaml", "deschedulerPolicyAPIVersion: descheduler/v1alpha1\n" + body, chart_version="0.36.0")
    assert "podProtections" in chart.text
    tagged = migrate_text("v.yaml", "image: {tag: v0.32.1}\n" + body, chart_version="0.36.0").text
    assert "evictLocalStoragePods: true" in tagged
    forced = migrate_text("v.yaml", "image: {tag: v0.32.1}\n" + body, target=36).text
    assert "podProtections" in forced


def test_list_item_policy_keeps_its_dash():
    text = "kind: List\nitems:\n- strategies:\n    RemoveDuplicates: {enabled: true}\n"
    text += "  apiVersion: descheduler/v1alpha1\n"
    result = migrate_text("list.yaml", text)
    [doc] = load_all(result.text)
    [item] = doc["items"]
    assert item["apiVersion"] == "descheduler/v1alpha2" and item["profiles"][0]["name"].startswith("strategy-")
    assert result.text.splitlines()[2] == "- profiles:"


def test_anchors_and_merge_keys_still_give_the_right_policy():
    text = (
        "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n"
        "  RemoveDuplicates:\n    enabled: true\n    params: &common\n      namespaces: {exclude: [kube-system]}\n"
        "  RemovePodsViolatingNodeAffinity:\n    enabled: true\n    params:\n      <<: *common\n"
        "      nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]\n"
    )
    result = migrate_text("p.yaml", text)
    assert not result.errors
    [doc] = load_all(result.text)
    args = [entry["args"] for profile in doc["profiles"] for entry in profile["pluginConfig"][1:]]
    assert all(arg["namespaces"] == {"exclude": ["kube-system"]} for arg in args)


def test_json_policy_stays_json():
    text = '{"apiVersion": "descheduler/v1alpha1", "strategies": {"RemoveDuplicates": {"enabled": true}}}\n'
    result = migrate_text("p.json", text)
    import json

    assert json.loads(result.text)["apiVersion"] == "descheduler/v1alpha2"
