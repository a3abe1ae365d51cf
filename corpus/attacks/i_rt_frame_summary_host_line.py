# warden-case: i-rt-frame-summary-host-line
# group: I
# technique: traceback.FrameSummary reads the line of a host file outside the read roots (through linecache); the program parses it
# variant: other
# expect-static: allow
# expect-rules: none
# expect-runtime: FILE701
# expect-jail: no-read /etc/passwd
import traceback
summary = traceback.FrameSummary("/etc/passwd", 1, "module")
print(summary.line.split(":")[5])
