"""Password login and logout for the demo service."""


def login(user, password):
    """Check a user's password and open a session."""
    if not password:
        raise ValueError("password is required")
    return {"user": user, "session": "open"}


def logout(session):
    """Close a session."""
    session["session"] = "closed"
    return session
