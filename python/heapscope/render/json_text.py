"""Documents as JSON text: the one encoder every --format json and the HTML page use.

Documents are plain data, but may hold numpy numbers and arrays (timelines) and sets;
json_default turns those into lists and numbers. A top-level value with a
json_pieces(dumps) method (the job report's per_rank rows of 10^5 ranks,
analysis.job_columns.RankRows) writes its own compact JSON, in pieces that joined are
the same text as json.dumps of its tolist().
"""
import json
from functools import partial


def json_default(value):
    if hasattr(value, "tolist"):   # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(doc, compact: bool = False) -> str:
    """Indented JSON; `compact` (no spaces) for documents too big to indent quickly."""
    if compact:
        dumps = partial(json.dumps, separators=(",", ":"), default=json_default)
        if isinstance(doc, dict) and any(hasattr(v, "json_pieces") for v in doc.values()):
            # the dict written key by key as json.dumps does, such values by themselves
            parts = []
            for k, v in doc.items():
                parts += [",", dumps(k), ":"]
                if hasattr(v, "json_pieces"):
                    parts += v.json_pieces(dumps)
                else:
                    parts.append(dumps(v))
            parts[0] = "{"
            parts.append("}\n")
            return "".join(parts)
        return dumps(doc) + "\n"
    return json.dumps(doc, indent=2, sort_keys=False, default=json_default) + "\n"
