"""The ``detred-audit`` command of the wheel: runs the detred-audit program installed inside the package (beside
the extension module and, where CUDA was built, the GPU rows module it loads), with the same arguments."""

from __future__ import annotations

import os
import sys


def main() -> None:
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "detred-audit")
    if not os.path.exists(program):
        sys.exit("detred-audit: this build of detred has no audit (built with DETRED_BUILD_VERIFY=OFF)")
    os.execv(program, [program] + sys.argv[1:])


if __name__ == "__main__":
    main()
