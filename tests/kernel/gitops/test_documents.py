from __future__ import annotations

from desched.gitops.documents import extract
from tests.conftest import lint

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: descheduler
  namespace: kube-system
data:
  other: "not a policy"
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    profiles:
      - name: p
        pluginConfig:
          - name: LowNodeUtilization
            args:
              thresholds: {cpu: 20}
              targetThresholds: {cpu: 150}
"""


def test_configmap_policy_is_found_with_object_label():
    found = extract("cm.yaml", CONFIGMAP)
    assert len(found.policies) == 1
    assert found.policies[0].object == "ConfigMap kube-system/descheduler"
    assert found.policies[0].shape == "configmap"


def test_finding_inside_block_scalar_points_at_outer_line_and_column():
    [finding] = [f for f in lint(CONFIGMAP) if f.rule == "DS302"]
    line = CONFIGMAP.splitlines()[finding.line - 1]
    assert finding.line == 17
    assert line[finding.column - 1 :].startswith("150")
    assert finding.path == "/profiles/0/pluginConfig/0/args/targetThresholds/cpu"
    assert finding.object == "ConfigMap kube-system/descheduler"


def test_block_scalar_with_explicit_indentation_indicator():
    found = extract("cm.yaml", CONFIGMAP.replace("policy.yaml: |", "policy.yaml: |2"))
    assert (found.policies[0].line_offset, found.policies[0].column_offset) == (8, 4)
    deeper = CONFIGMAP.replace("policy.yaml: |", "policy.yaml: |4").replace("\n    ", "\n      ")
    found = extract("cm.yaml", deeper)
    assert (found.policies[0].line_offset, found.policies[0].column_offset) == (8, 6)


def test_quoted_policy_string_points_at_the_value():
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n"
        '  policy.yaml: "apiVersion: descheduler/v1alpha2\\nkind: DeschedulerPolicy\\nprofiles: 3\\n"\n'
    )
    [finding] = [f for f in lint(text) if f.rule == "DS004"]
    assert (finding.line, finding.column) == (5, 16)


def test_helm_values_are_detected_by_content():
    text = (
        "kind: CronJob\nimage: {tag: v0.32.0}\ndeschedulerPolicyAPIVersion: descheduler/v1alpha2\n"
        "deschedulerPolicy:\n  gracePeriodSeconds: 10\n  profiles: []\n"
    )
    found = extract("values.yaml", text)
    assert [p.shape for p in found.policies] == ["helm"]
    assert found.policies[0].extra["image_tag"] == "v0.32.0"


def test_helm_chart_image_tag_sets_the_target_version():
    text = (
        "image: {tag: v0.32.0}\ndeschedulerPolicyAPIVersion: descheduler/v1alpha2\n"
        "deschedulerPolicy:\n  gracePeriodSeconds: 10\n  profiles: []\n"
    )
    from desched.linter.engine import Settings, lint_text

    findings = lint_text("values.yaml", text, Settings()).findings
    assert [(f.rule, f.line) for f in findings if f.rule == "DS006"] == [("DS006", 4)]


def test_kind_list_and_multi_document():
    policy = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"
    listed = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: descheduler/v1alpha2\n  kind: DeschedulerPolicy\n"
    found = extract("f.yaml", policy + "---\n" + listed + "---\napiVersion: apps/v1\nkind: Deployment\n")
    assert len(found.policies) == 2
    assert [doc["kind"] for doc in found.others] == ["Deployment"]


def test_unrelated_documents_are_skipped_silently():
    text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n---\n- a\n- b\n---\nplain\n"
    assert lint(text) == []


def test_configmap_with_broken_embedded_policy_reports_ds001_at_outer_position():
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n  policy.yaml: |\n"
        "    apiVersion: descheduler/v1alpha2\n    profiles: [oops\n"
    )
    [finding] = lint(text)
    assert finding.rule == "DS001"
    assert finding.line == 8 or finding.line == 7
    assert finding.object == "ConfigMap d (key policy.yaml)"


def test_chart_app_version_beside_the_values_sets_the_target(tmp_path):
    from desched.linter.engine import Settings, lint_file

    (tmp_path / "Chart.yaml").write_text('apiVersion: v2\nname: descheduler\nappVersion: "0.32.1"\n')
    values = tmp_path / "values.yaml"
    values.write_text(
        "deschedulerPolicyAPIVersion: descheduler/v1alpha2\ndeschedulerPolicy:\n  gracePeriodSeconds: 10\n"
        "  profiles: []\n"
    )
    gated = [f for f in lint_file(str(values), Settings()).findings if f.rule == "DS006"]
    assert [(f.line, "v0.32" in f.message) for f in gated] == [(3, True)]
    assert not [f for f in lint_file(str(values), Settings(target=36)).findings if f.rule == "DS006"]
