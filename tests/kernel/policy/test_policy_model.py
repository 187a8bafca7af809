"""The typed policy model: what it decodes, where each node came from, and that odd input never breaks it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.plugins import REGISTRY
from desched.plugins.base import Namespaces
from desched.plugins.defaultevictor import DefaultEvictorArgs
from desched.plugins.nodeutilization import LowNodeUtilizationArgs
from desched.plugins.removepodsviolatingnodetaints import RemovePodsViolatingNodeTaintsArgs
from desched.policy.model import PluginConfig, Policy, decode
from desched.reading.yamlsrc import load_all

POLICY = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: pool=general
maxNoOfPodsToEvictPerNode: 5
maxNoOfPodsToEvictTotal: 20
evictionFailureEventNotification: true
profiles:
- name: first
  pluginConfig:
  - name: DefaultEvictor
    args: {nodeFit: true}
  - name: RemovePodsViolatingNodeTaints
    args:
      includePreferNoSchedule: true
      excludedTaints: [dedicated]
  - name: RemovePodsViolatingNodeTaints
    args: {includedTaints: []}
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 20}
      targetThresholds: {cpu: 50, memory: 50.5}
      evictableNamespaces: {exclude: [kube-system]}
      evictionLimits: {node: 3}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints, NoSuchPlugin, LowNodeUtilization]
    balance:
      enabled: [LowNodeUtilization]
- name: second
  plugins:
    balance: {enabled: [RemoveDuplicates]}
"""


@pytest.fixture
def policy() -> Policy:
    [tree] = load_all(POLICY)
    return decode(tree)


def test_policy_level_settings(policy: Policy):
    assert policy.node_selector == "pool=general"
    assert (policy.max_pods_to_evict_per_node, policy.max_pods_to_evict_total) == (5, 20)
    assert policy.max_pods_to_evict_per_namespace is None
    assert policy.eviction_failure_event_notification is True
    assert [profile.name for profile in policy.profiles] == ["first", "second"]
    assert policy.profile_named("second") is policy.profiles[1]


def test_every_node_knows_its_path(policy: Policy):
    first = policy.profiles[0]
    assert first.path == ("profiles", 0)
    assert [config.path for config in first.configs] == [("profiles", 0, "pluginConfig", i) for i in range(4)]
    assert first.configs[1].args_path == ("profiles", 0, "pluginConfig", 1, "args")
    refs = first.enabled("deschedule")
    assert [ref.path for ref in refs] == [("profiles", 0, "plugins", "deschedule", "enabled", i) for i in range(3)]
    assert decode({"profiles": [{"name": "p"}]}, ("data", "policy.yaml")).profiles[0].path == (
        "data",
        "policy.yaml",
        "profiles",
        0,
    )


def test_upstream_reads_the_first_config_of_a_plugin(policy: Policy):
    config = policy.profiles[0].config("RemovePodsViolatingNodeTaints")
    assert isinstance(config, PluginConfig)
    assert config.args == RemovePodsViolatingNodeTaintsArgs(Namespaces(), None, True, ("dedicated",), None)
    assert policy.profiles[0].configs[2].args.included_taints == ()  # present but empty: no taint counts


def test_evicting_plugins_are_registered_ones_at_a_point_they_implement(policy: Policy):
    first, second = policy.profiles
    assert [(ref.name, ref.point) for ref, _ in first.evicting()] == [
        ("RemovePodsViolatingNodeTaints", "deschedule"),
        ("LowNodeUtilization", "balance"),
    ]
    assert [(ref.name, config) for ref, config in second.evicting()] == [("RemoveDuplicates", None)]


def test_args_are_coerced_once_into_typed_values(policy: Policy):
    low = policy.profiles[0].config("LowNodeUtilization")
    assert low is not None
    assert low.args == LowNodeUtilizationArgs(
        False,
        {"cpu": 20.0, "memory": 20.0},
        {"cpu": 50.0, "memory": 50.5},
        0,
        Namespaces((), ("kube-system",)),
        3,
        None,
    )
    assert policy.profiles[0].config("DefaultEvictor").args == DefaultEvictorArgs(node_fit=True)


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize("odd", [None, "x", 7, True, [None, {}], {"x": [None]}], ids=repr)
def test_every_plugin_decodes_args_of_any_shape(name: str, odd: object):
    """Every field written with a value of the wrong type still decodes (the structural rules report it)."""
    decode_args = REGISTRY[name].decode
    decoded = decode_args({key: odd for key in REGISTRY[name].args.fields})
    assert type(decoded) is type(decode_args({}))


def test_odd_values_read_as_absent():
    taints = REGISTRY["RemovePodsViolatingNodeTaints"].decode
    assert taints({"excludedTaints": "dedicated", "includePreferNoSchedule": "yes", "labelSelector": "app=x"}) == (
        taints({})
    )
    restarts = REGISTRY["RemovePodsHavingTooManyRestarts"].decode
    assert restarts({"podRestartThreshold": True}).pod_restart_threshold == 0
    assert restarts({"podRestartThreshold": 3, "states": ["Running", 1]}).states == ("Running",)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["profiles", "name", "pluginConfig", "plugins", "args", "enabled", "balance", "x"]), inner
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["profiles", "nodeSelector", "maxNoOfPodsToEvictPerNode"]), json_values))
def test_decoding_never_raises(tree: dict[str, object]):
    policy = decode(tree)
    for profile in policy.profiles:
        assert all(isinstance(ref.name, str) for ref in profile.enabled())
        list(profile.evicting())
