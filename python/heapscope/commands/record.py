"""`heapscope record [options] -- cmd args...`: run a program under the recorder.

Preloads libheapscope.so (then the chosen allocator, then any LD_PRELOAD the user
had), passes the options as HEAPSCOPE_* environment variables, runs the program,
forwards the signals sent to heapscope itself (FORWARDED), returns the program's exit code
(128+N when a signal N killed it; EXIT_INCOMPLETE when it succeeded but a profile is
incomplete) and names the profile files written.
"""
import argparse
import os
import re
import signal
import sys
import time

from heapscope import mpi_layer
from heapscope.allocators import ALL as ALLOCATORS, require_allocator
from heapscope.analysis.selection import SizeSet
from heapscope.commands.options import HelpFormatter, add_selection_options, duration_ns
from heapscope.errors import HeapscopeError
from heapscope.launch import check_program, program_words, run_forwarding
from heapscope.native import library_path
from heapscope.profile.names import is_job_file, rank_of

ENVIRONMENT = """\
environment (what record sets; set them yourself to record without this command,
e.g. under srun or mpirun: LD_PRELOAD=<path of libheapscope.so> plus these):
  HEAPSCOPE_OUTPUT_DIR     directory of the profile files (default: the current one);
                           one file per process: heapscope.<host>.<pid>.hsp, or
                           heapscope.<job>.r<rank>.<host>.<pid>.hsp under MPI/Slurm
  HEAPSCOPE_STACK_SIZES    sizes whose stacks are recorded: "12,24,100-200" or "all"
                           (unset: counts only)
  HEAPSCOPE_STACK_REGIONS  only in these regions: "local,reduce" (a region's name or
                           its path "split/local"; "(none)" = outside any region)
  HEAPSCOPE_STACK_DEPTH    frames per stack, 1..256 (default 64)
  HEAPSCOPE_SAMPLE_BYTES   sampled stacks in every size: one a mean N bytes apart
                           (instead of HEAPSCOPE_STACK_SIZES); HEAPSCOPE_SAMPLE_SEED fixes
                           the random choice
  HEAPSCOPE_UNWIND         dwarf (default) or fp (frame pointers; DWARF after the first
                           32 stacks if most of them stop after 1 or 2 frames)
  HEAPSCOPE_UNWIND_CACHE   0: every DWARF stack by libunwind alone, without the unwind
                           cache (to compare; 2-4x the cost on deep stacks)
  HEAPSCOPE_UNWIND_STATS   1: one line at exit on what the unwind cache did (stacks from
                           call sites seen before, walked, left to libunwind)
  HEAPSCOPE_TRACK          1: tracking mode (lifetimes, temporaries, peak, leaks)
  HEAPSCOPE_TEMP_BETWEEN   a temporary has at most N other allocations in between (0)
  HEAPSCOPE_TEMP_NS        and lives at most this many ns (unset: no time bound)
  HEAPSCOPE_TRACK_MAX_BLOCKS  live blocks the tracking table holds (8388608)
  HEAPSCOPE_TRACK_GENERATION_BITS  8..35: the bits of a block's age stamp (35; the tests
                           make blocks old sooner with fewer)
  HEAPSCOPE_PER_RANK       MPI: ranks that keep their file besides the job file
                           heapscope.<job>.job.hsj: all, none or N (default 4, plus
                           each figure's min/max ranks)
  HEAPSCOPE_ACCESS         1: measure which pages of the sampled blocks were used (needs
                           HEAPSCOPE_SAMPLE_BYTES); HEAPSCOPE_ACCESS_POLL_MS: how often the
                           live ones are looked at (default 10); HEAPSCOPE_ACCESS_PAGES:
                           scan (PAGEMAP_SCAN, Linux >= 6.7) or pagemap (its flags),
                           default the best the kernel has
  HEAPSCOPE_TRACE          1: event trace mode (every allocation and free)
  HEAPSCOPE_TRACE_COMPRESS 0: raw trace chunks (default: zstd, ~40% smaller, more CPU)
  HEAPSCOPE_TIMELINE_MS    heap/RSS/PSS sampling interval in ms (default 100; 0 = no
                           timeline); HEAPSCOPE_TIMELINE_FLUSH_MS: written every (1000)
  HEAPSCOPE_TIMELINE_HEAP  1: samples include the heap in use (0 by default; record
                           sets 1 for MPI programs and launchers)
  HEAPSCOPE_MPI            auto: each exec'd program that links an MPI gets the MPI
                           layer of that MPI in its LD_PRELOAD, others none (record
                           sets it); openmpi|mpich: that layer for any MPI program
  HEAPSCOPE_CALIPER_MS     MPI calipers: at most one measured call per N ms (default 10;
                           0 = every call, off = none)
  HEAPSCOPE_SNAPSHOT_MS    a snapshot every N ms as well (default 0: none)
A snapshot is written at exit (also _exit, _Exit, quick_exit, and main's pthread_exit
once the last thread ends), on heapscope_dump(), on SIGTERM/SIGINT and every other
signal whose default ends the process (SIGHUP, SIGPIPE, SIGQUIT ...: then that
default) and SIGUSR1 (the program continues), before exec, on a crash (SIGSEGV,
SIGBUS, SIGFPE, SIGILL, SIGABRT: then the signal's default action) and in MPI_Abort.
SIGKILL and a raw exit_group system call leave no snapshot: what followed the last one
is lost (--snapshot-interval bounds it). SIGINT, SIGTERM, SIGUSR1, SIGUSR2 and SIGHUP
sent to `heapscope record` are passed on to the program; if `record` is killed, the
program gets SIGTERM (PR_SET_PDEATHSIG).
`heapscope record --print-library` prints the path to put in LD_PRELOAD.
Exit status: the program's (128+N when signal N killed it); 74 when the program
succeeded but a profile is incomplete: a write failed (a full disk, a quota; the
recorder said which file, at which byte and why), or a process ended without a final
snapshot (SIGKILL, a raw exit system call); record's last lines name the files."""
EXIT_INCOMPLETE = 74     # sysexits' EX_IOERR: the program succeeded, a profile is incomplete

SAMPLE_BYTES_DEFAULT = 512 * 1024   # as tcmalloc's and jemalloc's production default
# --track's: tracking watches every block already, so 8x the samples cost it nearly
# nothing more (+0.06% instructions over 512 KiB on cxx-churn and FEM: BENCHMARKS.md)
TRACK_SAMPLE_BYTES_DEFAULT = 64 * 1024
REGION_LIST = re.compile(r"^[^,/]+(/[^,/]+)*(,[^,/]+(/[^,/]+)*)*$")
# signals sent to `heapscope record` (kill, a batch scheduler) go to the program
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP)


def register(sub):
    p = sub.add_parser(
        "record", help="run a program under the allocation recorder",
        description="Run CMD under the heapscope recorder (LD_PRELOAD): exact allocation counts "
                    "per size and region, and the stack trace types of the sizes chosen with "
                    "--sizes. Writes one profile file per process (children too) into DIR.",
        epilog=ENVIRONMENT, formatter_class=_RawEpilog,
        usage="heapscope record [options] -- CMD [ARGS...]")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="directory for the profiles (created if missing; default: a new "
                        "./heapscope-<program> or ./heapscope-<program>.N); one that already "
                        "holds profiles is refused unless --append (or record runs as one "
                        "rank of a job, under srun or mpirun: the ranks share DIR)")
    p.add_argument("--append", action="store_true",
                   help="record into an -o DIR that already holds profiles (later reports of "
                        "DIR merge both runs)")
    add_selection_options(p, size_help='record the stacks of these sizes: "12,24,100-200" or "all" '
                                       '(--size is the same option)',
                          region_help='stacks only in these regions: "local,reduce" (names or paths; '
                                      '--region is the same option)')
    p.add_argument("--depth", type=int, default=64, metavar="N",
                   help="frames per stack (1..256, default 64)")
    p.add_argument("--sample-bytes", nargs="?", const=str(SAMPLE_BYTES_DEFAULT), metavar="N|off",
                   help="stacks of every size by sampling, cheap enough for production: one "
                        f"allocation a mean N bytes apart (default {SAMPLE_BYTES_DEFAULT} = 512 KiB) "
                        "takes its stack; reports estimate each stack type's allocations with a "
                        "95%% interval; counts stay exact (not with --sizes or --trace). --track "
                        f"samples so by default, one a mean {TRACK_SAMPLE_BYTES_DEFAULT // 1024} KiB "
                        "apart; off: --track without stacks")
    p.add_argument("--unwind", choices=["dwarf", "fp"], default="dwarf",
                   help="stack unwinding: DWARF (default: the program's call frame "
                        "information, each call site's stack cached and checked; libunwind "
                        "for frames it cannot read) or fp: frame pointers, for code built "
                        "with -fno-omit-frame-pointer; on code without them the stacks stop "
                        "after a frame or two, and the recorder says so and uses DWARF")
    p.add_argument("--track", action="store_true",
                   help="tracking mode: lifetimes, temporaries, who holds the heap peak, "
                        "leaks at exit, extra bytes per size; per call path by sampled stacks "
                        f"(--sample-bytes, default {TRACK_SAMPLE_BYTES_DEFAULT // 1024} KiB with "
                        "--track: the reports' per-path figures are estimates, marked ~), or "
                        "exactly for the --sizes/--regions chosen (per size for every other block)")
    p.add_argument("--access", action="store_true",
                   help="memory allocated and not used: which pages of the sampled blocks (the "
                        "stacks' samples, --sample-bytes, 512 KiB by default) the program read or "
                        "wrote before freeing them, measured from the page tables without "
                        "changing what the program does; `heapscope access` reports it per call "
                        "path (not with --sizes or --trace)")
    p.add_argument("--trace", action="store_true",
                   help="event trace mode: every allocation and free (address, size, thread, "
                        "time, stack type or size, region) streamed into the profile "
                        "zstd-compressed (HEAPSCOPE_TRACE_COMPRESS=0: raw, larger, less CPU); the tracking reports are "
                        "replayed from it")
    p.add_argument("--temporary-between", metavar="N",
                   help="with --track/--trace: a temporary is freed with at most N other allocations "
                        "of its thread in between (default 0)")
    p.add_argument("--temporary-time", metavar="DURATION",
                   help="with --track/--trace: a temporary also lives at most this long "
                        "(800ns, 500us, 2ms, 1s, 1m: a unit is needed; default: no time bound)")
    p.add_argument("--track-max-blocks", metavar="N",
                   help="with --track: live blocks the tracking table holds (default: as "
                        "many as a quarter of the RAM, or of RLIMIT_AS if lower, holds at 128 "
                        "bytes each, at least 8388608; the table grows as blocks come); beyond, "
                        "blocks are counted untracked with their bytes and the reports say so")
    p.add_argument("--allocator", choices=ALLOCATORS, default="glibc",
                   help="run the program on this allocator (default: glibc)")
    p.add_argument("--mpi", nargs="?", const="auto", metavar="openmpi|mpich",
                   help="not needed: heap blocks allocated inside MPI calls count for the "
                        "region \"[MPI]\" of every program that links an MPI (CMD, or the ranks "
                        "a launcher CMD such as mpirun, mpiexec or srun starts), each given the "
                        "MPI layer of the MPI it links. --mpi instead preloads one layer into "
                        "every process: libheapscope_mpi.so for Open MPI, libheapscope_mpich.so "
                        "for MPICH, chosen from what CMD (or the program after a launcher) "
                        "links, else from the launcher (mpirun.mpich: MPICH), else Open MPI's; "
                        "--mpi=NAME chooses")
    p.add_argument("--per-rank", metavar="all|none|N",
                   help="MPI jobs: at MPI_Finalize the ranks' summaries are reduced into one "
                        "job file, heapscope.<job>.job.hsj, which `report DIR` reads; then only "
                        "some ranks keep their own file: all, none, or N ranks evenly spaced "
                        "plus the ranks with the least and the most of each figure (default "
                        "4). A rank that never reaches MPI_Finalize (a crash) keeps its file")
    p.add_argument("--timeline-interval", metavar="DURATION",
                   help="sample RSS and PSS (and the heap with --timeline-heap on) every "
                        "DURATION (\"100ms\", \"2s\"; a bare number is in ms; a whole number of "
                        "ms; default 100ms; 0 = no timeline): `heapscope timeline` shows them")
    p.add_argument("--snapshot-interval", metavar="DURATION",
                   help="also write a snapshot every DURATION (\"30s\", \"5m\"; a bare number is "
                        "in ms; default: none): an end the recorder cannot see (SIGKILL, a raw "
                        "exit system call) then loses at most what followed the last one")
    p.add_argument("--timeline-heap", choices=["on", "off"],
                   help="also sample the heap in use (costs every allocation a few ns: "
                        "default on for MPI programs and launchers, off otherwise)")
    p.add_argument("--no-symbolize", action="store_true",
                   help="do not symbolize the recorded stacks into the symbol cache when the "
                        "program ends (by default they are, so their frames keep their names "
                        "after the program is rebuilt; the cache is $HEAPSCOPE_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/heapscope, else ~/.cache/heapscope)")
    p.add_argument("--print-library", action="store_true",
                   help="print the path of libheapscope.so (for LD_PRELOAD) and exit")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="CMD",
                   help="the program and its arguments, after --")
    p.set_defaults(func=run)


class _RawEpilog(HelpFormatter):
    """Keeps the epilog's line breaks (argparse would refill it)."""

    def _fill_text(self, text, width, indent):
        return "".join(indent + line for line in text.splitlines(keepends=True))


MAX_TIMELINE_MS = 86_400_000     # a day


def timeline_interval_ms(text: str, option: str = "--timeline-interval",
                         zero: str = "no timeline") -> int:
    """--timeline-interval, --snapshot-interval: the one duration grammar
    (options.duration_ns), a bare number in ms (as it always was), 0 = none -> whole
    milliseconds, the recorder's unit."""
    ns = duration_ns(text, option, default_unit="ms", allow_zero=True)
    if ns % 1_000_000:
        raise HeapscopeError(f"bad {option} {text!r}: a whole number of milliseconds >= 1 "
                             f"(or 0 for {zero})")
    if ns > MAX_TIMELINE_MS * 1_000_000:
        raise HeapscopeError(f"bad {option} {text!r}: at most a day")
    return ns // 1_000_000


def _count(option, text, least=0):
    text = text.strip()
    if not re.fullmatch(r"\d+", text) or int(text) < least or int(text) >= 2 ** 40:
        raise HeapscopeError(f"bad {option} {text!r}: expected a whole number "
                             f"{least}..{2 ** 40 - 1}")
    return int(text)


def _check_options(args):
    command = list(args.command)
    if args.mpi is not None and args.mpi not in mpi_layer.CHOICES:
        if args.mpi.startswith("-") or command[:1] == ["--"]:
            raise HeapscopeError(f"bad --mpi {args.mpi!r}: expected --mpi, --mpi=openmpi or "
                                 f"--mpi=mpich")
        # `record --mpi ./app args` (no --): the word after --mpi was the program
        command, args.mpi = [args.mpi, *command], "auto"
    command = program_words(command, "no program to record: heapscope record [options] -- "
                                     "CMD [ARGS...]")
    if args.size is not None:
        if not args.size.strip():
            raise HeapscopeError("bad --sizes '': expected sizes and ranges like 12,24,100-200, "
                                 "or 'all'")
        args.size = SizeSet(args.size, "--sizes").normalized
    if args.region is not None and (not REGION_LIST.match(args.region) or any(
            not name.strip() for name in re.split(r"[,/]", args.region))):
        raise HeapscopeError(f"bad --regions {args.region!r}: expected a comma list of "
                             f"region names or paths like local,split/local")
    if args.access and (args.size or args.trace or args.sample_bytes == "off"):
        clash = "--sizes" if args.size else "--trace" if args.trace else "--sample-bytes off"
        raise HeapscopeError(f"--access measures the blocks whose stacks are sampled "
                             f"(--sample-bytes): it does not go with {clash}")
    if args.sample_bytes == "off":
        if not args.track:
            raise HeapscopeError("--sample-bytes off turns --track's sampled stacks off: give "
                                 "--track too (without --sample-bytes nothing is sampled)")
        args.sample_bytes = 0
    elif args.sample_bytes is not None:
        args.sample_bytes = _count("--sample-bytes", args.sample_bytes, least=1)
        clash = "--sizes" if args.size else "--trace" if args.trace else None
        if clash:
            raise HeapscopeError(f"--sample-bytes samples the stacks of every size; it does not go "
                                 f"with {clash} (exact stacks, or a trace that names every "
                                 f"block's stack)")
    elif args.track and not args.size and not args.trace:
        args.sample_bytes = TRACK_SAMPLE_BYTES_DEFAULT    # --track's call paths, sampled
    elif args.access:
        args.sample_bytes = SAMPLE_BYTES_DEFAULT          # the blocks --access measures
    if args.region and not args.size and not args.sample_bytes:
        raise HeapscopeError("--regions selects where stacks are recorded: give --sizes "
                             "(or --sample-bytes) too")
    for option, value, ok in (("--temporary-between", args.temporary_between, args.track or args.trace),
                              ("--temporary-time", args.temporary_time, args.track or args.trace),
                              ("--track-max-blocks", args.track_max_blocks, args.track)):
        if value is not None and not ok:
            need = "--track" if option == "--track-max-blocks" else "--track or --trace"
            raise HeapscopeError(f"{option} sets how blocks are tracked: give {need} too")
    if args.per_rank is not None and args.per_rank not in ("all", "none") and \
            not re.fullmatch(r"\d{1,9}", args.per_rank):
        raise HeapscopeError(f"bad --per-rank {args.per_rank!r}: expected all, none or a number "
                             f"of ranks")
    if args.temporary_between is not None:
        args.temporary_between = _count("--temporary-between", args.temporary_between)
    if args.temporary_time is not None:
        args.temporary_time = duration_ns(args.temporary_time, "--temporary-time")
    if args.track_max_blocks is not None:
        args.track_max_blocks = _count("--track-max-blocks", args.track_max_blocks, least=1)
    if args.timeline_interval is not None:
        args.timeline_interval = timeline_interval_ms(args.timeline_interval)
    if args.snapshot_interval is not None:
        args.snapshot_interval = timeline_interval_ms(args.snapshot_interval, "--snapshot-interval",
                                                      "no periodic snapshot")
    if not 1 <= args.depth <= 256:
        raise HeapscopeError(f"--depth must be 1..256, not {args.depth}")
    check_program(command[0])
    return command


_RECORDED = re.compile(r"^heapscope\..*\.hs[pj]$")   # profiles and job files


def _recorded_files(directory):
    """The profiles and job files in `directory` (paths), as the recorder names them."""
    try:
        return {os.path.join(directory, n) for n in os.listdir(directory) if _RECORDED.match(n)}
    except OSError:
        return set()


def _output_dir(args, program):
    if args.output:
        out = os.path.normpath(args.output)
        held = _recorded_files(out) if os.path.isdir(out) else set()
        if held and not args.append and not _inside_a_job():
            raise HeapscopeError(f"output directory {out} already holds {len(held)} profile"
                                 f"{'s' if len(held) != 1 else ''} of another run: use --append "
                                 f"to add this run to them, or a new directory")
    else:
        base = "heapscope-" + (re.sub(r"[^\w.+-]", "_", os.path.basename(program)) or "program")
        out = base
        n = 1
        while os.path.lexists(out):
            out = f"{base}.{n}"
            n += 1
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise HeapscopeError(f"cannot create output directory {out}: {exc.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise HeapscopeError(f"output directory {out} is not writable")
    return os.path.realpath(out)


# set by launchers in each rank: `srun heapscope record -o DIR` or `mpirun heapscope
# record -o DIR` runs one record per rank, all writing into DIR; in the order the
# recorder reads them for the file's name (profile_writer.c's mpi_rank)
RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


def _own_rank():
    """This record's rank when it is one rank's of a parallel job, else None. SLURM_PROCID
    counts only inside a job step (SLURM_STEP_ID): a batch script has SLURM_PROCID=0 too,
    and its record runs the whole job (an mpirun inside), not one rank."""
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "")
        if name == "SLURM_PROCID" and not os.environ.get("SLURM_STEP_ID"):
            continue
        if value.isdigit() and len(value) <= 9:
            return int(value)
    return None


def _inside_a_job() -> bool:
    """Whether this record is one rank's of a parallel job (the ranks share -o DIR)."""
    return any(os.environ.get(name) for name in RANK_VARIABLES)


def _environment(args):
    """The program's environment, but for HEAPSCOPE_OUTPUT_DIR (set once DIR exists)."""
    env = dict(os.environ)
    preload = [library_path("heapscope")]
    if args.mpi_layer:
        preload.append(str(args.mpi_layer))
    allocator = require_allocator(args.allocator)
    if allocator is not None:
        preload.append(str(allocator))
    if env.get("LD_PRELOAD"):
        preload.append(env["LD_PRELOAD"])
    env["LD_PRELOAD"] = " ".join(preload)
    env["HEAPSCOPE_STACK_SIZES"] = args.size or ""
    env["HEAPSCOPE_STACK_REGIONS"] = args.region or ""
    env["HEAPSCOPE_STACK_DEPTH"] = str(args.depth)
    env["HEAPSCOPE_SAMPLE_BYTES"] = str(args.sample_bytes or "")
    env["HEAPSCOPE_UNWIND"] = args.unwind
    for name in ("HEAPSCOPE_TRACK", "HEAPSCOPE_TRACE", "HEAPSCOPE_TEMP_BETWEEN",
                 "HEAPSCOPE_TEMP_NS", "HEAPSCOPE_TRACK_MAX_BLOCKS", "HEAPSCOPE_ACCESS"):
        env.pop(name, None)
    if args.access:
        env["HEAPSCOPE_ACCESS"] = "1"
    if args.track:
        env["HEAPSCOPE_TRACK"] = "1"
    if args.trace:
        env["HEAPSCOPE_TRACE"] = "1"
    if args.temporary_between is not None:
        env["HEAPSCOPE_TEMP_BETWEEN"] = str(args.temporary_between)
    if args.temporary_time is not None:
        env["HEAPSCOPE_TEMP_NS"] = str(args.temporary_time)
    env.pop("HEAPSCOPE_PER_RANK", None)
    if args.per_rank is not None:
        env["HEAPSCOPE_PER_RANK"] = args.per_rank
    if args.track_max_blocks is not None:
        env["HEAPSCOPE_TRACK_MAX_BLOCKS"] = str(args.track_max_blocks)
    if args.timeline_interval is not None:
        env["HEAPSCOPE_TIMELINE_MS"] = str(args.timeline_interval)
    env.pop("HEAPSCOPE_SNAPSHOT_MS", None)
    if args.snapshot_interval:
        env["HEAPSCOPE_SNAPSHOT_MS"] = str(args.snapshot_interval)
    # (Open MPI tears a failed job down with SIGCONT, SIGTERM after its
    # odls_base_sigkill_timeout, 1 s, and SIGKILL as soon as one rank has died: the ranks
    # wait for each other's snapshots, src/recorder/core/teardown.c, so its default
    # stands; the 10 s record set only made every failed job 10 to 20 s longer.)
    env.pop("HEAPSCOPE_MPI", None)
    if args.mpi_mode:
        env["HEAPSCOPE_MPI"] = args.mpi_mode
    if args.timeline_heap or args.mpi_layer or args.mpi_job:
        env["HEAPSCOPE_TIMELINE_HEAP"] = "0" if args.timeline_heap == "off" else "1"
    return env


def run(args):
    if args.print_library:
        print(library_path("heapscope"))
        return 0
    command = _check_options(args)
    # without --mpi: automatic only where the layer was built (its MPI found at build time)
    args.mpi_layer = mpi_layer.choose(args.mpi, command)
    args.mpi_mode = mpi_layer.per_exec_mode(args.mpi)
    # an MPI job: the timeline samples the heap (its MPI part) as with --mpi
    args.mpi_job = args.mpi_layer is not None or mpi_layer.is_launcher(command[0])
    env = _environment(args)  # (a missing allocator fails before DIR is created)
    out = _output_dir(args, command[0])
    env["HEAPSCOPE_OUTPUT_DIR"] = str(out)
    before = _recorded_files(out)
    rc = run_forwarding(command, env, FORWARDED)
    # the readers after the run only (the file format's tables: ~10 ms of start-up)
    from heapscope.profile.header import write_failure
    written = sorted(_recorded_files(out) - before)
    jobs = [p for p in written if is_job_file(p)]
    written = [p for p in written if not is_job_file(p)]
    rank = _own_rank()
    if rank is not None:
        # every rank's record sees every rank's new files: each lists, symbolizes and
        # checks its own rank's only (else N records do N ranks' work), rank 0 names the
        # job file
        written = [p for p in written if rank_of(p) == rank]
        jobs = jobs if rank == 0 else []
    for job in jobs:
        print(f"heapscope: job file {job} (every rank's summary, reduced at MPI_Finalize)",
              file=sys.stderr)
    if written:
        names = ", ".join(os.path.basename(p) for p in written[:4]) + \
            (" ..." if len(written) > 4 else "")
        print(f"heapscope: {len(written)} profile{'s' if len(written) > 1 else ''} in {out}: "
              f"{names}", file=sys.stderr)
    else:
        print(f"heapscope: no profile written in {out} (a statically linked or setuid program "
              f"cannot be recorded)", file=sys.stderr)
    if written and _stacks_asked(env) and not args.no_symbolize:
        _symbolize(written)
    incomplete = [(os.path.basename(p), why) for p in written for why in [write_failure(p)] if why]
    if incomplete:
        print(f"heapscope: {len(incomplete)} incomplete profile{'s' if len(incomplete) > 1 else ''} "
              f"(the recorder could not write {'them' if len(incomplete) > 1 else 'it'} whole): "
              + "; ".join(f"{name}: {why}" for name, why in incomplete), file=sys.stderr)
    failed = {name for name, _ in incomplete}
    unfinished = [(os.path.basename(p), why)
                  for p in _settled([p for p in written if os.path.basename(p) not in failed])
                  for why in [_no_final_snapshot(p)] if why]
    if unfinished:
        n = len(unfinished)
        print(f"heapscope: {n} profile{'s' if n > 1 else ''} without a final snapshot (the "
              f"process{'es' if n > 1 else ''} ended where the recorder could not see: SIGKILL, "
              f"a raw exit system call; what followed the last snapshot is lost): "
              + "; ".join(f"{name}: {why}" for name, why in unfinished), file=sys.stderr)
    if (incomplete or unfinished) and rc == 0:
        return EXIT_INCOMPLETE
    return rc


OWNER_WAIT_S = 10.0     # processes of the run still running when the program ended
PROFILE_PID = re.compile(r"\.(\d+)(?:\.\d+)?\.hsp$")


def _owner_running(path) -> bool:
    """The process the profile is named after (its pid ends the name) still runs: an
    orphan of the run (Open MPI's ranks end after mpirun when it dies of a second
    SIGINT), a daemon it left."""
    m = PROFILE_PID.search(os.path.basename(path))
    if not m:
        return False
    try:
        with open(f"/proc/{m.group(1)}/stat") as fh:
            state = fh.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")        # (a zombie has ended, its parent not reaped it yet)


def _settled(files):
    """The files, once the processes of those without a final snapshot have ended (at
    most OWNER_WAIT_S: a daemon may outlive the run, and is then said to run still)."""
    deadline = time.monotonic() + OWNER_WAIT_S
    pending = [p for p in files if _owner_running(p) and _no_final_snapshot(p)]
    while pending and time.monotonic() < deadline:
        time.sleep(0.1)
        pending = [p for p in pending if _owner_running(p) and _no_final_snapshot(p)]
    return files


def _no_final_snapshot(path) -> str:
    """Why the profile holds no snapshot written as its process ended, or ""."""
    from heapscope.profile.ending import FINAL_REASONS   # after the run only (start-up time)
    from heapscope.profile.reader import last_snapshot
    try:
        last = last_snapshot(path)
    except HeapscopeError as exc:
        return str(exc).split(": ", 1)[-1]
    if last is not None and last[0] in FINAL_REASONS:
        return ""
    if _owner_running(path):
        return f"its process (pid {PROFILE_PID.search(os.path.basename(path)).group(1)}) still runs"
    if last is None:
        return "no snapshot at all"
    reason, seconds = last
    return f"its last snapshot: {reason}, at {seconds:.3f} s"


def _stacks_asked(env) -> bool:
    """Whether the recorder was asked for stacks (of some sizes, or sampled): only then
    are there frames to symbolize, and the profiles worth reading at the end."""
    return bool(env.get("HEAPSCOPE_STACK_SIZES") or env.get("HEAPSCOPE_SAMPLE_BYTES"))


def _symbolize(files):
    """Symbolize the recorded stacks while the binaries are the ones that ran (symbolize.warm).
    Never changes the exit status: the profiles are complete either way."""
    from heapscope.commands import progress
    from heapscope.symbolize.warm import warm
    try:
        result = progress.run("symbolizing the recorded stacks", warm, files)
    except KeyboardInterrupt:
        print("heapscope: symbolizing the stacks interrupted; the profiles are complete "
              "(--no-symbolize skips this step)", file=sys.stderr)
        return
    except Exception as exc:   # a failure here must not hide the program's exit status
        if os.environ.get("HEAPSCOPE_DEBUG"):
            raise
        print(f"heapscope: warning: stacks not symbolized at record time: {type(exc).__name__}: "
              f"{exc} (the profiles are complete)", file=sys.stderr)
        return
    for problem in result.problems:
        print(f"heapscope: warning: stacks not symbolized at record time: {problem}", file=sys.stderr)
