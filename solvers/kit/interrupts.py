"""Whether a KeyboardInterrupt is a signal's (the user's Ctrl-C, a SIGTERM the command turns
into one) or was raised by code (a user's ``raise KeyboardInterrupt`` in a strategy of
their own): the first stops a run, the second is an error of the code that raised it.

The two are told apart by where the exception was raised: the innermost frame of its
traceback.  Python raises a signal's KeyboardInterrupt from its signal handler, which runs
between two instructions of whatever code was running: Python's own handler
(``signal.default_int_handler``) is written in C, so that frame is the interrupted code,
stopped at an instruction that is no ``raise`` (a call, a jump back in a loop); the command's
own handler (:mod:`pipeline.ctrl_c`) raises it by calling ``signal.default_int_handler``, so
that frame is the handler, stopped at a call.  Code raising it itself stops at a ``raise``
(``RAISE_VARARGS``), and a re-raise (a bare ``raise``) keeps the innermost frame of the
first.  Nothing is installed and no signal handler is changed.

This module imports nothing but the standard library's ``dis``.
"""

from __future__ import annotations

import dis

_RAISE = dis.opmap["RAISE_VARARGS"]


def raised_by_code(exc: BaseException) -> bool:
    """Whether ``exc`` is a KeyboardInterrupt some code raised with a ``raise`` statement,
    not a signal's (Ctrl-C, SIGTERM): see the module's docstring."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    tb = exc.__traceback__
    if tb is None:  # never raised (made, not raised), or raised with no Python frame
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE
