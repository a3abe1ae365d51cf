# warden-case: d-pydoc-locate
# group: D
# technique: pydoc.locate('os.system')
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
import pydoc

pydoc.locate("os.system")("id")
