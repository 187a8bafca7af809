"""Where upstream's decisions changed between the releases desched runs
(docs/executor-semantics.md#13-decisions-per-release): one table, :data:`CHANGES`, each row naming the upstream file
and the tags that show the older and the newer decision.

Contract: a :class:`ReleaseDecisions` answers, for one release, whether it still makes a change's older decision
(:meth:`ReleaseDecisions.older`); the executor asks it wherever a modelled row applies. Rows whose ``unmodelled``
reason is set are read from upstream but not applied (the reason says why); :func:`markdown` renders the whole table
for the docs. :func:`skipped_profiles` applies the v0.30 indexer conflict to a policy's profiles.
"""

from __future__ import annotations

from typing import NamedTuple

from desched.policy.model import Profile
from desched.versions import NEWEST, render
from desched.workloads.eviction import owner_index_conflicts

__all__ = [
    "ANTI_AFFINITY_SAME_NODE", "CHANGES", "DEVIATION_ZERO_OFFSET", "EVICTOR_INDEX_CONFLICT", "FIT_ANTI_AFFINITY",
    "NAMESPACE_SELECTOR_LABELS_ONLY", "NATIVE_SIDECARS", "NEWEST_DECISIONS", "PDB_INFORMER_REGISTERED",
    "PROFILE_AT_A_TIME", "PROFILE_BUILT_PER_CYCLE", "RESTARTS_INIT_STATES", "RESTARTS_SORTED",
    "SORT_IGNORES_NO_EVICTION", "SPREAD_FIT_ORDER", "SPREAD_INCLUSION_POLICIES", "SPREAD_INCLUSION_STUBS",
    "SPREAD_LISTS_NAMESPACE", "SPREAD_MATCH_LABEL_KEYS", "SPREAD_SORT_PRIORITY", "TAINTS_LIST_TERMINAL",
    "UTILIZATION_QUANTITIES", "DecisionChange", "ReleaseDecisions", "markdown", "skipped_profiles",
]  # fmt: skip

TAINTS_LIST_TERMINAL = "taints-list-terminal-pods"
EVICTOR_INDEX_CONFLICT = "evictor-index-conflict"
SPREAD_FIT_ORDER = "spread-no-fit-order"
RESTARTS_SORTED = "restarts-unsorted"
FIT_ANTI_AFFINITY = "nodefit-anti-affinity"
AFFINITY_FITS_CURRENT = "affinity-fits-current-node"
NATIVE_SIDECARS = "native-sidecars"
RESTARTS_INIT_STATES = "restarts-states-init-containers"
ANTI_AFFINITY_SAME_NODE = "anti-affinity-same-node"
SPREAD_SORT_PRIORITY = "spread-sort-ignores-priority"
SPREAD_INCLUSION_STUBS = "spread-inclusion-stubs"
SPREAD_INCLUSION_POLICIES = "spread-no-inclusion-policies"
SPREAD_MATCH_LABEL_KEYS = "spread-no-match-label-keys"
SPREAD_LISTS_NAMESPACE = "spread-lists-namespace-pods"
UTILIZATION_QUANTITIES = "utilization-quantities"
DEVIATION_ZERO_OFFSET = "deviation-zero-offset"
PROFILE_AT_A_TIME = "profile-at-a-time"
SORT_IGNORES_NO_EVICTION = "sort-ignores-prefer-no-eviction"
PROFILE_BUILT_PER_CYCLE = "profile-built-per-cycle"
NAMESPACE_SELECTOR_LABELS_ONLY = "namespace-selector-labels-only"
PDB_INFORMER_REGISTERED = "pdb-informer-registered"


class DecisionChange(NamedTuple):
    """One decision upstream changed: releases ``first``..``last`` (minor numbers) make the ``older`` one, the
    releases after ``last`` the ``newer`` one. ``source`` is the upstream file, ``tags`` the tag read for each side.
    ``unmodelled`` is empty when desched applies the row, else why it does not."""

    key: str
    plugin: str
    first: int
    last: int
    older: str
    newer: str
    source: str
    tags: str
    unmodelled: str = ""


_PLUGINS = "pkg/framework/plugins"
CHANGES: tuple[DecisionChange, ...] = (
    DecisionChange(
        AFFINITY_FITS_CURRENT,
        "RemovePodsViolatingNodeAffinity",
        27,
        27,
        "`requiredDuringSchedulingIgnoredDuringExecution` evicts a pod with required node affinity that does not fit "
        "its current node (`!PodFitsCurrentNode`: NodeFit there without the resource check, so also for a NoSchedule "
        "or NoExecute taint it does not tolerate or a cordoned node); "
        "`preferredDuringSchedulingIgnoredDuringExecution` is not acted on (logged as an invalid type)",
        "`requiredDuringSchedulingIgnoredDuringExecution` evicts a pod whose node no longer matches its node selector "
        "and required affinity (`!PodMatchNodeSelector`); the preferred type moves pods to nodes they prefer more",
        f"{_PLUGINS}/removepodsviolatingnodeaffinity/node_affinity.go",
        "v0.27.0 / v0.28.0 (3170404)",
    ),
    DecisionChange(
        TAINTS_LIST_TERMINAL,
        "RemovePodsViolatingNodeTaints",
        27,
        33,
        "lists every pod on the node (`ListAllPodsOnANode`): Failed and Succeeded pods are evicted too",
        "lists only non-terminal pods (`ListPodsOnANode`)",
        f"{_PLUGINS}/removepodsviolatingnodetaints/node_taint.go",
        "v0.33.0 / v0.34.0 (6691720)",
    ),
    DecisionChange(
        EVICTOR_INDEX_CONFLICT,
        "DefaultEvictor",
        30,
        30,
        "a DefaultEvictor with `minReplicas > 1` adds the `metadata.ownerReferences` indexer to the shared pod "
        "informer; a later profile adding it again fails with `indexer conflict` and is skipped. Profiles are "
        "built at every cycle and a real run keeps its informer, so from the second cycle on every such profile "
        "is skipped; a dry run builds a new informer per cycle",
        "the indexer is added once and reused",
        f"{_PLUGINS}/defaultevictor/defaultevictor.go, pkg/descheduler/descheduler.go",
        "v0.30.2 / v0.31.0 (7ab36da)",
    ),
    DecisionChange(
        SPREAD_FIT_ORDER,
        "RemovePodsViolatingTopologySpreadConstraint",
        27,
        33,
        "the pods moved out of a domain are the last ones of its sorted list, whether or not they fit a "
        "below-average node",
        "a stable sort first moves the pods that fit a below-average node to the end of the list",
        f"{_PLUGINS}/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go",
        "v0.33.0 / v0.34.0 (fbf11df)",
    ),
    DecisionChange(
        RESTARTS_SORTED,
        "RemovePodsHavingTooManyRestarts",
        27,
        33,
        "evicts a node's pods in listing order",
        "evicts a node's pods with the most restarts first",
        f"{_PLUGINS}/removepodshavingtoomanyrestarts/toomanyrestarts.go",
        "v0.33.0 / v0.34.0 (0a691de)",
    ),
    DecisionChange(
        SPREAD_INCLUSION_STUBS,
        "RemovePodsViolatingTopologySpreadConstraint",
        28,
        33,
        "the internal constraint keeps the pod's node affinity and tolerations whatever the inclusion policies: "
        "pods whose constraints differ only there give constraints balanced one after the other, each breaking "
        "ties between equal domains in its own map order, so more pods can be taken",
        "it keeps them only when the policy is Honor",
        f"{_PLUGINS}/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go",
        "v0.33.0 / v0.34.0 (eadfe4a)",
    ),
    DecisionChange(
        "single-node-cycle",
        "descheduler",
        27,
        33,
        "a cycle with fewer than 2 nodes fails with an error, and a failed cycle ends upstream's loop (up to v0.34 "
        "any cycle error does; f26ab74, v0.35.0, keeps the loop going): the descheduler exits and a Deployment's pod "
        "is restarted",
        "it is skipped without an error and the loop goes on",
        "pkg/descheduler/descheduler.go",
        "v0.33.0 / v0.34.0 (3033aec)",
        "no pod is evicted in that cycle either way; the exit and restart are upstream's process lifecycle, which "
        "`desched run --interval` does not reproduce (its loop goes on)",
    ),
    DecisionChange(
        "node-sort-usage-sum",
        "LowNodeUtilization, HighNodeUtilization",
        27,
        31,
        "nodes are sorted by memory + CPU (milli) + pods, plus each extended resource",
        "nodes are sorted by the sum over every resource of the usage (CPU in milli)",
        f"{_PLUGINS}/nodeutilization/nodeutilization.go",
        "v0.31.0 / v0.32.0 (7eeb07d, 67d3d52)",
        "no decision changes: both sum the same resources the same way",
    ),
    DecisionChange(
        FIT_ANTI_AFFINITY,
        "NodeFit (DefaultEvictor nodeFit, RemovePodsViolatingNodeAffinity, TopologySpread nodeFit)",
        27,
        29,
        "NodeFit does not check the pod's inter-pod anti-affinity against the node's pods (v0.30.0's new check "
        "matched only on the pod's own node; v0.30.1 fixed it; desched runs each minor as its latest patch)",
        "a node whose pods the pod's anti-affinity terms match does not fit",
        "pkg/descheduler/node/node.go",
        "v0.29.0 / v0.30.1 (c80556f)",
    ),
    DecisionChange(
        NATIVE_SIDECARS,
        "NodeFit, LowNodeUtilization, HighNodeUtilization",
        27,
        34,
        "a pod's requests (`PodRequestsAndLimits`, `GetResourceRequestQuantity`) take every init container, "
        "restartable (native sidecar) or not, as competing alone with the containers' sum, and ignore pod-level "
        "requests",
        "`resourcehelper.PodRequests`: native sidecars are added to the sum and to the init containers after them; "
        "pod-level cpu/memory/hugepages requests replace the aggregate",
        "pkg/utils/pod.go",
        "v0.34.0 / v0.35.0 (06cab8e)",
    ),
    DecisionChange(
        "podlifetime-future-age",
        "PodLifeTime",
        27,
        29,
        "a pod created in the future (clock skew) is aged `uint` of its negative seconds: Go's conversion wraps to a "
        "huge age on amd64 (the pod exceeds any `maxPodLifeTimeSeconds`) and gives 0 on arm64",
        "its age is negative (`int`; from v0.35 the pod is skipped): it never exceeds `maxPodLifeTimeSeconds`",
        f"{_PLUGINS}/podlifetime/pod_lifetime.go",
        "v0.29.0 / v0.30.0 (5092595)",
        "the older decision depends on the platform; desched ages such a pod below zero on every release (as for "
        "RemoveFailedPods' `minPodLifetimeSeconds`), the newer decision and arm64's",
    ),
    DecisionChange(
        "podlifetime-states-pod-reason",
        "PodLifeTime",
        27,
        29,
        "`states` are compared with the pod's phase and its containers' waiting reasons",
        "also with the pod's `status.reason`",
        f"{_PLUGINS}/podlifetime/pod_lifetime.go",
        "v0.29.0 / v0.30.0 (e798044)",
        "no decision changes: the states v0.27-v0.29 accept (Running, Pending, PodInitializing, ContainerCreating, "
        "ImagePullBackOff) are no reason the kubelet or the node controller sets on a pod",
    ),
    DecisionChange(
        "podlifetime-states-terminated",
        "PodLifeTime",
        27,
        34,
        "`states` match the containers' waiting reasons only (with the flags also the init and ephemeral containers')",
        "they match terminated reasons too (v0.35.1 carries v0.36's plugin, cherry-picked as 8dd18a4)",
        f"{_PLUGINS}/podlifetime/pod_lifetime.go, pkg/descheduler/pod/pods.go",
        "v0.34.0 / v0.35.1 (a845ed3)",
        "no decision changes: no state v0.34 accepts is a terminated reason the kubelet sets (Completed, Error, "
        "OOMKilled, ContainerCannotRun, DeadlineExceeded, StartError); those states are accepted from v0.35 on",
    ),
    DecisionChange(
        RESTARTS_INIT_STATES,
        "RemovePodsHavingTooManyRestarts",
        28,
        29,
        "`states` are compared with the pod's phase and its containers' waiting reasons, with "
        "`includingInitContainers` too (which then only adds the init containers' restarts)",
        "with `includingInitContainers`, the init containers' waiting reasons match `states` too",
        f"{_PLUGINS}/removepodshavingtoomanyrestarts/toomanyrestarts.go",
        "v0.29.0 / v0.30.0 (97c0044)",
    ),
    DecisionChange(
        "qos-from-status",
        "LowNodeUtilization, HighNodeUtilization, RemovePodsViolatingInterPodAntiAffinity",
        27,
        30,
        "the QoS class that orders pods of equal priority for eviction is computed from the containers' requests "
        "and limits",
        "`status.qosClass` when set, else computed as before",
        "pkg/utils/qos.go",
        "v0.30.2 / v0.31.0 (fd7fcbd)",
        "no decision changes for the pods these releases know: the API server sets `status.qosClass` at creation "
        "from the same requests and limits, and a resize may not change it; only pod-level resources (Kubernetes "
        "1.32 on), which v0.27-v0.30 ignore, make the two differ",
    ),
    DecisionChange(
        ANTI_AFFINITY_SAME_NODE,
        "RemovePodsViolatingInterPodAntiAffinity",
        27,
        27,
        "a pod conflicts only with the matching pods listed on its own node, whatever the term's `topologyKey`",
        "it conflicts with the matching pods listed on every node of the cycle in the same `topologyKey` domain",
        f"{_PLUGINS}/removepodsviolatinginterpodantiaffinity/pod_antiaffinity.go",
        "v0.27.1 / v0.28.0 (877d9b1)",
    ),
    DecisionChange(
        SPREAD_SORT_PRIORITY,
        "RemovePodsViolatingTopologySpreadConstraint",
        27,
        32,
        "a domain's evictable pods are sorted only by nodeSelector or node affinity (the priority comparison's "
        "result is dropped), so priority does not decide which pods are taken",
        "pods of the same group are sorted by ascending priority",
        f"{_PLUGINS}/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go",
        "v0.32.2 / v0.33.0 (4548723)",
    ),
    DecisionChange(
        SPREAD_LISTS_NAMESPACE,
        "RemovePodsViolatingTopologySpreadConstraint",
        27,
        27,
        "every pod of each namespace the args name is read from the API: constraints come from pods on any node, "
        "and pods on the cycle's nodes count whatever their phase and whether or not they pass Filter and the "
        "labelSelector (the domain sort puts those failing Filter first)",
        "only the non-terminal pods on the cycle's nodes passing the namespaces, labelSelector and Filter are listed, "
        "counted and read for constraints",
        f"{_PLUGINS}/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go",
        "v0.27.1 / v0.28.0 (f5a7f71)",
    ),
    DecisionChange(
        SPREAD_INCLUSION_POLICIES,
        "RemovePodsViolatingTopologySpreadConstraint",
        27,
        27,
        "`nodeAffinityPolicy` and `nodeTaintsPolicy` are not read: every node with the topology key is a domain and "
        "may receive pods; constraints are the same when the pods' own constraints are deep-equal",
        "the inclusion policies (nodeAffinityPolicy Honor by default) choose the domains and the nodes below the "
        "average; constraints are the same when the internal constraints are deep-equal",
        f"{_PLUGINS}/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go",
        "v0.27.1 / v0.28.1 (99246cd)",
    ),
    DecisionChange(
        SPREAD_MATCH_LABEL_KEYS,
        "RemovePodsViolatingTopologySpreadConstraint",
        27,
        27,
        "`matchLabelKeys` is not read: the labelSelector alone selects the pods a constraint counts",
        "the declaring pod's values of `matchLabelKeys` are added to the selector",
        f"{_PLUGINS}/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go",
        "v0.27.1 / v0.28.1 (704a82b, bf2bd73)",
    ),
    DecisionChange(
        UTILIZATION_QUANTITIES,
        "LowNodeUtilization, HighNodeUtilization",
        27,
        32,
        "a node is classified by comparing each usage quantity with `int64(threshold × 0.01 × capacity)` (cpu in "
        "millicores), for the threshold resources and cpu, memory and pods, one without threshold at 100 % of its "
        "capacity: at a boundary the truncated share decides (7 % of 4000m: 280m is underutilized, 29 % of 100 pods: "
        "29 pods are over), and a node over the capacity of a resource without threshold is not underutilized and, for "
        "LowNodeUtilization, is overutilized",
        "usage is normalized to float percentages of the capacity (`usage / capacity × 100`) and compared with the "
        "threshold resources only (280m of 4000m is 7.000000000000001 %, over 7; 29 of 100 is 28.999999999999996 %)",
        f"{_PLUGINS}/nodeutilization/nodeutilization.go",
        "v0.32.2 / v0.33.0 (87ba84b)",
    ),
    DecisionChange(
        DEVIATION_ZERO_OFFSET,
        "LowNodeUtilization",
        27,
        32,
        "with `useDeviationThresholds`, a resource whose `thresholds` offset is 0 gets the node's capacity as both "
        "thresholds, whatever its `targetThresholds` offset",
        "its thresholds are the average usage and the average plus its `targetThresholds` offset",
        f"{_PLUGINS}/nodeutilization/nodeutilization.go",
        "v0.32.2 / v0.33.0 (87ba84b)",
    ),
    DecisionChange(
        "deviation-average-all-nodes",
        "LowNodeUtilization",
        27,
        32,
        "with `useDeviationThresholds`, the average usage divides by every node; a node without the resource adds "
        "`0 / 0` (NaN), so the thresholds are Go's `int64(NaN)`",
        "the average is over the nodes that have the resource",
        f"{_PLUGINS}/nodeutilization/nodeutilization.go",
        "v0.32.2 / v0.33.0 (87ba84b)",
        "the outcome depends on the CPU architecture (`int64(NaN)` is the lowest int64 on amd64, 0 on arm64); "
        "desched averages over the nodes that have the resource at every release",
    ),
    DecisionChange(
        PROFILE_AT_A_TIME,
        "descheduler",
        27,
        27,
        "each profile runs its deschedule plugins and then its balance plugins before the next profile starts",
        "the deschedule plugins of every profile run first, then the balance plugins of every profile",
        "pkg/descheduler/descheduler.go",
        "v0.27.1 / v0.28.0 (931aac9)",
    ),
    DecisionChange(
        SORT_IGNORES_NO_EVICTION,
        "LowNodeUtilization, HighNodeUtilization, RemovePodsViolatingInterPodAntiAffinity",
        27,
        33,
        "`SortPodsBasedOnPriorityLowToHigh` orders pods by priority, then QoS class only: the "
        "`descheduler.alpha.kubernetes.io/prefer-no-eviction` annotation does not count",
        "among pods of equal priority and QoS class, those without the annotation come first",
        "pkg/descheduler/pod/pods.go",
        "v0.33.0 / v0.34.0 (7380aa6)",
    ),
    DecisionChange(
        PROFILE_BUILT_PER_CYCLE,
        "descheduler",
        27,
        34,
        "profiles are built at every cycle: one whose DefaultEvictor cannot be built (`priorityThreshold.name` "
        "names no PriorityClass, or the threshold exceeds system-critical) is skipped with an error and the other "
        "profiles run",
        "profiles are built once at start-up: such a profile stops the descheduler from starting",
        "pkg/descheduler/descheduler.go",
        "v0.34.0 / v0.35.0 (b214c14)",
    ),
    DecisionChange(
        NAMESPACE_SELECTOR_LABELS_ONLY,
        "DefaultEvictor",
        35,
        35,
        "`namespaceLabelSelector` applies only when it has `matchLabels`: one with only `matchExpressions` lets "
        "every namespace pass",
        "a selector with `matchLabels` or `matchExpressions` applies",
        f"{_PLUGINS}/defaultevictor/defaultevictor.go",
        "v0.35.1 / v0.36.0 (6b5f6b4)",
    ),
    DecisionChange(
        "node-limit-error",
        "PodEvictor (every plugin)",
        27,
        30,
        "a plugin asks `NodeLimitExceeded` (evictions from the node equal `maxNoOfPodsToEvictPerNode`) after each "
        "eviction and leaves the node",
        "`EvictPod` returns a node-limit error for the next pod and the plugin leaves the node",
        "pkg/descheduler/evictions/evictions.go",
        "v0.30.2 / v0.31.0 (18d0e4a)",
        "no decision changes: no pod of a node at its limit is evicted either way, and a namespace limit lets the "
        "plugin go on in both",
    ),
    DecisionChange(
        "node-selector-helpers",
        "NodeFit, RemovePodsViolatingNodeAffinity",
        27,
        32,
        "`PodMatchNodeSelector` matches `nodeSelector` and the required terms itself and logs a term it cannot parse",
        "`nodeaffinity.GetRequiredNodeAffinity(pod).Match` from component-helpers, which returns that error",
        "pkg/utils/predicates.go",
        "v0.32.2 / v0.33.0 (88af72b)",
        "no decision changes: both match through the same `LazyErrorNodeSelector` (empty terms and `matchFields` "
        "alike), and a node whose terms fail to parse does not match either way",
    ),
    DecisionChange(
        PDB_INFORMER_REGISTERED,
        "DefaultEvictor",
        27,
        34,
        "the PodDisruptionBudget informer is registered at start-up (v0.32+), so the `PodsWithoutPDB` protection "
        "(`ignorePodsWithoutPDB`) sees the cluster's PDBs",
        "a real run registers it only when the protection first reads it, after the informers started: it never "
        "lists a PDB, every pod counts as uncovered and is protected (upstream #1882); a dry run's sandbox "
        "registers it and sees the PDBs",
        "pkg/descheduler/descheduler.go, pkg/descheduler/kubeclientsandbox.go",
        "v0.34.0 / v0.35.0 (fc6d0d1)",
    ),
)


class ReleaseDecisions:
    """The decisions of one release (a minor number, default the newest)."""

    def __init__(self, minor: int = NEWEST) -> None:
        self.minor = minor
        self._older = frozenset(
            change.key for change in CHANGES if not change.unmodelled and change.first <= minor <= change.last
        )

    def older(self, key: str) -> bool:
        """Whether this release makes the older decision of the modelled change ``key``."""
        return key in self._older

    @property
    def fit_anti_affinity(self) -> bool:
        """Whether this release's NodeFit checks the pod's required pod anti-affinity (``Cluster.fit``'s flag)."""
        return not self.older(FIT_ANTI_AFFINITY)

    def __repr__(self) -> str:
        return f"ReleaseDecisions({self.minor})"


NEWEST_DECISIONS = ReleaseDecisions()


def skipped_profiles(profiles: tuple[Profile, ...], release: ReleaseDecisions, indexed: bool) -> dict[str, str]:
    """The profiles ``release`` skips for the indexer conflict, by name, with the error upstream logs; ``indexed``
    says the informer already holds the indexer (a real run's second and later cycles)."""
    if not release.older(EVICTOR_INDEX_CONFLICT):
        return {}
    message = f"indexer conflict: metadata.ownerReferences: profile skipped (descheduler {render(release.minor)})"
    conflicts = owner_index_conflicts((profile.evictor_args() for profile in profiles), indexed)
    return {profiles[position].name: message for position in conflicts}


def markdown() -> str:
    """The table as the docs show it: one row per change, ordered as :data:`CHANGES`."""
    lines = [
        "| change | plugin | older decision (releases) | newer decision | upstream file | tags read | desched |",
        "|---|---|---|---|---|---|---|",
    ]
    for change in CHANGES:
        span = render(change.first) if change.first == change.last else f"{render(change.first)}-{render(change.last)}"
        status = "modelled" if not change.unmodelled else f"not modelled: {change.unmodelled}"
        lines.append(
            f"| `{change.key}` | {change.plugin} | {change.older} ({span}) | {change.newer} | `{change.source}` "
            f"| {change.tags} | {status} |"
        )
    return "\n".join(lines) + "\n"
