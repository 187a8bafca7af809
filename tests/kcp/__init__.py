"""A real Kubernetes control plane on loopback for tests and benchmarks.

``install`` builds kube-apiserver and kube-controller-manager once from Debian's ``kubernetes`` source package (v1.20.2)
and caches them outside the repository; ``controlplane`` starts etcd, the apiserver and the controller manager on
127.0.0.1; ``api`` is a small JSON REST client; ``kubelet`` plays the node agent; ``snapshot`` loads a cluster snapshot.
``scripts/control-plane`` is the command-line face of all this.
"""
