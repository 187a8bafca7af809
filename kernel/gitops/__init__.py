"""Where descheduler configuration lives in a GitOps repository: policies raw, in ConfigMaps, in chart values and the
wrappers around them (HelmRelease, Application, kustomize ``helmCharts``, umbrella charts), the namespace kustomize
gives each object, the cluster each file deploys to, and the size limits a file's policies must keep."""
