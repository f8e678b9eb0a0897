"""The one error type a user can act on.

Raised anywhere in the jobs or the platform with a message that names the
cause and the fix; the `lakehouse` command prints it as one line (exit 2)
instead of a stack trace.
"""

from __future__ import annotations


class UserError(Exception):
    """A failure the user can fix; printed as one clear line, exit code 2."""
