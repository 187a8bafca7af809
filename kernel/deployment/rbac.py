"""Kubernetes RBAC as the API server evaluates it, for the descheduler's service account (docs/deployment-rules.md).

:class:`Grants` reads the (Cluster)Roles and their bindings of a set of documents and answers whether a service
account may do a verb on a resource: a ClusterRoleBinding grants its ClusterRole in every namespace and on
cluster-scoped resources; a RoleBinding grants its Role or ClusterRole in its own namespace only; ``*`` in
``apiGroups``, ``resources`` or ``verbs`` matches everything, and ``resourceNames`` restricts a rule to those names.
"""

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from desched.tree import list_or_empty, mapping_or_empty, same_namespace, text_or_none

__all__ = ["Grants", "Permission"]

_ROLE_KINDS = ("ClusterRole", "Role")
_BINDING_KINDS = ("ClusterRoleBinding", "RoleBinding")


class Permission(NamedTuple):
    """A verb on a resource (``group`` ``""`` is the core group), in ``namespace`` (``None``: cluster-wide or any
    namespace), on the object ``name`` if the verb names one."""

    group: str
    resource: str
    verb: str
    namespace: str | None = None
    name: str | None = None

    def __str__(self) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.verb} {resource}{where}"


class _Rule(NamedTuple):
    groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    names: frozenset[str]  # empty: every name

    def allows(self, wanted: Permission) -> bool:
        return (
            ("*" in self.groups or wanted.group in self.groups)
            and ("*" in self.resources or wanted.resource in self.resources)
            and ("*" in self.verbs or wanted.verb in self.verbs)
            and (not self.names or (wanted.name is not None and wanted.name in self.names))
        )


class _Binding(NamedTuple):
    namespace: str | None  # a RoleBinding's namespace; None for a ClusterRoleBinding
    role: tuple[str, str | None, str]  # (kind, namespace of a Role, name)


class Grants:
    """The RBAC objects of some documents (``(file, object)`` pairs, lists flattened)."""

    def __init__(self, documents: Iterable[tuple[str, Any]] = ()) -> None:
        self._roles: dict[tuple[str, str | None, str], list[_Rule]] = {}
        self._bindings: dict[tuple[str | None, str], list[_Binding]] = {}  # (SA namespace, SA name) -> bindings
        self._add(documents)

    def _add(self, documents: Iterable[tuple[str, Any]]) -> None:
        for _, doc in documents:
            kind = doc.get("kind") if isinstance(doc, Mapping) else None
            if kind in _ROLE_KINDS:
                self._add_role(doc, kind)
            elif kind in _BINDING_KINDS:
                self._add_binding(doc, kind)

    def _add_role(self, doc: Mapping[str, Any], kind: str) -> None:
        metadata = mapping_or_empty(doc.get("metadata"))
        name = metadata.get("name")
        if not isinstance(name, str):
            return
        namespace = text_or_none(metadata.get("namespace")) if kind == "Role" else None
        rules = doc.get("rules")
        self._roles[(kind, namespace, name)] = [
            _Rule(_set(rule.get("apiGroups")), _set(rule.get("resources")), _set(rule.get("verbs")),
                  _set(rule.get("resourceNames")))
            for rule in map(mapping_or_empty, list_or_empty(rules))
        ]  # fmt: skip

    def _add_binding(self, doc: Mapping[str, Any], kind: str) -> None:
        metadata = mapping_or_empty(doc.get("metadata"))
        namespace = text_or_none(metadata.get("namespace")) if kind == "RoleBinding" else None
        ref = mapping_or_empty(doc.get("roleRef"))
        role_kind, role_name = ref.get("kind"), ref.get("name")
        if role_kind not in _ROLE_KINDS or not isinstance(role_name, str):
            return
        role = (str(role_kind), namespace if role_kind == "Role" else None, role_name)
        subjects = doc.get("subjects")
        for subject in map(mapping_or_empty, list_or_empty(subjects)):
            if subject.get("kind") != "ServiceAccount" or not isinstance(subject.get("name"), str):
                continue
            account = (text_or_none(subject.get("namespace")) or namespace, subject["name"])
            self._bindings.setdefault(account, []).append(_Binding(namespace, role))

    def extended(self, documents: Iterable[tuple[str, Any]]) -> "Grants":
        """These grants with the (Cluster)Roles and bindings of ``documents`` added (the same roles by name: theirs);
        ``self`` is unchanged."""
        found = Grants()
        found._roles = dict(self._roles)
        found._bindings = {account: list(bindings) for account, bindings in self._bindings.items()}
        found._add(documents)
        return found

    def bound(self, namespace: str | None, account: str) -> bool:
        """Whether any binding of these documents names the service account."""
        return any(name == account and same_namespace(namespace, ns) for ns, name in self._bindings)

    def allows(self, namespace: str | None, account: str, wanted: Permission) -> bool:
        """Whether the service account ``namespace/account`` may do ``wanted``."""
        for (ns, name), bindings in self._bindings.items():
            if name != account or not same_namespace(namespace, ns):
                continue
            for binding in bindings:
                if binding.namespace is not None and (
                    wanted.namespace is None or wanted.namespace != binding.namespace
                ):
                    continue  # a RoleBinding grants in its namespace only: never cluster-wide
                role = self._roles.get(binding.role)
                if role is None and binding.role[0] == "Role":
                    role = self._roles.get(("Role", None, binding.role[2]))  # a Role without a namespace set
                if role is not None and any(rule.allows(wanted) for rule in role):
                    return True
        return False


def _set(value: Any) -> frozenset[str]:
    return frozenset(item for item in value if isinstance(item, str)) if isinstance(value, list) else frozenset()
