"""hsmalloc's resident footprint against what a program holds (footprint.c): 4 KiB pages
resident in the segments of the program's blocks, counted with mincore."""
from hsm_linked import program_figures


def test_a_size_with_an_exact_fixed_class_gets_one_set_of_pages(build, native):
    """1600 blocks of 64 bytes, allocated and freed 20 times by one thread: 64 takes the
    whole hot-size window, but the fixed class of 64 fits it exactly, so no hot class is
    made and the blocks stay on the fixed class's two slices: 32 pages of 4 KiB (100 KiB
    of blocks; its pages carved to the end over the rounds). Before, the hot class of 64
    took the blocks after the window and the fixed class kept the 16 pages it had carved
    during it: 48 pages."""
    assert program_figures(build, native, "footprint.c", "exact") == {"resident": 32, "hot": 0}


def test_a_new_page_goes_on_the_most_resident_free_slice(build, native):
    """A thread carved 4 KiB of one slice (1024-byte blocks) and all 64 KiB of the next
    (2048-byte blocks), freed them and exited; the next thread's page of 4096-byte
    blocks (a class of neither) is placed on the slice carved whole and its 16 blocks
    fault nothing in: 17 pages of 4 KiB resident. Before, both free slices counted as
    "touched" alike, the page went on the first one and faulted in its 15 untouched
    pages while the other slice's 16 stayed resident, idle: 32."""
    assert program_figures(build, native, "footprint.c", "placed") == {"resident": 17}


def test_a_size_left_gives_its_page_to_the_next_one(build, native):
    """A thread goes through 16, 32 and 64 bytes in turn (rounds of 25, 400 and 1600
    blocks of each, 600,000 allocations a count, as glibc-simple does): the page of
    64-byte blocks is made when 16 has been idle for 1.8 million allocations (over
    hsmalloc's 2^20), so the page of 16-byte blocks (7 pages carved) goes back and the
    first page of 64 is placed on it; the second page of 64, 1.2 million allocations
    later, takes the page of 32-byte blocks (13 pages). What stays resident
    is the two slices of 64-byte blocks: 32 pages of 4 KiB. Before, each size kept its
    carved pages: 7 + 13 + 32 = 52."""
    assert program_figures(build, native, "footprint.c", "sizes") == {"resident": 32}


def test_a_big_class_left_gives_its_slices_back_to_the_os(build, native):
    """A thread writes 3 blocks of 40,960 bytes (a page of two slices, 30 pages of 4 KiB
    carved) and frees them; 40 slow paths of another class later the class, idle, gives
    its page back, and its slices go back to the OS with it; a block of 12,288 bytes,
    a third class, is then placed on fresh memory and faults in its 3 pages: the 8 pages
    of the 16 KiB class's two blocks and these, 11. Before, the freed slices stayed
    resident and the new block's page went on them, carving 3 of their 30 pages while
    the rest sat idle under it: 38."""
    assert program_figures(build, native, "footprint.c", "bigleft") == {"resident": 11}


def test_a_big_class_page_on_a_freed_large_block_keeps_only_its_first_block_s_slice(build, native):
    """A page of a class above 8 KiB carves a block at a time; placed on the resident
    slices a freed large block left (GROMACS's 22,528-byte class on a freed 256 KiB
    block), the slices past its first block's stayed resident under it for blocks it
    may never carve, out of reach of the growth budget: 64 pages of 4 KiB for one
    block of 22,528 bytes (main), 32 now (its first slice, and the freed block's fourth
    slice, free)."""
    assert program_figures(build, native, "footprint.c", "onlarge") == {"resident": 32}


def test_a_cache_holding_more_than_its_class_s_live_blocks_lets_a_page_empty(build, native):
    """The only thread writes 1500 blocks of 64 bytes (a page of 1024 fills its slice,
    476 go on a second page: 24 pages of 4 KiB carved), frees all but the second page's
    last 10, the second page's first (its cache keeps up to 1024 blocks, the oldest the
    second page's); 40 slow paths of 16,384-byte blocks later (8 pages), 64 blocks of
    1024 bytes take a new page. The cache held more than the 10 live blocks at the
    sweep, so it sent the rest home; the first page emptied and went back to its
    segment, and the new page is placed on its 16 resident pages: 32 pages of 4 KiB.
    Before, the cache kept the first page's newest frees for good, the page never
    emptied, and the new page faulted in 16 fresh pages: 48."""
    assert program_figures(build, native, "footprint.c", "trim") == {"resident": 32}


def test_the_library_starts_small(build, native):
    """Two threads that allocated a block each: libhsmalloc's read-write data is one page
    of 4 KiB (the heap of a thread that has none yet is all zeros, in .bss; on main it
    held pointers to the empty page, relocated at load: 48 KiB of .data resident), and
    its heap objects hold 64 KiB written: two heaps of 44 KiB, 32 of each written (the
    caches of the classes a thread never used stay untouched; 88 KiB when every cache
    was set up at the heap's start). Its .bss past the file's end: the small variables
    on two pages, and the registry's pages that the two segments' bytes lie on, one per
    8 GiB of address space: one, or two when the segments straddle such a boundary (3
    runs in 2,000). Before, 28 KiB of .bss: the registry, the free-block transfer's
    table, the options' file buffer and the module ranges sat between them, the
    variables every process writes at start spread over six pages (the large arrays
    are in .lbss now, after .bss).

    The heap objects' and the .bss figures are pages written over the mappings' own
    ranges (the page map): the kernel merges a neighbouring anonymous mapping into
    either (even the heap objects' into the library's .bss, 2 runs in 1,000), so the
    mappings' Rss in smaps read 64-72 KiB and 12-28 KiB from run to run."""
    f = program_figures(build, native, "footprint.c", "start")
    assert f["data_kib"] == 4
    assert f["heap_kib"] == 64
    assert f["registry_pages"] in (1, 2)
    assert f["bss_kib"] == 8 + 4 * f["registry_pages"]


def test_a_thread_s_stack_pays_one_page_for_the_allocator(build, native):
    """A thread on a stack of fresh pages goes through slow paths of nine sizes (16 B to
    3 MiB), each reading the memory pressure (HSMALLOC_PRESSURE_CHECK_MS=0): the
    allocator writes 3,431 bytes below the thread's frame, less than a page of 4 KiB.
    Before, 12,119: the pressure reading held /proc/meminfo's whole text (4 KiB) and the
    cgroup's lookup (2 KiB) in one chain of frames (6,423 once they were cut), and the
    library's calls into libc were bound lazily, the dynamic linker's resolver running
    on the stack of the thread that first made each (3,431 once bound at load). The
    pages a thread's deepest call touched stay resident for its life: glibc-thread's
    threads held 16 KiB of stack each, 8 under glibc's malloc."""
    f = program_figures(build, native, "footprint.c", "stack",
                        env={"HSMALLOC_PRESSURE_CHECK_MS": "0"})
    assert 0 < f["depth"] < 4096


def test_the_library_s_code_maps_one_window_its_read_only_data_none_and_reads_the_clock_through_the_vdso(
        build, native):
    """Two threads go through sizes from 16 bytes to 3 MiB, calloc, realloc, an aligned
    block, frees of each other's blocks and a memory-pressure reading at every slow path:
    64 KiB of libhsmalloc's code resident, and libc's clock_gettime never called (the
    program defines the function, so the library's calls would bind to it). The kernel
    maps a file's pages 64 KiB around each fault (fault-around), so what counts is which
    windows a run touches: the code every process runs is linked first and fills the
    first window; statistics, tracing, secure mode and chains come after it, the C
    runtime's _fini is not the unload hook, and pthread_atfork's stub and libgcc's
    popcount (linked after all of the library's own code) are not called. Before, 88
    KiB (the whole text: the trace's start, the SIGUSR2 check, the atfork stub, popcount
    and _fini were in the last window) and 28 calls of libc's clock_gettime, whose page
    of libc, with the 64 KiB around it, a program that never reads the clock leaves
    unmapped. The read-only data that code reads (option names, messages, constants) is
    linked into the text before the code, so the read-only segment (.rodata of the
    optional code, and .eh_frame, read by an unwinder only) stays unmapped: 0 KiB. Before,
    28 KiB: any read of .rodata mapped the whole segment (it is smaller than a window).
    The kernel maps a page-cache folio that straddles the window's end whole, and the
    folios follow how the file was written: the same library gives 64 KiB as copied by
    cp and 68 as the linker wrote it; hence the code's bound of 64 plus a folio of up to
    8 KiB (the second window is 36 KiB)."""
    f = program_figures(build, native, "footprint.c", "text",
                        env={"HSMALLOC_PRESSURE_CHECK_MS": "0"})
    assert 64 <= f.pop("text_kib") <= 72
    assert f == {"rodata_kib": 0, "clock_calls": 0}
