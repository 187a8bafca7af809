"""The descheduler's own deployment, the one model of it: every container that runs the descheduler or ``desched
run``, in a workload of any kind (:data:`~desched.workloads.model.WORKLOAD_KINDS`), with its command line read as the
descheduler reads it and the release it follows (docs/deployment-rules.md). The DS6xx rules judge these records, the
webhook judges an admitted workload's, and the release inference (:mod:`desched.deployment.releases`) asks them which
release reads a policy.

The descheduler parses its command line with pflag (``cmd/descheduler/app/options`` of kubernetes-sigs/descheduler):
``--flag value`` and ``--flag=value`` for a flag that takes a value, ``--flag`` alone or ``--flag=false`` for a
boolean, whose next word is never its value. A container runs the descheduler when its image is the descheduler's
(a repository path ending in ``descheduler``) or its command names the ``descheduler`` binary; it runs ``desched run``
when its image or its command is ``desched`` and the subcommand ``run``.
"""

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from desched.gitops.wrappers import object_label
from desched.goduration import parse_duration
from desched.reading.yamlsrc import YMap, YSeq, locate
from desched.tree import Path, at_path, list_or_empty, mapping_or_empty, text_or_none
from desched.versions import release_version
from desched.workloads.model import WORKLOAD_KINDS

__all__ = ["BOOLEAN_FLAGS", "DeschedulerRun", "Flag", "NamedRelease", "descheduler_runs", "parse_flags"]

#: The descheduler's boolean flags (its own, component-base's leader election and klog's): pflag never reads the
#: next word as their value.
BOOLEAN_FLAGS = frozenset(
    {
        "dry-run", "leader-elect", "disable-metrics", "permit-address-sharing", "permit-port-sharing",
        "logtostderr", "alsologtostderr", "add_dir_header", "skip_headers", "skip_log_headers", "one_output",
        "enable-contention-profiling", "enable-profiling",
    }
)  # fmt: skip
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # Go strconv.ParseBool


class Flag(NamedTuple):
    """One flag of a command line: its name (no dashes), its value as written (``true`` for a bare boolean) and the
    path of the word that sets it in the workload's document."""

    name: str
    value: str
    path: Path


def parse_flags(words: Iterable[tuple[str, Path]]) -> dict[str, Flag]:
    """The flags of a command line given as (word, path) pairs, as pflag reads them; the last of a repeated flag
    wins, as in pflag."""
    listed = list(words)
    flags: dict[str, Flag] = {}
    index = 0
    while index < len(listed):
        word, path = listed[index]
        index += 1
        if not word.startswith("-") or word in ("-", "--"):
            continue
        name, equals, value = word.lstrip("-").partition("=")
        if not equals and name not in BOOLEAN_FLAGS:
            if index < len(listed) and not listed[index][0].startswith("-"):
                value = listed[index][0]
                index += 1
        elif not equals:
            value = "true"
        flags[name] = Flag(name, value, path)
    return flags


class NamedRelease(NamedTuple):
    """The descheduler release a container follows (``minor``, ``version`` as ``v0.NN[.P]``), what names it
    (``source``: ``the image <image>``, or ``--target-version <value>``) and where that is written (``path``)."""

    minor: int
    version: str
    source: str
    path: Path


class DeschedulerRun(NamedTuple):
    """One container that runs the descheduler or ``desched run`` (:attr:`program`), in the workload ``document`` of
    ``kind`` found in ``file``."""

    file: str
    document: Any
    kind: str
    namespace: str | None
    name: str
    container: Path  # the container's path in the document
    image: str
    flags: dict[str, Flag]
    #: Where a path of the document is written, for a workload desched rendered (the chart's, from values); ``None``
    #: for a workload written in ``file``.
    locator: Callable[[Path], tuple[str, int, int]] | None = None
    title: str | None = None  #: how findings name a rendered workload
    #: The values setting behind a path of a rendered workload (``None``: the values cannot set it)
    naming: Callable[[Path], str | None] | None = None
    #: The v1alpha2 policy tree this descheduler runs, when the repository shows it (its mounted ConfigMap's key, the
    #: chart's rendered policy)
    policy: Mapping[str, Any] | None = None
    #: RBAC objects that come with this descheduler alone (the chart's own ClusterRole and binding), as
    #: ``(file, object)`` pairs: another install's never grant it anything
    rbac: tuple[tuple[str, Any], ...] = ()
    program: str = "descheduler"  #: ``descheduler`` (upstream's binary) or ``desched`` (``desched run``)
    #: Where a path of a workload kustomize patches is written: in the patch that set it, else in ``file``
    #: (:meth:`desched.gitops.patches.PatchedObject.where`); ``None`` for a workload no patch changed
    written_at: Callable[[Path], tuple[str, int, int]] | None = None
    #: Why the install of a rendered workload fails before anything runs, as ``(path, reason)`` pairs: the chart
    #: refuses to render it, or the API server rejects what it renders
    refused: tuple[tuple[Path, str], ...] = ()

    @property
    def label(self) -> str:
        """``Kind namespace/name``, as findings name the workload."""
        return self.title or object_label(self.document, self.kind)

    def where(self, path: Path = ()) -> tuple[str, int, int]:
        """``(file, line, column)`` of ``path`` in the document (its nearest existing ancestor)."""
        if self.locator is not None:
            return self.locator(path)
        if self.written_at is not None:
            return self.written_at(path)
        position = locate(self.document, path) if isinstance(self.document, (YMap, YSeq)) else None
        line, column = position if position else (1, 1)
        return self.file, line, column

    def setting(self, path: Path) -> str | None:
        """How the user sets the field at ``path``: its dotted path in the workload, or for a rendered workload the
        values key behind it; ``None`` when the values cannot set it (the chart's template fixes it)."""
        if self.naming is not None:
            return self.naming(path)
        return ".".join(str(part) for part in path)

    def where_field(self, path: Path, *, instead: Path) -> tuple[str, int, int]:
        """Where the field at ``path`` is written; when it is absent from a written workload, where ``instead`` is
        (a rendered workload places every field on the values behind it, set or not)."""
        if self.locator is None and at_path(self.document, path) is None:
            return self.where(instead)
        return self.where(path)

    def at_flag(self, name: str) -> tuple[str, int, int]:
        """Where flag ``name`` is written, else where the container's arguments are."""
        flag = self.flags.get(name)
        if flag is not None:
            return self.where(flag.path)
        container = at_path(self.document, self.container)
        for key in ("args", "command", "name"):
            if isinstance(container, Mapping) and key in container:
                return self.where((*self.container, key))
        return self.where(self.container)

    def enabled(self, name: str) -> bool:
        """Whether boolean flag ``name`` is on (Go's ``strconv.ParseBool``; an unreadable value is off)."""
        flag = self.flags.get(name)
        return flag is not None and flag.value in _TRUE

    def duration(self, name: str) -> int | None:
        """Nanoseconds of duration flag ``name``: 0 when absent (the descheduler's default), ``None`` when its value
        is not a Go duration."""
        flag = self.flags.get(name)
        if flag is None:
            return 0
        try:
            return parse_duration(flag.value)
        except ValueError:
            return None

    @property
    def container_spec(self) -> Mapping[str, Any]:
        """The container that runs the descheduler, as written."""
        return mapping_or_empty(at_path(self.document, self.container))

    @property
    def pod(self) -> Mapping[str, Any]:
        """The pod spec that holds the container."""
        return mapping_or_empty(at_path(self.document, self.container[:-2]))

    def port(self, value: Any) -> int | None:
        """A probe's port: a number, or the ``containerPort`` of the container's port of that name."""
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        ports = self.container_spec.get("ports")
        for port in map(mapping_or_empty, list_or_empty(ports)):
            number = port.get("containerPort")
            if port.get("name") == value and isinstance(number, int):
                return number
        return None

    @property
    def policy_keys(self) -> list[tuple[str, str]]:
        """The (ConfigMap, key) pairs ``--policy-config-file`` can be, through the container's volume mounts."""
        flag = self.flags.get("policy-config-file")
        volumes = self.pod.get("volumes")
        named = {v.get("name"): v for v in map(mapping_or_empty, list_or_empty(volumes))}
        return list(_mounted_keys(flag.value, self.container_spec, named)) if flag is not None else []

    @property
    def image_tag(self) -> str | None:
        """The tag of the container's image (``None`` without one; a digest is not a tag)."""
        name = self.image.split("@", 1)[0].rsplit("/", 1)[-1]
        return name.split(":", 1)[1] if ":" in name else None

    @property
    def release(self) -> NamedRelease | None:
        """The descheduler release this container follows: the image's tag (``v0.36.0``), for ``desched run`` its
        ``--target-version``; ``None`` when they name none."""
        if self.program == "desched":
            target = self.flags.get("target-version")
            if target is None:
                return None
            found = release_version(target.value)
            source, path = f"--target-version {target.value}", target.path
        else:
            found = release_version(self.image_tag)
            source, path = f"the image {self.image}", (*self.container, "image")
        return NamedRelease(*found, source, path) if found is not None else None

    @property
    def release_minor(self) -> int | None:
        """The minor of :attr:`release` (``v0.36.0`` gives 36)."""
        release = self.release
        return release.minor if release is not None else None

    @property
    def service_account(self) -> str:
        """The pod's service account (``default`` when it names none)."""
        account = self.pod.get("serviceAccountName") or self.pod.get("serviceAccount")
        return account if isinstance(account, str) and account else "default"

    @property
    def replicas(self) -> int:
        """``spec.replicas`` of a kind it scales (a Deployment, a StatefulSet, ...; 1 when absent), 1 for anything
        else."""
        if not WORKLOAD_KINDS[self.kind].scalable:
            return 1
        value = mapping_or_empty(self.document.get("spec")).get("replicas", 1)
        return value if isinstance(value, int) and not isinstance(value, bool) else 1


def descheduler_runs(documents: Iterable[tuple[str, Any]], *, patches: bool = False) -> Iterator[DeschedulerRun]:
    """Every container that runs the descheduler or ``desched run`` among ``documents`` (``(file, object)`` pairs,
    lists flattened), in a workload of any kind. With ``patches`` the documents are kustomize patches of a remote
    base, which may name neither the image nor the command: a container named ``descheduler`` (as upstream's
    manifests name it) runs the descheduler too."""
    for file, doc in documents:
        kind = doc.get("kind") if isinstance(doc, Mapping) else None
        if not isinstance(kind, str) or kind not in WORKLOAD_KINDS:
            continue
        pod_path: Path = (*WORKLOAD_KINDS[kind].template, "spec")
        pod = mapping_or_empty(at_path(doc, pod_path))
        metadata = mapping_or_empty(doc.get("metadata"))
        name = metadata.get("name")
        namespace = text_or_none(metadata.get("namespace"))
        containers = pod.get("containers")
        for index, container in enumerate(list_or_empty(containers)):
            container = mapping_or_empty(container)
            path: Path = (*pod_path, "containers", index)
            words = list(_words(container, path, namespace))
            image = container.get("image")
            image = image if isinstance(image, str) else ""
            program = _program(image, [word for word, _ in words])
            if program is None and patches and container.get("name") == "descheduler":
                program = "descheduler"
            if program is None:
                continue
            flags = parse_flags(words) if program == "descheduler" else _desched_run_flags(words, path)
            yield DeschedulerRun(
                file, doc, kind, namespace, name if isinstance(name, str) else "", path, image, flags,
                program=program,
            )  # fmt: skip


def _mounted_keys(
    path: str, container: Mapping[str, Any], volumes: Mapping[Any, Mapping[str, Any]]
) -> Iterator[tuple[str, str]]:
    """The (ConfigMap, key) pairs the file ``path`` of ``container`` can be, through its volume mounts."""
    for mount in map(mapping_or_empty, list_or_empty(container.get("volumeMounts"))):
        mount_path = text_or_none(mount.get("mountPath"))
        if mount_path is None:
            continue
        sub_path = text_or_none(mount.get("subPath"))
        if sub_path is not None:
            if os.path.normpath(mount_path) != os.path.normpath(path):
                continue
            relative = sub_path
        else:
            prefix = mount_path.rstrip("/") + "/"
            if not path.startswith(prefix):
                continue
            relative = path[len(prefix) :]
        volume = volumes.get(mount.get("name"), {})
        sources = [mapping_or_empty(volume.get("configMap"))]
        sources += [
            mapping_or_empty(mapping_or_empty(source).get("configMap"))
            for source in list_or_empty(mapping_or_empty(volume.get("projected")).get("sources"))
        ]
        for source in sources:
            name = text_or_none(source.get("name"))
            if name is None:
                continue
            items = [mapping_or_empty(item) for item in list_or_empty(source.get("items"))]
            keys = [item.get("key") for item in items if item.get("path") == relative] if items else [relative]
            yield from ((name, key) for key in keys if isinstance(key, str))


def _words(container: Mapping[str, Any], path: Path, namespace: str | None) -> Iterator[tuple[str, Path]]:
    """The container's command and arguments, with ``$(VAR)`` references to its environment expanded as the kubelet
    expands them (a literal ``value``, or the pod's namespace through ``fieldRef: metadata.namespace`` when the
    workload names it; anything else stays as written)."""
    env: dict[str, str] = {}
    listed_env = container.get("env")
    for variable in map(mapping_or_empty, list_or_empty(listed_env)):
        field = at_path(variable, ("valueFrom", "fieldRef", "fieldPath"))
        value = variable.get("value") if field is None else namespace if field == "metadata.namespace" else None
        if isinstance(variable.get("name"), str) and isinstance(value, str):
            env[variable["name"]] = value
    for key in ("command", "args"):
        listed = container.get(key)
        for index, word in enumerate(list_or_empty(listed)):
            if isinstance(word, str):
                yield _REFERENCE.sub(lambda match: env.get(match[1], match[0]), word), (*path, key, index)


_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def _program(image: str, words: list[str]) -> str | None:
    """``descheduler`` for a container that runs upstream's binary, ``desched`` for one that runs ``desched run``."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    first = words[0].rsplit("/", 1)[-1] if words else ""
    if name == "descheduler" or first == "descheduler":
        return "descheduler"  # registry.k8s.io/descheduler/descheduler:v0.36.0, a mirror of it, a digest
    subcommand = words[1:2] if first == "desched" else words[:1]
    return "desched" if (name == "desched" or first == "desched") and subcommand == ["run"] else None


#: ``desched run``'s flags under the names of the descheduler's flags they stand for (executor/live.py).
_DESCHED_ALIASES = {"policy": "policy-config-file", "interval": "descheduling-interval"}


def _desched_run_flags(words: list[tuple[str, Path]], container: Path) -> dict[str, Flag]:
    """The flags of a ``desched run`` command line (argparse reads ``--f v`` and ``--f=v`` as pflag does, and its
    booleans are the same), under the descheduler's names: ``--policy`` as ``--policy-config-file``, ``--interval``
    as ``--descheduling-interval``, and the port of ``--metrics-bind-address`` as ``--secure-port`` (``0``, no
    server, without it: the executor serves /healthz only with its metrics)."""
    flags = {_DESCHED_ALIASES.get(name, name): flag._replace(name=_DESCHED_ALIASES.get(name, name))
             for name, flag in parse_flags(words).items()}  # fmt: skip
    address = flags.get("metrics-bind-address")
    port = address.value.rpartition(":")[2] if address is not None else "0"
    flags["secure-port"] = Flag("secure-port", port, address.path if address is not None else container)
    return flags
