"""DS001: the file, or a policy embedded in a ConfigMap, is not YAML that can be read."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS001"
NAME = "yaml-syntax"
SEVERITY = "error"
SCOPE = "file"
RUNS_ON = frozenset({DocumentKind.FILE})
SUMMARY = "Not YAML, not text, or a policy that is not a mapping"
RATIONALE = (
    "The descheduler cannot decode a policy that is not valid YAML and fails at start-up; a ConfigMap holding a "
    "broken policy crash-loops the descheduler. Binary files, invalid UTF-8, oversized files, documents nested "
    "deeper than 256 levels and YAML alias bombs are refused with a position instead of being read."
)
REMEDIATION = "Fix the YAML at the reported position so that the document parses to a mapping."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: descheduler}\ndata:\n  policy.yaml: |\n"
        "    apiVersion: descheduler/v1alpha2\n    profiles: [oops\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    """Nothing to do per document: the loader reports DS001 (see :mod:`desched.linter.engine`) before rules run."""
    return iter(())
