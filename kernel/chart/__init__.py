"""The descheduler Helm chart as data: what each chart version is, holds by default and renders, read from the records
scripts/chart-records generates (:mod:`.record`, shaped as :mod:`.schema` says), and Helm's own value coalescing
(:mod:`.values`). Nothing here reads a user's files."""
