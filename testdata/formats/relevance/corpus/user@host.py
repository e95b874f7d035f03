"""Parse user@host strings for remote helpers."""


def split_remote(text):
    """Split a remote user and host."""
    user, _, host = text.partition("@")
    return user, host
