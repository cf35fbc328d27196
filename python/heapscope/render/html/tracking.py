"""Section 4, lifetimes, temporaries, peak and leaks (record --track / --trace): the four
tracking documents as `heapscope lifetimes`, `temporaries`, `peak` and `leaks` build them
(every size, the top 20 stack trace types of each)."""
ID, TITLE, SCRIPT = "tracking", "Lifetimes, temporaries, peak, leaks", "tracking.js"


def data(docs: dict) -> dict:
    if "absent" in docs["lifetimes"]:
        return dict(absent=docs["lifetimes"]["absent"])
    return dict(lifetimes=docs["lifetimes"], temporaries=docs["temporaries"], peak=docs["peak"],
                leaks=docs["leaks"], tracking=docs["tracking"])
