# warden-case: j-subprocess-popen-shell
# group: J
# technique: subprocess.Popen with shell=True
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from subprocess import PIPE, Popen

proc = Popen("id && hostname", shell=True, stdout=PIPE)
print(proc.communicate()[0].decode())
