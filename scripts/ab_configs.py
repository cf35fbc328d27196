"""What the A/B benchmark scripts share (bench_recorder_ab.py, bench_alloc_ab.py,
bench_record_startup.py, bench_stacks.py): the command line `ROUNDS CMD [ARGS...] --
NAME=LIB[:VAR=VALUE,...] ...` read into configurations, one run's CPU time and max RSS,
ratios with percentile-bootstrap intervals."""
import os
import random
import statistics
import sys


def parse(argv, usage, base_env):
    """(rounds, command, [(name, env)]): LIB preloaded unless `none`, each VAR=VALUE set
    over base_env() (a fresh dict per configuration); usage: the line shown on bad input."""
    if len(argv) < 4 or "--" not in argv[2:]:
        sys.exit(usage)
    try:
        rounds = int(argv[1])
    except ValueError:
        sys.exit(usage)
    cut = argv.index("--", 2)
    command, specs = argv[2:cut], argv[cut + 1:]
    configs = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        lib, *settings = rest.split(":")
        env = base_env()
        for pair in ",".join(settings).split(","):
            if pair:
                key, _, value = pair.partition("=")
                env[key] = value
        if lib != "none":
            env["LD_PRELOAD"] = lib
        configs.append((name, env))
    return rounds, command, configs


def interval(values, statistic, resamples=2000):
    """The 95% percentile-bootstrap interval of statistic(values)."""
    stats = sorted(statistic([random.choice(values) for _ in values]) for _ in range(resamples))
    return stats[int(0.025 * resamples)], stats[int(0.975 * resamples) - 1]


def ratios(mine, base):
    """Runs against the baseline's, made in the same rounds: (ratio of medians, its
    interval, median of the per-round ratios, its interval)."""
    pairs = list(zip(mine, base))
    ratio = statistics.median(mine) / statistics.median(base)
    span = interval(pairs, lambda ps: statistics.median([a for a, _ in ps]) /
                    statistics.median([b for _, b in ps]))
    per_round = [a / b for a, b in pairs]
    return ratio, span, statistics.median(per_round), interval(per_round, statistics.median)


def measure(command, env, name, quiet=False):
    """(CPU seconds: user + sys, max RSS KiB) of one run of command (found on PATH) and
    the processes it waited for, from wait4; its output thrown away (stderr too when
    quiet). A failed run ends the script with a line naming it (name: the script's)."""
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            if quiet:
                os.dup2(null, 2)
            os.execvpe(command[0], command, env)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"{name}: {' '.join(command)} failed (wait status {status})")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def environ_without_preload():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env
