"""Retrievers under test ("arms"): the public protocol, the built-in baselines, user arms."""
