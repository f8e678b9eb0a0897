"""Writer schemas of Apicurio-framed Avro records, from Apicurio Registry's REST API.

Apicurio's Kafka Connect AvroConverter writes each record's Avro body without
its schema and names the schema by a global id: in the record header
`apicurio.value.globalId` (8 bytes, big-endian; the converter's default), or,
with headers turned off, in front of the body as a 0 byte and the same 8 bytes.
A schema never changes under its id, so each one is fetched once per process
and kept: for the run, and across the continuous service's micro-batches.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterable

from ingestion.errors import UserError

VALUE_ID_HEADER = "apicurio.value.globalId"
KEY_ID_HEADER = "apicurio.key.globalId"
MAGIC_BYTE = 0
ID_BYTES = 8
TIMEOUT_SECONDS = 10

# (registry API URL, global id) -> the Avro schema's JSON text
_FETCHED: dict[tuple[str, int], str] = {}


class RegistryUnavailable(UserError):
    """The registry does not answer; nothing of the batch is committed."""


class UnknownSchemaId(UserError):
    """A record names a schema the registry does not hold."""


def key_schema_id(key: bytes, headers: dict[str, bytes]) -> int | None:
    """The global id of a record key's schema: its header, else its prefix; None if neither."""
    return _schema_id(key, headers, KEY_ID_HEADER)


def value_schema_id(value: bytes, headers: dict[str, bytes]) -> int | None:
    """The global id of a record value's schema: its header, else its prefix; None if neither.

    JSON text never starts with a 0 byte, so a value with an id is Avro.
    """
    return _schema_id(value, headers, VALUE_ID_HEADER)


def _schema_id(data: bytes, headers: dict[str, bytes], header: str) -> int | None:
    if header in headers:
        return int.from_bytes(headers[header], "big")
    if len(data) > ID_BYTES and data[0] == MAGIC_BYTE:
        return int.from_bytes(data[1 : 1 + ID_BYTES], "big")
    return None


def writer_schemas(api: str, ids: Iterable[int]) -> dict[int, str]:
    """The Avro schema text of each global id, fetched once per process."""
    found = {}
    for global_id in sorted(set(ids)):
        if (api, global_id) not in _FETCHED:
            _FETCHED[(api, global_id)] = _fetch(api, global_id)
        found[global_id] = _FETCHED[(api, global_id)]
    return found


def _fetch(api: str, global_id: int) -> str:
    url = f"{api}/ids/globalIds/{global_id}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise UnknownSchemaId(
                f"schema id {global_id} is not in the registry at {api}: the topic was "
                "written against another registry; set schema_registry_url to that one"
            ) from None
        raise RegistryUnavailable(
            f"schema registry at {api} answered HTTP {error.code} for schema id {global_id}; "
            "check the registry (`lakehouse cdc status`) or schema_registry_url"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise RegistryUnavailable(
            f"schema registry at {api} did not answer ({reason}); start the local chain "
            "with `lakehouse cdc up` or set schema_registry_url"
        ) from None
    json.loads(text)  # an Avro schema is JSON; anything else is not a schema
    return text
