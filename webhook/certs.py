"""``desched certs``: a CA and a serving certificate for the admission webhook, optionally installed in the cluster.

Contract:

* Writes ``ca.crt``, ``tls.key`` and ``tls.crt`` (PEM) into ``--out DIR`` (created, mode 0700, when missing), in that
  order, so that a server reloading on a change of ``tls.crt`` finds the matching key already in place. Each file is
  replaced atomically (temporary file beside it, fsync, rename): a reader sees the old file or the new one, never a
  part. Existing files are overwritten (that is how certificates rotate). Modes: ``tls.key`` and ``secret.yaml`` 0600,
  the certificates 0644.
* The certificates are :func:`desched.runtime.tls.generate`'s. Keys are ECDSA P-256, signatures ECDSA with SHA-256. The
CA
  (``basicConstraints`` CA, path length 0, critical; key usage ``keyCertSign``, ``cRLSign``) is valid for
  :data:`CA_DAYS` (10 years); its private key is never written, so it can sign nothing else, and each run makes a new
  CA (``--patch-webhook`` then updates the ``caBundle``). The serving certificate is valid for ``--days`` (1 to
  :data:`CA_DAYS`, default 365), so never longer than the CA. Both start five minutes in the past (clock skew).
  Serving certificate: SANs every ``--dns-name`` (DNS) and ``--ip`` (IP), common name the first ``--dns-name``, key
  usage ``digitalSignature``, ``keyEncipherment`` (critical), extended key usage ``serverAuth``, not a CA.
* ``--secret NAMESPACE/NAME`` also writes ``secret.yaml``, a ``kubernetes.io/tls`` Secret with ``tls.crt``, ``tls.key``
  and ``ca.crt``; ``--apply`` creates it through the API, or replaces it (PUT with the current ``resourceVersion``).
* ``--patch-webhook NAME`` sets ``clientConfig.caBundle`` of every webhook of ValidatingWebhookConfiguration NAME to
  the CA with one JSON patch carrying the ``resourceVersion`` read as a precondition, so that entries added or
  removed meanwhile fail the patch (409) instead of being missed.
* API access (``--apply``, ``--patch-webhook``) as ``desched run``: ``--kubeconfig``/``--context``, else the pod's
  service account when ``KUBERNETES_SERVICE_HOST`` is set, else ``KUBECONFIG`` or ``~/.kube/config``.

Prints one line per file written and per object applied. Everything the user must fix (invalid flags, an unwritable
DIR, API errors) raises :class:`~desched.errors.UsageError` (exit 2); files written before an API error stay written.
"""

from __future__ import annotations

import argparse
import base64
import ipaddress
import os
import re
from typing import NamedTuple
from urllib.parse import quote

from desched.errors import KubeError, UsageError
from desched.runtime.kube import KubeClient
from desched.runtime.tls import BACKDATE, CA_DAYS, DEFAULT_DAYS, Bundle, IPAddress, generate, write_atomic
from desched.tree import Json

__all__ = [
    "BACKDATE",
    "CA_DAYS",
    "CERTS",
    "Bundle",
    "apply_secret",
    "generate",
    "patch_webhook",
    "secret_manifest",
    "write_atomic",
]

WEBHOOK_CONFIGURATIONS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"  # RFC 1123 label
_DNS_NAME = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*", re.IGNORECASE)
_NAMESPACE = re.compile(_LABEL)
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")  # Kubernetes object name
_COMMON_NAME_MAX = 64  # X.520 upper bound


def secret_manifest(namespace: str, name: str, bundle: Bundle) -> Json:
    """The ``kubernetes.io/tls`` Secret holding ``bundle``."""
    data = {"tls.crt": bundle.cert, "tls.key": bundle.key, "ca.crt": bundle.ca}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "kubernetes.io/tls",
        "data": {key: base64.b64encode(value).decode("ascii") for key, value in data.items()},
    }


def apply_secret(cluster: KubeClient, secret: Json) -> str:
    """Create ``secret``, or replace the one of that name; returns what was done."""
    namespace, name = secret["metadata"]["namespace"], secret["metadata"]["name"]
    collection = f"/api/v1/namespaces/{quote(namespace, safe='')}/secrets"
    try:
        try:
            cluster.request("POST", collection, body=secret)
            return f"created secret {namespace}/{name}"
        except KubeError as error:
            if error.status != 409:
                raise
        path = f"{collection}/{quote(name, safe='')}"
        version = cluster.get(path)["metadata"]["resourceVersion"]
        cluster.request("PUT", path, body={**secret, "metadata": {**secret["metadata"], "resourceVersion": version}})
        return f"replaced secret {namespace}/{name}"
    except KubeError as error:
        raise UsageError(f"cannot apply secret {namespace}/{name}: {_one_line(error)}") from None


def patch_webhook(cluster: KubeClient, name: str, ca_pem: bytes) -> str:
    """Set ``clientConfig.caBundle`` of every webhook of ValidatingWebhookConfiguration ``name``; returns what was
    done."""
    path = f"{WEBHOOK_CONFIGURATIONS}/{quote(name, safe='')}"
    try:
        current = cluster.get(path)
        webhooks = current.get("webhooks") or []
        if not webhooks:
            raise UsageError(f"validatingwebhookconfiguration {name} has no webhooks to patch")
        bundle = base64.b64encode(ca_pem).decode("ascii")
        # The resourceVersion read is a precondition: 409 if the entries changed meanwhile (none is missed).
        patch: list[Json] = [
            {"op": "replace", "path": "/metadata/resourceVersion", "value": current["metadata"]["resourceVersion"]}
        ]
        for index, webhook in enumerate(webhooks):
            op = "replace" if "caBundle" in (webhook.get("clientConfig") or {}) else "add"
            patch.append({"op": op, "path": f"/webhooks/{index}/clientConfig/caBundle", "value": bundle})
        cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json")
    except KubeError as error:
        raise UsageError(f"cannot patch validatingwebhookconfiguration {name}: {_one_line(error)}") from None
    count = len(webhooks)
    return f"patched caBundle of {count} webhook{'s' if count != 1 else ''} in validatingwebhookconfiguration {name}"


def _one_line(error: KubeError) -> str:
    return (str(error).strip() or type(error).__name__).splitlines()[0]


class _Request(NamedTuple):
    """The validated command line."""

    dns_names: list[str]
    ips: list[IPAddress]
    secret: tuple[str, str] | None


def _validate(args: argparse.Namespace) -> _Request:
    dns_names = list(dict.fromkeys(args.dns_name))
    for name in dns_names:
        if len(name) > 253 or not _DNS_NAME.fullmatch(name):
            raise UsageError(f"--dns-name {name!r} is not a DNS name (RFC 1123 labels, optionally starting with *.)")
    if len(dns_names[0]) > _COMMON_NAME_MAX:
        raise UsageError(
            f"the first --dns-name becomes the common name, at most {_COMMON_NAME_MAX} characters; "
            "give a shorter one first"
        )
    ips: list[IPAddress] = []
    for text in dict.fromkeys(args.ip):
        try:
            ips.append(ipaddress.ip_address(text))
        except ValueError:
            raise UsageError(f"--ip {text!r} is not an IPv4 or IPv6 address") from None
    if not 1 <= args.days <= CA_DAYS:
        raise UsageError(f"--days must be between 1 and {CA_DAYS} (the CA's validity), not {args.days}")
    secret = None
    if args.secret is not None:
        namespace, _, name = args.secret.partition("/")
        if not (_NAMESPACE.fullmatch(namespace) and _object_name(name)):
            raise UsageError(f"--secret {args.secret!r} is not NAMESPACE/NAME (lowercase Kubernetes names)")
        secret = (namespace, name)
    if args.apply and secret is None:
        raise UsageError("--apply needs --secret NAMESPACE/NAME")
    if args.patch_webhook is not None and not _object_name(args.patch_webhook):
        raise UsageError(f"--patch-webhook {args.patch_webhook!r} is not a Kubernetes object name")
    return _Request(dns_names, ips, secret)


def _object_name(text: str) -> bool:
    """Whether ``text`` is a valid name for most Kubernetes objects (a DNS-1123 subdomain)."""
    return len(text) <= 253 and _SUBDOMAIN.fullmatch(text) is not None


class CertsCommand:
    extra = "webhook"
    help = "generate the admission webhook's CA and serving certificate (optionally install them in the cluster)"
    description = (
        "Write a new CA (ca.crt) and a serving certificate it signs (tls.crt, tls.key; ECDSA P-256) into DIR, each "
        "file replaced atomically. Optionally also write a kubernetes.io/tls Secret manifest (--secret), create or "
        "replace that Secret (--apply) and set the caBundle of a ValidatingWebhookConfiguration (--patch-webhook)."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--out",
            required=True,
            metavar="DIR",
            help="directory for ca.crt, tls.crt, tls.key (created when missing; existing files are replaced)",
        )
        parser.add_argument(
            "--dns-name",
            required=True,
            action="append",
            metavar="NAME",
            help="DNS name the webhook is reached at (repeatable; the first is the common name), "
            "e.g. SERVICE.NAMESPACE.svc",
        )
        parser.add_argument(
            "--ip",
            action="append",
            default=[],
            metavar="ADDRESS",
            help="IP address the webhook is reached at (repeatable)",
        )
        parser.add_argument(
            "--days",
            type=int,
            default=DEFAULT_DAYS,
            metavar="N",
            help=f"validity of the serving certificate in days (default {DEFAULT_DAYS}, at most "
            f"{CA_DAYS}); the CA is valid {CA_DAYS} days",
        )
        parser.add_argument(
            "--secret",
            metavar="NAMESPACE/NAME",
            help="also write DIR/secret.yaml, a kubernetes.io/tls Secret with tls.crt, tls.key, ca.crt",
        )
        parser.add_argument("--apply", action="store_true", help="create or replace the --secret through the API")
        parser.add_argument(
            "--patch-webhook",
            metavar="NAME",
            help="set the caBundle of every webhook of "
            "ValidatingWebhookConfiguration NAME to the new CA, through the API",
        )
        parser.add_argument(
            "--kubeconfig",
            metavar="PATH",
            help="kubeconfig for --apply/--patch-webhook (default: "
            "in-cluster service account when running in a pod, else KUBECONFIG or ~/.kube/config)",
        )
        parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
        parser.epilog = "Exit codes: 0 written (and applied); 2 usage error, unwritable DIR or an API error."

    def run(self, args: argparse.Namespace) -> int:
        import yaml

        request = _validate(args)
        cluster = None
        if args.apply or args.patch_webhook is not None:
            from desched.errors import KubeError
            from desched.runtime.kube import KubeClient

            try:
                cluster = KubeClient.connect(args.kubeconfig, args.context)
            except KubeError as error:
                raise UsageError(str(error)) from None
        bundle = generate(request.dns_names, request.ips, args.days)
        files = {"ca.crt": (bundle.ca, 0o644), "tls.key": (bundle.key, 0o600), "tls.crt": (bundle.cert, 0o644)}
        secret = secret_manifest(*request.secret, bundle) if request.secret else None
        if secret is not None:
            files["secret.yaml"] = (yaml.safe_dump(secret, sort_keys=False).encode("utf-8"), 0o600)
        try:
            os.makedirs(args.out, mode=0o700, exist_ok=True)
        except OSError as error:
            raise UsageError(f"cannot create {args.out}: {error.strerror or error}") from None
        for name, (data, mode) in files.items():
            path = os.path.join(args.out, name)
            try:
                write_atomic(path, data, mode)
            except OSError as error:
                raise UsageError(f"cannot write {path}: {error.strerror or error}") from None
            print(f"wrote {path}")
        if cluster is not None:
            if args.apply and secret is not None:
                print(apply_secret(cluster, secret))
            if args.patch_webhook is not None:
                print(patch_webhook(cluster, args.patch_webhook, bundle.ca))
        return 0


CERTS = CertsCommand()
