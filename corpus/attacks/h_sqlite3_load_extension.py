# warden-case: h-sqlite3-load-extension
# group: H
# technique: sqlite3 enable_load_extension loads a shared object
# variant: plain
# expect-static: deny
# expect-rules: REF202
# expect-runtime: NAT803
# expect-jail: contained
import sqlite3

con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension("./libwarden_payload")
