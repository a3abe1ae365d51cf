# warden-case: c-session-name-built-across-cells
# group: C
# technique: a session builds an attribute name over two cells and applies it to a module with getattr in a third
# variant: computed-string
# session: cells
# expect-static: deny
# expect-rules: ATTR304
# expect-runtime: PROC801
# expect-jail: contained
# %% first half
name = "sys"
# %% second half
name = name + "tem"
import os.path
# %% apply
getattr(os.path.os if False else __import__("os"), name)("id")
