# warden-case: m-help-pager
# group: M
# technique: help() may start a pager subprocess
# variant: plain
# expect-static: deny
# expect-rules: DYN403
# expect-jail: no-survivor
help(len)
