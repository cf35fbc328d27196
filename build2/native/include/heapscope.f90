! heapscope Fortran module: mark regions of a Fortran program for the profiler.
!
!   use heapscope
!   call heapscope_begin("local")
!   ...
!   call heapscope_end()
!
! Link with -lheapscope_stub so the program runs without the profiler; under
! `heapscope record` the preloaded recorder's definitions are the ones called.
module heapscope
  use iso_c_binding, only: c_char, c_int, c_null_char
  implicit none
  private
  public :: heapscope_begin, heapscope_end, heapscope_thread_begin, &
            heapscope_thread_end, heapscope_dump, heapscope_reset

  interface
    subroutine c_region_begin(name) bind(C, name="heapscope_region_begin")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine c_region_end() bind(C, name="heapscope_region_end")
    end subroutine
    subroutine c_thread_region_begin(name) bind(C, name="heapscope_thread_region_begin")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine c_thread_region_end() bind(C, name="heapscope_thread_region_end")
    end subroutine
    function c_dump() bind(C, name="heapscope_dump") result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function
    subroutine c_reset() bind(C, name="heapscope_reset")
    end subroutine
  end interface

contains

  subroutine heapscope_begin(name)
    character(len=*), intent(in) :: name
    call c_region_begin(trim(name) // c_null_char)
  end subroutine

  subroutine heapscope_end()
    call c_region_end()
  end subroutine

  subroutine heapscope_thread_begin(name)
    character(len=*), intent(in) :: name
    call c_thread_region_begin(trim(name) // c_null_char)
  end subroutine

  subroutine heapscope_thread_end()
    call c_thread_region_end()
  end subroutine

  subroutine heapscope_dump(rc)
    integer, intent(out), optional :: rc
    integer(c_int) :: r
    r = c_dump()
    if (present(rc)) rc = int(r)
  end subroutine

  subroutine heapscope_reset()
    call c_reset()
  end subroutine

end module heapscope
