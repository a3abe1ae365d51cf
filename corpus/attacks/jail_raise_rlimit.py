# warden-case: jail-raise-rlimit
# group: JAIL
# technique: raise hard resource limits
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: layer rlimits
import resource

inf = resource.RLIM_INFINITY
resource.setrlimit(resource.RLIMIT_NPROC, (inf, inf))
resource.setrlimit(resource.RLIMIT_AS, (inf, inf))
