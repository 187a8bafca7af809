"""The one policy locator (desched.gitops.documents.locate_policies): every place a policy lives, with its path."""

from __future__ import annotations

import pytest

from desched.gitops.documents import extract, locate_policies
from desched.reading.yamlsrc import load_all

POLICY = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"
STREAM = f"""\
{POLICY}---
deschedulerPolicy:
  profiles: []
image: {{tag: v0.33.0}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: descheduler, namespace: kube-system}}
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    profiles:
    - name: p
  other: "x: 1"
---
apiVersion: v1
kind: List
items:
- apiVersion: operator.openshift.io/v1
  kind: KubeDescheduler
  metadata: {{name: cluster, namespace: openshift-kube-descheduler-operator}}
  spec: {{}}
- {POLICY.splitlines()[0]}
  kind: DeschedulerPolicy
- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: web}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: unrelated}}
data: {{key: value}}
"""


def test_every_shape_with_its_path():
    found = [(location.shape, location.path, location.keys) for location in locate_policies(load_all(STREAM))]
    assert found == [
        ("policy", (0,), ()),
        ("helm", (1,), ()),
        ("configmap", (2,), ("policy.yaml",)),
        ("kubedescheduler", (3, "items", 0), ()),
        ("policy", (3, "items", 1), ()),
        ("other", (3, "items", 2), ()),
        ("other", (4,), ()),
    ]


def test_the_text_of_a_configmap_key_holds_raw_policies_only():
    helm = load_all("deschedulerPolicy: {profiles: []}\n")
    assert [location.shape for location in locate_policies(helm)] == ["helm"]
    assert [location.shape for location in locate_policies(helm, raw_only=True)] == ["other"]
    assert [location.shape for location in locate_policies(load_all(POLICY), raw_only=True)] == ["policy"]


def test_scalars_are_other_documents_and_empty_ones_are_skipped():
    assert [location.shape for location in locate_policies(["text", None, 3])] == ["other", "other"]


@pytest.mark.parametrize("key", ["policy.yaml", "anything"])
def test_lint_reads_policies_where_the_locator_points_with_block_scalar_positions(key: str):
    text = STREAM.replace("policy.yaml: |", f"{key}: |")
    extraction = extract("stream.yaml", text)
    shapes = [(doc.shape, doc.object) for doc in extraction.policies]
    assert shapes == [
        ("policy", "DeschedulerPolicy"),
        ("helm", "Helm values deschedulerPolicy"),
        ("configmap", "ConfigMap kube-system/descheduler"),
        ("kubedescheduler", "KubeDescheduler openshift-kube-descheduler-operator/cluster"),
        ("policy", "DeschedulerPolicy"),
    ]
    embedded = extraction.policies[2]
    line_of = STREAM.splitlines().index("    - name: p") + 1
    assert embedded.position(("profiles", 0, "name"), key=True) == (line_of, 7)
    assert embedded.position(("profiles", 0, "name")) == (line_of, 13)
    assert [other.get("kind") for other in extraction.others] == ["Deployment", "ConfigMap"]
