"""Section "Memory at scale" (`heapscope scaling --html FILE`): per MPI library (and --by
value) each per-rank figure's measured points, its fitted law and 95% interval drawn
against the rank count (the law's curve comes from analysis.scaling), the predictions, the
call paths' laws, the memory limit, and the MPI libraries side by side."""
ID, TITLE, SCRIPT = "scaling", "Memory at scale", "scaling.js"


def data(docs: dict) -> dict:
    doc = docs["scaling"]
    keep = ("program", "arguments", "by", "statistic", "method", "runs", "targets", "limit",
            "components", "paths", "limits", "side_by_side", "warnings", "notes")
    return {k: doc[k] for k in keep}
