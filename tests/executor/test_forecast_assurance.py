"""How sure ``desched simulate --samples`` is (docs/executor-semantics.md#12-listing-orders): the default forecast
finds a pod chosen in 5 % of listing orders with the probability it states, checked with binomial bounds."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from desched.executor.command import SAMPLES_WITHOUT_N
from desched.executor.forecast import CONFIDENCE, DEFAULT_SAMPLES, assurance, found_share
from tests.executor.test_forecast import counts, forecast, simulate
from tests.executor.test_same_cycle import node, pod, policy

Json = dict[str, object]
TIED = 20  # equal pods, one of which the total limit lets go: each is chosen in 1/20 = 5 % of orders
MEASURED_ORDERS = 4000
SEEDS = 150
ALPHA = 1e-4  # the chance each bound below fails a correct forecast


def binomial_pmf(trials: int, share: float) -> list[float]:
    """P(X = k) for k = 0 .. trials, X ~ Binomial(trials, share) (0 < share < 1), computed in logs."""
    logs = math.log(share), math.log1p(-share)
    return [
        math.exp(
            math.lgamma(trials + 1)
            - math.lgamma(k + 1)
            - math.lgamma(trials - k + 1)
            + k * logs[0]
            + (trials - k) * logs[1]
        )
        for k in range(trials + 1)
    ]


def upper_bound(trials: int, share: float) -> int:
    """The smallest count X ~ Binomial(trials, share) exceeds with probability ALPHA at most."""
    above = 1.0
    for count, chance in enumerate(binomial_pmf(trials, share)):
        above -= chance
        if above <= ALPHA:
            return count
    return trials


def lower_bound(trials: int, share: float) -> int:
    """The largest count X ~ Binomial(trials, share) falls below with probability ALPHA at most."""
    below = 0.0
    for count, chance in enumerate(binomial_pmf(trials, share)):
        if below + chance > ALPHA:
            return count
        below += chance
    return trials


def tied_cluster() -> tuple[Json, list[Json]]:
    """PodLifeTime with ``maxNoOfPodsToEvictTotal: 1`` over TIED pods of one age on one node: the listing order of
    the node's pods alone decides which one goes (upstream's sort by age keeps equal pods as listed)."""
    pods = [pod(f"tie-{i:02}", "b", f"t{i}") for i in range(TIED)]
    for each in pods:
        each["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    lifetime = ("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 86400})
    return policy(lifetime, maxNoOfPodsToEvictTotal=1), [node("a"), node("b"), *pods]


def test_the_default_forecast_finds_a_pod_chosen_in_5_percent_of_orders_with_the_stated_probability(
    tmp_path: Path,
) -> None:
    the_policy, objects = tied_cluster()
    # the rare pick: a pod the listing order (sample 0) does not evict, so only shuffled orders can find it
    measured = forecast(tmp_path, the_policy, objects, "--samples", str(MEASURED_ORDERS + 1), "--seed", "999")
    listed = measured["evictions"][0]["pod"]
    rare = next(name for name in sorted(counts(measured)) if name != listed)
    chosen = counts(measured)[rare]
    # its share of orders is 5 %: the measured count lies within the binomial bounds of 1 in TIED
    assert lower_bound(MEASURED_ORDERS, 1 / TIED) <= chosen <= upper_bound(MEASURED_ORDERS, 1 / TIED), chosen
    share = found_share(DEFAULT_SAMPLES)
    assert share is not None and share <= 100 / TIED
    # the default forecast, over many seeds, misses it no more often than 1 - CONFIDENCE allows
    missed = 0
    for seed in range(SEEDS):
        document = forecast(tmp_path, the_policy, objects, "--samples", "--seed", str(seed))
        assert document["forecast"]["samples"] == DEFAULT_SAMPLES
        missed += rare not in counts(document)
    assert missed <= upper_bound(SEEDS, 1 - CONFIDENCE), missed


def test_the_bounds_fail_a_forecast_of_twenty_orders() -> None:
    """The check above can fail: 20 orders miss a 5 % pick with probability 0.95^19 (38 %), far past the bound."""
    expected_misses = SEEDS * (1 - 1 / TIED) ** 19
    assert lower_bound(SEEDS, (1 - 1 / TIED) ** 19) > upper_bound(SEEDS, 1 - CONFIDENCE)
    assert expected_misses > 4 * upper_bound(SEEDS, 1 - CONFIDENCE)


@pytest.mark.parametrize(("samples", "share"), [(2, 99.0), (20, 21.6), (DEFAULT_SAMPLES, 5.0), (200, 2.3)])
def test_the_share_found_is_the_smallest_whose_miss_chance_is_at_most_one_percent(samples: int, share: float) -> None:
    assert found_share(samples) == share
    assert (1 - share / 100) ** (samples - 1) <= 1 - CONFIDENCE < (1 - (share - 0.1) / 100) ** (samples - 1)


def test_one_order_states_that_nothing_was_drawn() -> None:
    assert found_share(1) is None and "none shuffled" in assurance(1)


def test_the_output_and_the_help_state_how_sure_the_forecast_is(tmp_path: Path) -> None:
    assert int(SAMPLES_WITHOUT_N) == DEFAULT_SAMPLES
    the_policy, objects = tied_cluster()
    document = forecast(tmp_path, the_policy, objects, "--samples")
    assert document["forecast"]["assurance"] == {
        "shuffled": 90,
        "foundSharePercent": 5.0,
        "probability": CONFIDENCE,
        "statement": assurance(DEFAULT_SAMPLES),
    }
    code, out, _ = simulate(tmp_path, the_policy, objects, "--samples", "--jobs", "1")
    assert code == 0 and assurance(DEFAULT_SAMPLES) + "\n" in out
    assert assurance(DEFAULT_SAMPLES) == (
        "91 orders (as listed and 90 shuffled): a pod chosen in 5 % of orders or more is found with probability 99 % "
        "or more"
    )
