# warden-case: jail-sqlite-connect-outside
# group: JAIL
# technique: the private twin _sqlite3 creates a database file (SQLite's C code opens it, no file event) under /usr/lib, outside the write roots; the kernel refuses it
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-path /usr/lib/warden-escape*
import _sqlite3

db = _sqlite3.connect("/usr/lib/warden-escape.db")
db.execute("create table t (x)")
db.commit()
print("created")
