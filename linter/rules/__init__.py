"""The rule registry: every rule module, keyed by its stable ID.

Adding a rule means adding its module name to :data:`_MODULES`, with the document kinds it runs on (its
``RUNS_ON``, by value): the engine imports only the rules of the kinds a run meets (:func:`rules_for`), so that a
policy file alone never pays for the repository, deployment or delivery rules. A test fails when a module in this
folder is not listed, when the kinds listed are not the module's ``RUNS_ON``, when two rules share an ID or NAME, or
when metadata is incomplete. A rule the admission webhook can apply declares ``ADMISSION = True``
(:func:`admission_rules`): a repository rule (DS4xx) that judges one workload or PDB against the active policy and
the cached cluster objects, or a deployment rule (DS6xx) that needs nothing but the admitted workload itself (no
ConfigMap, RBAC object or Namespace beside it). Retired IDs are listed in :data:`RETIRED` and never reused.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["RETIRED", "admission_rules", "all_rules", "get", "resolve", "rules_for"]

_MODULES = {
    "ds001_yaml_syntax": "file",
    "ds002_api_version_kind": "policy",
    "ds003_unknown_key": "policy",
    "ds004_wrong_type": "policy",
    "ds005_unknown_plugin": "policy rendered",
    "ds006_release_gated": "policy",
    "ds007_policy_newer_than_release": "policy",
    "ds008_chart_value_ignored": "policy",
    "ds009_values_never_reach_chart": "policy",
    "ds010_chart_not_served": "delivery",
    "ds011_chart_version_assumed": "delivery",
    "ds012_policy_applied_as_resource": "delivery",
    "ds013_chart_policy_not_rendered": "policy",
    "ds014_values_file_unreadable": "delivery",
    "ds101_v1alpha1_policy": "policy",
    "ds102_mixed_shapes": "policy",
    "ds103_deprecated_evictor_flags": "policy",
    "ds104_v1alpha1_lost_content": "policy",
    "ds105_metrics_collector_deprecated": "policy",
    "ds201_profile_name": "policy converted rendered",
    "ds202_wrong_extension_point": "policy converted rendered",
    "ds203_missing_plugin_config": "policy converted rendered",
    "ds204_unused_plugin_config": "policy converted rendered",
    "ds205_low_and_high_utilization": "policy converted rendered",
    "ds206_no_effect_plugin_list": "policy converted rendered",
    "ds207_never_evicts": "policy converted rendered",
    "ds208_overlapping_profiles": "policy converted rendered",
    "ds209_negative_value": "policy converted rendered",
    "ds210_duplicate_key": "policy kubedescheduler converted rendered",
    "ds211_profile_skipped_at_v030": "policy converted rendered",
    "ds212_pdbs_unseen_by_real_runs": "policy converted rendered",
    "ds301_args_validation": "policy converted rendered",
    "ds302_threshold_range": "policy converted rendered",
    "ds303_threshold_above_target": "policy converted rendered",
    "ds304_threshold_resources": "policy converted rendered",
    "ds305_narrow_threshold_band": "policy converted rendered",
    "ds306_thresholds_never_trigger": "policy converted rendered",
    "ds307_runtime_only_enum": "policy converted rendered",
    "ds308_empty_included_taints": "policy converted rendered",
    "ds309_metrics_provider": "policy converted rendered",
    "ds310_priority_threshold": "policy converted rendered",
    "ds311_short_pod_lifetime": "policy converted rendered",
    "ds401_workload_without_pdb": "repository",
    "ds402_pdb_blocks_eviction": "repository",
    "ds403_several_pdbs": "repository",
    "ds404_single_replica": "repository",
    "ds405_evictable_storage": "repository",
    "ds406_system_critical_evictable": "repository",
    "ds407_never_rebalanced": "repository",
    "ds501_openshift_profile_conflict": "kubedescheduler",
    "ds502_openshift_invalid_spec": "kubedescheduler",
    "ds503_openshift_ignored_setting": "kubedescheduler",
    "ds504_openshift_predictive_mode": "kubedescheduler",
    "ds505_openshift_cluster_conflict": "repository",
    "ds601_replicas_without_leader_election": "deployment",
    "ds602_leader_election_without_interval": "deployment",
    "ds603_leader_election_with_dry_run": "deployment",
    "ds604_deployment_without_interval": "deployment",
    "ds605_job_with_interval": "deployment",
    "ds606_cronjob_concurrency": "deployment",
    "ds607_policy_not_mounted": "deployment",
    "ds608_namespace_mismatch": "deployment",
    "ds609_rbac_insufficient": "deployment",
    "ds610_not_critical_priority": "deployment",
    "ds611_dry_run_enabled": "deployment",
    "ds612_liveness_probe_mismatch": "deployment",
    "ds613_chart_image_skew": "policy",
    "ds614_kubernetes_version_skew": "deployment",
    "ds615_chart_value_ignored_by_kind": "policy",
    "ds616_image_tag_unpinned": "deployment",
    "ds617_chart_install_fails": "deployment",
    "ds701_unit_unchecked": "units",
}

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


def rules_for(kind: str) -> list[ModuleType]:
    """The rule modules that run on documents of ``kind`` (a ``DocumentKind`` value), sorted by ID; only these are
    imported."""
    names = [name for name, kinds in _MODULES.items() if kind in kinds.split()]
    return sorted((importlib.import_module(f"{__name__}.{name}") for name in names), key=lambda module: str(module.ID))


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
