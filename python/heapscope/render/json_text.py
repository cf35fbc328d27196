"""Documents as JSON text: the one encoder every --format json and the HTML page use.

Documents are plain data, but may hold numpy numbers and arrays (timelines) and sets;
json_default turns those into lists and numbers.
"""
import json


def json_default(value):
    if hasattr(value, "tolist"):   # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(doc, compact: bool = False) -> str:
    """Indented JSON; `compact` (no spaces) for documents too big to indent quickly."""
    if compact:
        return json.dumps(doc, separators=(",", ":"), default=json_default) + "\n"
    return json.dumps(doc, indent=2, sort_keys=False, default=json_default) + "\n"
