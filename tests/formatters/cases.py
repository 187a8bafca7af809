"""Hand-made reports shared by the formatter tests (flake8's habit: no linter involved)."""

from __future__ import annotations

import os

from desched.linter.finding import Finding, RuleInfo
from desched.linter.formatters import Report

BASE_DIR = "/srv/repo"
VERSION = "0.1.0"

RULES = {
    info.id: info
    for info in (
        RuleInfo(
            "DS001",
            "yaml-syntax",
            "The file is not valid YAML.",
            "The descheduler refuses a policy it cannot parse, so nothing is evicted.",
            "Fix the YAML syntax at the reported position.",
            "error",
        ),
        RuleInfo(
            "DS105",
            "deprecated-field",
            "A field is deprecated in v1alpha2.",
            "Deprecated fields are ignored by newer descheduler releases.",
            "Move the setting to its replacement field.",
            "info",
        ),
        RuleInfo(
            "DS210",
            "evict-local-storage",
            "Pods with local storage may be evicted.",
            "Evicting pods that use `emptyDir` loses their data.",
            "Set `evictLocalStoragePods: false` unless the data is disposable.",
            "warning",
        ),
        RuleInfo(
            "DS302",
            "threshold-out-of-range",
            "A utilization threshold is outside 0-100.",
            "The descheduler rejects thresholds outside 0-100 at startup.",
            "Use a percentage between 0 and 100.",
            "error",
        ),
        RuleInfo(
            "DS999",
            "never-fires",
            "A registered rule without findings; it must still be listed.",
            "SARIF consumers need the full rule table.",
            "Nothing to do.",
            "warning",
        ),
    )
}

_POLICY = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: default
    pluginConfig:
      - name: DefaultEvictor
        args:
          evictLocalStoragePods: true
      - name: LowNodeUtilization
        args:
          thresholds:
            cpu: 120
"""

_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: descheduler
  namespace: kube-system
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    maxNoOfPodsToEvictPerNode: 5
\tnodeSelector: x
"""

_UNICODE = 'profiles:\n  - name: "日本語"\tpluginConfig: {}\n'


def _report(findings: list[Finding], files: int, sources: dict[str, str] | None = None) -> Report:
    return Report(
        findings=sorted(findings, key=Finding.sort_key),
        files=files,
        rules=dict(RULES),
        sources=sources or {},
        version=VERSION,
        base_dir=BASE_DIR,
    )


def clean() -> Report:
    return _report([], files=2)


def mixed() -> Report:
    policy = "policies/low-node.yaml"
    configmap = "deploy/configmap.yaml"
    findings = [
        Finding(
            "DS302",
            "error",
            policy,
            12,
            18,
            "threshold cpu is 120, must be between 0 and 100",
            path="/profiles/0/pluginConfig/1/args/thresholds/cpu",
        ),
        Finding(
            "DS210",
            "warning",
            policy,
            8,
            34,
            "evictLocalStoragePods is true: pods with emptyDir volumes will be evicted",
            path="/profiles/0/pluginConfig/0/args/evictLocalStoragePods",
        ),
        Finding(
            "DS105",
            "info",
            configmap,
            10,
            5,
            "maxNoOfPodsToEvictPerNode is deprecated; use maxNoOfPodsToEvictPerNode in the policy root",
            object="ConfigMap kube-system/descheduler",
            path="/maxNoOfPodsToEvictPerNode",
        ),
        Finding(
            "DS001",
            "error",
            configmap,
            11,
            2,
            "found character '\\t' that cannot start any token",
            object="ConfigMap kube-system/descheduler",
        ),
        Finding(
            "DS210",
            "warning",
            policy,
            8,
            11,
            "evictLocalStoragePods is true",
            path="/profiles/0/pluginConfig/0/args",
            suppressed="scratch data only, reviewed in #42",
        ),
    ]
    return _report(findings, files=3, sources={policy: _POLICY, configmap: _CONFIGMAP})


def unicode_name() -> Report:
    file = "policies/my policy ü.yaml"
    findings = [
        Finding("DS210", "warning", file, 2, 11, 'quoted name "日本語" is unusual', path="/profiles/0/name"),
        Finding("DS105", "info", file, 2, 16, "tab after a value", path="/profiles/0"),
    ]
    return _report(findings, files=1, sources={file: _UNICODE})


def special_message() -> Report:
    findings = [
        Finding(
            "DS302",
            "error",
            "deploy/50%,odd:name.yaml",
            3,
            7,
            "value 100% is out of range, expected: 0-99\nsecond line: see docs, 50% rule",
            object="ConfigMap ns-a/desched,v2:beta",
            path="/profiles/0/pluginConfig/0/args/a~1b",
        ),
        Finding("DS001", "error", "-", 1, 1, "stdin: mapping values are not allowed here\r\nline two", path=""),
    ]
    return _report(findings, files=2)


CASES = {"clean": clean, "mixed": mixed, "unicode_name": unicode_name, "special_message": special_message}


def anchored(report: Report, base: str = BASE_DIR) -> Report:
    """``report`` with every file (except stdin) made absolute under ``base``, so SARIF URIs do not depend on the
    directory the tests run from."""

    def move(file: str) -> str:
        return file if file == "-" else os.path.join(base, file)

    return Report(
        findings=[finding._replace(file=move(finding.file)) for finding in report.findings],
        files=report.files,
        rules=report.rules,
        sources={move(file): text for file, text in report.sources.items()},
        version=report.version,
        color=report.color,
        base_dir=base,
    )
