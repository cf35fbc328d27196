"""A symbolized frame and how reports print it."""
import os
from dataclasses import dataclass

from heapscope.symbolize.names import short_name


@dataclass(frozen=True)
class Frame:
    function: str      # demangled; "??" when unknown
    file: str          # source file as the debug info names it; "" when unknown
    line: int          # 0 when unknown
    module: str        # path of the loaded object; "" when the address is in none
    offset: int        # file-relative address looked up (return address - 1 - bias)
    inlined: bool = False  # an inlined call: the next frame is the function it was inlined into
    symbol: str = ""       # the linkage name when `function` is its Fortran reading (names.fortran_name)
    function_start: int = 0  # an unnamed (??) frame: where its function starts (link-time
                             # address, from the call-frame information); 0 when unknown

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.file else ""

    def text(self, short: bool = False) -> str:
        """`function @ file:line (module)`; `function (module+0xoffset)` without line info.
        short: template arguments and parameter lists elided (names.short_name)."""
        module = os.path.basename(self.module) if self.module else "?"
        mark = " [inlined]" if self.inlined else ""
        function = short_name(self.function) if short else self.function
        if self.file:
            return f"{function} @ {self.file}:{self.line} ({module}){mark}"
        return f"{function} ({module}+{self.offset:#x}){mark}"

    def to_json(self) -> dict:
        """As documents carry it: an unknown file or line is null (not "" or 0); the raw
        symbol beside a Fortran name; where an unnamed function starts, null if unknown."""
        out = dict(function=self.function, file=self.file or None, line=self.line or None,
                   module=self.module, offset=self.offset, inlined=self.inlined,
                   function_start=self.function_start or None)
        if self.symbol:
            out["symbol"] = self.symbol
        return out
