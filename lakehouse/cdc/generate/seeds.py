"""Deterministic randomness: every random stream is named and derived from the seed.

Streams are derived by name (not drawn one after another) so a change to how
one table or one batch is generated does not shift any other stream, and so
batch k is the same whatever the number of batches asked for. SHA-256 keeps
the derivation independent of Python's hash randomisation.
"""

from __future__ import annotations

import hashlib
import random


def derive_bytes(seed: int, *labels: object, size: int = 16) -> bytes:
    """`size` bytes that depend only on the seed and the labels."""
    text = ":".join([str(seed), *(str(label) for label in labels)])
    return hashlib.sha256(text.encode()).digest()[:size]


def derive_rng(seed: int, *labels: object) -> random.Random:
    """An independent random stream for one named purpose."""
    return random.Random(int.from_bytes(derive_bytes(seed, *labels, size=8), "big"))
