"""The executor: runs a validated policy against a cluster (see issue: executor)."""
