# warden-case: b-rt2-traceback-tb-frame-generic
# group: B
# technique: an exception's traceback frame read with operator.attrgetter
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR303
# expect-jail: contained
# expect-runtime: ATTR303
import operator

try:
    1 / 0
except ZeroDivisionError as err:
    frame = operator.attrgetter("tb_frame")(err.__traceback__)
    print(frame.f_back)
