"""Services a running desched uses: the Kubernetes client (:mod:`.kube`), TLS for its servers, Prometheus metrics,
JSON reports written a piece at a time, and Python's garbage collector paused around bulk work."""
