# warden-case: k-sleep-forever
# group: K
# technique: sleep far past the wall-clock limit without using CPU
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status timeout
import time

time.sleep(10 ** 9)
