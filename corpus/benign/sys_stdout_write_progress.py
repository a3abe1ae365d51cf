# warden-case: sys-stdout-write-progress
# group: BENIGN
# technique: sys.stdout.write and flush for a progress line
# expect-static: allow
# expect-output: OK: done
import sys

for step in range(3):
    sys.stdout.write(f"step {step}\n")
sys.stdout.flush()
sys.stdout.write("OK: done\n")
