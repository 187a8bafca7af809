"""Policy-level checks outside plugin args (docs/policy-api.md#51-what-upstream-checks), and upstream's rendering of the
whole phase C error.

``validate_policy`` mirrors the metrics-provider half of ``validateDeschedulerConfiguration`` (v0.33+; v0.33 also
demanded an ``https`` Prometheus URL) and the start-up parse of the top-level ``nodeSelector`` (phase E).
``render_policy_errors`` joins per-profile plugin errors and policy errors the way each release printed them.
"""

from __future__ import annotations

from typing import Any

from desched.validation import gourl
from desched.validation.core import ArgError, Path, aggregate, boolean, items, mapping, string
from desched.validation.gofmt import go_quote
from desched.validation.labels import parse_label_selector_string

__all__ = ["render_policy_errors", "validate_policy"]


def _metrics_provider_errors(policy: dict[Any, Any], target: int) -> list[ArgError]:
    errors: list[ArgError] = []
    first_by_source: dict[str, int] = {}
    providers = items(policy.get("metricsProviders")) or []
    for index, provider in enumerate(providers):
        if provider is not None and not isinstance(provider, dict):
            continue
        fields = provider or {}
        source = string(fields.get("source"))
        if source in first_by_source:
            path: Path = ("metricsProviders", index, "source") if "source" in fields else ("metricsProviders", index)
            errors.append(
                ArgError(
                    f"metric provider {go_quote(source)} is already configured, "
                    "each source can be configured only once",
                    path,
                )
            )
        else:
            first_by_source[source] = index
    collector = mapping(policy.get("metricsCollector"))
    if "KubernetesMetrics" in first_by_source and collector is not None and boolean(collector.get("enabled")):
        errors.append(
            ArgError(
                "it is not allowed to combine metrics provider when metrics collector is enabled",
                ("metricsCollector", "enabled"),
            )
        )
    if "Prometheus" in first_by_source:
        index = first_by_source["Prometheus"]
        errors.extend(_prometheus_errors(mapping(providers[index]) or {}, ("metricsProviders", index), target))
    return errors


def _prometheus_errors(provider: dict[Any, Any], where: Path, target: int) -> list[ArgError]:
    prometheus = mapping(provider.get("prometheus"))
    if prometheus is None:
        return [ArgError("prometheus configuration is required when prometheus source is enabled", where)]
    errors: list[ArgError] = []
    here: Path = (*where, "prometheus")
    url = string(prometheus.get("url"))
    url_path: Path = (*here, "url") if "url" in prometheus else here
    if url == "":
        errors.append(ArgError("prometheus URL is required when prometheus is enabled", url_path))
    else:
        parse_error = gourl.parse_error(url)
        if parse_error is not None:
            errors.append(ArgError(f"error parsing prometheus URL: {parse_error}", url_path))
        elif target == 33 and gourl.scheme(url) != "https":
            errors.append(
                ArgError(
                    f"prometheus URL's scheme is not https, got {go_quote(gourl.scheme(url))} instead",
                    url_path,
                    "version",
                )
            )
    if prometheus.get("authToken") is not None:
        token = mapping(prometheus.get("authToken")) or {}
        reference = mapping(token.get("secretReference"))
        token_path: Path = (*here, "authToken")
        if reference is None:
            errors.append(
                ArgError("prometheus authToken secret is expected to be set when authToken field is", token_path)
            )
        elif string(reference.get("name")) == "" or string(reference.get("namespace")) == "":
            errors.append(
                ArgError(
                    "prometheus authToken secret reference does not set both namespace and name",
                    (*token_path, "secretReference"),
                )
            )
    return errors


def validate_policy(policy: Any, target: int) -> list[ArgError]:
    """Policy-level errors at release ``target``, paths relative to the policy root, in upstream's order.

    Plugin args are not validated here (see ``validate_args``); neither are checks that need a cluster.
    """
    document = mapping(policy)
    if document is None:
        return []
    errors: list[ArgError] = []
    if target >= 33:
        errors.extend(_metrics_provider_errors(document, target))
    node_selector = document.get("nodeSelector")
    if isinstance(node_selector, str):
        parse_error = parse_label_selector_string(node_selector, target)
        if parse_error is not None:
            errors.append(ArgError(parse_error, ("nodeSelector",)))
    return errors


def render_policy_errors(plugin_errors: list[tuple[str, str]], policy_errors: list[str], target: int) -> str:
    """The error text phase C ends with, from ``(profile name, plugin error text)`` pairs and policy-level messages.

    Each plugin error becomes ``in profile <name>: <text>``. v0.28 on aggregate everything (``[a, b]``); v0.27
    chained the profile errors with ``": "``, and had no policy-level checks.
    """
    messages = [f"in profile {profile}: {text}" for profile, text in plugin_errors]
    if target <= 27:
        return ": ".join(messages)
    return aggregate(messages + policy_errors)
