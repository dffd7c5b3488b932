# A Python program with a known call chain, for the tests of Python frames (issue 29):
# <module> -> main -> top -> recurse (3 deep) -> middle -> leaf, where middle also calls
# zlib.compress (C code of an extension, above middle's frame). Each line the tests look for
# carries a "LINE:" tag. Usage: pychain.py SECONDS [thread|wait]: "thread" runs the chain
# in a second thread; "wait" reads a line from stdin first (for -p: the test starts profile,
# then writes).
import sys
import threading
import time
import zlib

DATA = bytes(range(256)) * 64


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i  # LINE:leaf
    return s


def middle(n):
    z = zlib.compress(DATA, 9)  # LINE:middle_c
    return leaf(n) + len(z)  # LINE:middle


def recurse(d, n):
    if d == 0:
        return middle(n)  # LINE:recurse_end
    return recurse(d - 1, n)  # LINE:recurse


def top(seconds):
    end = time.time() + seconds
    t = 0
    while time.time() < end:
        t += recurse(3, 3000)  # LINE:top
    return t


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    if mode == "wait":
        print("ready", flush=True)
        sys.stdin.readline()
    if mode == "thread":
        t = threading.Thread(target=top, args=(seconds,), name="chain")
        t.start()
        t.join()  # LINE:join
    else:
        top(seconds)  # LINE:main


main()  # LINE:module
