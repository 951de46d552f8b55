#!/usr/bin/env python3
"""Exchange two directory entries atomically in a tight loop: renameat2(RENAME_EXCHANGE).

Usage: swap.py <path-a> <path-b>
Typically <path-a> is a directory inside a workspace and <path-b> a symlink (next to it) to a
directory outside, so <path-a> is alternately the real directory and the symlink. Prints
"ready" once the first exchange succeeded; on SIGTERM restores the original order (an even
number of exchanges), prints the number of exchanges and exits 0.
"""
import ctypes
import os
import signal
import sys

AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
renameat2.restype = ctypes.c_int

a = os.fsencode(sys.argv[1])
b = os.fsencode(sys.argv[2])
stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def exchange():
    if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


exchange()
count = 1
sys.stdout.write("ready\n")
sys.stdout.flush()
while not stop:
    exchange()
    count += 1
if count % 2 == 1:
    exchange()
    count += 1
sys.stdout.write(f"{count}\n")
sys.stdout.flush()
