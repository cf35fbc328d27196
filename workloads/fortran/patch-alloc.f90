! hs-wl-patch-alloc — a Fortran code that allocates its patches' arrays anew every
! step, as block-structured (AMR) codes do when they regrid: each step allocates an
! array of patches, then each patch's solution and flux arrays (2..12 and 3..13
! doubles: 16-104 B) with ALLOCATE, updates them, and releases everything with one
! DEALLOCATE of the patch array (which frees every component). gfortran's ALLOCATE
! and DEALLOCATE are malloc and free: the counting hot path's Fortran benchmark.
!
! Deterministic: lengths from a fixed xorshift sequence; ends with
! "checksum: <16 hex digits>" computed from the data. Options as every workload's:
! --name value, --help; a bad option is one line on stderr and exit status 2.
program patch_alloc
  use, intrinsic :: iso_fortran_env, only: error_unit, int64, real64
  implicit none

  type :: patch
     real(real64), allocatable :: u(:), flux(:)
  end type patch

  integer(int64) :: steps, npatches, seed
  type(patch), allocatable :: p(:)
  integer, allocatable :: lengths(:)
  integer(int64) :: s, i, h, state
  integer :: n, j
  real(real64) :: total

  steps = 6000
  npatches = 1000
  seed = 1
  call parse_options()

  allocate(lengths(npatches))
  state = seed * 2654435761_int64 + 88172645463325252_int64
  if (state == 0) state = 1
  do i = 1, npatches
     lengths(i) = 2 + int(modulo(next_random(), 11_int64))
  end do

  h = 0
  do s = 1, steps
     allocate(p(npatches))
     do i = 1, npatches
        n = lengths(modulo(i + s, npatches) + 1)
        allocate(p(i)%u(n), p(i)%flux(n + 1))
        do j = 1, n
           p(i)%u(j) = real(modulo(i + j + s, 7_int64), real64)
        end do
     end do
     total = 0
     do i = 1, npatches
        n = size(p(i)%u)
        p(i)%flux(1) = 0
        p(i)%flux(n + 1) = 0
        do j = 2, n
           p(i)%flux(j) = p(i)%u(j) - p(i)%u(j - 1)
        end do
        if (p(i)%u(n) /= real(modulo(i + n + s, 7_int64), real64)) then
           write(error_unit, '(A)') 'hs-wl-patch-alloc: patch contents corrupted'
           stop 1, quiet=.true.
        end if
        total = total + sum(p(i)%flux) + sum(p(i)%u) / n
     end do
     deallocate(p)
     h = ieor(ishftc(h, 5), nint(total * 1024, int64))
  end do
  deallocate(lengths)

  write(*, '(A,I0,A,I0,A)') 'patch-alloc: ', steps, ' steps of ', npatches, ' patches'
  write(*, '(A,A)') 'checksum: ', hex16(h)

contains

  integer(int64) function next_random()
    state = ieor(state, ishft(state, 13))
    state = ieor(state, ishft(state, -7))
    state = ieor(state, ishft(state, 17))
    next_random = ishft(state, -1)   ! non-negative
  end function next_random

  function hex16(v) result(text)
    integer(int64), intent(in) :: v
    character(len=16) :: text
    character(len=16), parameter :: digits = '0123456789abcdef'
    integer :: k
    do k = 0, 15
       text(16 - k:16 - k) = digits(ibits(v, 4 * k, 4) + 1:ibits(v, 4 * k, 4) + 1)
    end do
  end function hex16

  subroutine parse_options()
    character(len=256) :: arg, val
    integer :: k, nargs, stat
    integer(int64) :: v
    nargs = command_argument_count()
    k = 1
    do while (k <= nargs)
       call get_command_argument(k, arg)
       if (arg == '--help' .or. arg == '-h') then
          write(*, '(A)') 'usage: hs-wl-patch-alloc [options]'
          write(*, '(A)') 'Patch arrays (16-104 B) allocated and deallocated every step (Fortran).'
          write(*, '(A)') 'options:'
          write(*, '(A)') '  --steps          steps, each allocating every patch (default 6000, 0..1000000000)'
          write(*, '(A)') '  --patches        patches (default 1000, 1..100000000)'
          write(*, '(A)') '  --seed           random seed (default 1, 0..1000000000)'
          stop 0, quiet=.true.
       end if
       if (arg /= '--steps' .and. arg /= '--patches' .and. arg /= '--seed') then
          write(error_unit, '(A)') "hs-wl-patch-alloc: unknown option '" // trim(arg) // "' (see --help)"
          stop 2, quiet=.true.
       end if
       if (k == nargs) then
          write(error_unit, '(A)') 'hs-wl-patch-alloc: option ' // trim(arg) // ' needs a value'
          stop 2, quiet=.true.
       end if
       call get_command_argument(k + 1, val)
       read(val, *, iostat=stat) v
       if (stat /= 0 .or. verify(trim(val), '0123456789') /= 0) v = -1
       if (arg == '--steps') then
          call take(steps, 0_int64, 1000000000_int64, arg, val, v)
       else if (arg == '--patches') then
          call take(npatches, 1_int64, 100000000_int64, arg, val, v)
       else
          call take(seed, 0_int64, 1000000000_int64, arg, val, v)
       end if
       k = k + 2
    end do
  end subroutine parse_options

  ! One option's value v (read from the text val), checked against lo..hi.
  subroutine take(option, lo, hi, arg, val, v)
    integer(int64), intent(inout) :: option
    integer(int64), intent(in) :: lo, hi, v
    character(len=*), intent(in) :: arg, val
    if (v < lo .or. v > hi) then
       write(error_unit, '(A,I0,A,I0,A)') 'hs-wl-patch-alloc: ' // trim(arg) // ' wants an integer in ', &
            lo, '..', hi, ", got '" // trim(val) // "'"
       stop 2, quiet=.true.
    end if
    option = v
  end subroutine take

end program patch_alloc
