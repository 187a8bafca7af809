"""The descheduler's own deployment as the cluster receives it: every container that runs the descheduler or
``desched run`` and the release it runs, the policy and workloads the chart renders from values, and the RBAC its
service account is granted."""
