"""Offline mirrors of the descheduler's own validation: the policy-level checks, and the helpers and vocabularies
the plugins' validators (:mod:`desched.plugins`) are written with.

Everything here is pure: it reads plain decoded YAML (dicts, lists, scalars) and returns ``ArgError`` values carrying
upstream's message for the chosen release, a path to the offending node and a classification code. Nothing raises on
odd input; a field of the wrong JSON type is read as absent, because another rule reports type errors.
"""

from __future__ import annotations

from desched.validation.core import CODES, ArgError, aggregate
from desched.validation.labels import label_selector_error, parse_label_selector_string
from desched.validation.policy import render_policy_errors, validate_policy
from desched.validation.vocab import (
    DEFAULT_POD_PROTECTIONS,
    EVICTION_MODES,
    EXTRA_POD_PROTECTIONS,
    LABEL_SELECTOR_OPERATORS,
    METRIC_RESOURCE,
    METRICS_SOURCES,
    NO_EVICTION_POLICIES,
    NODE_AFFINITY_TYPES,
    POD_PROTECTIONS,
    TOO_MANY_RESTARTS_STATES,
    TOPOLOGY_CONSTRAINTS,
    podlifetime_state_since,
    podlifetime_states,
    too_many_restarts_states,
)

__all__ = [
    "CODES",
    "DEFAULT_POD_PROTECTIONS",
    "EVICTION_MODES",
    "EXTRA_POD_PROTECTIONS",
    "LABEL_SELECTOR_OPERATORS",
    "METRICS_SOURCES",
    "METRIC_RESOURCE",
    "NODE_AFFINITY_TYPES",
    "NO_EVICTION_POLICIES",
    "POD_PROTECTIONS",
    "TOO_MANY_RESTARTS_STATES",
    "TOPOLOGY_CONSTRAINTS",
    "ArgError",
    "aggregate",
    "label_selector_error",
    "parse_label_selector_string",
    "podlifetime_state_since",
    "podlifetime_states",
    "render_policy_errors",
    "too_many_restarts_states",
    "validate_policy",
]
