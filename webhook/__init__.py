"""The validating admission webhook (see issue: webhook)."""
