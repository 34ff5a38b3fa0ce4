"""``python -m xcclab._router ARGS``: the real-packet router (the ``xcc-emu`` command line).

The router is linked into the ``_native`` extension, so an installed wheel carries it with no
separate binary; this module only hands the arguments over and exits with its status. It is
its own process because the router owns the process's signals (SIGINT, SIGTERM and SIGHUP stop
it; SIGTERM is also sent when its parent dies) and its namespaces. See ``docs/emu.md``.
"""

from __future__ import annotations

import sys


def main() -> int:
    from xcclab import _native

    if not hasattr(_native, "emu_main"):
        print(
            "xcc-emu: the real-packet router needs Linux (network namespaces, TUN)", file=sys.stderr
        )
        return 1
    return _native.emu_main(sys.argv[1:])


if __name__ == "__main__":
    # os._exit is not needed: the router joined its threads before returning.
    sys.exit(main())
