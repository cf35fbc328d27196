"""Section 5, memory allocated and not used (record --access): the `heapscope access`
document, every call path (the bytes never touched first), per region, per rank, and an
MPI job's job file."""
ID, TITLE, SCRIPT = "access", "Memory allocated and not used", "access.js"


def data(docs: dict) -> dict:
    return docs["access"]
