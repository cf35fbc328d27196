! Fortran names as Fortran (tests/e2e/test_fortran_names.py): the module procedure
! mesh_mod::build (gfortran's symbol __mesh_mod_MOD_build) allocates 100 doubles
! (800 bytes) 5 times; the main program mesh_prog (gfortran's MAIN__) allocates 30
! doubles (240 bytes) 3 times itself.
module mesh_mod
  implicit none
contains
  subroutine build(n)
    integer, intent(in) :: n
    real(8), allocatable :: cells(:)
    integer :: i
    do i = 1, n
      allocate(cells(100))
      cells = i
      deallocate(cells)
    end do
  end subroutine build
end module mesh_mod

program mesh_prog
  use mesh_mod
  implicit none
  real(8), allocatable :: v(:)
  integer :: i
  call build(5)
  do i = 1, 3
    allocate(v(30))
    v = i
    deallocate(v)
  end do
end program mesh_prog
