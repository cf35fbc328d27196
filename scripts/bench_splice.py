"""Put a generated Markdown fragment into a document between marker lines.

    python3 scripts/bench_splice.py DOC NAME FRAGMENT

replaces what lies between "<!-- bench:NAME:begin -->" and "<!-- bench:NAME:end -->"
in DOC with FRAGMENT's text (the markers stay). Without the markers (or without
DOC) nothing changes and it says where the fragment is. Used by scripts/bench_*.sh.
"""
import os
import sys
import tempfile


def main(doc: str, name: str, fragment: str) -> int:
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    with open(fragment) as f:
        text = f.read()
    try:
        with open(doc) as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    if begin not in current or end not in current:
        print(f"bench_splice: {doc} has no {begin} ... {end} lines; the tables are in {fragment}")
        return 0
    head, rest = current.split(begin, 1)
    _old, tail = rest.split(end, 1)
    new = f"{head}{begin}\n{text.rstrip()}\n{end}{tail}"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(doc)) or ".")
    with os.fdopen(fd, "w") as f:
        f.write(new)
    os.replace(tmp, doc)
    print(f"bench_splice: {doc} updated ({name})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
