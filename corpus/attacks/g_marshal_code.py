# warden-case: g-marshal-code
# group: G
# technique: marshal.loads a code object and exec it
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import base64
import marshal

BLOB = "YwAAAAAAAAAAAAAAAAMAAAAAAAAA8y4AAACXAGQAZAFsAFoAAgBlAGoBAAAAAAAAAABkAqYBAACrAQAAAAAAAAAAAQBkAVMAKQPpAAAAAE7aAmlkKQLaAm9z2gZzeXN0ZW2pAPMAAAAA+gY8Y2VsbD76CDxtb2R1bGU+cggAAAABAAAAcyEAAADwAwEBAdgACYAJgAmACdgACYAChAmIJIEPhA+AD4APgA9yBgAAAA=="
exec(marshal.loads(base64.b64decode(BLOB)))
