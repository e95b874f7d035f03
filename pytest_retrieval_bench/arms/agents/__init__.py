"""Agents as arms: the bench's closed-tool protocol, one environment per item, built-in policies."""
