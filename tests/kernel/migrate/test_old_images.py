"""A policy read by a descheduler image before v0.27 stays v1alpha1: that release cannot decode descheduler/v1alpha2,
so ``desched migrate`` refuses it as it refuses charts before 0.27, and DS101 advises upgrading first (issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.cli import main
from desched.linter.engine import Settings, lint_text

DEPLOYED = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: descheduler-policy, namespace: kube-system}}
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha1
    kind: DeschedulerPolicy
    strategies:
      RemoveDuplicates:
        enabled: true
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: descheduler, namespace: kube-system}}
spec:
  selector: {{matchLabels: {{app: descheduler}}}}
  template:
    metadata: {{labels: {{app: descheduler}}}}
    spec:
      containers:
      - name: descheduler
        image: registry.k8s.io/descheduler/descheduler:{image}
        args: [--policy-config-file, /policy-dir/policy.yaml, --descheduling-interval, 5m]
        volumeMounts: [{{name: policy-volume, mountPath: /policy-dir}}]
      volumes: [{{name: policy-volume, configMap: {{name: descheduler-policy}}}}]
"""


@pytest.mark.parametrize("image", ["v0.8.0", "v0.22.1", "v0.26.1"])
def test_migrate_refuses_a_policy_an_image_before_v0_27_reads(
    image: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "descheduler.yaml"
    text = DEPLOYED.format(image=image)
    path.write_text(text)
    assert main(["migrate", "--in-place", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"is {image} (the image registry.k8s.io/descheduler/descheduler:{image}" in err
    assert "predates descheduler/v1alpha2 (first in v0.27.0)" in err and "upgrade the descheduler to v0.27.0" in err
    assert path.read_text() == text  # nothing written


@pytest.mark.parametrize("image", ["v0.8.0", "v0.26.1"])
def test_ds101_advises_upgrading_an_image_before_v0_27_before_migrating(image: str):
    (finding,) = [
        f for f in lint_text("x.yaml", DEPLOYED.format(image=image), Settings()).findings if f.rule == "DS101"
    ]
    assert f"the descheduler deployed with it ({image}) predates descheduler/v1alpha2" in finding.message
    assert "upgrade it to v0.27.0 or later, then run `desched migrate --in-place x.yaml`" in finding.message


def test_an_image_from_v0_27_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "descheduler.yaml"
    path.write_text(DEPLOYED.format(image="v0.27.0"))
    assert main(["migrate", "--in-place", str(path)]) == 0
    assert "apiVersion: descheduler/v1alpha2" in path.read_text()
    (finding,) = [f for f in lint_text("x.yaml", DEPLOYED.format(image="v0.27.0"), Settings()).findings
                  if f.rule == "DS101"]  # fmt: skip
    assert "run `desched migrate --in-place x.yaml` to convert it" in finding.message
