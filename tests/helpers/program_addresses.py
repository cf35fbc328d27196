"""Reads what tests/programs/stk_symbols.cpp prints about itself: its load bias,
the runtime ranges of its code, and the addresses it took of its own functions
("bias HEX", "range LO HI", "<name> HEX" lines)."""
import subprocess


def program_addresses(exe) -> dict:
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    info = {"ranges": [], "addr": {}}
    for line in out.splitlines():
        word, *values = line.split()
        if word == "bias":
            info["bias"] = int(values[0], 16)
        elif word == "range":
            info["ranges"].append((int(values[0], 16), int(values[1], 16)))
        else:
            info["addr"][word] = int(values[0], 16)
    return info
