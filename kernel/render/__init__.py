"""``desched render``: what a descheduler input becomes once the tool that runs it renders it: the policy the
OpenShift operator generates from a KubeDescheduler, and what the pinned descheduler chart renders from chart
values (its policy ConfigMap, RBAC and workload)."""
