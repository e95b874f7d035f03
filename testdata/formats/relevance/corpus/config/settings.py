"""Settings of the demo service."""

DEFAULT_TIMEOUT = 30
RETRY_LIMIT = 3
LOG_LEVEL = "info"
