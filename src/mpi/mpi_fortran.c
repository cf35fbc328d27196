/*
 * mpi_fortran.c — the hand-written part of the Fortran wrappers (the others are
 * generated: gen_fortran_wrappers.py, mpi_fortran.h):
 *   hsr_fortran_next   finds the MPI library's definition of a Fortran symbol;
 *   MPI_PCONTROL      (all name forms, mpi_f08's too) goes through the C MPI_Pcontrol of mpi_layer.c,
 *                     so that Fortran programs get the pcontrol-<level> regions too;
 *   MPI_FINALIZE      writes a snapshot first, as the C MPI_Finalize does;
 *   MPI_ABORT         writes the final "mpi-abort" snapshot with its code first, as the
 *                     C MPI_Abort does.
 * Built with HSR_MPI_FORTRAN_F08_ONLY (the MPICH layer), only the mpi_f08 forms: MPICH's
 * mpif.h bindings call the C MPI_Pcontrol, MPI_Finalize and MPI_Abort
 * (gen_fortran_wrappers.py).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi_layer.h"

int heapscope__mpi_abort(int errorcode) __attribute__((weak));

void *hsr_fortran_next(const char *symbol)
{
    void *fn = dlsym(RTLD_NEXT, symbol);
    if (!fn) {
        static const char msg[] = "heapscope MPI layer: a Fortran MPI entry point was called "
                                  "but no MPI library after the layer defines it\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
    return fn;
}

#define HSR_PCONTROL(symbol) \
    void symbol(const MPI_Fint *level) { MPI_Pcontrol((int)*level); }
#ifndef HSR_MPI_FORTRAN_F08_ONLY
HSR_PCONTROL(mpi_pcontrol)
HSR_PCONTROL(mpi_pcontrol_)
HSR_PCONTROL(mpi_pcontrol__)
HSR_PCONTROL(MPI_PCONTROL)
#endif
HSR_PCONTROL(mpi_pcontrol_f08_) /* use mpi_f08: the level by reference too */

typedef void (*hsr_finalize_fn)(MPI_Fint *ierr);

#define HSR_FINALIZE(symbol)                                           \
    void symbol(MPI_Fint *ierr)                                        \
    {                                                                  \
        static hsr_finalize_fn next;                                   \
        hsr_mpi_finalize_dump();                                       \
        hsr_mpi_enter("MPI_Finalize", 1);                              \
        hsr_finalize_fn fn = __atomic_load_n(&next, __ATOMIC_RELAXED); \
        if (!fn) {                                                     \
            fn = (hsr_finalize_fn)hsr_fortran_next(#symbol);           \
            __atomic_store_n(&next, fn, __ATOMIC_RELAXED);             \
        }                                                              \
        fn(ierr);                                                      \
        hsr_mpi_leave("MPI_Finalize");                                 \
    }
#ifndef HSR_MPI_FORTRAN_F08_ONLY
HSR_FINALIZE(mpi_finalize)
HSR_FINALIZE(mpi_finalize_)
HSR_FINALIZE(mpi_finalize__)
HSR_FINALIZE(MPI_FINALIZE)
#endif
HSR_FINALIZE(mpi_finalize_f08_) /* use mpi_f08: ierror is optional (NULL), passed on as is */

/* (comm, errorcode, ierror): references in every binding (mpi_f08's comm is a
 * TYPE(MPI_Comm), passed by reference too; its ierror is optional: NULL) */
typedef void (*hsr_abort_fn)(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr);

#define HSR_ABORT(symbol)                                            \
    void symbol(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) \
    {                                                                \
        static hsr_abort_fn next;                                    \
        if (heapscope__mpi_abort && errorcode)                       \
            heapscope__mpi_abort((int)*errorcode);                   \
        hsr_mpi_enter("MPI_Abort", 0);                               \
        hsr_abort_fn fn = __atomic_load_n(&next, __ATOMIC_RELAXED);  \
        if (!fn) {                                                   \
            fn = (hsr_abort_fn)hsr_fortran_next(#symbol);            \
            __atomic_store_n(&next, fn, __ATOMIC_RELAXED);           \
        }                                                            \
        fn(comm, errorcode, ierr);                                   \
        hsr_mpi_leave("MPI_Abort");                                  \
    }
#ifndef HSR_MPI_FORTRAN_F08_ONLY
HSR_ABORT(mpi_abort)
HSR_ABORT(mpi_abort_)
HSR_ABORT(mpi_abort__)
HSR_ABORT(MPI_ABORT)
#endif
HSR_ABORT(mpi_abort_f08_)
