"""DS001: the file, or a policy embedded in a ConfigMap, is not YAML that can be read."""

from __future__ import annotations

from collections.abc import Iterator

from desched.gitops.policylimits import MAX_PLUGIN_CONFIGS, MAX_POLICY_NODES, MAX_PROFILES
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.reading.sources import MAX_FILE_BYTES
from desched.reading.yamlnodes import MAX_DEPTH, MAX_EXPANDED_NODES

ID = "DS001"
NAME = "yaml-syntax"
SEVERITY = "error"
SCOPE = "file"
RUNS_ON = frozenset({DocumentKind.FILE})
SUMMARY = "Not YAML, not text, over a size limit, or a policy that is not a mapping"
RATIONALE = (
    "The descheduler cannot decode a policy that is not valid YAML and fails at start-up; a ConfigMap holding a "
    f"broken policy crash-loops the descheduler. Binary files, invalid UTF-8, files over {MAX_FILE_BYTES >> 20} MiB "
    f"or {MAX_EXPANDED_NODES:,} YAML nodes, documents nested deeper than {MAX_DEPTH} levels and YAML alias bombs "
    f"are refused with a position instead of being read; a policy with more than {MAX_PROFILES} profiles, or "
    f"{MAX_PLUGIN_CONFIGS} pluginConfig entries in a profile, and the policies past {MAX_POLICY_NODES:,} YAML nodes "
    "in one file are reported instead of checked. These limits keep the cost of linting any file bounded "
    "(README.md, Limits)."
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
