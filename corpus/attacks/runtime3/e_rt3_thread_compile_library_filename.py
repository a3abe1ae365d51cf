# warden-case: e-rt3-thread-compile-library-filename
# group: E
# technique: compile(src, os.__file__) run with no frame so the code would pass for the stdlib's
# variant: no-frame
# expect-static: deny
# expect-rules: DYN401 IMP101 REX501
# expect-jail: contained
# expect-runtime: DYN401
import os
import time

thread = os.sys.modules["_thread"]
sources = ["__import__('ftp' + 'lib')"]
thread.start_new_thread(list, (map(exec, map(compile, sources, [os.__file__], ["exec"]), [{}]),))
time.sleep(0.3)
print("ftplib" in os.sys.modules)
