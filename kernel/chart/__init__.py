"""The descheduler Helm chart as data: what each chart version is, holds by default and renders, read by chart
version, and Helm's own value coalescing (:mod:`.values`). Nothing here reads a user's files."""
