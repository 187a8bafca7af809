"""The rule registry: every rule module, keyed by its stable ID.

Adding a rule means adding its module name to :data:`_MODULES`; a test fails when a module in this folder is
not listed, when two rules share an ID or NAME, or when metadata is incomplete. A rule the admission webhook can
apply declares ``ADMISSION = True`` (:func:`admission_rules`): a repository rule (DS4xx) that judges one workload or
PDB against the active policy and the cached cluster objects, or a deployment rule (DS6xx) that needs nothing but the
admitted workload itself (no ConfigMap, RBAC object or Namespace beside it). Retired IDs are listed in
:data:`RETIRED` and never reused.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["RETIRED", "admission_rules", "all_rules", "get", "resolve"]

_MODULES = (
    "ds001_yaml_syntax",
    "ds002_api_version_kind",
    "ds003_unknown_key",
    "ds004_wrong_type",
    "ds005_unknown_plugin",
    "ds006_release_gated",
    "ds007_policy_newer_than_release",
    "ds008_chart_value_ignored",
    "ds009_values_never_reach_chart",
    "ds010_chart_not_served",
    "ds011_chart_version_assumed",
    "ds012_policy_applied_as_resource",
    "ds013_chart_policy_not_rendered",
    "ds014_values_file_unreadable",
    "ds101_v1alpha1_policy",
    "ds102_mixed_shapes",
    "ds103_deprecated_evictor_flags",
    "ds104_v1alpha1_lost_content",
    "ds105_metrics_collector_deprecated",
    "ds201_profile_name",
    "ds202_wrong_extension_point",
    "ds203_missing_plugin_config",
    "ds204_unused_plugin_config",
    "ds205_low_and_high_utilization",
    "ds206_no_effect_plugin_list",
    "ds207_never_evicts",
    "ds208_overlapping_profiles",
    "ds209_negative_value",
    "ds210_duplicate_key",
    "ds301_args_validation",
    "ds302_threshold_range",
    "ds303_threshold_above_target",
    "ds304_threshold_resources",
    "ds305_narrow_threshold_band",
    "ds306_thresholds_never_trigger",
    "ds307_runtime_only_enum",
    "ds308_empty_included_taints",
    "ds309_metrics_provider",
    "ds310_priority_threshold",
    "ds311_short_pod_lifetime",
    "ds401_workload_without_pdb",
    "ds402_pdb_blocks_eviction",
    "ds403_several_pdbs",
    "ds404_single_replica",
    "ds405_evictable_storage",
    "ds406_system_critical_evictable",
    "ds407_never_rebalanced",
    "ds501_openshift_profile_conflict",
    "ds502_openshift_invalid_spec",
    "ds503_openshift_ignored_setting",
    "ds504_openshift_predictive_mode",
    "ds505_openshift_cluster_conflict",
    "ds601_replicas_without_leader_election",
    "ds602_leader_election_without_interval",
    "ds603_leader_election_with_dry_run",
    "ds604_deployment_without_interval",
    "ds605_job_with_interval",
    "ds606_cronjob_concurrency",
    "ds607_policy_not_mounted",
    "ds608_namespace_mismatch",
    "ds609_rbac_insufficient",
    "ds610_not_critical_priority",
    "ds611_dry_run_enabled",
    "ds612_liveness_probe_mismatch",
    "ds613_chart_image_skew",
    "ds614_kubernetes_version_skew",
    "ds615_chart_value_ignored_by_kind",
    "ds616_image_tag_unpinned",
    "ds617_chart_install_fails",
    "ds701_unit_unchecked",
)

RETIRED: tuple[str, ...] = ()

_registry: dict[str, ModuleType] | None = None


def _load() -> dict[str, ModuleType]:
    global _registry
    if _registry is None:
        registry: dict[str, ModuleType] = {}
        for name in _MODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            if module.ID in registry:
                raise RuntimeError(f"rule ID {module.ID} is declared twice")
            registry[module.ID] = module
        _registry = registry
    return _registry


def all_rules() -> list[ModuleType]:
    """Every rule module, sorted by ID."""
    return [module for _, module in sorted(_load().items())]


def admission_rules() -> list[ModuleType]:
    """The rules the admission webhook applies (their metadata says ``ADMISSION = True``), sorted by ID: repository
    rules to one workload or PDB against the active policy and the cluster's cached objects, deployment rules to an
    admitted descheduler workload alone."""
    return [module for module in all_rules() if getattr(module, "ADMISSION", False)]


def resolve(name: str) -> str:
    """The rule ID for an ID (any case) or a kebab-case NAME; raises ``KeyError`` with a readable message."""
    registry = _load()
    upper = name.strip().upper()
    if upper in registry:
        return upper
    for rule_id, module in registry.items():
        if name.strip().lower() == module.NAME:
            return rule_id
    raise KeyError(f"no such rule: {name!r} (see `desched rules`)")


def get(name: str) -> ModuleType:
    """The rule module for an ID or NAME; raises ``KeyError`` when there is none."""
    return _load()[resolve(name)]
