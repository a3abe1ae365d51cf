# warden-case: jail-mkfifo-work-dir
# group: JAIL
# technique: create a FIFO in the work dir (os.mkfifo raises no file event of its own); seccomp refuses FIFOs and device nodes whatever the write roots
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error; exit-code 1; outputs-regular
import os

os.mkfifo("/work/fifo")
print("made a FIFO")
